"""The timing chapters' other branch runs: every build of this project's machines found them busy,
and the first quiet machine (a CI run) failed the quantization chapter in a branch no build had
walked (a star-expanded fact that was not a tuple). ``AMP_DOCS_LOAD_CHECK`` sets the load checks'
outcome, so both branches are executed whatever the machine is doing."""

import os
import subprocess
import sys

import pytest

from amp_docs_lib.docsite.checkout import copy_checkout
from conftest import REPO_ROOT, side_by_side

pytestmark = pytest.mark.slow

TIMING_CHAPTERS = ("autocast", "performance", "quantization")  # the chapters that take LoadCheck's verdict


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    # a copy: the forced runs fill their own cache, never the project's
    return copy_checkout(REPO_ROOT, tmp_path_factory.mktemp("timing-branches") / "repo")


@pytest.mark.parametrize("outcome", ["quiet", "busy"])
def test_timing_chapters_execute_in_both_load_check_branches(checkout, outcome, request):
    env = dict(os.environ, AMP_DOCS_LOAD_CHECK=outcome, OMP_NUM_THREADS="1")

    def execute(chapter: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "amp_docs_lib", "execute", f"docs/chapters/{chapter}.md"],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )

    # Where the checks say busy, no conclusion is drawn from a timing, so the chapters may run side by
    # side; where they say quiet, every conclusion is drawn, so each runs alone, as the build runs them.
    runs = side_by_side(request).map(execute, TIMING_CHAPTERS) if outcome == "busy" else map(execute, TIMING_CHAPTERS)
    for chapter, r in zip(TIMING_CHAPTERS, runs, strict=True):
        assert r.returncode == 0, f"{chapter} with {outcome} load checks:\n{(r.stdout + r.stderr)[-4000:]}"
