"""What rounding does to optimizer state and weight decay stored in 16 bits: targeted experiments.

These isolate one update rule at a time on synthetic tensors, so the effect the training
run is too short to show (a BF16-stored second moment that cannot decay, a decoupled weight
decay that rounds away) is measured directly:

* :func:`second_moment_changes`: one AdamW second-moment update,
  ``v <- beta2 * v + (1 - beta2) * g**2``, computed in FP32 and stored back in BF16, over a
  log-spaced range of ``v`` and a given ratio ``g**2 / v``: the fraction of entries whose
  stored value changed.
* :func:`second_moment_decay`: ``steps`` updates with ``g = 0`` (the gradient has gone
  quiet) under several storage recipes: FP32, BF16 round-to-nearest, BF16 with
  ``beta2 = 0.95``, BF16 with stochastic rounding of ``v`` written here with torchao's
  ``_fp32_to_bf16_sr`` (no optimizer on the page rounds its moments that way).
* :func:`optimizer_second_moment_decay`: the same question asked of the optimizers themselves,
  after noisy steps: torch's AdamW, torchao's ``bf16_stochastic_round`` AdamW (which rounds
  only the weights stochastically: ``torchao/optim/adam.py`` stores the moments with
  ``exp_avg_sq.copy_(exp_avg_sq_f32)``, round to nearest) and torch-optimi's AdamW (which
  stores bias-corrected moments: ``optimi/adam.py`` updates ``v`` with
  ``debias_beta(beta2, step)``, so its per-step change is about ``1/step``, not ``1 - beta2``).
* :func:`weight_decay_drift`: AdamW with zero gradients, so only decoupled weight decay
  acts, on FP32 weights, BF16 weights (``torch.optim.AdamW``), BF16 with FP32 master weights
  (``MasterWeights``: the decay acts on the FP32 copy), BF16 with stochastic rounding
  and BF16 with Kahan summation (``optimi``, which applies decoupled weight decay as
  ``param.mul_(1 - lr * wd)`` directly on the 16-bit parameter, before and outside its
  compensated update: ``optimi/adam.py``): the relative change of the weight norm.
* :func:`fp16_second_moment_threshold`: the smallest gradient whose first second moment
  ``(1 - beta2) * g**2``, as ``torch.optim.AdamW`` computes it on FP16 state, is not flushed to zero.
"""

from __future__ import annotations

import math

import pandas as pd
import torch
from amp_docs_lib.core.tables import short_dtype


def bf16_stochastic_round(x: torch.Tensor) -> torch.Tensor:
    """Round ``x`` to BF16 stochastically: torchao's ``_fp32_to_bf16_sr`` (draws from torch's global RNG)."""
    from torchao.optim.quant_utils import _fp32_to_bf16_sr

    return _fp32_to_bf16_sr(x.float())


def _v_grid(n: int = 4096, lo: float = 1e-12, hi: float = 1e-2) -> torch.Tensor:
    return torch.logspace(math.log10(lo), math.log10(hi), n).to(torch.bfloat16)


def second_moment_changes(ratios=(0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0), *, beta2: float = 0.999,
                          n: int = 4096) -> pd.DataFrame:
    """Fraction of BF16-stored ``v`` entries one update changes, per ratio ``g**2 / v``.

    ``v`` spans 1e-12 to 1e-2 (log-spaced, BF16 values); the update is computed in FP32 and
    rounded to nearest BF16, as ``RoundedStateAdamW`` and BF16-state optimizers store it.
    """
    if not 0 < beta2 < 1:
        raise ValueError(f"beta2 must be in (0, 1), got {beta2!r}")
    v = _v_grid(n)
    rows = []
    for r in ratios:
        if r < 0:
            raise ValueError(f"ratios must be >= 0, got {r!r}")
        new = (beta2 * v.float() + (1 - beta2) * (r * v.float())).to(torch.bfloat16)
        rows.append({"g^2 / v": float(r), "entries changed": float((new != v).float().mean()),
                     "entries changed, torch.optim.AdamW": _torch_adamw_changes(v, r, beta2),
                     "entries changed, torch.optim.AdamW(fused=True)": _torch_adamw_changes(v, r, beta2, fused=True),
                     "FP32 relative change": (1 - beta2) * (r - 1)})
    return pd.DataFrame(rows)


def _torch_adamw_changes(v: torch.Tensor, ratio: float, beta2: float, *, fused: bool = False) -> float:
    """Fraction of ``v`` that one ``torch.optim.AdamW`` step on BF16 state changes, with ``g = sqrt(ratio v)``.

    torch's single-tensor AdamW updates the state in place, ``exp_avg_sq.mul_(beta2).addcmul_(grad, grad,
    value=1 - beta2)`` (``torch/optim/adam.py``): two roundings to BF16, not one. The state is set to ``v``
    before the step, as if earlier steps had left it there. With ``fused=True`` the step is
    ``torch._fused_adamw_`` (``torch/optim/adam.py``, torch 2.14.1 line 877), which computes in FP32
    and rounds the new ``v`` once.
    """
    p = torch.nn.Parameter(torch.zeros_like(v))
    impl = {"fused": True} if fused else {"foreach": False}
    opt = torch.optim.AdamW([p], lr=1e-3, betas=(0.9, beta2), weight_decay=0.0, **impl)
    opt.state[p] = {"step": torch.tensor(1.0), "exp_avg": torch.zeros_like(v), "exp_avg_sq": v.clone()}
    p.grad = (ratio * v.float()).sqrt().to(torch.bfloat16)
    opt.step()
    return float((opt.state[p]["exp_avg_sq"] != v).float().mean())


def second_moment_decay(steps: int = 500, *, v0: float = 1e-4, beta2: float = 0.999,
                        fast_beta2: float = 0.95, seed: int = 0, n: int = 64) -> pd.DataFrame:
    """``v`` after ``steps`` updates with ``g = 0``, per storage recipe (mean over ``n`` entries).

    Columns: recipe, beta2, v after, v after / v0, the exact value ``beta2**steps``.
    """
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    recipes = {"FP32": ("fp32", beta2), "BF16, round to nearest": ("nearest", beta2),
               f"BF16, round to nearest, beta2 = {fast_beta2}": ("nearest", fast_beta2),
               "BF16, stochastic rounding of v (written here)": ("stochastic", beta2)}
    rows = []
    with torch.random.fork_rng(devices=[]):  # stochastic rounding draws from the global RNG: seed it, restore it
        torch.manual_seed(seed)
        for label, (mode, b2) in recipes.items():
            rows.append(_decay(label, mode, b2, steps, v0, n))
    return pd.DataFrame(rows)


def optimizer_second_moment_decay(warm: int = 100, quiet: int = 100, *, beta2: float = 0.999,
                                  lr: float = 1e-3, n: int = 4096, seed: int = 0) -> pd.DataFrame:
    """Second moment kept by each optimizer over ``quiet`` zero-gradient steps after ``warm`` noisy ones.

    One parameter of ``n`` elements per optimizer and dtype, the same Gaussian gradients for all.
    Columns: optimizer, parameters (dtype), moments stored as (dtype), ``v after / v before``
    (sums over the elements), and two predictions computed here from their formulas: an
    exponential moving average (torch's AdamW: ``beta2**quiet``) and a bias-corrected one
    (``v_t = (1 - beta2) sum_i beta2**(t-i) g_i**2 / (1 - beta2**t)``, so with ``g = 0``
    ``beta2**quiet (1 - beta2**warm) / (1 - beta2**(warm + quiet))``).
    """
    from amp_docs_lib.regimes.optimizers import plain_optimi_adamw, stochastic_round_adamw

    for name, value in (("warm", warm), ("quiet", quiet), ("n", n)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    makers = {
        "torch.optim.AdamW": lambda ps: torch.optim.AdamW(ps, lr=lr, betas=(0.9, beta2), weight_decay=0.0,
                                                          foreach=False),
        "torchao _AdamW(bf16_stochastic_round=True)": lambda ps: stochastic_round_adamw(ps, lr=lr, betas=(0.9, beta2)),
        "optimi.AdamW (kahan_sum=False)": lambda ps: plain_optimi_adamw(ps, lr=lr, betas=(0.9, beta2)),
    }
    ema = beta2 ** quiet
    debiased = beta2 ** quiet * (1 - beta2 ** warm) / (1 - beta2 ** (warm + quiet))
    rows = []
    for label, make in makers.items():
        for dtype in (torch.float32, torch.bfloat16):
            gen = torch.Generator().manual_seed(seed)
            p = torch.nn.Parameter((torch.randn(n, generator=gen) * 0.1).to(dtype))
            opt = make([p])
            for _ in range(warm):
                p.grad = (torch.randn(n, generator=gen) * 1e-2).to(dtype)
                opt.step()
            v = opt.state[p]["exp_avg_sq"]
            before = float(v.double().sum())
            for _ in range(quiet):
                p.grad = torch.zeros_like(p)
                opt.step()
            rows.append({"optimizer": label, "parameters": short_dtype(dtype),
                         "moments stored as": short_dtype(v.dtype),
                         "v after / v before": float(v.double().sum()) / before,
                         "EMA prediction": ema, "bias-corrected prediction": debiased})
    return pd.DataFrame(rows)


def _decay(label: str, mode: str, b2: float, steps: int, v0: float, n: int) -> dict:
    v = torch.full((n,), v0, dtype=torch.float32 if mode == "fp32" else torch.bfloat16)
    start = float(v.float().mean())
    for _ in range(steps):
        new = b2 * v.float()  # + (1 - beta2) * g**2, which is 0 here
        if mode == "fp32":
            v = new
        elif mode == "nearest":
            v = new.to(torch.bfloat16)
        else:
            v = bf16_stochastic_round(new)
    after = float(v.float().mean())
    return {"storage": label, "beta2": b2, "v before": start, "v after": after,
            "v after / v before": after / start, "exact beta2^steps": b2 ** steps}


def weight_decay_drift(steps: int = 500, *, lr: float = 3e-4, weight_decay: float = 0.1,
                       n: int = 1024, std: float = 0.02, seed: int = 0) -> pd.DataFrame:
    """Relative change of the weight norm after ``steps`` AdamW steps with zero gradients.

    With ``g = 0`` Adam's update is zero and only decoupled weight decay acts,
    ``w <- w * (1 - lr * weight_decay)``; the exact factor is ``(1 - lr*wd)**steps``.
    """
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    gen = torch.Generator().manual_seed(seed)
    w0 = torch.randn(n, generator=gen) * std
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return _drift(w0, steps, lr, weight_decay)


def _drift(w0: torch.Tensor, steps: int, lr: float, weight_decay: float) -> pd.DataFrame:
    from amp_docs_lib.regimes.optimizers import MasterWeights, kahan_adamw, stochastic_round_adamw

    exact = (1 - lr * weight_decay) ** steps
    makers = {
        "FP32, torch AdamW": (torch.float32, lambda ps: torch.optim.AdamW(ps, lr=lr, weight_decay=weight_decay,
                                                                          foreach=False)),
        "BF16, torch AdamW": (torch.bfloat16, lambda ps: torch.optim.AdamW(ps, lr=lr, weight_decay=weight_decay,
                                                                           foreach=False)),
        "BF16, FP32 master weights": (torch.bfloat16, lambda ps: MasterWeights(
            ps, lambda masters: torch.optim.AdamW(masters, lr=lr, weight_decay=weight_decay, foreach=False))),
        "BF16, stochastic rounding (torchao)": (torch.bfloat16,
                                                lambda ps: stochastic_round_adamw(ps, lr=lr, weight_decay=weight_decay)),
        "BF16, Kahan summation (optimi)": (torch.bfloat16, lambda ps: kahan_adamw(ps, lr=lr, weight_decay=weight_decay)),
    }
    rows = []
    for label, (dtype, make) in makers.items():
        p = torch.nn.Parameter(w0.clone().to(dtype))
        opt = make([p])
        norm0 = float(p.detach().float().norm())
        for _ in range(steps):
            p.grad = torch.zeros_like(p)  # no gradient: only weight decay moves the weights
            opt.step()
        rows.append({"weights": label, "norm change": float(p.detach().float().norm()) / norm0 - 1,
                     "exact (1 - lr wd)^steps - 1": exact - 1})
    return pd.DataFrame(rows)


def fp16_second_moment_threshold(beta2: float = 0.999) -> float:
    """Smallest gradient ``g > 0`` whose first ``torch.optim.AdamW`` second moment is nonzero in FP16.

    One AdamW step on an FP16 parameter whose gradient holds every positive finite FP16 value;
    torch computes ``exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)`` in its own
    arithmetic, which is what is measured (not a re-derivation of it).
    """
    if not 0 < beta2 < 1:
        raise ValueError(f"beta2 must be in (0, 1), got {beta2!r}")
    g = torch.arange(1, 0x7C00, dtype=torch.int16).view(torch.float16)  # every positive finite FP16 value
    p = torch.nn.Parameter(torch.zeros_like(g))
    opt = torch.optim.AdamW([p], lr=1e-3, betas=(0.9, beta2), weight_decay=0.0, foreach=False)
    p.grad = g.clone()
    opt.step()
    v = opt.state[p]["exp_avg_sq"]
    return float(g[v != 0].min())


def fp32_step_agreement(warm: int = 100, quiet: int = 100, *, beta2: float = 0.999, lr: float = 1e-3,
                        n: int = 4096, seed: int = 0) -> float:
    """How far apart torch's AdamW and optimi's AdamW (no Kahan) leave FP32 parameters.

    Both start from the same FP32 parameter and see the same ``warm`` Gaussian gradients then
    ``quiet`` zero gradients (as ``optimizer_second_moment_decay``). Returns the largest
    difference between the two final parameters over the largest distance either moved from
    the start: 0 when they took the same steps, of order 1 when their steps differ.
    """
    from amp_docs_lib.regimes.optimizers import plain_optimi_adamw

    for name, value in (("warm", warm), ("quiet", quiet), ("n", n)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    gen = torch.Generator().manual_seed(seed)
    p0 = torch.randn(n, generator=gen) * 0.1
    grads = [torch.randn(n, generator=gen) * 1e-2 for _ in range(warm)] + [torch.zeros(n)] * quiet
    finals = []
    for make in (lambda ps: torch.optim.AdamW(ps, lr=lr, betas=(0.9, beta2), weight_decay=0.0, foreach=False),
                 lambda ps: plain_optimi_adamw(ps, lr=lr, betas=(0.9, beta2))):
        p = torch.nn.Parameter(p0.clone())
        opt = make([p])
        for g in grads:
            p.grad = g.clone()
            opt.step()
        finals.append(p.detach().double())
    moved = max(float((f - p0.double()).abs().max()) for f in finals)
    return float((finals[0] - finals[1]).abs().max()) / moved
