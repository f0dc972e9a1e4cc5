"""How the loss scale moves: simulated gradient streams through the scaler's update rule.

A one-parameter model (loss ``h*w**2/2``, gradient ``h*w`` plus noise) is
trained with SGD. Each step the forward activation ``act_gain*|w|`` and the
scaled gradient are rounded to FP16; an inf/NaN skips the step and the scale
moves by :func:`amp_docs_lib.amp.grad_scaler.update_scale`, the same rule
``ReferenceGradScaler`` (and torch) use. With ``precision="bf16"`` there is no
scaler and values are rounded to bfloat16 instead.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import ml_dtypes
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from amp_docs_lib.amp.grad_scaler import check_scaler_settings, update_scale
from amp_docs_lib.core.checks import positive_int, positive_number
from amp_docs_lib.core.profiles import active_profile

PRECISIONS = ("fp16", "bf16")


def _choice(table: dict, name: str, what: str):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, got {type(name).__name__}; valid: {list(table)}")
    if name not in table:
        raise ValueError(f"unknown {what} {name!r}; valid: {list(table)}")
    return table[name]


@dataclass(frozen=True)
class ScaleScenario:
    """Parameters of one simulated training run (see the module docstring)."""

    name: str
    lr: float = 0.1
    curvature: float = 1.0
    w0: float = 1.0
    noise: float = 1e-3          # std of the gradient noise (sets the steady-state gradient size)
    act_gain: float = 100.0      # forward activation = act_gain * |w|
    spike_every: int = 0         # every k-th step the gradient is multiplied by spike_factor
    spike_factor: float = 1e4
    clip: float | None = None    # clip |gradient| after unscaling
    init_scale: float = 2.0**16
    growth_interval: int = 50
    precision: str = "fp16"
    steps: int | None = None     # None: the profile's scale_sim_steps
    seed: int = 0
    min_scale: float = 0.0       # > 0 or hysteresis > 1: the Megatron-LM rule (update_scale_megatron)
    hysteresis: int = 1

    def __post_init__(self) -> None:
        # Checked here, so scenario(name, steps=-1) fails at once instead of simulating nothing.
        _choice({p: p for p in PRECISIONS}, self.precision, "precision")
        if self.steps is not None:
            positive_int("steps", self.steps)
        positive_int("growth_interval", self.growth_interval)
        positive_int("hysteresis", self.hysteresis)
        positive_int("spike_every", self.spike_every, minimum=0)
        positive_number("init_scale", self.init_scale)
        positive_number("min_scale", self.min_scale, allow_zero=True)
        positive_number("lr", self.lr)
        positive_number("noise", self.noise, allow_zero=True)
        if self.clip is not None:
            positive_number("clip", self.clip)


SCENARIOS = {
    "healthy": ScaleScenario("healthy"),
    "periodic overflow": ScaleScenario("periodic overflow", spike_every=97),
    "death spiral": ScaleScenario("death spiral", lr=2.5),
}

REMEDIES = {
    "none": {},
    "higher initial scale": {"init_scale": 2.0**24},
    "lower learning rate": {"lr": 0.5},
    "gradient clipping": {"clip": 1.0},
    "BF16 (no scaler)": {"precision": "bf16"},
    "scale floor 1, hysteresis 2 (Megatron-LM)": {"min_scale": 1.0, "hysteresis": 2},
}

MEGATRON_SOURCE = ("NVIDIA Megatron-LM, megatron/core/optimizer/grad_scaler.py, DynamicGradScaler.update "
                   "(commit eedfe533a44ee918b1ad422269063af5155e1eaa)")


def update_scale_megatron(scale: float, growth_tracker: int, hysteresis_left: int, found_inf: bool,
                          growth_factor: float, backoff_factor: float, growth_interval: int,
                          min_scale: float, hysteresis: int) -> tuple[float, int, int]:
    """Megatron-LM's dynamic scale rule: ``(new_scale, new_growth_tracker, new_hysteresis_left)``.

    An overflow resets the growth count and uses up one unit of hysteresis; only when none is left
    does the scale back off, and never below ``min_scale``. ``growth_interval`` clean steps grow
    the scale and refill the hysteresis. torch's rule (:func:`update_scale`) is the case
    ``hysteresis=1, min_scale=0``.
    """
    positive_number("scale", scale, allow_zero=True)
    positive_number("min_scale", min_scale, allow_zero=True)
    check_scaler_settings(growth_factor, backoff_factor, growth_interval)
    positive_int("hysteresis", hysteresis)
    if found_inf:
        hysteresis_left -= 1
        if hysteresis_left <= 0:
            scale = max(scale * backoff_factor, min_scale)
        return scale, 0, hysteresis_left
    growth_tracker += 1
    if growth_tracker == growth_interval:
        return scale * growth_factor, 0, hysteresis
    return scale, growth_tracker, hysteresis_left


def scenario(name: str, **overrides) -> ScaleScenario:
    """The named scenario from ``SCENARIOS`` with fields replaced by ``overrides``."""
    base = _choice(SCENARIOS, name, "scenario")
    bad = set(overrides) - {f.name for f in dataclasses.fields(ScaleScenario)}
    if bad:
        raise ValueError(f"unknown scenario fields {sorted(bad)}; valid: "
                         f"{[f.name for f in dataclasses.fields(ScaleScenario)]}")
    return dataclasses.replace(base, **overrides)


def _round(x: float, precision: str) -> float:
    dtype = np.float16 if precision == "fp16" else ml_dtypes.bfloat16
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.asarray(x, dtype=np.float32).astype(dtype))


def simulate(sc: ScaleScenario) -> pd.DataFrame:
    """Run ``sc``; per step: scale used, whether the step was skipped, gradient, weight, loss."""
    if not isinstance(sc, ScaleScenario):
        raise TypeError(f"simulate takes a ScaleScenario, got {type(sc).__name__}")
    steps = active_profile()["scale_sim_steps"] if sc.steps is None else sc.steps
    rng = np.random.default_rng(sc.seed)
    use_scaler = sc.precision == "fp16"
    scale, tracker, w = (float(np.float32(sc.init_scale)) if use_scaler else 1.0), 0, sc.w0
    megatron, hysteresis_left = sc.min_scale > 0 or sc.hysteresis > 1, sc.hysteresis
    rows = []
    for t in range(steps):
        grad = sc.curvature * w + sc.noise * rng.standard_normal()
        if sc.spike_every and t % sc.spike_every == sc.spike_every - 1:
            grad *= sc.spike_factor
        # An activation beyond the format's range poisons the whole backward pass.
        forward_ok = math.isfinite(_round(sc.act_gain * abs(w), sc.precision))
        g_low = _round(grad * scale, sc.precision) if forward_ok else float("nan")
        finite = math.isfinite(g_low)
        # Like torch, the inf check reads the scaled gradient; at scale 0 that is a finite 0, the step
        # is taken, and unscaling gives 0 * inf = NaN (grad_scaler.zero_scale_step measures torch).
        g = g_low / scale if scale else float("nan")
        if finite and sc.clip is not None and math.isfinite(g):
            g = max(-sc.clip, min(sc.clip, g))
        skipped = use_scaler and not finite
        rows.append({"step": t, "scale": scale, "skipped": skipped, "grad": grad,
                     "w": w, "loss": 0.5 * sc.curvature * w * w})
        if not skipped:
            w = w - sc.lr * g
        if use_scaler and megatron:
            scale, tracker, hysteresis_left = update_scale_megatron(
                scale, tracker, hysteresis_left, skipped, 2.0, 0.5, sc.growth_interval, sc.min_scale, sc.hysteresis)
        elif use_scaler:
            scale, tracker = update_scale(scale, tracker, skipped, 2.0, 0.5, sc.growth_interval)
    return pd.DataFrame(rows)


def remedy_table(scenario_name: str = "death spiral", remedies: dict | None = None) -> pd.DataFrame:
    """Run ``scenario_name`` once per remedy; summarise skipped steps, scale and final loss."""
    remedies = REMEDIES if remedies is None else remedies
    rows = []
    for remedy, overrides in remedies.items():
        df = simulate(scenario(scenario_name, **overrides))
        final = df["loss"].iloc[-1]
        rows.append({
            "remedy": remedy,
            "skipped steps": float(df["skipped"].mean()),
            "final scale": float(df["scale"].iloc[-1]) if overrides.get("precision") != "bf16" else "no scaler",
            "initial loss": float(df["loss"].iloc[0]),
            "final loss": float(final),
            "loss decreased": bool(math.isfinite(final) and final < df["loss"].iloc[0]),
        })
    return pd.DataFrame(rows)


def plot_scale(results: dict[str, pd.DataFrame], title: str = "Loss scale over training") -> Figure:
    """One panel per run: the scale (log axis) with skipped steps marked."""
    if not results:
        raise ValueError("plot_scale needs at least one result")
    fig, axes = plt.subplots(len(results), 1, figsize=(8, 1.9 * len(results) + 0.6), sharex=True,
                             squeeze=False)
    for ax, (name, df) in zip(axes[:, 0], results.items()):
        s = df["scale"].where(df["scale"] > 0)
        ax.semilogy(df["step"], s, lw=1.4, label="loss scale")
        sk = df[df["skipped"]]
        if len(sk):
            ax.scatter(sk["step"], s[df["skipped"]].fillna(np.nan), marker="x", color="C3", s=14,
                       lw=1, label=f"skipped step ({len(sk)})", zorder=3)
        # once, on the first panel, when its step 0 overflowed (it depends on the seed's noise)
        if ax is axes[0, 0] and len(df) and bool(df["skipped"].iloc[0]):
            ax.annotate("step 0 skipped: the first scaled gradient overflowed, scale halved",
                        xy=(0, s.iloc[0]), xytext=(0.3, 0.1), textcoords="axes fraction", fontsize=7,
                        color="0.25", arrowprops=dict(arrowstyle="->", color="0.4", lw=0.8))
        zero = df.loc[df["scale"] == 0, "step"]
        if len(zero):
            ax.axvline(zero.iloc[0], color="0.4", ls=":", lw=1)
            ax.text(zero.iloc[0], 0.5, f"  scale underflows to 0 at step {zero.iloc[0]}",
                    transform=ax.get_xaxis_transform(), fontsize=7, color="0.3")
        ax.set_title(name, fontsize=9, loc="left")
        ax.set_ylabel("scale")
        ax.legend(fontsize=7, loc="best")
    axes[-1, 0].set_xlabel("step")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
