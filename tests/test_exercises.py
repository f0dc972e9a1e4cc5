"""The exercises' prediction checks can say "did not hold"; their verdict rules are the page's."""

import runpy
import sys

import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.slow
EX = REPO_ROOT / "examples" / "exercises"


def _run(name, args, capsys):
    saved = sys.argv
    sys.argv = [str(EX / name), *args]
    try:
        ns = runpy.run_path(str(EX / name), run_name="__main__")
    finally:
        sys.argv = saved
    return ns["RESULT"], capsys.readouterr().out


def test_stress_separates_calibration_from_overflow_and_checks_predictions(capsys):
    args = ["--steps", "8", "--scales", "1", "1e3", "1e5", "--device", "cpu"]
    res, out = _run("stress_stability.py", args + ["--predict-overflow-scale", "1e3"], capsys)
    rows = {(r["precision"], r["input scale"]): r for r in res["rows"]}
    assert rows[("amp_fp16", 1e3)]["cause of skips"] == "scaler calibration"
    assert rows[("amp_fp16", 1e3)]["non-finite losses"] == 0 and rows[("amp_fp16", 1e3)]["skipped steps"] > 0
    assert rows[("amp_fp16", 1e5)]["cause of skips"] == "forward overflow"
    assert res["forward overflow scale"] == 1e5
    assert "1000 -> did not hold" in out  # a wrong prediction is reported as wrong


def test_timing_verdict_needs_a_gap_beyond_the_spread():
    ns = runpy.run_path(str(EX / "fp32_vs_amp.py"), run_name="not_main")

    class T:
        def __init__(self, median_s, iqr_s):
            self.median_s, self.iqr_s = median_s, iqr_s

    assert ns["compare"](T(1.0, 0.1), T(2.0, 0.1)) == "faster"
    assert ns["compare"](T(2.0, 0.1), T(1.0, 0.1)) == "slower"
    assert ns["compare"](T(1.0, 0.5), T(1.2, 0.1)) == "same"  # inside the spread: no verdict


def test_config_prediction(capsys):
    res, out = _run("precision_from_config.py", ["--precision", "amp_fp16", "--predict-scaler", "off"], capsys)
    assert res["scaler"] == "on" and "did not hold" in out
