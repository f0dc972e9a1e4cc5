"""Figures of the training-regimes chapter, drawn from :class:`amp_docs_lib.regimes.loop.RunResult` s.

Each function takes the ``{regime name: RunResult}`` dict of ``run_regimes`` and returns a
matplotlib figure (default colours; ``show_figure`` renders the light and dark versions).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def _check(results) -> None:
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict {regime name: RunResult}")


def _smooth(y: pd.Series, window: int) -> pd.Series:
    return y.rolling(window, min_periods=1).mean()


def _mark_stop(ax, res, y) -> None:
    if res.diverged_at is not None and len(res.log):
        ax.plot([res.log["step"].iloc[-1]], [y], marker="x", markersize=9, color=ax.lines[-1].get_color())


def plot_losses(results, floor: float | None = None, smooth: int = 10):
    """Train loss (rolling mean over ``smooth`` steps) and validation loss per regime.

    ``floor``: the corpus's achievable loss (drawn as a dashed line). A cross marks where a run
    stopped on a non-finite loss.
    """
    _check(results)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    top = 0.0
    for name, res in results.items():
        if res.log.empty:
            continue
        y = _smooth(res.log["train_loss"].replace([np.inf, -np.inf], np.nan), smooth)
        a.plot(res.log["step"], y, label=name, lw=1.4)
        finite = y[np.isfinite(y)]
        top = max(top, float(finite.iloc[0]) if len(finite) else 0.0)
        _mark_stop(a, res, float(finite.iloc[-1]) if len(finite) else top)
        v = res.val.dropna()
        b.plot(v["step"], v["val_loss"], marker="o", ms=3, label=name, lw=1.4)
    for ax, title in ((a, f"train loss (mean of {smooth} steps)"), (b, "validation loss")):
        if floor is not None:
            ax.axhline(floor, ls="--", lw=1, color="black", label="entropy floor")
        ax.set_xlabel("step")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    a.set_ylabel("cross-entropy (nats)")
    if top > 0:
        a.set_ylim(top=top * 1.08)
    b.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def plot_grad_norm(results, smooth: int = 5):
    """Global gradient norm per step (log scale; non-finite norms are left out)."""
    _check(results)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for name, res in results.items():
        g = res.log["grad_norm"].replace([np.inf, -np.inf], np.nan)
        if g.notna().any():
            ax.plot(res.log["step"], _smooth(g, smooth), label=name, lw=1.2)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(f"global grad norm (mean of {smooth})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def plot_loss_scale(results):
    """GradScaler scale per step for the regimes that use one; skipped steps marked."""
    _check(results)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    drawn = False
    for name, res in results.items():
        if res.log.empty or res.log["scale"].isna().all():
            continue
        line, = ax.plot(res.log["step"], res.log["scale"].astype(float), label=name, lw=1.4, drawstyle="steps-post")
        sk = res.log[res.log["skipped"] == True]  # noqa: E712  (object column with None)
        if len(sk):
            ax.plot(sk["step"], sk["scale"].astype(float), "v", ms=4, color=line.get_color(),
                    label=f"{name}: skipped step")
        drawn = True
    if not drawn:
        ax.text(0.5, 0.5, "no regime with a GradScaler ran", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.set_yscale("log", base=2)
        ax.legend(fontsize=8)
    ax.set_xlabel("step")
    ax.set_ylabel("loss scale")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def plot_speed(summary: pd.DataFrame):
    """Mean step time and tokens per second per regime (bars), from ``summary_table``."""
    if not isinstance(summary, pd.DataFrame) or "mean step (ms)" not in summary:
        raise ValueError("plot_speed takes the DataFrame of train_loop.summary_table")
    s = summary.dropna(subset=["mean step (ms)"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3.8))
    pos = np.arange(len(s))
    a.barh(pos, s["mean step (ms)"].astype(float))
    b.barh(pos, s["tokens/s"].astype(float))
    for ax, label in ((a, "mean step time (ms)"), (b, "tokens / s")):
        ax.set_yticks(pos, s["regime"])
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def plot_memory(results, summary: pd.DataFrame):
    """Bytes of parameters and optimizer state (with FP32 masters) per regime; peak CUDA memory if measured."""
    _check(results)
    names = list(results)
    par = np.array([results[n].param_bytes for n in names]) / 2**20
    st = np.array([results[n].state_bytes for n in names]) / 2**20
    cuda = summary.set_index("regime")["peak CUDA mem (MB)"] if "peak CUDA mem (MB)" in summary else None
    has_cuda = cuda is not None and cuda.notna().any()
    fig, axes = plt.subplots(1, 2 if has_cuda else 1, figsize=(12 if has_cuda else 7, 3.8), squeeze=False)
    a = axes[0, 0]
    pos = np.arange(len(names))
    a.barh(pos, par, label="parameters")
    a.barh(pos, st, left=par, label="optimizer state (+ FP32 masters)")
    a.set_yticks(pos, names)
    a.invert_yaxis()
    a.set_xlabel("MB (counted from tensor sizes)")
    a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    a.grid(alpha=0.3, axis="x")
    if has_cuda:
        b = axes[0, 1]
        vals = [float(cuda.get(n)) if cuda.get(n) is not None and not math.isnan(float(cuda.get(n))) else 0.0
                for n in names]
        b.barh(pos, vals)
        b.set_yticks(pos, names)
        b.invert_yaxis()
        b.set_xlabel("peak CUDA memory allocated (MB)")
        b.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def plot_unchanged(results, smooth: int = 5):
    """Per step, the fraction of stored weight elements the step left exactly as they were."""
    _check(results)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for name, res in results.items():
        if "unchanged" in res.log and len(res.log):
            ax.plot(res.log["step"], _smooth(res.log["unchanged"].astype(float), smooth), label=name, lw=1.4)
    ax.set_xlabel("step")
    ax.set_ylabel(f"fraction unchanged (mean of {smooth})")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
