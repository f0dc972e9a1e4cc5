"""Chapter sources: well-formed, every code cell compiles, and each executes.

Hardware-gated cells cannot run everywhere, so their code is at least compiled
here; on a machine that meets the requirement the build runs them.
"""

import ast

import pytest

pytestmark = pytest.mark.site

from amp_docs_lib.docsite.cache import ExecutionCache, KeyInputs, cache_key
from amp_docs_lib.docsite.execute import EXPECTED_ERROR_TAG, execute_notebook
from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.chapters import chapter_id_for
from amp_docs_lib.core.paths import EXECUTED_DIR
from amp_docs_lib.core.gating import describe, requirements_from_tags

from conftest import CHAPTERS, REPO_ROOT

KNOWN_TAGS = {EXPECTED_ERROR_TAG, "hide-input"}


def test_there_are_chapters():
    assert {c.stem for c in CHAPTERS} >= {"formats", "autocast", "gradscaler"}


@pytest.mark.parametrize("path", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_is_well_formed_and_compiles(path):
    nb = read_chapter(path)
    headings = [line for c in nb.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("# ")]
    assert len(headings) == 1, f"{path.name}: exactly one '# ' title, got {headings}"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        for t in tags:
            assert t in KNOWN_TAGS or t.startswith("requires:"), f"{path.name} cell {i}: unknown tag {t!r}"
        for r in requirements_from_tags(tags):
            describe(r)  # raises for an unknown requirement name
        src = "\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!")))
        compile(src, f"{path.name}[cell {i}]", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("path", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_executes(path):
    """Through the build's cache: free after a build, a full execution otherwise."""
    cid = chapter_id_for(path)
    cache = ExecutionCache(REPO_ROOT / EXECUTED_DIR)
    key = cache_key(path.read_text(encoding="utf-8"), KeyInputs.current())
    hit = cache.get(cid, key)
    nb = hit[1] if hit else execute_notebook(read_chapter(path), cid)[0]
    if not hit:
        cache.put(cid, key, nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or cell.metadata.get("amp_docs", {}).get("skipped"):
            continue  # a gated cell skipped on this machine shows a note, not its outputs
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        expected = EXPECTED_ERROR_TAG in cell.metadata.get("tags", [])
        assert bool(errors) == expected, f"{path.name} cell {i}: error outputs {errors} (expected: {expected})"


def _executed(path):
    cid = chapter_id_for(path)
    cache = ExecutionCache(REPO_ROOT / EXECUTED_DIR)
    hit = cache.get(cid, cache_key(path.read_text(encoding="utf-8"), KeyInputs.current()))
    return hit[1] if hit else execute_notebook(read_chapter(path), cid)[0]


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


def test_documentation_tables_carry_source_stamps_and_measurements_measurement_stamps():
    path = next(c for c in CHAPTERS if c.stem == "autocast")
    results = _results(_executed(path))
    documented = [f for cap, f in results if cap.startswith("Documented categories that differ")
                  or cap.startswith("Probed ops whose documented category differs")]
    assert len(documented) == 2
    assert all("amp-stamp--source" in f and "amp.md" in f and "measured on" not in f for f in documented)
    measured = [f for cap, f in results if cap.startswith("Ops per autocast category on CPU")]
    assert measured and all("amp-stamp--measured" in f for f in measured)
