"""Performance reader (reads5) findings 1, 2, 4, 5 and 9: the load check counts the timing's own threads, the
cache-flush set carries an A/A control, and the page's prose no longer states what nothing measured."""

import re
from pathlib import Path

import torch

from amp_docs_lib.bench import load, mistakes
from amp_docs_lib.core import timing

CHAPTER = Path(__file__).resolve().parents[1] / "docs" / "chapters" / "performance.md"


def _check(runnable, threads, cores=2):
    return load.LoadCheck(
        cores=cores,
        threads=threads,
        before=[1e-3, 1e-3],
        load_before=None,
        runnable=[runnable] * 10,
        after=[1e-3, 1e-3],
    )


def _code_cells() -> list[str]:
    return re.findall(r"^```python[^\n]*\n(.*?)^```", CHAPTER.read_text(encoding="utf-8"), flags=re.S | re.M)


# ---- 1: a 2-thread timing beside one other runnable task on 2 cores is busy ---------------------------


def test_load_check_counts_the_timings_threads(monkeypatch):
    monkeypatch.delenv("AMP_DOCS_LOAD_CHECK", raising=False)
    # this process plus one other task runnable, 2 cores: quiet for a 1-thread timing, busy for a 2-thread one
    assert _check(runnable=2, threads=1).quiet
    assert not _check(runnable=2, threads=2).quiet  # the old rule (runnable <= cores) called this quiet
    assert "outnumber the cores" in _check(runnable=2, threads=2).note()
    assert _check(runnable=1, threads=2).quiet  # nothing else runnable: every thread has a core
    assert not _check(runnable=3, threads=1).quiet


def test_the_thread_count_cell_checks_with_every_core_and_names_no_cause():
    cell = next(c for c in _code_cells() if "mistakes.thread_count(" in c)
    assert "checks.start(threads=load.machine_cores())" in cell
    assert "extra threads did not help" not in cell


# ---- 2: no kernel is inferred from MKL's verbose header ----------------------------------------------------


def test_the_mkl_header_is_not_read_as_a_kernel_width():
    text = CHAPTER.read_text(encoding="utf-8")
    assert "generic kernel" not in text and '"Vector Extensions" not in' not in text


# ---- 4: no unmeasured sentence about the machine being otherwise idle -------------------------------------


def test_no_unmeasured_idle_sentence():
    assert "no other page of the site was being built" not in CHAPTER.read_text(encoding="utf-8")


# ---- 5: the cache-flush set carries an A/A control, and its verdict is drawn against it ------------------


def test_cache_flush_has_an_aa_control():
    a = torch.randn(32, 32)
    r = mistakes.cache_flush(lambda: a @ a, "cpu", rounds=5, calls=3, flush_bytes=2**20)
    lo, hi = r["aa interval"]
    assert lo <= hi and r["verdict"] in (
        "slower when flushed",
        "faster when flushed",
        timing.UNRESOLVED,
        timing.NOISE_FLOOR_TOO_HIGH,
    )
    cell = next(c for c in _code_cells() if "mistakes.cache_flush(" in c)
    assert "None," not in cell and '_r["verdict"]' in cell


def test_flush_verdict_uses_the_aa_floor():
    # an interval above 1 but inside the A/A interval is not a resolved slowdown (against 1 alone it was)
    assert timing.verdict_for(1.05, 1.2, None, ("slower when flushed", "faster when flushed")) == "slower when flushed"
    assert mistakes.flush_verdict(1.05, 1.2, 0.9, 1.3) == timing.UNRESOLVED
    assert mistakes.flush_verdict(1.5, 2.0, 0.9, 1.3) == "slower when flushed"
    assert mistakes.flush_verdict(1.5, 2.0, 1.1, 1.3) == timing.NOISE_FLOOR_TOO_HIGH


# ---- 9: no Markdown inside the page's HTML blocks (it is not processed there) -----------------------------


def test_no_markdown_inside_html_divs():
    text = CHAPTER.read_text(encoding="utf-8")
    for block in re.findall(r"<div[^>]*>(.*?)</div>", text, flags=re.S):
        assert not re.search(r"\[[^\]]+\]\([^)]+\)", block), block  # a Markdown link
        assert "`" not in block, block  # Markdown code
