"""Second read of the split fp8 and quantization chapters (issue 36): what the fixes promise."""

import re

from amp_docs_lib.core import timing
from amp_docs_lib.core.paths import CHAPTERS_DIR
from amp_docs_lib.fp8 import gemm


def test_throughput_table_shows_the_a_a_control_its_verdicts_clear(monkeypatch):
    seen = []
    real = timing.interleaved

    def spy(fns, **kw):
        seen.append(real(fns, **kw))
        return seen[-1]

    monkeypatch.setattr(timing, "interleaved", spy)
    t = gemm.throughput_table(32, device="cpu", rounds=timing.MIN_ROUNDS, min_block_s=0.001)
    timed = t[t["runs here"] == "yes"]
    assert len(seen) == 1 and len(timed) >= 2
    assert (timed[gemm.AA_COLUMN] == seen[0].aa.interval_text()).all()
    assert t[t["runs here"] != "yes"][gemm.AA_COLUMN].isna().all()


def _parts(chapter: str) -> list[str]:
    return re.split(r"<!-- amp-docs:subpage title=\"[^\"]+\" -->\n", (CHAPTERS_DIR / f"{chapter}.md").read_text())


def test_each_later_part_opens_with_its_scope_before_its_first_section():
    for chapter in ("fp8", "quantization"):
        for part in _parts(chapter)[1:]:
            opening = part.split("\n## ", 1)[0]
            assert opening.startswith("This page ") and "](#" in opening, (chapter, opening[:80])


def test_quantization_timing_note_sits_on_the_first_part_that_times():
    first, second, third = _parts("quantization")
    note = '<div class="admonition note" id="timings-in-this-chapter">'
    assert note in second and note not in first
    assert "(#timings-in-this-chapter)" in second.split("\n## ", 1)[0]
    assert "(#timings-in-this-chapter)" in third.split("\n## ", 1)[0]
