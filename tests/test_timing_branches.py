"""The timing chapters' other branch runs: every build of this project's machines found them busy,
and the first quiet machine (a CI run) failed the quantization chapter in a branch no build had
walked (a star-expanded fact that was not a tuple). ``AMP_DOCS_LOAD_CHECK`` sets the load checks'
outcome, so both branches are executed whatever the machine is doing."""

import os
import subprocess
import sys

import pytest

from amp_docs_lib.docsite.checkout import copy_checkout
from conftest import REPO_ROOT

pytestmark = pytest.mark.slow

TIMING_CHAPTERS = ("autocast", "performance", "quantization")  # the chapters that take LoadCheck's verdict


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    # a copy: the forced runs fill their own cache, never the project's
    return copy_checkout(REPO_ROOT, tmp_path_factory.mktemp("timing-branches") / "repo")


@pytest.mark.parametrize("outcome", ["quiet", "busy"])
def test_timing_chapters_execute_in_both_load_check_branches(checkout, outcome):
    env = dict(os.environ, AMP_DOCS_LOAD_CHECK=outcome, OMP_NUM_THREADS="1")
    for chapter in TIMING_CHAPTERS:
        r = subprocess.run(
            [sys.executable, "-m", "amp_docs_lib", "execute", f"docs/chapters/{chapter}.md"],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert r.returncode == 0, f"{chapter} with {outcome} load checks:\n{(r.stdout + r.stderr)[-4000:]}"
