"""Chapter sources: well-formed, every code cell compiles, and each executes.

Hardware-gated cells cannot run everywhere, so their code is at least compiled
here; on a machine that meets the requirement the build runs them.
"""

import ast
import json

import pytest

from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.gating import describe, requirements_from_tags
from amp_docs_lib.docsite.execute import EXPECTED_ERROR_TAG, cached_execution
from amp_docs_lib.docsite.folds import ANSWER_TAG
from conftest import CHAPTERS, REPO_ROOT, make_chapter

KNOWN_TAGS = {EXPECTED_ERROR_TAG, "hide-input", ANSWER_TAG}


def test_there_are_chapters():
    assert {c.stem for c in CHAPTERS} >= {"formats", "autocast", "gradscaler"}


@pytest.mark.parametrize("path", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_is_well_formed_and_compiles(path):
    nb = read_chapter(path)
    headings = [
        line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("# ")
    ]
    assert len(headings) == 1, f"{path.name}: exactly one '# ' title, got {headings}"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        for t in tags:
            assert t in KNOWN_TAGS or t.startswith("requires:"), f"{path.name} cell {i}: unknown tag {t!r}"
        for r in requirements_from_tags(tags):
            describe(r)  # raises for an unknown requirement name
        src = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        compile(src, f"{path.name}[cell {i}]", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def executed_problems(nb, source) -> list[str]:
    """What is wrong with ``nb`` as the executed form of chapter ``source`` (both notebooks):
    other code than the chapter's (a stale or mis-keyed cache entry), a code cell that did not
    run, an error output in a cell not tagged raises-exception, or a tagged cell that did not raise."""

    def code(n):
        return [(c.source, list(c.metadata.get("tags", []))) for c in n.cells if c.cell_type == "code"]

    problems = []
    if code(nb) != code(source):
        problems.append("the executed notebook's code cells differ from the chapter's")
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        if cell.metadata.get("amp_docs", {}).get("skipped"):
            continue  # a gated cell skipped on this machine shows a note, not its outputs
        if cell.get("execution_count") is None and cell.source.strip():
            problems.append(f"code cell {i} did not run")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        expected = EXPECTED_ERROR_TAG in cell.metadata.get("tags", [])
        if bool(errors) != expected:
            problems.append(f"code cell {i}: error outputs {errors} (expected an error: {expected})")
    return problems


@pytest.mark.site
@pytest.mark.parametrize("path", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_executes(path):
    """The executed notebook the site shows for this chapter (cached, or executed now) is this
    chapter's code, run cell by cell, with errors exactly where the chapter expects them."""
    assert executed_problems(_executed(path), read_chapter(path)) == []


def test_executed_problems_catches_a_stale_or_incomplete_notebook(tmp_path):
    import nbformat

    chapter = tmp_path / "c.md"
    chapter.write_text(make_chapter("C", ("", "x = 1"), ('["raises-exception"]', "1 / 0")))
    source = read_chapter(chapter)
    ran = nbformat.from_dict(json.loads(json.dumps(source)))
    for n, cell in enumerate(c for c in ran.cells if c.cell_type == "code"):
        cell["execution_count"] = n + 1
    ran.cells[-1]["outputs"] = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="", traceback=[])]
    assert executed_problems(ran, source) == []
    stale = nbformat.from_dict(json.loads(json.dumps(ran)))
    stale.cells[1]["source"] = "x = 2"
    assert "differ" in executed_problems(stale, source)[0]
    unrun = nbformat.from_dict(json.loads(json.dumps(ran)))
    unrun.cells[1]["execution_count"] = None
    assert "did not run" in executed_problems(unrun, source)[0]
    silent = nbformat.from_dict(json.loads(json.dumps(ran)))
    silent.cells[-1]["outputs"] = []
    assert "expected an error: True" in executed_problems(silent, source)[0]


def _executed(path):
    return cached_execution(path, root=REPO_ROOT)[0]  # through the build's cache: a later test (or build) reuses it


def _results(nb):
    """(caption, html) of every stamped result in an executed chapter."""
    import re

    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            page = o.get("data", {}).get("text/html", "")
            for fig in re.findall(r'<figure class="amp-result.*?</figure>', page, flags=re.S):
                cap = re.search(r"<(?:figcaption|summary)>(.*?)</", fig, flags=re.S)
                out.append((cap.group(1) if cap else "", fig))
    return out


@pytest.mark.site
def test_documentation_tables_carry_source_stamps_and_measurements_measurement_stamps():
    path = next(c for c in CHAPTERS if c.stem == "autocast")
    results = _results(_executed(path))
    documented = [
        f
        for cap, f in results
        if cap.startswith("Documented categories that differ")
        or cap.startswith("Probed ops whose documented category differs")
    ]
    assert len(documented) == 2
    assert all("amp-stamp--source" in f and "amp.md" in f and "measured on" not in f for f in documented)
    measured = [f for cap, f in results if cap.startswith("Ops per autocast category on CPU")]
    assert measured and all("amp-stamp--measured" in f for f in measured)
