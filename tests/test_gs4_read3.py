"""GradScaler chapter, third independent read (issue 33): undetected spikes, accumulation, a zero scale."""

import torch

from amp_docs_lib.amp import scale_dynamics
from amp_docs_lib.amp.grad_scaler import ReferenceGradScaler, _tiny_step_setup, zero_scale_step
from conftest import run_example_edited

FP16_INF_AT = 65520.0  # FP16's round-to-nearest overflow threshold


def _missed_spikes(sc):
    run = scale_dynamics.simulate(sc)
    spikes = run[run["step"] % sc.spike_every == sc.spike_every - 1]
    return spikes, spikes[~spikes["skipped"]]


def test_a_spike_that_fits_at_the_current_scale_is_not_skipped():
    spikes, missed = _missed_spikes(scale_dynamics.scenario("periodic overflow"))
    # the chapter's check: some, not all, spikes go undetected, each one that fits in FP16
    assert 0 < len(missed) < len(spikes)
    assert (missed["grad"] * missed["scale"]).abs().lt(FP16_INF_AT).all()
    # false variant (every spike is caught): spikes large enough to overflow at any scale >= 1
    _, missed_big = _missed_spikes(scale_dynamics.scenario("periodic overflow", spike_factor=1e9))
    assert len(missed_big) == 0


def test_accumulation_check_fails_when_accumulation_adds_fp16_sized_error():
    g = run_example_edited(None, "amp_patterns/grad_accumulation.py")
    assert g["accumulation_vs_amp"] < 0.1 * g["fp16_noise"]  # the chapter's check
    # false variant: accumulation adds an error as large as FP16 autocast's own (doubling it); the old
    # check (accumulation_error <= 2 * fp16_noise) passed this
    worse = g["accumulated"] + (g["full_batch_amp"] - g["full_batch_fp32"])
    worse_vs_amp = float((worse - g["full_batch_amp"]).norm() / g["full_batch_fp32"].norm())
    assert not worse_vs_amp < 0.1 * g["fp16_noise"]


def test_zero_scale_takes_the_step_with_nan_weights_in_torch_and_the_reference():
    df = zero_scale_step().set_index("scaler")
    assert not df["inf found"].any()
    assert df["weights NaN after step"].all()
    assert (df["scale after update"] == 0.0).all()


def test_reference_scaler_unscales_by_inf_at_scale_zero():
    model, x = _tiny_step_setup()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = ReferenceGradScaler(init_scale=1.0)
    scaler.update(0.0)
    scaler.scale(model(x).square().mean()).backward()
    scaler.unscale_(opt)  # raised ZeroDivisionError before
    assert all(p.grad.isnan().all() for p in model.parameters())


def test_real_backward_measures_subnormal_precision_not_only_zeros():
    from amp_docs_lib.amp.underflow import real_backward_underflow

    df = real_backward_underflow()
    # the chapter's checks: most elements subnormal in FP16; the unscaled error largest at the input
    # layer and more than ten times the scaled one in every layer
    assert (df["below fp16 normal (fp32)"] > 0.5).all()
    assert int(df.loc[df["rel. error fp16"].idxmax(), "layer"]) == 1
    assert (10 * df["rel. error fp16 scaled"] < df["rel. error fp16"]).all()
    # false variant: gradients far from FP16's subnormals (a larger init gives larger gradients)
    big = real_backward_underflow(gain=4.0)
    assert not (10 * big["rel. error fp16 scaled"] < big["rel. error fp16"]).all()


def _custom_autograd(tmp_path, replace=None) -> dict:
    return run_example_edited(tmp_path, "amp_patterns/custom_autograd.py", replace)


def test_custom_fwd_check_sees_autocast_off_inside(tmp_path):
    g = _custom_autograd(tmp_path)
    assert g["autocast_in_forward"] and not any(g["autocast_in_forward"])  # the chapter's check
    # false variant: custom_fwd without cast_inputs leaves autocast on inside forward
    bad = _custom_autograd(
        tmp_path, ("custom_fwd(device_type=device, cast_inputs=torch.float32)", "custom_fwd(device_type=device)")
    )
    assert all(bad["autocast_in_forward"])
