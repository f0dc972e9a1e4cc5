"""The timing chapters' other branch runs: every build of this project's machines found them busy,
and the first quiet machine (a CI run) failed the quantization chapter in a branch no build had
walked (a star-expanded fact that was not a tuple). ``AMP_DOCS_LOAD_CHECK`` sets the load checks'
outcome, so both branches are executed whatever the machine is doing.

A branch the build already walked is not walked again: when a built site of this checkout is at
hand (``usable_built_site``), each chapter's built notebook says, in its load checks' notes, which
outcome every check took; a forced run is skipped only where every check there took its outcome.
Without a usable site, or a notebook whose notes cannot be read, both branches run.

The busy branch of a chapter whose downloaded notebook this session runs (``test_downloads_run``) is
walked there: that run sets ``AMP_DOCS_LOAD_CHECK=busy`` (``reader_load_check``), so the chapter is not
executed a second time here. The quiet branch is walked here only: its runs must be alone."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR
from amp_docs_lib.docsite.checkout import copy_checkout
from conftest import REPO_ROOT, selected_params, side_by_side, usable_built_site

pytestmark = pytest.mark.slow

TIMING_CHAPTERS = ("autocast", "performance", "quantization")  # the chapters that take LoadCheck's verdict
OUTCOMES = ("quiet", "busy")

# The endings of LoadCheck.note(): measured quiet, measured busy, or set by $AMP_DOCS_LOAD_CHECK.
_NOTE_OUTCOME = re.compile(
    rf": the machine was (quiet)\.|: the machine was (busy) \(|: {LOAD_CHECK_ENV_VAR}=(quiet|busy) set this check"
)


def walked_outcomes(notebook: Path) -> set[str]:
    """The load-check outcomes a built chapter notebook's notes record (empty if none or unreadable)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return set()
    text = json.dumps([c.get("outputs", []) for c in cells])
    return {next(g for g in m.groups() if g) for m in _NOTE_OUTCOME.finditer(text)}


def runs_needed(site: Path | None, chapters=TIMING_CHAPTERS) -> dict[str, tuple[str, ...]]:
    """Per outcome, the chapters a forced run must execute: all but those whose notebook in ``site``
    shows every load check taking that outcome (a chapter with mixed outcomes left some check's other
    branch unwalked, so it runs in both; every chapter runs in both when ``site`` is None)."""
    walked = {
        c: set() if site is None else walked_outcomes(site / "downloads" / "chapters" / f"{c}.ipynb") for c in chapters
    }
    return {o: tuple(c for c in chapters if walked[c] != {o}) for o in OUTCOMES}


READER_RUN_TEST = "test_downloaded_notebook_runs_top_to_bottom_outside_the_repository"


def reader_load_check(chapter: str, needed: dict[str, tuple[str, ...]]) -> str | None:
    """The load-check outcome the downloaded-notebook run of ``chapter`` forces: busy where that branch
    still needs walking (reader runs go side by side, as busy runs may), else None (measured)."""
    return "busy" if chapter in needed["busy"] else None


@pytest.fixture(scope="module")
def needed() -> dict[str, tuple[str, ...]]:
    return runs_needed(usable_built_site())


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    # a copy: the forced runs fill their own cache, never the project's
    return copy_checkout(REPO_ROOT, tmp_path_factory.mktemp("timing-branches") / "repo")


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_timing_chapters_execute_in_both_load_check_branches(outcome, needed, request):
    chapters = needed[outcome]
    if not chapters:
        pytest.skip(
            f"the built site's notebooks show every timing chapter's load checks {outcome}: "
            "the build walked that branch"
        )
    in_reader_runs = {c.stem for c in selected_params(request, READER_RUN_TEST, "chapter")}
    chapters = tuple(c for c in chapters if not (c in in_reader_runs and reader_load_check(c, needed) == outcome))
    if not chapters:
        pytest.skip(f"this session's downloaded-notebook runs walk the {outcome} branch (test_downloads_run)")
    checkout = request.getfixturevalue("checkout")
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
    runs = side_by_side(request).map(execute, chapters) if outcome == "busy" else map(execute, chapters)
    for chapter, r in zip(chapters, runs, strict=True):
        assert r.returncode == 0, f"{chapter} with {outcome} load checks:\n{(r.stdout + r.stderr)[-4000:]}"
