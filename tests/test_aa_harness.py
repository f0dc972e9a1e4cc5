"""Issue 34 finding 25: every interleaved set carries an A/A control (its baseline timed again in the same
rounds), reported beside the comparisons, and no verdict is drawn from a set whose A/A pair resolved a
difference (the noise floor was too high)."""

from types import SimpleNamespace

import pytest

from amp_docs_lib.core import timing


class FakeTimer:
    """Stands in for ``torch.utils.benchmark.Timer``: a block's mean per call is fixed per function, so the
    test decides which pair resolves a difference (no timing in the test)."""

    seconds: dict = {}

    def __init__(self, stmt, globals, num_threads=1, **_):
        self.fn = globals["fn"]

    def timeit(self, number):
        return SimpleNamespace(mean=self.seconds[self.fn])


def _baseline():
    return None


def _candidate():
    return None


def _second_arm():
    return None


def _timed(monkeypatch, base_s, candidate_s, aa_s):
    monkeypatch.setattr(timing.benchmark, "Timer", FakeTimer)
    monkeypatch.setattr(FakeTimer, "seconds", {_baseline: base_s, _candidate: candidate_s, _second_arm: aa_s})
    return timing.interleaved(
        {"base": _baseline, "cand": _candidate}, rounds=5, min_block_s=1e-9, warmup=0, aa_control=_second_arm
    )


def test_a_set_reports_its_aa_interval_beside_the_comparisons():
    res = timing.interleaved(
        {"a": lambda: sum(range(50)), "b": lambda: sum(range(60))}, rounds=5, min_block_s=1e-3, warmup=1
    )
    assert set(res.timings) == {"a", "b"}  # the control is kept apart from the functions asked for
    assert res.aa is not None and res.aa_timing.runs == 5 and len(res.aa_block_times) == 5
    assert res.aa.ratio_lo <= res.aa.ratio <= res.aa.ratio_hi
    c = res.compare("b")
    assert c.aa == res.aa and c.aa_text() == res.aa.interval_text()
    assert res.aa_timing.calls_per_run == res.timings["a"].calls_per_run  # a like-for-like pair
    assert (
        timing.interleaved({"a": _baseline, "b": _candidate}, rounds=5, min_block_s=1e-4, warmup=0, aa_control=False).aa
        is None
    )


def test_a_resolved_difference_is_a_verdict_only_where_the_aa_pair_resolved_none(monkeypatch):
    quiet = _timed(monkeypatch, 1.0, 0.5, 1.0)  # candidate twice as fast; the baseline's two arms agree
    assert quiet.aa.interval_text() == "1.00x [1.00, 1.00]"
    assert quiet.compare("cand").verdict == "faster" and quiet.compare("cand").resolved
    noisy = _timed(monkeypatch, 1.0, 0.5, 2.0)  # same candidate, but the baseline against itself differs 2x
    c = noisy.compare("cand")
    assert (c.ratio_lo, c.ratio_hi) == (2.0, 2.0)  # the interval alone excludes 1 ...
    assert c.verdict == timing.NOISE_FLOOR_TOO_HIGH and not c.resolved  # ... but no verdict is drawn
    assert noisy.aa.verdict == "slower"  # the A/A pair itself (no control of its own): its second arm took 2x


def test_the_verdict_rule_with_other_words():
    aa_quiet = timing.Comparison(None, None, 1.0, 0.95, 1.05, 9, 0.9)
    aa_noisy = timing.Comparison(None, None, 0.8, 0.7, 0.9, 9, 0.9)
    words = ("higher rate", "lower rate")
    assert timing.verdict_for(0.5, 0.8, aa_quiet, words) == "lower rate"
    assert timing.verdict_for(0.5, 0.8, aa_noisy, words) == timing.NOISE_FLOOR_TOO_HIGH
    assert timing.verdict_for(0.9, 1.1, None, words) == timing.UNRESOLVED


def test_the_control_name_cannot_be_taken():
    with pytest.raises(ValueError, match="A/A control's name"):
        timing.interleaved({"a": _baseline, "a" + timing.AA_SUFFIX: _candidate}, rounds=5)


def _fake_timer(aa_s):
    """A timer with the harness's signature whose rounds are fixed: the baseline 1 s per call, every other
    function 0.5 s (twice as fast), and the A/A control's second arm ``aa_s``."""

    def timer(fns, baseline, device="cpu", aa_control=True):
        assert callable(aa_control)  # the sweep passes a copy of its float layer as the second arm
        blocks = {n: [1.0 if n == baseline else 0.5] * 5 for n in fns}
        timings = {n: timing.Timing(n, b[0], 0.0, 5, 1, 1, "cpu", "fake") for n, b in blocks.items()}
        aa = timing.Timing(baseline + timing.AA_SUFFIX, aa_s, 0.0, 5, 1, 1, "cpu", "fake")
        return timing.Interleaved(timings, blocks, baseline, timing.CI_LEVEL, aa, [aa_s] * 5)

    return timer


def test_the_quantization_sweep_draws_no_verdict_where_its_aa_control_resolved():
    from amp_docs_lib.quantization import ptq, speed

    label = ptq.VARIANTS["int8_wo"].label
    for aa_s, expected in ((1.0, "faster"), (2.0, timing.NOISE_FLOOR_TOO_HIGH)):
        bs = speed.batch_sweep(16, 16, [2], _fake_timer(aa_s), names=("int8_wo",), reference=False)
        row = bs.set_index("variant")
        assert row.loc[label, "verdict"] == expected
        assert row.loc["FP32" + timing.AA_SUFFIX, "interval low"] == 1.0 / aa_s  # the A/A row beside the others
    assert speed.aa_summary(bs)["resolved at batch"] == [2]
