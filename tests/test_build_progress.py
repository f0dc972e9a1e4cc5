"""Build progress lines: chapter start (with its cell count), each cell, chapter end."""

import re

import pytest

from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.docsite.execute import ChapterExecutionError, execute_notebook
from amp_docs_lib.docsite.progress import PROGRESS_ENV_VAR, ChapterProgress, progress_level
from conftest import make_chapter, mkdocs_build

pytestmark = pytest.mark.site


def execute(tmp_path, name, *cells):
    p = tmp_path / f"{name}.md"
    p.write_text(make_chapter("Demo", *cells))
    return execute_notebook(read_chapter(p), name)


def test_progress_lines_number_code_cells(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(PROGRESS_ENV_VAR, "cells")
    monkeypatch.setenv("AMP_DOCS_HIDE_PACKAGES", "mslk")  # a listed package, hidden: the cell is skipped everywhere
    execute(
        tmp_path, "prog", ("", "x = 1"), ('["requires:pkg:mslk"]', "import mslk"), ("", "import time\ntime.sleep(0.3)")
    )
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("amp-docs: [prog]")]
    assert lines[0] == "amp-docs: [prog] started: 3 code cells"
    assert re.fullmatch(r"amp-docs: \[prog\] cell 1/3 done in \d+\.\d s", lines[1])
    assert lines[2] == "amp-docs: [prog] cell 2/3 skipped (needs pkg:mslk)"
    m = re.fullmatch(r"amp-docs: \[prog\] cell 3/3 done in (\d+\.\d) s", lines[3])
    assert m and float(m.group(1)) >= 0.3
    assert re.fullmatch(r"amp-docs: \[prog\] finished in \d+\.\d s", lines[4]) and len(lines) == 5


def test_progress_names_the_failing_cell(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(PROGRESS_ENV_VAR, "cells")
    with pytest.raises(ChapterExecutionError):
        execute(tmp_path, "bad", ("", "x = 1"), ("", "1 / 0"), ("", "x"))
    err = capsys.readouterr().err
    assert re.search(r"^amp-docs: \[bad\] cell 2/3 failed in \d+\.\d s$", err, re.M)
    assert re.search(r"^amp-docs: \[bad\] failed at cell 2/3 after \d+\.\d s$", err, re.M)
    assert "cell 3/3" not in err


def test_progress_levels(monkeypatch, capsys):
    monkeypatch.setenv(PROGRESS_ENV_VAR, "chapters")
    p = ChapterProgress("c", 2)
    p.started(), p.cell(1, 0.5), p.finished(1.0)
    assert capsys.readouterr().err.splitlines() == [
        "amp-docs: [c] started: 2 code cells",
        "amp-docs: [c] finished in 1.0 s",
    ]
    monkeypatch.setenv(PROGRESS_ENV_VAR, "off")
    ChapterProgress("c", 2).started()
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(PROGRESS_ENV_VAR, "loud")
    with pytest.raises(ValueError, match="'loud'"):
        progress_level()


def test_mkdocs_build_shows_progress_and_quiet_shows_only_chapters(mini_site, monkeypatch):
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    loud = mkdocs_build(mini_site).stderr
    for c in "ab":
        assert f"amp-docs: [{c}] started: 1 code cells" in loud
        assert re.search(rf"^amp-docs: \[{c}\] cell 1/1 done in \d+\.\d s$", loud, re.M)
        assert re.search(rf"^amp-docs: \[{c}\] finished in \d+\.\d s$", loud, re.M)
    a = mini_site / "docs" / "chapters" / "a.md"
    a.write_text(a.read_text() + "\n```python\ny = 2\n```\n")  # a code edit re-executes (prose alone merges)
    quiet = mkdocs_build(mini_site, "-q").stderr
    assert "amp-docs: [a] started: 2 code cells" in quiet and "amp-docs: [a] finished in" in quiet
    assert "cell 1/1" not in quiet and "[b]" not in quiet  # b is cached: nothing executes
