"""Figures of the training-regimes chapter, drawn from :class:`amp_docs_lib.regimes.loop.RunResult` s.

Each function takes the ``{regime name: RunResult}`` dict of ``run_regimes`` and returns a
matplotlib figure; each regime has its colour of ``core.palette`` (``show_figure`` renders the
light and dark versions).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from amp_docs_lib.core.palette import color_or_default


def _check(results) -> None:
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict {regime name: RunResult}")


LINESTYLES = ("-", "--", "-.", ":")


def _style(name: str, i: int) -> dict:
    """The regime's colour (``core.palette``; a name outside it takes the default cycle's), and a
    line style that differs between neighbours, so that curves lying on each other stay visible."""
    return {"color": color_or_default(name, f"C{i % 10}"), "ls": LINESTYLES[i % len(LINESTYLES)]}


def _legend_below(fig, axes, ncol: int = 3) -> None:
    """One legend for ``axes`` under the figure, clear of every panel and label."""
    entries: dict = {}
    for ax in np.atleast_1d(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if entries:
        fig.legend(list(entries.values()), list(entries), loc="outside lower center", ncol=ncol, frameon=False)


def _smooth(y: pd.Series, window: int) -> pd.Series:
    """Rolling mean over ``window`` steps, stopped at the first non-finite value: a run that
    produced inf/NaN is not drawn past that step (a rolling mean would skip the NaNs and draw
    an apparent recovery)."""
    y = y.astype(float)
    bad = ~np.isfinite(y.to_numpy())
    out = y.rolling(window, min_periods=1).mean()
    if bad.any():
        out.iloc[int(np.argmax(bad)):] = np.nan
    return out


def _mark_stop(ax, res, y) -> None:
    """A cross at the first step whose loss was not finite (where the drawn curve ends)."""
    if res.diverged_at is not None and len(res.log):
        ax.plot([res.diverged_at], [y], marker="x", markersize=9, color=ax.lines[-1].get_color())


def plot_losses(results, floor: float | None = None, smooth: int = 10, baseline: str = "fp32"):
    """Train loss (rolling mean over ``smooth`` steps) and validation loss per regime.

    ``floor``: the corpus's achievable loss (drawn as a dashed line). A cross marks where a run
    stopped on a non-finite loss. The ``baseline`` and every run that stopped are drawn in their
    colours; the finite runs lie on the baseline at this scale (``plot_loss_vs_baseline`` shows
    their differences), so they are drawn as thin grey lines under it, one legend entry for all.
    """
    _check(results)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True, layout="constrained")
    others = [n for n, r in results.items() if n != baseline and r.diverged_at is None and not r.log.empty]
    for i, (name, res) in enumerate(results.items()):
        if res.log.empty:
            continue
        if name in others:
            style = {"color": "0.6", "ls": "-", "lw": 0.8, "zorder": 1,
                     "label": f"{len(others)} other regimes (differences: next figure)"}
        else:
            style = {**_style(name, i), "lw": 1.6, "zorder": 3, "label": name}
        y = _smooth(res.log["train_loss"], smooth)
        a.plot(res.log["step"], y, **style)
        finite = y[np.isfinite(y)]
        if len(finite):
            _mark_stop(a, res, float(finite.iloc[-1]))
        v = res.val.dropna()
        v = v[np.isfinite(v["val_loss"].astype(float))]
        b.plot(v["step"], v["val_loss"], marker="o", ms=3, **style)
    for ax, title in ((a, f"train loss (mean of {smooth} steps)"), (b, "validation loss")):
        if floor is not None:
            ax.axhline(floor, ls="--", lw=1, color="black", label="entropy floor")
        ax.set_xlabel("step")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    a.set_ylabel("cross-entropy (nats)")
    _legend_below(fig, (a, b))
    return fig


def plot_loss_vs_baseline(results, baseline: str = "fp32", seeds: dict | None = None, smooth: int = 10):
    """Train loss minus the baseline's, per step (rolling mean), for every finite regime.

    ``seeds``: ``{regime: [(run, baseline run), ...]}`` from other seeds; for each regime listed,
    the band between the smallest and largest (regime - baseline) difference over those seeds is
    shaded: differences inside a band are what another seed would give.
    """
    _check(results)
    if baseline not in results:
        raise ValueError(f"baseline {baseline!r} is not among the runs: {list(results)}")
    base = results[baseline].log.set_index("step")["train_loss"].astype(float)
    fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
    for i, (name, res) in enumerate(results.items()):
        if name == baseline or res.log.empty or res.diverged_at is not None:
            continue
        d = res.log.set_index("step")["train_loss"].astype(float) - base
        style = _style(name, i)
        ax.plot(d.index, _smooth(d, smooth), label=name, lw=1.4, **style)
        pairs = (seeds or {}).get(name, [])
        if pairs:
            diffs = pd.concat([_smooth(r.log.set_index("step")["train_loss"].astype(float)
                                       - b.log.set_index("step")["train_loss"].astype(float), smooth)
                               for r, b in pairs], axis=1)
            ax.fill_between(diffs.index, diffs.min(axis=1), diffs.max(axis=1), color=style["color"], alpha=0.18,
                            label=f"{name}: other seeds ({len(pairs)})")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel(f"loss − {baseline} (nats, mean of {smooth})")
    ax.grid(alpha=0.3)
    _legend_below(fig, ax)
    return fig


def plot_grad_norm(results, smooth: int = 5):
    """Global gradient norm per step (log scale; non-finite norms are left out)."""
    _check(results)
    fig, ax = plt.subplots(figsize=(8, 4.6), layout="constrained")
    for i, (name, res) in enumerate(results.items()):
        g = res.log["grad_norm"].astype(float)
        if np.isfinite(g).any():
            ax.plot(res.log["step"], _smooth(g, smooth), label=name, lw=1.2, **_style(name, i))
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(f"grad norm (mean of {smooth})")
    ax.set_title("lines end at a non-finite norm", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    _legend_below(fig, ax)
    return fig


def plot_loss_scale(results):
    """GradScaler scale per step for the regimes that use one; skipped steps marked."""
    _check(results)
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    drawn = False
    for i, (name, res) in enumerate(results.items()):
        if res.log.empty or res.log["scale"].isna().all():
            continue
        line, = ax.plot(res.log["step"], res.log["scale"].astype(float), label=name, lw=1.4, drawstyle="steps-post",
                        color=_style(name, i)["color"])
        sk = res.log[res.log["skipped"] == True]  # noqa: E712  (object column with None)
        if len(sk):
            ax.plot(sk["step"], sk["scale"].astype(float), "v", ms=4, color=line.get_color(),
                    label=f"{name}: skipped step")
        drawn = True
    if not drawn:
        ax.text(0.5, 0.5, "no regime with a GradScaler ran", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.set_yscale("log", base=2)
        _legend_below(fig, ax, ncol=2)
    ax.set_xlabel("step")
    ax.set_ylabel("loss scale")
    ax.grid(alpha=0.3, which="both")
    return fig


def plot_speed(summary: pd.DataFrame):
    """Mean step time and tokens per second per regime (bars), from ``summary_table``."""
    if not isinstance(summary, pd.DataFrame) or "mean step (ms)" not in summary:
        raise ValueError("plot_speed takes the DataFrame of train_loop.summary_table")
    s = summary.dropna(subset=["mean step (ms)"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3.8))
    pos = np.arange(len(s))
    colors = [color_or_default(n, "C0") for n in s["regime"]]
    a.barh(pos, s["mean step (ms)"].astype(float), color=colors)
    b.barh(pos, s["tokens/s"].astype(float), color=colors)
    for ax, label in ((a, "mean step time (ms)"), (b, "tokens / s")):
        ax.set_yticks(pos, s["regime"])
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def plot_memory(results, summary: pd.DataFrame):
    """Bytes of parameters, gradients and optimizer state (with FP32 masters) per regime, counted
    from the tensors after the last step; peak CUDA memory if measured."""
    _check(results)
    names = list(results)
    par = np.array([results[n].param_bytes for n in names]) / 2**20
    gr = np.array([results[n].grad_bytes for n in names]) / 2**20
    st = np.array([results[n].state_bytes for n in names]) / 2**20
    cuda = summary.set_index("regime")["peak CUDA mem (MiB)"] if "peak CUDA mem (MiB)" in summary else None
    has_cuda = cuda is not None and cuda.notna().any()
    fig, axes = plt.subplots(1, 2 if has_cuda else 1, figsize=(12 if has_cuda else 7, 3.8), squeeze=False)
    a = axes[0, 0]
    pos = np.arange(len(names))
    a.barh(pos, par, label="parameters")
    a.barh(pos, gr, left=par, label="gradients")
    a.barh(pos, st, left=par + gr, label="optimizer state (+ FP32 masters)")
    a.set_yticks(pos, names)
    a.invert_yaxis()
    a.set_xlabel("MiB (2^20 bytes, counted from tensor sizes)")
    a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    a.grid(alpha=0.3, axis="x")
    if has_cuda:
        b = axes[0, 1]
        vals = [float(cuda.get(n)) if cuda.get(n) is not None and not math.isnan(float(cuda.get(n))) else 0.0
                for n in names]
        b.barh(pos, vals)
        b.set_yticks(pos, names)
        b.invert_yaxis()
        b.set_xlabel("peak CUDA memory allocated (MiB)")
        b.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def plot_unchanged(results, smooth: int = 5, *, baseline: str = "fp32"):
    """Per step, the fraction of stored weight elements the step left exactly as they were.

    Two panels: every run on one axis from 0 to 1, then every run but ``baseline`` on an axis
    fitted to their range, where curves that lie on each other at full scale (master weights,
    Kahan and stochastic rounding all leave most BF16 elements unchanged) come apart."""
    _check(results)
    curves = {name: _smooth(res.log["unchanged"].astype(float), smooth)
              for name, res in results.items() if "unchanged" in res.log and len(res.log)}
    steps = {name: results[name].log["step"] for name in curves}
    styles = {name: _style(name, i) for i, name in enumerate(results)}
    zoomed = [n for n in curves if n != baseline]
    fig, axes = plt.subplots(1, 2 if zoomed else 1, figsize=(10, 4.4), squeeze=False, layout="constrained")
    full = axes[0][0]
    for name, y in curves.items():
        full.plot(steps[name], y, label=name, lw=1.6, **styles[name])
    full.set_ylim(-0.02, 1.02)
    full.set_title("all runs", fontsize=9)
    if zoomed:
        zoom = axes[0][1]
        for name in zoomed:
            zoom.plot(steps[name], curves[name], label=name, lw=1.6, **styles[name])
        values = pd.concat([curves[n] for n in zoomed]).dropna()
        lo, hi = float(values.min()), float(values.max())
        pad = max((hi - lo) * 0.05, 1e-3)
        zoom.set_ylim(lo - pad, hi + pad)
        zoom.set_title(f"without {baseline}, axis fitted to the rest", fontsize=9)
    for ax in axes[0]:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"fraction unchanged (mean of {smooth})")
    _legend_below(fig, axes[0])
    return fig
