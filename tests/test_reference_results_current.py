"""Every committed reference result still belongs to a cell of the current chapters (issue 32).

A gated cell's reference is keyed by the hash of its source (``docsite.execute.reference_path``): edit the cell
and its reference is no longer found, so a build would show the skip note without it. This test reports such
orphans (and references of cells no longer gated by hardware) instead of letting them go unseen; the fix is to
re-run the chapter on a GPU (scripts/gpu_build.py) or delete the file."""

import functools
import json
from pathlib import Path

import jupytext

from amp_docs_lib.core.gating import requirements_from_tags
from amp_docs_lib.core.paths import REFERENCE_RESULTS
from amp_docs_lib.docsite.execute import cell_id
from amp_docs_lib.docsite.references import MACHINE_FILE

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = REPO / "docs" / "chapters"


@functools.cache  # one read of each chapter, however many of its references are checked
def gated_cells(chapter: Path) -> dict[str, list[str]]:
    nb = jupytext.read(chapter)
    return {
        cell_id(c): requirements_from_tags(c.metadata.get("tags", []))
        for c in nb.cells
        if c.cell_type == "code" and requirements_from_tags(c.metadata.get("tags", []))
    }


def reference_files() -> list[Path]:
    root = REPO / REFERENCE_RESULTS
    return sorted(p for p in root.glob("*/*.json") if not (p.parent / MACHINE_FILE).exists())


def test_every_reference_result_matches_a_gated_cell_of_its_chapter():
    files = reference_files()
    assert files, "no gated reference results committed"
    orphans = []
    for p in files:
        chapter = CHAPTERS / f"{p.parent.name}.md"
        cells = gated_cells(chapter) if chapter.exists() else {}
        if p.stem not in cells:
            orphans.append(f"{p.relative_to(REPO)}: no gated cell of {chapter.name} has this source any more")
        elif json.loads(p.read_text())["requires"] != cells[p.stem]:
            orphans.append(f"{p.relative_to(REPO)}: the cell's requirements changed to {cells[p.stem]}")
    assert orphans == []


def test_an_edited_cell_orphans_its_reference(tmp_path):
    """The check's false variant: the same cell with one character changed no longer finds its reference."""
    p = reference_files()[0]
    chapter = (CHAPTERS / f"{p.parent.name}.md").read_text(encoding="utf-8")
    nb = jupytext.reads(chapter, fmt="md")
    cell = next(c for c in nb.cells if c.cell_type == "code" and cell_id(c) == p.stem)
    edited = tmp_path / f"{p.parent.name}.md"
    edited.write_text(chapter.replace(cell.source, cell.source + " "), encoding="utf-8")
    assert p.stem in gated_cells(CHAPTERS / f"{p.parent.name}.md")
    assert p.stem not in gated_cells(edited)


def test_every_reference_result_is_stamped_with_its_machine():
    """Issue 32: each reference names the GPU, torch, CUDA, profile and date it was measured with."""
    for p in reference_files():
        stamp = json.loads(p.read_text()).get("stamp") or ""
        assert all(part in stamp for part in (" (sm ", "torch ", "CUDA ", "profile ")), (p.name, stamp)


def test_a_reference_speaks_of_its_own_machine(tmp_path):
    """Read of 2026-11-25: a committed H100 fact read "On this machine (NVIDIA H100 ...)" on a CPU build's page."""
    from types import SimpleNamespace

    from amp_docs_lib.docsite.execute import load_reference, reference_path

    cell = SimpleNamespace(source="probe()")
    p = reference_path("ch", cell, tmp_path)
    p.parent.mkdir(parents=True)
    fact = (
        '<p class="amp-claim amp-claim--machine">◆ On this machine (NVIDIA H100 80GB HBM3): fast. '
        '<span class="amp-claim-verdict">measured on this machine</span></p><table></table>'
        '<div class="amp-stamp amp-stamp--measured" data-amp-provenance="{&quot;x&quot;: 1}">measured on H100</div>'
    )
    p.write_text(
        json.dumps({"requires": ["cuda"], "stamp": "NVIDIA H100 80GB HBM3 (sm 9.0) · torch 2.11.0", "html": fact})
    )
    shown = load_reference("ch", cell, tmp_path)
    assert "this machine" not in shown
    assert "On that machine (NVIDIA H100 80GB HBM3)" in shown and "measured on that machine" in shown
    assert "Measured on NVIDIA H100 80GB HBM3 (sm 9.0) · torch 2.11.0" in shown
    assert "amp-stamp--measured" not in shown and "<table></table>" in shown  # said once, not per table


def test_a_package_skip_note_gives_the_packages_own_install_route():
    """Second fp8 read of 2026-11-25: the Transformer Engine note said "It needs nothing else ... pip install
    transformer_engine", which its install guide and the page contradict (CUDA, the [pytorch] extra)."""
    from amp_docs_lib.core.gating import skip_note_html

    te = skip_note_html(["pkg:transformer_engine"])
    assert "nothing else" not in te and "CUDA 12.1" in te
    assert "pip install --no-build-isolation transformer_engine[pytorch]" in te
    assert "It needs nothing else" in skip_note_html(["pkg:onnxruntime"])
    assert "pip install onnxruntime" in skip_note_html(["pkg:onnxruntime"])


def test_no_reference_result_shows_a_python_warning():
    """The autocast reference carried the H100 run's stderr (a ComplexHalf UserWarning) onto the CPU page."""
    import re

    warning = re.compile(r"\.py:\d+: \w*Warning: ")
    assert [p.name for p in reference_files() if warning.search(json.loads(p.read_text())["html"])] == []
