"""Which forced load-check runs ``test_timing_branches`` makes, read from built notebooks whose notes
are written by ``LoadCheck.note`` itself (fake notebooks, no chapter executed)."""

import nbformat
import pytest
from test_timing_branches import TIMING_CHAPTERS, runs_needed, walked_outcomes

from amp_docs_lib.bench.load import LoadCheck
from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR

# A steady reference and no other runnable task on 2 cores: quiet; six other tasks: busy.
QUIET = LoadCheck(cores=2, threads=1, before=[1e-3, 1.1e-3], load_before=0.1, runnable=[1], after=[1.05e-3])
BUSY = LoadCheck(cores=2, threads=1, before=[1e-3, 1.1e-3], load_before=6.0, runnable=[7], after=[1.05e-3])


def write_notebook(path, checks):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "timing()",
            outputs=[
                nbformat.v4.new_output("display_data", data={"text/html": f"<p>{c.note()}</p>", "text/plain": c.note()})
            ],
        )
        for c in checks
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def site_with(tmp_path, notes: dict):
    for chapter, checks in notes.items():
        write_notebook(tmp_path / "downloads" / "chapters" / f"{chapter}.ipynb", checks)
    return tmp_path


def test_the_fake_checks_take_the_outcomes_they_are_named_for(monkeypatch):
    monkeypatch.delenv(LOAD_CHECK_ENV_VAR, raising=False)
    assert QUIET.quiet and not BUSY.quiet


def test_a_build_that_found_everything_busy_leaves_only_the_quiet_runs(tmp_path, monkeypatch):
    monkeypatch.delenv(LOAD_CHECK_ENV_VAR, raising=False)
    site = site_with(tmp_path, {c: [BUSY, BUSY] for c in TIMING_CHAPTERS})
    assert runs_needed(site) == {"quiet": TIMING_CHAPTERS, "busy": ()}


def test_mixed_checks_need_both_runs_and_a_quiet_chapter_only_the_busy_one(tmp_path, monkeypatch):
    monkeypatch.delenv(LOAD_CHECK_ENV_VAR, raising=False)
    site = site_with(tmp_path, {"autocast": [QUIET], "performance": [QUIET, BUSY, QUIET], "quantization": [BUSY]})
    assert runs_needed(site) == {"quiet": ("performance", "quantization"), "busy": ("autocast", "performance")}


def test_without_a_site_or_readable_notes_both_branches_run(tmp_path, monkeypatch):
    monkeypatch.delenv(LOAD_CHECK_ENV_VAR, raising=False)
    both = {"quiet": TIMING_CHAPTERS, "busy": TIMING_CHAPTERS}
    assert runs_needed(None) == both
    assert runs_needed(tmp_path) == both  # no notebooks
    site = site_with(tmp_path, {c: [] for c in TIMING_CHAPTERS})  # notebooks without a load check's note
    assert runs_needed(site) == both


@pytest.mark.parametrize("forced", ["quiet", "busy"])
def test_a_build_with_forced_outcomes_counts_as_that_branch(tmp_path, monkeypatch, forced):
    monkeypatch.setenv(LOAD_CHECK_ENV_VAR, forced)
    site = site_with(tmp_path, {c: [QUIET, BUSY] for c in TIMING_CHAPTERS})
    assert {frozenset(walked_outcomes(site / "downloads" / "chapters" / f"{c}.ipynb")) for c in TIMING_CHAPTERS} == {
        frozenset({forced})
    }


def test_reader_runs_force_only_the_busy_branch_still_needed():
    """The downloaded-notebook runs go side by side, so they may stand in for busy runs only."""
    from test_timing_branches import reader_load_check

    needed = {"quiet": ("performance", "quantization"), "busy": ("autocast", "performance")}
    assert [reader_load_check(c, needed) for c in TIMING_CHAPTERS] == ["busy", "busy", None]
    assert reader_load_check("formats", needed) is None
