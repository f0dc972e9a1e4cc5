"""GradScaler chapter, second independent read (issue 33): each check fails on the read's false variant."""

import pytest
import torch

from amp_docs_lib.amp.grad_scaler import closure_under_scaler, fused_optimizer_unscaling
from conftest import run_example_edited


def _fused_kernel_unscales(df) -> bool:  # the chapter's check on the weights
    fz = df.set_index("fused")
    return float(fz["max |weight difference| vs non-fused"].iloc[0]) == 0.0 and bool(
        (fz["max |weight difference| vs gradients left scaled"] > 0).all()
    )


class _IgnoresGradScale(torch.optim.SGD):
    """A 'fused' optimizer that takes GradScaler's fused path but never divides by grad_scale."""

    def __init__(self, params, fused=False, **kw):
        super().__init__(params, **kw)
        self._step_supports_amp_scaling = fused

    def step(self, closure=None):
        self.grad_scale = self.found_inf = None  # what GradScaler handed over, dropped
        return super().step(closure)


def test_fused_check_fails_for_a_kernel_that_ignores_the_scale():
    df = fused_optimizer_unscaling(scale=1024.0)
    if df["_step_supports_amp_scaling"].isna().any():
        pytest.skip("no fused SGD for the CPU in this torch")
    assert _fused_kernel_unscales(df)
    # false variant: the fused path taken, the scale ignored
    assert not _fused_kernel_unscales(
        fused_optimizer_unscaling(scale=1024.0, optimizer_class=_IgnoresGradScale, lr=0.1)
    )


def test_adam_first_step_could_not_tell_scaled_from_unscaled():
    # why the chapter measures SGD: Adam's first step is the same for gradients x1 and x1024
    df = fused_optimizer_unscaling(scale=1024.0, optimizer_class=torch.optim.AdamW, lr=1e-3)
    assert (df["max |weight difference| vs gradients left scaled"] == 0).all()


def test_positional_closure_runs_and_leaves_the_gradients_scaled():
    run = closure_under_scaler(scale=1024.0)
    assert run["keyword closure error"] is not None
    assert run["positional closure error"] is None
    assert run["gradient left / true gradient"] == pytest.approx(1024.0, rel=1e-5)
    assert closure_under_scaler(scale=64.0)["gradient left / true gradient"] == pytest.approx(64.0, rel=1e-5)


def _run_custom_autograd(tmp_path, replace=None) -> dict:
    return run_example_edited(tmp_path, "amp_patterns/custom_autograd.py", replace)


def _cast_to_fp32(g: dict) -> bool:  # the chapter's check on custom_fwd
    return g["output"].dtype == torch.float16 and g["log_p"].dtype == g["log_not_p"].dtype == torch.float32


def test_custom_fwd_check_fails_without_cast_inputs(tmp_path):
    assert _cast_to_fp32(_run_custom_autograd(tmp_path))
    # false variant (the read's finding 2): the decorator without cast_inputs
    bare = _run_custom_autograd(
        tmp_path,
        (
            "@torch.amp.custom_fwd(device_type=device, cast_inputs=torch.float32)",
            "@torch.amp.custom_fwd(device_type=device)",
        ),
    )
    assert not _cast_to_fp32(bare)


def test_bce_backoff_follows_the_scaled_fp16_gradient():
    from amp_docs_lib.amp.grad_scaler import bce_scaled_backoff

    df = bce_scaled_backoff(probabilities=(0.5, 0.1, 0.01), batch=4, init_scale=2.0**16)
    # S/(4p) must fall below FP16's overflow point 65520: p=0.1 fits at 2^14, p=0.01 at 2^11
    assert df["scale that fits"].tolist() == [2.0**16, 2.0**14, 2.0**11]
    assert df["steps skipped"].tolist() == [0, 2, 5]
    assert df["unscaled gradient finite in FP16"].all()
    # a scale already small enough (1024 / 0.04 = 25600 < 65520) is never backed off
    assert bce_scaled_backoff(probabilities=(0.01,), batch=4, init_scale=2.0**10)["steps skipped"].tolist() == [0]


def test_clipping_keeps_the_forward_in_range_and_the_spiral_does_not():
    from amp_docs_lib.amp import scale_dynamics

    sc = scale_dynamics.scenario("death spiral", **scale_dynamics.REMEDIES["gradient clipping"])
    clipped = scale_dynamics.simulate(sc)
    spiral = scale_dynamics.simulate(scale_dynamics.scenario("death spiral"))
    fp16_inf_at = 65520.0
    assert (sc.act_gain * clipped["w"].abs() < fp16_inf_at).all()
    assert (sc.act_gain * spiral["w"].abs() >= fp16_inf_at).any()


def test_guarded_scheduler_counts_only_the_steps_taken():
    from amp_docs_lib.amp.grad_scaler import skipped_steps_and_scheduler

    guarded, _ = skipped_steps_and_scheduler(guarded=True)
    assert guarded["lr of this step"].tolist() == [0.1, 0.1, 0.05, 0.05]
    # false variant: without the guard the schedule counts the skipped steps too
    plain, _ = skipped_steps_and_scheduler()
    assert plain["lr of this step"].tolist() == [0.1, 0.05, 0.025, 0.0125]


def test_one_scaler_two_optimizers_skips_only_the_one_with_inf():
    from amp_docs_lib.amp.grad_scaler import multiple_optimizers_one_skips

    df = multiple_optimizers_one_skips(scale=1024.0).set_index("optimizer")
    assert df["weights moved"].to_dict() == {"A": False, "B": True}
    assert (df["scale after update"] == 512.0).all()


def _accumulation(tmp_path, replace=None) -> dict:
    return run_example_edited(tmp_path, "amp_patterns/grad_accumulation.py", replace)


def test_accumulation_check_fails_without_the_division(tmp_path):
    g = _accumulation(tmp_path)
    assert g["accumulation_vs_amp"] < 0.1 * g["fp16_noise"]  # the chapter's check
    # false variant: the micro-batch losses summed, not averaged (only the check's loss changed)
    bad = _accumulation(
        tmp_path,
        (
            "        loss = F.cross_entropy(model(xb), yb) / accumulation_steps\n",
            "        loss = F.cross_entropy(model(xb), yb)\n",
        ),
    )
    assert not bad["accumulation_vs_amp"] < 0.1 * bad["fp16_noise"]
