"""Gradient underflow: what FP16 and BF16 flush to zero, and how loss scaling rescues it.

Two measurements: a synthetic log-uniform gradient distribution cast to each
format (``underflow_table``, ``underflow_histogram``), and a real backward
pass through a small FP16-autocast MLP with and without a loss scale
(``real_backward_underflow``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure
from torch import nn

from amp_docs_lib.core.checks import lookup
from amp_docs_lib.core.profiles import active_profile

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def _dtype(name: str) -> torch.dtype:
    return lookup(DTYPES, name, "dtype", sorted(DTYPES))


def synthetic_gradients(n: int | None = None, log10_low: float = -12.0, log10_high: float = -2.0,
                        *, seed: int = 0) -> torch.Tensor:
    """``n`` float32 values with log-uniform magnitudes in [10**low, 10**high) and random signs.

    ``n`` defaults to the profile's ``underflow_samples``.
    """
    n = active_profile()["underflow_samples"] if n is None else n
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not log10_low < log10_high:
        raise ValueError(f"need log10_low < log10_high, got {log10_low!r} >= {log10_high!r}")
    g = torch.Generator().manual_seed(seed)
    exponents = log10_low + (log10_high - log10_low) * torch.rand(n, generator=g, dtype=torch.float64)
    signs = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    return (signs * 10.0**exponents).float()


def cast_report(grads: torch.Tensor, dtype: str, scale: float = 1.0) -> dict[str, float]:
    """Cast ``grads * scale`` to ``dtype``: fractions flushed to zero, left subnormal, overflowed to inf."""
    dt = _dtype(dtype)
    fi = torch.finfo(dt)
    nonzero = grads != 0
    cast = (grads.double() * scale).to(dt)
    mag = cast.abs()
    n = max(int(nonzero.sum()), 1)
    return {
        "to zero": float(((mag == 0) & nonzero).sum()) / n,
        "subnormal": float(((mag > 0) & (mag < fi.smallest_normal)).sum()) / n,
        "to inf": float(torch.isinf(cast).sum()) / n,
    }


def underflow_table(grads: torch.Tensor | None = None,
                    scales: tuple[float, ...] = (1.0, 2.0**16, 2.0**24)) -> pd.DataFrame:
    """Fractions lost to zero / subnormal / inf for FP16 and BF16 at each loss scale."""
    grads = synthetic_gradients() if grads is None else grads
    rows = []
    for dtype in ("fp16", "bf16"):
        for s in scales:
            rows.append({"format": dtype, "loss scale": f"2^{np.log2(s):g}" if s != 1 else "none",
                         **cast_report(grads, dtype, s)})
    return pd.DataFrame(rows)


def predicted_fraction_below(threshold: float, log10_low: float = -12.0, log10_high: float = -2.0) -> float:
    """Fraction of a log-uniform distribution on [10**low, 10**high) whose magnitude is below ``threshold``.

    The analytic prediction the synthetic table is checked against: a value
    rounds to zero in FP16 when its magnitude is at most half the smallest
    subnormal (2^-25; exactly half rounds to even, i.e. to zero).
    """
    if threshold <= 0:
        raise ValueError(f"threshold must be positive, got {threshold!r}")
    x = (np.log10(threshold) - log10_low) / (log10_high - log10_low)
    return float(min(max(x, 0.0), 1.0))


def cast_overflow_point(dtype: str = "fp16") -> float:
    """The smallest float32 value that the cast to ``dtype`` turns into inf, found by casting every
    float32 between the format's largest finite value and twice it. Round-to-nearest puts it half a
    spacing above that value (65520 for FP16), not at it (65504)."""
    low = _dtype(dtype)
    top = torch.finfo(low).max
    if 2 * top > torch.finfo(torch.float32).max:
        raise ValueError(f"{dtype}'s overflow point lies beyond float32's range")
    bits = torch.tensor([top, 2 * top], dtype=torch.float32).view(torch.int32)
    candidates = torch.arange(int(bits[0]), int(bits[1]) + 1, dtype=torch.int32).view(torch.float32)
    return float(candidates[torch.isinf(candidates.to(low))][0])


def format_limits(dtype: str) -> dict[str, float]:
    """Smallest normal, smallest subnormal and largest finite value of ``dtype``."""
    fi = torch.finfo(_dtype(dtype))
    return {"min subnormal": float(torch.finfo(_dtype(dtype)).smallest_normal * fi.eps),
            "min normal": float(fi.smallest_normal), "max": float(fi.max)}


BAND_ALPHA = 0.22
BAND_COLORS = ("#d62728", "#bcbd22")  # rounds to zero, subnormal: hues the histogram lines (C0, C1) do not use
LIMIT_LINE_STYLES = {"min subnormal": (0, (1.5, 1.5)), "min normal": "--", "max": "-"}


def underflow_histogram(grads: torch.Tensor | None = None, scale: float = 2.0**16) -> Figure:
    """Histogram of log10|g| (unscaled and scaled) with FP16's subnormal and normal limits marked."""
    grads = synthetic_gradients() if grads is None else grads
    mags = grads.double().abs()
    mags = mags[mags > 0]
    lim = format_limits("fp16")
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    top = max(float(np.log10(mags.max() * scale)), float(np.log10(lim["max"]))) + 0.4
    bins = np.linspace(float(np.log10(mags.min())), top, 90)
    # Translucent, saturated fills read on the light and the dark page alike (an opaque pastel
    # slab glares on the dark one); the limit lines are drawn above them, thick enough to see on a
    # fill (the min-normal line marks the subnormal band's right edge).
    ax.axvspan(bins[0], np.log10(lim["min subnormal"] / 2), color=BAND_COLORS[0], alpha=BAND_ALPHA, lw=0,
               zorder=0, label="FP16 rounds to zero")
    ax.axvspan(np.log10(lim["min subnormal"] / 2), np.log10(lim["min normal"]), color=BAND_COLORS[1],
               alpha=BAND_ALPHA, lw=0, zorder=0, label="FP16 subnormal (fewer bits)")
    ax.hist(np.log10(mags.numpy()), bins=bins, histtype="step", lw=1.8, label="gradients", zorder=2)
    ax.hist(np.log10((mags * scale).numpy()), bins=bins, histtype="step", lw=1.8, zorder=2,
            label=f"gradients × 2^{np.log2(scale):g} (loss scale)")
    for key, style in LIMIT_LINE_STYLES.items():
        ax.axvline(np.log10(lim[key]), color="k", ls=style, lw=1.6, zorder=3, label=f"FP16 {key}")
    ax.set_xlabel("log10 |gradient|")
    ax.set_ylabel("count")
    ax.set_xlim(bins[0], bins[-1])
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Synthetic gradients against FP16's range")
    fig.tight_layout()
    return fig


def _small_mlp(depth: int, width: int, gain: float, seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for _ in range(depth):
        lin = nn.Linear(width, width)
        nn.init.normal_(lin.weight, std=gain / width**0.5)  # small init: small gradients
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.Tanh()]
    return nn.Sequential(*layers)


def real_backward_underflow(depth: int = 6, width: int = 64, batch: int = 64, gain: float = 0.4,
                            scale: float = 2.0**16, *, seed: int = 0) -> pd.DataFrame:
    """One backward pass of a small MLP in FP32 and under FP16 autocast, unscaled and scaled.

    Per weight matrix: the fraction of gradient elements that are exactly zero
    in FP16 although the FP32 gradient is not; the fraction of the FP32 gradient's
    nonzero elements below FP16's smallest normal (subnormal in FP16, so held
    with fewer significant bits); and the relative error of the gradient's norm,
    ``||g - g_fp32|| / ||g_fp32||``, unscaled and scaled. (Autocast runs the matmuls,
    and hence the backward's gradient matmuls, in FP16 on CPU and CUDA alike.)
    """
    model = _small_mlp(depth, width, gain, seed)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch, width, generator=g)
    y = 0.01 * torch.randn(batch, width, generator=g)
    grads = {}
    for name, fp16, s in (("fp32", False, 1.0), ("fp16", True, 1.0), ("fp16 scaled", True, scale)):
        model.zero_grad(set_to_none=True)
        with torch.amp.autocast("cpu", dtype=torch.float16, enabled=fp16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        (loss * s).backward()
        grads[name] = [m.weight.grad / s for m in model if isinstance(m, nn.Linear)]
    rows = []
    for i, ref in enumerate(grads["fp32"]):
        live = ref != 0
        row = {"layer": i + 1, "median |grad| (fp32)": float(ref.abs().median())}
        for name in ("fp16", "fp16 scaled"):
            row[f"zero in {name}"] = float(((grads[name][i] == 0) & live).sum() / live.sum())
        row["below fp16 normal (fp32)"] = float(((ref.abs() < torch.finfo(torch.float16).tiny) & live).sum()
                                                / live.sum())
        for name in ("fp16", "fp16 scaled"):
            row[f"rel. error {name}"] = float((grads[name][i] - ref).norm() / ref.norm())
        rows.append(row)
    return pd.DataFrame(rows)


def bce_gradient_overflow(target: float = 1.0, probabilities: tuple[float, ...] | None = None) -> pd.DataFrame:
    """The gradient of ``binary_cross_entropy`` with respect to its input ``p``, and what FP16 makes of it.

    Why autocast refuses the op on CUDA (PyTorch AMP documentation): for
    ``p`` near 0 (target 1) the gradient ``-1/p`` exceeds FP16's range even
    though ``p`` itself is an FP16 value. Computed by autograd in FP32 from
    FP16-representable ``p``, then cast to FP16.
    """
    if probabilities is None:  # FP16 values from ordinary to tiny (the last is subnormal)
        probabilities = (0.5, 1e-2, 1e-3, 1e-4, 2.0**-17)
    p16 = torch.tensor(probabilities, dtype=torch.float16)
    p = p16.float().requires_grad_(True)
    y = torch.full_like(p, float(target))
    torch.nn.functional.binary_cross_entropy(p, y, reduction="sum").backward()
    g = p.grad.detach()
    return pd.DataFrame({"p": p16.float().numpy(), "gradient (FP32)": g.numpy(),
                         "gradient in FP16": g.to(torch.float16).float().numpy()})
