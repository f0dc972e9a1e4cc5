"""Exercises page, independent read 34: what the exercises measure counts each stored tensor once."""

import runpy

import pytest
import torch
from torch import nn

from amp_docs_lib.amp.precision import precision_setup
from conftest import REPO_ROOT

EX = REPO_ROOT / "examples" / "exercises"


@pytest.fixture(scope="module")
def batch_size_limit():
    return runpy.run_path(str(EX / "batch_size_limit.py"), run_name="batch_size_limit")


def test_fp32_step_counts_the_input_batch_and_the_weights_once(batch_size_limit):
    """Read 34, exercises finding 1: in FP32 the Linear saves the input batch and its weight themselves; the
    step's bytes counted both twice (the input as saved and as input, the weight as saved and as state)."""
    step_bytes, state_bytes = batch_size_limit["step_bytes"], batch_size_limit["model_state_bytes"]
    torch.manual_seed(0)
    model, setup = nn.Linear(256, 10), precision_setup("fp32", "cpu")
    small, large = (step_bytes(model, b, setup, "cpu") for b in (64, 128))
    per_sample = (large - small) / 64
    # the input (256 FP32 values) plus what the loss saves (FP32 log-probabilities, an int64 target): not 2x input
    assert 256 * 4 + 10 * 4 <= per_sample < 2 * 256 * 4, per_sample
    fixed = small - 64 * per_sample  # what does not grow with the batch: the model state, weights not counted again
    assert state_bytes(model) <= fixed < state_bytes(model) + 10 * 256 * 4, (fixed, state_bytes(model))


def test_amp_step_counts_the_bf16_copies_beside_the_fp32_originals(batch_size_limit):
    """Under autocast the saved input and weight are BF16 copies, new storages: 2 bytes per input feature more."""
    step_bytes = batch_size_limit["step_bytes"]
    model = nn.Linear(256, 10)
    fp32, amp = (
        (
            step_bytes(model, 128, precision_setup(n, "cpu"), "cpu")
            - step_bytes(model, 64, precision_setup(n, "cpu"), "cpu")
        )
        / 64
        for n in ("fp32", "amp_bf16")
    )
    assert amp - fp32 >= 256 * 2, (fp32, amp)


def _run_fp32_vs_amp(monkeypatch, capsys, load):
    import sys

    monkeypatch.setattr("os.getloadavg", lambda: (load, load, load))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "fp32_vs_amp.py",
            "--steps",
            "2",
            "--samples",
            "64",
            "--rounds",
            "5",
            "--precisions",
            "fp32",
            "amp_bf16",
            "--predict",
            "slower",
            "--device",
            "cpu",
        ],
    )
    res = runpy.run_path(str(EX / "fp32_vs_amp.py"), run_name="__main__")["RESULT"]
    return res, capsys.readouterr().out


def test_fp32_vs_amp_draws_no_speed_verdict_on_a_busy_machine(monkeypatch, capsys):
    """Read 34, exercises finding 2: the page published 0.601 ms +- 194 ms IQR from a loaded machine as a result.
    More runnable tasks than cores (load average 5 on 2 cores) gives no verdict and no checked prediction."""
    res, out = _run_fp32_vs_amp(monkeypatch, capsys, load=5.0)
    assert res["busy"] and res["amp_bf16"]["vs fp32"] == "no verdict (machine busy)"
    assert "machine busy" in out and "not checked" in out


def test_fp32_vs_amp_draws_a_verdict_on_a_quiet_machine(monkeypatch, capsys):
    res, out = _run_fp32_vs_amp(monkeypatch, capsys, load=1.0)  # one runnable task (this one) on two cores
    from amp_docs_lib.core.timing import NOISE_FLOOR_TOO_HIGH

    # a verdict is drawn: the harness's (a noisy A/A control is one: it failed CI once at 7239eac)
    assert not res["busy"] and res["amp_bf16"]["vs fp32"] in ("faster", "slower", "same", NOISE_FLOOR_TOO_HIGH)
    assert "machine busy" not in out


@pytest.mark.parametrize("load, busy", [(5.0, True), (1.0, False)])
def test_quantize_model_says_when_its_latencies_are_not_comparable(monkeypatch, capsys, load, busy):
    """Read 34, exercises finding 4: latencies published without a spread from a loaded machine read as results."""
    import sys

    monkeypatch.setattr("os.getloadavg", lambda: (load, load, load))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(sys, "argv", ["quantize_model.py", "--epochs", "2", "--hidden", "16", "--min-time", "0.01"])
    res = runpy.run_path(str(EX / "quantize_model.py"), run_name="__main__")["RESULT"]
    out = capsys.readouterr().out
    assert res["load per core"] == load / 2
    assert ("the latencies above are not comparable" in out) == busy
    assert "IQR" in out
