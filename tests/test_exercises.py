"""The exercises' prediction checks can say "did not hold"; their verdict rules are the page's."""

import runpy

import pytest

from amp_docs_lib.page.snippets import run_snippet
from conftest import REPO_ROOT

pytestmark = pytest.mark.slow
EX = REPO_ROOT / "examples" / "exercises"


def _run(name, args, capsys):
    """Run an exercise as the page does (``run_snippet``): its RESULT and what it printed."""
    run = run_snippet(f"exercises/{name}", args)
    return run.globals["RESULT"], run.output


def test_stress_separates_calibration_from_overflow_and_checks_predictions(capsys):
    args = ["--steps", "8", "--scales", "1", "1e3", "1e5", "--device", "cpu"]
    res, out = _run("stress_stability.py", args + ["--predict-overflow-scale", "1e3"], capsys)
    rows = {(r["precision"], r["input scale"]): r for r in res["rows"]}
    assert rows[("amp_fp16", 1e3)]["cause of skips"] == "scaler calibration"
    assert rows[("amp_fp16", 1e3)]["non-finite losses"] == 0 and rows[("amp_fp16", 1e3)]["skipped steps"] > 0
    assert rows[("amp_fp16", 1e5)]["cause of skips"] == "forward overflow"
    assert res["forward overflow scale"] == 1e5
    assert "1000 -> did not hold" in out  # a wrong prediction is reported as wrong


def test_timing_verdict_comes_from_the_interval_of_the_interleaved_ratio():
    """The old rule compared medians with the IQR of single blocks and called a 16x difference "same" under load."""
    from amp_docs_lib.core.timing import Comparison

    ns = runpy.run_path(str(EX / "fp32_vs_amp.py"), run_name="not_main")
    c = lambda lo, hi: Comparison(None, None, (lo + hi) / 2, lo, hi, 15, 0.9)  # noqa: E731
    assert ns["compare"](c(1.1, 1.4)) == "faster"
    assert ns["compare"](c(0.05, 0.08)) == "slower"  # a 16x slowdown with a wide spread is still resolved
    assert ns["compare"](c(0.9, 1.2)) == "same"  # the interval holds 1: no difference resolved


def test_config_prediction(capsys):
    res, out = _run("precision_from_config.py", ["--precision", "amp_fp16", "--predict-scaler", "off"], capsys)
    assert res["scaler"] == "on" and "did not hold" in out
