"""Every ``plot_*`` figure, drawn on tiny data and fitted to the column as the site shows it:
no text over text, no legend on a panel or on text, no text under 10 px as displayed on a desktop
(``page.figures.layout_faults``, which ``show_figure`` also enforces when a chapter executes),
and every series named after a format or a regime in the book's colour (``core.palette``).
"""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from amp_docs_lib.core.palette import color_of, color_or_default  # noqa: E402
from amp_docs_lib.page.figures import FigureLayoutError, fit_to_column, layout_faults, show_figure  # noqa: E402

REGIMES = (
    "fp32",
    "fp16",
    "amp_fp16",
    "amp_bf16",
    "bf16",
    "bf16_master",
    "bf16_kahan",
    "bf16_optimi",
    "bf16_sr",
    "amp_bf16_moments",
    "amp_fp16_overflow",
)


def _run(name: str, i: int, steps: int = 40):
    rng = np.random.default_rng(i)
    loss = 3.0 * np.exp(-np.arange(steps) / 30) + 0.5 + 0.001 * rng.standard_normal(steps)
    diverged = None
    if name in ("fp16", "amp_fp16_overflow"):
        diverged = 3 if name == "fp16" else 25
        loss[diverged:] = np.inf
    scaled = name.startswith("amp_fp16")
    log = pd.DataFrame(
        {
            "step": range(steps),
            "train_loss": loss,
            "grad_norm": np.abs(loss) + 0.1,
            "scale": [2.0**16 / (1 + (s > 20)) if scaled else None for s in range(steps)],
            "skipped": [scaled and s == 20 for s in range(steps)],
            "unchanged": np.full(steps, 0.01 if name == "fp32" else 0.9 - 0.01 * i),
        }
    )
    val = pd.DataFrame(
        {"step": [9, 19, 29, 39], "val_loss": [loss[min(s, (diverged or steps) - 1)] for s in (9, 19, 29, 39)]}
    )
    return SimpleNamespace(log=log, val=val, diverged_at=diverged, param_bytes=4e6, grad_bytes=4e6, state_bytes=8e6)


def _regime_results():
    return {n: _run(n, i) for i, n in enumerate(REGIMES)}


def _regime_summary():
    return pd.DataFrame(
        {
            "regime": list(REGIMES),
            "mean step (ms)": np.linspace(10, 20, len(REGIMES)),
            "tokens/s": np.linspace(2000, 1000, len(REGIMES)),
        }
    )


def _sqnr_table():
    rows = []
    for kind in ("activation", "gradient", "weight"):
        for fmt in ("FP8 E4M3FN", "FP8 E5M2", "FP4 E2M1"):
            for strategy in ("none (scale 1)", "per-tensor", "per-row"):
                sqnr = 0.16 if (kind, fmt, strategy) == ("gradient", "FP8 E4M3FN", "none (scale 1)") else 25.0
                rows.append(
                    {
                        "kind": kind,
                        "format": fmt,
                        "strategy": strategy,
                        "SQNR (dB)": sqnr,
                        "saturated": 0.0,
                        "flushed to zero": 0.0,
                        "tensor": f"{kind}:0",
                    }
                )
    return pd.DataFrame(rows)


def _regimes(name):
    from amp_docs_lib.regimes import plots as rp

    results = _regime_results()
    return {
        "plot_losses": lambda: rp.plot_losses(results, floor=0.6),
        "plot_loss_vs_baseline": lambda: rp.plot_loss_vs_baseline(
            {n: r for n, r in results.items() if n not in ("fp16", "amp_fp16_overflow")},
            seeds={"amp_bf16": [(results["amp_bf16"], results["fp32"])]},
        ),
        "plot_grad_norm": lambda: rp.plot_grad_norm(results),
        "plot_loss_scale": lambda: rp.plot_loss_scale({n: results[n] for n in ("amp_fp16", "amp_fp16_overflow")}),
        "plot_speed": lambda: rp.plot_speed(_regime_summary()),
        "plot_memory": lambda: rp.plot_memory(results, _regime_summary()),
        "plot_unchanged": lambda: rp.plot_unchanged(
            {n: results[n] for n in ("fp32", "bf16", "bf16_master", "bf16_kahan", "bf16_sr")}
        ),
    }[name]()


def _numerics(name):
    from amp_docs_lib.numbers import numerics as N

    return {
        "plot_spacing": lambda: N.plot_spacing(
            N.spacing_vs_magnitude(("FP32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2"), points=10)
        ),
        "plot_softplus": lambda: N.plot_softplus(N.softplus_errors(("FP16", "BF16", "FP32"), points=41)),
        "plot_accumulation": lambda: N.plot_accumulation(N.accumulation_error(n_terms=300, return_traces=True)[1]),
        "plot_sgd_stagnation": lambda: N.plot_sgd_stagnation(N.sgd_stagnation(steps=20, n_weights=4)),
    }[name]()


def _fp8(name):
    from amp_docs_lib.fp8 import float8_training, scaling
    from amp_docs_lib.fp8 import formats as fp8f

    g = torch.Generator().manual_seed(0)
    tensors = {
        "activation:0": torch.randn(512, generator=g),
        "weight:0": 0.02 * torch.randn(512, generator=g),
        "gradient:0": 1e-5 * torch.randn(512, generator=g),
    }
    steps = np.arange(30)
    run = pd.concat(
        [
            pd.DataFrame(
                {"method": m, "step": steps, "saturated": (steps == 10) * 0.01 * (k + 1), "SQNR (dB)": 30.0 - k}
            )
            for k, m in enumerate(("current", "delayed (history 16)"))
        ]
    )
    curves = pd.concat(
        [
            pd.DataFrame({"recipe": r, "step": steps, "loss": 3 - 0.05 * steps + 0.01 * k})
            for k, r in enumerate(("bf16", "fp32", "tensorwise", "rowwise"))
        ]
    )
    outlier = scaling.inject_outlier(0.05 * torch.randn(16, 128, generator=g), 1000.0, (3, 40))
    return {
        "plot_codes": lambda: fp8f.plot_codes(),
        "plot_relative_error": lambda: fp8f.plot_relative_error(),
        "plot_range": lambda: fp8f.plot_range(tensors),
        "plot_sqnr": lambda: scaling.plot_sqnr(_sqnr_table()),
        "plot_delayed_scaling": lambda: scaling.plot_delayed_scaling(run, spike_at=10, ramp_at=20),
        "plot_curves": lambda: float8_training.plot_curves(curves),
        "plot_scale_granularity": lambda: scaling.plot_scale_granularity(outlier[0], mask=outlier[1]),
    }[name]()


def _other(name):
    from amp_docs_lib.amp import dtype_trace as dt
    from amp_docs_lib.amp import underflow
    from amp_docs_lib.amp.scale_dynamics import plot_scale, scenario, simulate
    from amp_docs_lib.bench import model_sweep, roofline
    from amp_docs_lib.debugging import stats
    from amp_docs_lib.distributed import memory
    from amp_docs_lib.numbers import formats as fmt
    from amp_docs_lib.quantization import affine

    flow = pd.DataFrame(
        {
            "module type": ["Embedding", "Linear", "LayerNorm", "softmax"],
            "fp32": ["float32 → float32"] * 4,
            "amp_fp16": ["float32 → float32", "float32 → float16", "float16 → float32", "float16 → float32"],
            "amp_bf16": ["float32 → float32", "float32 → bfloat16", "bfloat16 → float32", "bfloat16 → float32"],
        }
    )
    sizes = [1e5, 1e6, 1e7]
    speedup = pd.concat(
        [
            pd.DataFrame(
                {
                    "precision": p,
                    "parameters": sizes,
                    "speedup vs fp32": [1.0 + k] * 3,
                    "interval low": [0.9 + k] * 3,
                    "interval high": [1.1 + k] * 3,
                }
            )
            for k, p in enumerate(("fp32", "amp_bf16", "amp_fp16"))
        ]
    )
    points = pd.DataFrame(
        {
            "dtype": ["fp32", "fp32", "bf16", "bf16"],
            "intensity": [10.0, 100.0, 10.0, 100.0],
            "tflops": [0.05, 0.1, 0.04, 0.09],
        }
    )
    growth = pd.DataFrame({f"blocks.{i}.mlp": np.geomspace(1, 1e5 * (i + 1), 20) for i in range(3)})
    growth.iloc[-1, -1] = np.inf
    return {
        "plot_dtype_flow": lambda: dt.plot_dtype_flow(flow),
        "plot_memory_per_rank": lambda: memory.plot_memory_per_rank(memory.memory_table(7_500_000_000, 64)),
        "underflow_histogram": lambda: underflow.underflow_histogram(),
        "plot_scale": lambda: plot_scale(
            {n: simulate(scenario(n, steps=1000)) for n in ("healthy", "periodic overflow", "death spiral")}
        ),
        "plot_speedup": lambda: model_sweep.plot_speedup(speedup),
        "plot_roofline": lambda: roofline.plot_roofline(points, 0.2, 0.002, peak_label="FP32 peak"),
        "plot_activation_growth": lambda: stats.plot_activation_growth(growth),
        "plot_bit_layout": lambda: fmt.plot_bit_layout(fmt.LAYOUT_DEFAULT, value=np.pi),
        "plot_grid": lambda: affine.plot_grid(torch.randn(256, generator=torch.Generator().manual_seed(0)), bits=4),
    }[name]()


FIGURES = {
    **{
        n: _regimes
        for n in (
            "plot_losses",
            "plot_loss_vs_baseline",
            "plot_grad_norm",
            "plot_loss_scale",
            "plot_speed",
            "plot_memory",
            "plot_unchanged",
        )
    },
    **{n: _numerics for n in ("plot_spacing", "plot_softplus", "plot_accumulation", "plot_sgd_stagnation")},
    **{
        n: _fp8
        for n in (
            "plot_codes",
            "plot_relative_error",
            "plot_range",
            "plot_sqnr",
            "plot_delayed_scaling",
            "plot_curves",
            "plot_scale_granularity",
        )
    },
    **{
        n: _other
        for n in (
            "plot_dtype_flow",
            "underflow_histogram",
            "plot_scale",
            "plot_speedup",
            "plot_roofline",
            "plot_activation_growth",
            "plot_bit_layout",
            "plot_grid",
            "plot_memory_per_rank",
        )
    },
}


def draw(name: str):
    fig = FIGURES[name](name)
    fit_to_column(fig)
    return fig


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_reader_can_read_every_figure(name):
    """Issue 36 / reader findings 15, 16, 31: titles over titles, a legend on the axis labels or on
    the next panel, legend text of 7-9 px."""
    fig = draw(name)
    try:
        assert layout_faults(fig) == [], name
    finally:
        plt.close(fig)


def _series_colours(fig) -> dict[str, str]:
    """Label -> colour of every labelled series (lines, bars, markers, error bars) of ``fig``."""
    out = {}
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        for legend in fig.legends + ([ax.get_legend()] if ax.get_legend() else []):
            handles += legend.legend_handles
            labels += [t.get_text() for t in legend.get_texts()]
        for h, label in zip(handles, labels, strict=False):
            if hasattr(h, "get_color") and not hasattr(h, "get_facecolor"):
                c = h.get_color()
            elif hasattr(h, "lines"):  # an errorbar container: its data line
                c = h.lines[0].get_color()
            else:
                fc = h.get_facecolor()
                if np.ndim(fc) == 2 and not len(fc):  # a legend's proxy with no fill: the artist's own entry counts
                    continue
                c = fc[0] if np.ndim(fc) == 2 else fc
            out.setdefault(label, to_hex(c))  # the drawn artist first, then legend proxies
    return out


# Per figure, the series named after a format or regime that it must draw (and whose colour is checked).
NAMED = {
    "plot_losses": ("fp32", "fp16", "amp_fp16_overflow"),
    "plot_loss_vs_baseline": ("amp_bf16", "bf16_sr", "bf16_optimi"),
    "plot_grad_norm": REGIMES,
    "plot_loss_scale": ("amp_fp16", "amp_fp16_overflow"),
    "plot_unchanged": ("fp32", "bf16", "bf16_master", "bf16_kahan", "bf16_sr"),
    "plot_spacing": ("FP32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2"),
    "plot_accumulation": ("FP16", "BF16", "FP32"),
    "plot_relative_error": ("FP8 E4M3FN", "FP8 E5M2", "BF16", "FP16"),
    "plot_curves": ("bf16", "fp32"),
    "plot_speedup": ("amp_bf16", "amp_fp16"),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_series_take_the_palettes_colour(name):
    """Architecture review finding 4: plots coloured by position in Matplotlib's cycle (BF16 blue in
    one figure and green in the next)."""
    fig = draw(name)
    colours = _series_colours(fig)
    plt.close(fig)
    missing = [n for n in NAMED[name] if n not in colours]
    assert not missing, f"{name} draws no series named {missing}: {sorted(colours)}"
    wrong = {n: colours[n] for n in NAMED[name] if colours[n] != to_hex(color_of(n))}
    assert not wrong, f"{name}: {wrong} are not the palette's {[color_of(n) for n in wrong]}"


def test_bars_and_cells_take_the_palettes_colour():
    """The figures whose formats are bars, ticks or cells rather than labelled lines."""
    from matplotlib.patches import Rectangle

    sqnr = draw("plot_sqnr")
    labels = [t.get_text() for t in sqnr.axes[0].get_yticklabels()]  # the panels share them
    for ax in sqnr.axes:
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        for label, bar in zip(labels, bars, strict=True):
            fmt = label.split(",")[0]
            assert to_hex(bar.get_facecolor()) == to_hex(color_of(fmt if fmt == "FP4 E2M1" else "FP8 " + fmt)), label
    plt.close(sqnr)
    codes = draw("plot_codes")
    ax = codes.axes[0]
    names = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert [to_hex(c.get_facecolor()[0]) for c in ax.collections] == [to_hex(color_of(n)) for n in names]
    plt.close(codes)
    flow = draw("plot_dtype_flow")
    legend = flow.axes[0].get_legend()
    got = {
        t.get_text().removeprefix("output "): to_hex(h.get_facecolor())
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    assert got == {k: to_hex(color_of(k)) for k in ("float32", "float16", "bfloat16")}
    plt.close(flow)
    speed = draw("plot_speed")
    assert [to_hex(p.get_facecolor()) for p in speed.axes[0].patches] == [to_hex(color_of(n)) for n in REGIMES]
    plt.close(speed)


def test_every_regime_and_format_has_a_colour():
    from amp_docs_lib.amp.precision import REGIMES as ALL_REGIMES

    assert not [n for n in ALL_REGIMES if color_or_default(n, None) is None]


def test_the_losses_figure_shows_the_runs_that_differ_and_groups_those_that_coincide():
    """Finding 23: eleven runs that lie on each other drew one line and a legend over the panel."""
    fig = draw("plot_losses")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)
    assert labels[:3] == ["fp32", "fp16", "8 other regimes (differences: next figure)"]
    assert "amp_fp16_overflow" in labels and "entropy floor" in labels


def test_the_sqnr_bars_near_zero_are_labelled():
    """Finding 31: the 0.16 dB bar (the chapter's key failure) was a blank row."""
    fig = draw("plot_sqnr")
    gradient = next(ax for ax in fig.axes if ax.get_title() == "gradient")
    texts = [t.get_text() for t in gradient.texts]
    plt.close(fig)
    assert texts[0] == "0.2" and len(texts) == 9


def test_show_figure_refuses_a_figure_a_reader_cannot_read():
    """Two titles drawn over each other, a legend put on the neighbouring panel: the build fails."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3))
    a.set_title("a long title that runs on and on into the title of the next panel")
    b.set_title("the next panel's title")
    with pytest.raises(FigureLayoutError, match="overlaps"):
        show_figure(fig, "overlapping titles")
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3))
    a.plot([0, 1], label="series")
    fig.legend(loc="center", bbox_to_anchor=(0.75, 0.5))  # on the right-hand panel
    with pytest.raises(FigureLayoutError, match="panel it does not belong to"):
        show_figure(fig, "a legend on the next panel")
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], label="series")
    ax.legend()
    show_figure(fig, "a readable figure")


def test_the_granularity_figure_draws_the_scales_each_strategy_computes():
    """Finding 33: one scale for the tensor, one per row, one per block of 32 along a row, as computed."""
    fig = draw("plot_scale_granularity")
    images = [ax.get_images()[0].get_array() for ax in fig.axes if ax.get_images()]
    plt.close(fig)
    assert [len(np.unique(np.asarray(a))) for a in images] == [1, 16, len(np.unique(np.asarray(images[2])))]
    blocks = np.asarray(images[2]).reshape(16, 4, 32)
    assert (blocks == blocks[..., :1]).all() and len(np.unique(np.asarray(images[2]))) > 1


def test_series_that_lie_on_each_other_stay_visible():
    """Finding 17: FP32 and the exact sum merged into one line; five SGD series showed as two. The
    series underneath is drawn wide and pale, the one on top thin and patterned."""
    for name, under, over in (
        ("plot_accumulation", ["FP32"], ["exact (float64)"]),
        ("plot_sgd_stagnation", ["FP32 weights"], ["FP16 compute + FP32 master", "BF16 compute + FP32 master"]),
        ("plot_sgd_stagnation", ["FP16 weights"], ["BF16 weights"]),
    ):
        fig = draw(name)
        lines = {line.get_label(): line for ax in fig.axes for line in ax.lines}
        plt.close(fig)
        for u in under:
            for o in over:
                assert lines[o].get_zorder() > lines[u].get_zorder(), (name, o, u)
                assert lines[o].get_linewidth() < lines[u].get_linewidth(), (name, o, u)
                assert lines[o].get_linestyle() != "-", (name, o)


def _log_panel(lo: float, hi: float, height: float):
    """Two panels, the right one a log y axis over [lo, hi], the shape of the quantization batch sweep."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, height), layout="constrained")
    left.plot([1, 2], [1, 2])
    right.plot([1, 2], [lo, hi])
    right.set_yscale("log")
    return fig, right


def _labels_in_view(ax) -> list[str]:
    ax.figure.draw_without_rendering()
    return [t.label1.get_text() for t in ax.yaxis._update_ticks() if t.label1.get_visible() and t.label1.get_text()]


# (0.25, 4.5): the speedup axis CI drew 3x10^-1 over 4x10^-1 on; under a decade; under a tenth of one
@pytest.mark.parametrize(
    "lo,hi,height", [(0.25, 4.5, 1.9), (0.12, 0.9, 1.6), (0.5, 0.8, 1.6), (0.52, 0.58, 1.6), (1e-12, 1.0, 1.6)]
)
def test_a_log_y_axis_of_any_measured_range_gets_two_or_more_labels_that_do_not_overlap(lo, hi, height):
    fig, ax = _log_panel(lo, hi, height)
    fit_to_column(fig)
    try:
        assert layout_faults(fig) == []
        assert len(_labels_in_view(ax)) >= 2
    finally:
        plt.close(fig)


def test_matplotlibs_own_log_labels_overlap_on_that_axis(monkeypatch):
    """The false variant: without the tick pass the first case above is the CI failure."""
    from amp_docs_lib.page import figures

    monkeypatch.setattr(figures, "_log_y_ticks", lambda ax: None)
    fig, _ = _log_panel(0.25, 4.5, 1.9)
    figures.fit_to_column(fig)
    try:
        assert any("overlaps" in f for f in figures.layout_faults(fig))
    finally:
        plt.close(fig)


def test_a_log_axis_with_its_own_formatter_keeps_it():
    from matplotlib import ticker

    fig, ax = _log_panel(0.25, 4.5, 3.0)
    own = ticker.FuncFormatter(lambda v, _: f"{v:g}x")
    ax.yaxis.set_major_formatter(own)
    fit_to_column(fig)
    try:
        assert ax.yaxis.get_major_formatter() is own
    finally:
        plt.close(fig)
