"""Issue 34, independent read of the exercises page: what the scripts measure, not what their tables say."""

import runpy

import pytest
import torch

from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.amp.toy_task import make_data, make_model
from amp_docs_lib.page.snippets import run_snippet
from conftest import REPO_ROOT

EX = REPO_ROOT / "examples" / "exercises"
FP16_INF = 65520  # from here a cast to FP16 gives inf


def _stress(scales, steps):
    run = run_snippet("exercises/stress_stability.py", ["--steps", str(steps), "--scales", *scales, "--device", "cpu"])
    return {(r["precision"], r["input scale"]): r for r in run.globals["RESULT"]["rows"]}, run.output


def test_fp16_forward_overflows_from_the_input_before_any_activation_does():
    """At 2e4 no activation reaches 65520, yet the FP16 forward overflows: the input (max|x| 4.1) already does.
    The old script reported only activations, which blamed them for the overflow."""
    rows, _ = _stress(["2e4"], 2)
    r = rows[("amp_fp16", 2e4)]
    assert r["largest activation (fp32)"] < FP16_INF <= r["largest |input|"]
    assert r["non-finite losses"] == 2
    for r in rows.values():  # the same input in every precision
        assert r["largest |input|"] == rows[("amp_fp16", 2e4)]["largest |input|"]


def test_a_run_with_every_step_skipped_is_not_called_calibration_and_scales_print_apart():
    """At 1e3 the scaler needs 7 halvings; in 3 steps none is kept: calibration that did not finish."""
    rows, out = _stress(["1.5e4", "1e3"], 3)
    r = rows[("amp_fp16", 1e3)]
    assert r["non-finite losses"] == 0 and r["skipped steps"] == 3 and r["first kept step"] is None
    assert r["cause of skips"] == "every step skipped, none kept"
    assert "1.5e+04" in out  # the old :7.0e format printed 1.5e4 as 2e+04


def test_autocast_bf16_outputs_of_linear_and_relu_are_bf16_and_only_the_loss_fp32():
    forward_dtypes = runpy.run_path(str(EX / "fp32_vs_amp.py"), run_name="not_main")["forward_dtypes"]
    x, y = make_data(16)
    amp = forward_dtypes(make_model(), x, y, precision_setup("amp_bf16"))
    assert [d for _, d in amp["layer outputs"]] == ["bfloat16"] * 5 and amp["loss"] == "float32"
    fp32 = forward_dtypes(make_model(), x, y, precision_setup("fp32"))  # the control: no autocast, no BF16
    assert {d for _, d in fp32["layer outputs"]} == {"float32"}


@pytest.mark.parametrize(
    "precision, params, scale",
    [("bf16", "bfloat16", 1.0), ("amp_fp16", "float32", 2.0**16), ("amp_bf16", "float32", 1.0)],
)
def test_config_exercise_measures_parameters_and_the_backward_scale(precision, params, scale):
    run = run_snippet("exercises/precision_from_config.py", ["--precision", precision])
    res = run.globals["RESULT"]
    assert res["params"] == params and res["backward scale"] == scale
    assert res["scaler"] == ("on" if scale > 1 else "off")
    assert "--precision (overriding precision.toml's 'amp_bf16')" in run.output


def test_backward_scale_reads_the_gradient_not_the_scaler_setting():
    """A scaler switched on by hand after setup multiplies the backward; the measurement sees it."""
    backward_scale = runpy.run_path(str(EX / "precision_from_config.py"), run_name="not_main")["backward_scale"]
    x, y = make_data(16)
    setup = precision_setup("amp_bf16")
    assert backward_scale(make_model(), x, y, setup) == 1.0
    setup.scaler.__init__("cpu", init_scale=8.0, enabled=True)
    assert backward_scale(make_model(), x, y, setup) == pytest.approx(8.0, rel=1e-2)


def test_the_batch_ratio_follows_the_budget_with_the_same_per_sample_costs():
    """The chapter's '1' comes from the 8 MiB budget: 12 MiB gives 2 with identical per-sample bytes."""
    res = {
        b: run_snippet(
            "exercises/batch_size_limit.py",
            ["--device", "cpu", "--budget-mb", b, "--max-batch", "8192", "--width", "128"],
        ).globals["RESULT"]
        for b in ("8", "12")
    }
    assert res["8"]["ratio"] == 1 and res["12"]["ratio"] == 2
    for n in ("fp32", "amp_bf16"):
        assert res["8"]["largest"][n]["bytes per sample"] == res["12"]["largest"][n]["bytes per sample"]


def test_cuda_state_share_counts_no_adam_moments():
    """On CUDA the peak holds parameters and gradients but no Adam moments: the state is 2x the parameters' bytes,
    not the 4x the CPU count uses."""
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    run = run_snippet("exercises/batch_size_limit.py", ["--device", "cuda", "--width", "16", "--max-batch", "64"])
    params = (256 * 16 + 16) + (16 * 16 + 16) + (16 * 10 + 10)
    for name, v in run.globals["RESULT"]["largest"].items():
        assert v["state bytes"] == 2 * params * (2 if name == "bf16" else 4)
