"""Underflow measurements: FP16 loses small gradients unless scaled; BF16 keeps them."""

import pytest
import torch

from amp_docs_lib.amp.underflow import (bce_gradient_overflow, cast_report, format_limits,
                                    predicted_fraction_below, real_backward_underflow,
                                    synthetic_gradients, underflow_table)


def test_synthetic_range():
    g = synthetic_gradients(10_000, -12, -2)
    m = g.abs()
    assert m.min() >= 1e-12 * 0.999 and m.max() < 1e-2
    assert (g < 0).any() and (g > 0).any()


def test_fp16_unscaled_loses_more_than_scaled_and_bf16_none():
    g = synthetic_gradients(50_000, -12, -2)
    t = underflow_table(g).set_index(["format", "loss scale"])
    lost = t["to zero"]
    assert lost[("fp16", "none")] > 0.3  # everything below ~3e-8 is gone
    assert lost[("fp16", "2^16")] < lost[("fp16", "none")]
    assert (lost.loc["bf16"] == 0).all()
    assert t.loc[("fp16", "2^24"), "to inf"] > 0  # too big a scale overflows


def test_cast_report_exact_boundaries():
    lim = format_limits("fp16")
    assert lim["min subnormal"] == 2.0**-24 and lim["min normal"] == 2.0**-14 and lim["max"] == 65504
    x = torch.tensor([2.0**-26, 2.0**-20, 1.0, 1e5])
    r = cast_report(x, "fp16")
    assert r == {"to zero": 0.25, "subnormal": 0.25, "to inf": 0.25}
    with pytest.raises(ValueError, match="valid"):
        cast_report(x, "fp8")


def test_real_backward_fp16_zeros_rescued_by_scaling():
    df = real_backward_underflow()
    assert (df["zero in fp16"] > 0).all()
    assert (df["zero in fp16 scaled"] < df["zero in fp16"]).all()


def test_flushed_fraction_matches_the_log_uniform_prediction():
    g = synthetic_gradients(200_000, -12, -2)
    t = underflow_table(g).set_index(["format", "loss scale"])
    assert t.loc[("fp16", "none"), "to zero"] == pytest.approx(predicted_fraction_below(2.0**-25), abs=0.005)
    assert predicted_fraction_below(2.0**-41) == 0.0 and predicted_fraction_below(1.0) == 1.0
    with pytest.raises(ValueError, match="positive"):
        predicted_fraction_below(0.0)


def test_bce_gradient_overflows_fp16_near_zero():
    df = bce_gradient_overflow()
    assert df["gradient (FP32)"].iloc[0] == pytest.approx(-2.0)  # -1/p at p = 0.5
    last = df.iloc[-1]
    assert abs(last["gradient (FP32)"]) > torch.finfo(torch.float16).max
    assert last["gradient in FP16"] == float("-inf")


def _contrast(c1, c2) -> float:
    from matplotlib.colors import to_rgb

    def lum(c):
        def ch(v):
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        r, g, b = (ch(v) for v in to_rgb(c))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    a, b = sorted((lum(c1), lum(c2)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _on_dark(color, alpha):
    from matplotlib.colors import to_rgb

    from amp_docs_lib.page.figures import DARK_BACKGROUND
    fg, bg = to_rgb(color), to_rgb(DARK_BACKGROUND)
    return tuple(alpha * f + (1 - alpha) * b for f, b in zip(fg, bg))


def test_histogram_limit_lines_stand_out_on_the_dark_fills():
    """Finding 7: in the dark rendering every FP16 limit line keeps a 3:1 contrast against the band it
    crosses; the old opaque cream band with a grey line fails the same test."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.patches import Polygon, Rectangle

    from amp_docs_lib.amp import underflow as U
    from amp_docs_lib.page.figures import _recolor_for_dark

    fig = U.underflow_histogram()
    _recolor_for_dark(fig)
    ax = fig.axes[0]
    bands = [p for p in ax.patches if isinstance(p, (Polygon, Rectangle)) and p.get_alpha() == U.BAND_ALPHA]
    assert len(bands) == 2
    lines = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith("FP16 ")]
    assert len(lines) == 3
    for line in lines:
        for band in bands:
            fill = _on_dark(band.get_facecolor()[:3], U.BAND_ALPHA)
            assert _contrast(line.get_color(), fill) >= 3.0, (line.get_label(), band.get_label())
    # the false variant: the old light-grey line on an opaque cream fill
    assert _contrast((0.84, 0.85, 0.89), "#fff2cc") < 3.0
