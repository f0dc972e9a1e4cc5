"""GradScaler chapter fixes of issue 33: a skipped step on the fused path, host syncs, pure FP16."""

import pytest

from amp_docs_lib.amp import grad_scaler as G


def test_skipped_step_differs_between_fused_and_non_fused():
    t = G.skipped_step_fused_vs_not().set_index("fused")
    if "step hooks ran" not in t or t["step hooks ran"].isna().any():
        pytest.skip("no fused AdamW for the CPU in this torch")
    assert not t["weights moved"].any()
    assert t.loc[False, "step hooks ran"] == 0 and t.loc[True, "step hooks ran"] == 1
    assert t.loc[False, "optimizer state step"] is None and t.loc[True, "optimizer state step"] is not None
    assert bool(t.loc[False, "scheduler warning"]) and not bool(t.loc[True, "scheduler warning"])
    assert t.loc[False, "host syncs in scaler.step"] >= 1 and t.loc[True, "host syncs in scaler.step"] == 0
    assert (t["host syncs in get_scale()"] >= 1).all()


def test_pure_fp16_parameters_are_refused_by_both_scalers():
    r = G.pure_fp16_unscale()
    assert r["torch.amp.GradScaler"] == "Attempting to unscale FP16 gradients."
    assert r["ReferenceGradScaler"].startswith("Attempting to unscale FP16 gradients")


def test_a_fused_optimizer_steps_fp16_parameters_and_unscales_them():
    """Read of 2026-11-25, finding 1: GradScaler refuses FP16 parameters only with a non-fused optimizer;
    SGD(fused=True) takes step's _step_supports_amp_scaling branch and its kernel unscales."""
    r = G.pure_fp16_fused_step(init_scale=2.0**10)
    assert r["error"] is None and abs(r["update / expected"] - 1) < 0.05
    assert abs(G.pure_fp16_fused_step(init_scale=2.0**14)["update / expected"] - 1) < 0.05  # not the scale
