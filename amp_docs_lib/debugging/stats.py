"""Per-layer statistics of activations, and their comparison between FP32 and AMP.

:func:`tensor_stats` summarises one floating tensor: mean, std, max |x| (over finite
values), and the fractions of exact zeros, subnormals (nonzero, below the dtype's smallest
normal), infs and NaNs. :func:`layer_stats` records that for every leaf module's output in
one forward pass; :func:`compare_precisions` does it for FP32 and an autocast dtype and puts
the two side by side.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import pandas as pd
import torch

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.core.checks import nonempty_tensor
from amp_docs_lib.core.tables import na_to_none
from torch import nn

from amp_docs_lib.debugging.locate import call_model, check_floating, check_input, model_output, resolve_modules


def tensor_stats(t: torch.Tensor) -> dict[str, Any]:
    """Statistics of ``t``; subnormals are judged in ``t``'s own dtype. ``TypeError`` if not floating,
    ``ValueError`` if empty (its fractions of zeros, infs and NaNs would be 0/0)."""
    check_floating(t, "t")
    nonempty_tensor("t", t)
    t = t.detach()
    tiny = torch.finfo(t.dtype).tiny
    a = t.float()
    finite = torch.isfinite(a)
    fa = a[finite]
    n = t.numel()
    absd = t.abs()
    return {"dtype": short_dtype(t.dtype),
            "mean": float(fa.mean()) if fa.numel() else None,
            "std": float(fa.std()) if fa.numel() > 1 else None,
            "max abs": float(fa.abs().max()) if fa.numel() else None,
            "zeros": float((t == 0).sum()) / n,
            "subnormals": float(((absd < tiny) & (t != 0)).sum()) / n,
            "infs": float(torch.isinf(t).sum()) / n,
            "nans": float(torch.isnan(t).sum()) / n}


def layer_stats(model: nn.Module, x: Any, *, autocast_dtype: torch.dtype | None = None,
                modules: Iterable[str | nn.Module] | None = None) -> pd.DataFrame:
    """One row per watched module (default: leaf modules) with :func:`tensor_stats` of its output.

    ``x`` is any input the model takes (features or token ids, or a tuple of arguments); a
    module returning a tuple is described by its first floating tensor.
    """
    check_input(x, "x")
    watched = resolve_modules(model, modules)
    rows: list[dict[str, Any]] = []

    def hook(name: str):
        def f(module: nn.Module, inputs: Any, output: Any) -> None:
            try:
                out = model_output(output)
            except TypeError:
                return  # nothing floating to describe
            if out.is_floating_point():
                rows.append({"module": name, "type": type(module).__name__, **tensor_stats(out)})
        return f

    handles = [m.register_forward_hook(hook(n)) for n, m in watched.items()]
    try:
        device_type = (x[0] if isinstance(x, tuple) else x).device.type
        with torch.no_grad(), torch.autocast(device_type, dtype=autocast_dtype or torch.float32,
                                             enabled=autocast_dtype is not None):
            call_model(model, x)
    finally:
        for h in handles:
            h.remove()
    return pd.DataFrame(rows)


def compare_precisions(model: nn.Module, x: Any, autocast_dtype: torch.dtype = torch.float16,
                       *, modules: Iterable[str | nn.Module] | None = None) -> pd.DataFrame:
    """:func:`layer_stats` in FP32 and under autocast, one row per module, columns suffixed."""
    if autocast_dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"autocast_dtype must be torch.float16 or torch.bfloat16, got {autocast_dtype}")
    a = layer_stats(model, x, modules=modules)
    b = layer_stats(model, x, autocast_dtype=autocast_dtype, modules=modules)
    tag = "amp " + short_dtype(autocast_dtype)
    keep = ["dtype", "max abs", "std", "zeros", "subnormals", "infs", "nans"]
    out = a[["module", "type"] + keep].rename(columns={k: f"{k} (fp32)" for k in keep})
    for k in keep:
        out[f"{k} ({tag})"] = b[k].values
    return na_to_none(out)


def first_divergence(comparison: pd.DataFrame) -> str | None:
    """The first module whose AMP output has infs or NaNs where FP32's had none."""
    if not isinstance(comparison, pd.DataFrame) or "module" not in comparison.columns:
        raise TypeError("first_divergence takes the DataFrame returned by compare_precisions")
    amp_cols = [c for c in comparison.columns if c.startswith(("infs (amp", "nans (amp"))]
    fp_cols = ["infs (fp32)", "nans (fp32)"]
    for _, r in comparison.iterrows():
        if sum(r[c] or 0 for c in amp_cols) > 0 and sum(r[c] or 0 for c in fp_cols) == 0:
            return r["module"]
    return None


def overflow_threshold(dtype: torch.dtype = torch.float16) -> float:
    """The smallest magnitude a cast to ``dtype`` rounds to inf: its largest finite value plus half the spacing
    of the top binade (65520 for FP16; values between 65504 and it round down to 65504)."""
    fi = torch.finfo(dtype)
    return fi.max + 2.0 ** math.floor(math.log2(fi.max)) * fi.eps / 2


def growth_before_overflow(activation_max: pd.DataFrame, *, limit: float = 65504.0, top: int = 5) -> pd.DataFrame:
    """From a training run's per-step activation maxima (``RunResult.extra["activation_max"]``),
    the ``top`` modules with the largest finite |output|, one column per module, one row per step.

    ``limit`` (default FP16's largest finite value) is only used to order ties: modules that
    reached it come first. Non-finite maxima stay inf, so the step where a module overflowed shows.
    """
    if not isinstance(activation_max, pd.DataFrame) or not {"step", "module", "max abs"} <= set(activation_max):
        raise TypeError("growth_before_overflow takes a DataFrame with columns step, module, max abs "
                        "(RunResult.extra['activation_max'] of a run with watch_activations=True)")
    wide = activation_max.pivot_table(index="step", columns="module", values="max abs", aggfunc="max")
    peak = wide.apply(lambda c: c.max())  # inf for a module that overflowed
    order = sorted(wide.columns, key=lambda m: (-int(bool(peak[m] >= limit)), -float(wide[m][wide[m] < float("inf")].max())))
    chosen: list[str] = []
    for m in order:  # a module repeating another's output (a Dropout at p=0 after a Linear) adds nothing
        if not any(wide[m].equals(wide[c]) for c in chosen):
            chosen.append(m)
        if len(chosen) == top:
            break
    return wide[chosen]


def plot_activation_growth(growth: pd.DataFrame, *, limit: float = 65504.0):
    """Largest |output| per step for the modules of :func:`growth_before_overflow` (log scale),
    with ``limit`` drawn; a cross marks the first step a module's output was not finite."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(9, 4))
    for i, m in enumerate(growth.columns):
        y = growth[m].astype(float)
        finite = y.where(np.isfinite(y))
        line, = ax.plot(growth.index, finite, label=m, color=f"C{i}", ls=("-", "--", "-.", ":")[i % 4])
        bad = y.index[~np.isfinite(y.to_numpy())]
        if len(bad):
            ax.plot([bad[0]], [limit], marker="x", ms=10, color=line.get_color())
    ax.axhline(limit, color="black", lw=0.8, ls="--", label=f"FP16 max ({limit:g})")
    ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("largest |output| in the step")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
