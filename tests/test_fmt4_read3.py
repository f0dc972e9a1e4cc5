"""Third independent read of the Formats chapter (issue 33): the library's side of the fixes."""

import math

import matplotlib

matplotlib.use("Agg")

from amp_docs_lib.numbers import formats as fmt
from amp_docs_lib.numbers import numerics as N


def test_tf32_row_says_its_limits_assume_ieee_rules():
    # The whitepaper fixes only the field widths; max, subnormals and inf/NaN are the site's model.
    source = fmt.format_table().set_index("format").loc["TF32", "values from"]
    assert "IEEE-style" in source and "not stated by NVIDIA" in source


def test_fp6_fp4_nan_becomes_zero_of_the_opposite_sign():
    # Library conformance (ml_dtypes), as the explorer's prose states it: +NaN -> -0, -NaN -> +0.
    for name in ("FP6 E2M3", "FP6 E3M2", "FP4 E2M1"):
        sign = 1 << (fmt.get_format(name).total_bits - 1)
        assert (fmt.encode(math.nan, name), fmt.encode(-math.nan, name)) == (sign, 0), name


def _title_fits(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return all(
        ax.title.get_window_extent(renderer).width <= ax.get_window_extent(renderer).width * 1.05 for ax in fig.axes
    )


def test_spacing_titles_fit_their_panels():
    fig = N.plot_spacing(N.spacing_vs_magnitude())
    assert _title_fits(fig)


def test_softplus_legend_sits_outside_the_panels():
    fig = N.plot_softplus(N.softplus_errors())
    assert fig.legends, "one figure legend"
    assert all(ax.get_legend() is None for ax in fig.axes), "no legend inside a panel"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "true value below min normal" in labels and len(labels) == len(set(labels))
