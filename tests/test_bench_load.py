"""The load check around CPU timings (amp_docs_lib.bench.load) and the interleaved alignment sweep."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import pytest

from amp_docs_lib.bench import load, matmul
from amp_docs_lib.core import timing


def _check(before_ms, after_ms, runnable, cores=2):
    return load.LoadCheck(cores, 1, [b / 1e3 for b in before_ms], None, list(runnable), [a / 1e3 for a in after_ms])


def test_timing_threads_leaves_one_core(monkeypatch):
    monkeypatch.setattr(load, "machine_cores", lambda: 2)
    assert load.timing_threads() == 1
    monkeypatch.setattr(load, "machine_cores", lambda: 1)
    assert load.timing_threads() == 1
    monkeypatch.setattr(load, "machine_cores", lambda: 16)
    assert load.timing_threads() == 15


def test_quiet_needs_a_steady_reference_and_no_more_runnable_tasks_than_cores():
    steady = [1.0, 1.1, 0.9, 1.05, 0.95]
    quiet = _check(steady, [1.0, 1.02, 0.98], [1, 2, 1])
    assert quiet.quiet and "quiet" in quiet.note()
    # a shift within the reference's own spread before (0.2 ms) is noise, not a drift
    assert _check(steady, [1.15, 1.15, 1.16], [1]).reference_steady
    assert not _check(steady, [1.25, 1.25, 1.26], [1]).reference_steady
    drifted = _check(steady, [2.0, 2.1, 1.9], [1, 1, 1])  # the reference slowed down during the measurement
    assert not drifted.quiet and not drifted.reference_steady
    assert "busy" in drifted.note() and "no conclusion" in drifted.note()
    crowded = _check(
        steady, steady, [3, 4, 3]
    )  # a load present before and after slows both alike: only the count sees it
    assert crowded.reference_steady and not crowded.load_ok and not crowded.quiet
    assert "more runnable tasks than cores" in crowded.note()
    with pytest.raises(ValueError, match="finish"):
        _check(steady, [], [1]).reference_ms


def test_amp_docs_load_check_sets_the_outcome_and_the_note_says_so(monkeypatch):
    from amp_docs_lib.core import settings

    steady = [1.0, 1.1, 0.9, 1.05, 0.95]
    crowded = _check(steady, steady, [3, 4, 3])
    quiet = _check(steady, [1.0, 1.02, 0.98], [1, 2, 1])
    monkeypatch.setenv(settings.LOAD_CHECK_ENV_VAR, "Quiet")
    assert crowded.quiet and "AMP_DOCS_LOAD_CHECK=quiet set this check's outcome" in crowded.note()
    monkeypatch.setenv(settings.LOAD_CHECK_ENV_VAR, "busy")
    assert not quiet.quiet and "AMP_DOCS_LOAD_CHECK=busy" in quiet.note()
    monkeypatch.setenv(settings.LOAD_CHECK_ENV_VAR, "measure")
    assert quiet.quiet and not crowded.quiet and "set this check" not in quiet.note()
    monkeypatch.setenv(settings.LOAD_CHECK_ENV_VAR, "calm")
    with pytest.raises(settings.SettingError, match=r"AMP_DOCS_LOAD_CHECK='calm'.*valid: measure, quiet, busy"):
        settings.check_environment()


def test_a_set_load_check_is_part_of_the_chapter_cache_key():
    from amp_docs_lib.core.machine import ENVIRONMENT_INPUTS
    from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR

    assert LOAD_CHECK_ENV_VAR in ENVIRONMENT_INPUTS  # a forced outcome is never served as a measured one


def _spinners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


@pytest.mark.slow  # starts a background load of other processes and times beside it (~3 s)
@pytest.mark.skipif(load.runnable_tasks() is None, reason="no /proc/loadavg on this OS")
def test_same_timing_beside_a_background_load_agrees_or_says_busy():
    """One quantity timed twice, the second time beside as many busy processes as there are cores:
    the two agree, or the load check of the second says the machine was busy."""
    first_check = load.LoadCheck.start(min_run_time=0.1)
    first = load.reference_blocks(0.1)
    first_check.finish(min_run_time=0.1)
    procs = _spinners(load.machine_cores())
    try:
        time.sleep(0.3)  # let them start spinning
        busy_check = load.LoadCheck.start(min_run_time=0.1)
        second = load.reference_blocks(0.1)
        busy_check.finish(min_run_time=0.1)
    finally:
        _stop(procs)
    agree = min(first) <= statistics.median(second) <= max(first)
    assert agree or not busy_check.quiet
    # With a spinner per core the machine is busy by construction, and the check sees it.
    assert not busy_check.quiet, busy_check.note()
    assert "busy" in busy_check.note()


def test_alignment_sweep_interleaves_and_gives_an_interval():
    al = matmul.alignment_sweep(32, ["fp32"], (-1, 0, 8), "cpu", min_run_time=0.001, rounds=5)
    assert al["n"].tolist() == [31, 32, 40]
    base = al[al["n"] == 32].iloc[0]
    assert base["relative to aligned"] == 1.0 and base["verdict"] == "the aligned size"
    for _, r in al[al["n"] != 32].iterrows():
        lo, hi = (float(x) for x in r["interval"].strip("[]").split(","))
        assert lo <= r["relative to aligned"] <= hi
        assert r["verdict"] in ("lower rate", "higher rate", "no difference resolved", timing.NOISE_FLOOR_TOO_HIGH)
        aa_lo, aa_hi = (float(x) for x in r["A/A control"].split("[")[1].strip("]").split(","))
        assert r["verdict"] == (
            timing.NOISE_FLOOR_TOO_HIGH
            if aa_lo > 1 or aa_hi < 1
            else "lower rate"
            if hi < aa_lo  # a verdict must clear the A/A interval, not only 1 (performance reader finding 3)
            else "higher rate"
            if lo > aa_hi
            else "no difference resolved"
        )


def test_dtype_comparison_compares_against_the_first_dtype():
    res = matmul.dtype_comparison(32, ("fp32", "bf16"), "cpu", rounds=5, min_block_s=0.001)
    c = res.compare("bf16")
    assert res.baseline == "fp32" and c.ratio_lo <= c.ratio <= c.ratio_hi


def test_fma_units_resolved_only_when_the_best_rate_exceeds_one_unit(monkeypatch):
    from amp_docs_lib.bench import peaks

    monkeypatch.setattr(peaks, "cpu_clock_ghz", lambda: 2.0)
    monkeypatch.setattr(peaks, "cpu_max_clock_ghz", lambda: 2.0)  # one unit would need 2.4 GHz: above the top clock
    monkeypatch.setattr(peaks, "physical_cores_reported", lambda: 1)
    monkeypatch.setattr(peaks, "cpu_lanes_fp32", lambda capability=None: 16)
    monkeypatch.setattr(peaks.torch, "get_num_threads", lambda: 1)
    one_unit = 2.0e9 * 16 * 2 / 1e12  # 64 GFLOP/s

    def units(best):
        t = peaks.cpu_peak_table(best).set_index("quantity")
        return t.loc["FMA units per core, from the measurement", "value"]

    assert units(one_unit * 1.2) == "2"
    assert units(one_unit * 0.9) == "not resolved"


def test_compile_comparison_interleaves_and_reports_failures(monkeypatch):
    from amp_docs_lib.bench import compiled, model_sweep

    cfg = model_sweep.ladder_configs({"t": (1, 16, 2)}, 32, 8)["t"]
    monkeypatch.setattr(compiled.torch, "compile", lambda m: m)  # the interleaving, without compile's cost
    df = compiled.compile_comparison(cfg, 2, ("fp32",), "cpu", rounds=5, min_run_time=0.001)
    r = df.iloc[0]
    lo, hi = (float(x) for x in r["interval"].strip("[]").split(","))
    assert lo <= r["compile speedup"] <= hi and r["note"] is None
    assert r["verdict"] in ("faster", "slower", "no difference resolved", timing.NOISE_FLOOR_TOO_HIGH)
    assert r["A/A control"].endswith("]")  # the set's A/A interval beside its comparison

    def broken(m):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(compiled.torch, "compile", broken)
    r = compiled.compile_comparison(cfg, 2, ("fp32",), "cpu", rounds=5, min_run_time=0.001).iloc[0]
    assert r["compiled (ms)"] is None and r["note"].startswith("RuntimeError: no compiler here")
