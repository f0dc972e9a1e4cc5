"""ReferenceGradScaler must behave exactly like torch.amp.GradScaler on the same gradient stream."""

import math

import pytest
import torch

from amp_docs_lib.amp.grad_scaler import (ReferenceGradScaler, reference_defaults,
                                      torch_gradscaler_defaults, update_scale)

INJECT = {2: float("inf"), 5: float("nan"), 6: float("-inf"), 13: float("inf")}


def _model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))


def _run(scaler, steps=20, clip=None, lr=0.05):
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    scales, skipped, losses = [], [], []
    for step in range(steps):
        x = torch.randn(32, 8, generator=g)
        y = torch.randn(32, 2, generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        if step in INJECT:  # a gradient that overflowed (inf) or went bad (NaN)
            model[0].weight.grad[0, 0] = INJECT[step]
        before = [p.detach().clone() for p in model.parameters()]
        if clip is not None:
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(opt)
        scaler.update()
        skipped.append(all(torch.equal(b, p) for b, p in zip(before, model.parameters())))
        scales.append(scaler.get_scale())
        losses.append(loss.item())
    return scales, skipped, model, losses


@pytest.mark.parametrize("clip", [None, 0.5])
def test_reference_matches_torch(clip):
    kw = dict(init_scale=2.0**10, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    s_ref, k_ref, m_ref, l_ref = _run(ReferenceGradScaler(**kw), clip=clip)
    s_t, k_t, m_t, l_t = _run(torch.amp.GradScaler("cpu", **kw), clip=clip)
    assert s_ref == s_t
    assert k_ref == k_t
    assert [i for i, k in enumerate(k_ref) if k] == sorted(INJECT)
    assert any(b > a for a, b in zip(s_ref, s_ref[1:]))  # growth happened
    assert any(b < a for a, b in zip(s_ref, s_ref[1:]))  # back-off happened
    for a, b in zip(m_ref.parameters(), m_t.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    assert l_ref == pytest.approx(l_t, rel=1e-6)


def test_skip_history_recorded():
    scaler = ReferenceGradScaler(growth_interval=3)
    _run(scaler)
    assert [i for i, s in enumerate(scaler.skipped_steps) if s] == sorted(INJECT)


def test_two_optimizers_share_one_scaler():
    def run(scaler):
        torch.manual_seed(0)
        a, b = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
        oa, ob = torch.optim.SGD(a.parameters(), lr=0.1), torch.optim.SGD(b.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        out = []
        for step in range(4):
            oa.zero_grad(), ob.zero_grad()
            scaler.scale(a(x).pow(2).mean() + b(x).abs().mean()).backward()
            if step == 1:
                a.weight.grad[0, 0] = float("inf")  # only optimizer a sees the overflow
            scaler.step(oa), scaler.step(ob)
            scaler.update()
            out.append(scaler.get_scale())
        return out, a.weight.detach().clone(), b.weight.detach().clone()

    kw = dict(init_scale=256.0, growth_interval=2)
    r, t = run(ReferenceGradScaler(**kw)), run(torch.amp.GradScaler("cpu", **kw))
    assert r[0] == t[0]
    torch.testing.assert_close(r[1], t[1])
    torch.testing.assert_close(r[2], t[2])


def test_state_dict_round_trip_and_compatible_with_torch():
    ref = ReferenceGradScaler(growth_interval=3, init_scale=128.0)
    _run(ref, steps=8)
    sd = ref.state_dict()
    assert set(sd) == set(torch.amp.GradScaler("cpu").state_dict())
    restored = ReferenceGradScaler()
    restored.load_state_dict(sd)
    assert restored.state_dict() == sd
    ts = torch.amp.GradScaler("cpu")
    ts.load_state_dict(sd)
    assert ts.state_dict() == sd
    back = ReferenceGradScaler()
    back.load_state_dict(ts.state_dict())
    assert back.state_dict() == sd
    with pytest.raises(ValueError, match="lacks keys"):
        ReferenceGradScaler().load_state_dict({"scale": 1.0})


def test_defaults_read_from_installed_torch_and_match_reference():
    d = torch_gradscaler_defaults()
    assert {"init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"} <= set(d)
    ref = reference_defaults()
    for k, v in ref.items():
        assert d[k] == v, k
    assert torch.amp.GradScaler("cpu").get_scale() == d["init_scale"]


def test_update_scale_rule():
    assert update_scale(8.0, 0, True, 2.0, 0.5, 3) == (4.0, 0)
    assert update_scale(8.0, 1, False, 2.0, 0.5, 3) == (8.0, 2)
    assert update_scale(8.0, 2, False, 2.0, 0.5, 3) == (16.0, 0)
    big = 2.0**127
    assert update_scale(big, 0, False, 2.0, 0.5, 1) == (big, 0)  # never grows to inf
    assert math.isfinite(update_scale(big, 0, False, 2.0, 0.5, 1)[0])


def test_misuse_raises():
    with pytest.raises(ValueError, match="growth_factor"):
        ReferenceGradScaler(growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor"):
        ReferenceGradScaler(backoff_factor=1.5)
    m = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    s = ReferenceGradScaler()
    s.scale(m(torch.ones(1, 2)).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="twice"):
        s.unscale_(opt)


def test_disabled_is_passthrough():
    s = ReferenceGradScaler(enabled=False)
    x = torch.tensor(3.0)
    assert s.scale(x) is x
    assert s.get_scale() == 1.0 and s.state_dict() == {}


# ---- issue 20: schedulers with skipped steps, fused optimizers -----------------------------------
def test_scheduler_advances_on_skipped_steps_and_warns_when_the_first_is_skipped():
    from amp_docs_lib.amp.grad_scaler import skipped_steps_and_scheduler

    df, warns = skipped_steps_and_scheduler(steps=4, inject_at=(0, 2))
    assert df["lr of this step"].tolist() == [0.1, 0.05, 0.025, 0.0125]
    assert df["weights moved"].tolist() == [False, True, False, True]
    assert warns and "lr_scheduler.step()" in warns[0]
    _, no_warns = skipped_steps_and_scheduler(steps=3, inject_at=(1,))
    assert no_warns == []


def test_fused_sgd_unscales_in_the_kernel():
    from amp_docs_lib.amp.grad_scaler import fused_optimizer_unscaling

    df = fused_optimizer_unscaling(scale=1024.0).set_index("fused")
    if df["_step_supports_amp_scaling"].isna().any():
        pytest.skip("no fused SGD for the CPU in this torch")
    assert df.loc[False, "inv_scale given to the inf check / unscale op"] == 1 / 1024
    assert df.loc[True, "inv_scale given to the inf check / unscale op"] == 1.0
    assert df.loc[True, "optimizer kernel"] == "_fused_sgd_"
    assert float(df["max |weight difference| vs non-fused"].iloc[0]) == 0.0
