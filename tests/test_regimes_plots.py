"""The regimes page's figures show what their captions say."""

from types import SimpleNamespace

import numpy as np
import pandas as pd

from amp_docs_lib.regimes import plots as rp


def _run(values):
    return SimpleNamespace(log=pd.DataFrame({"step": range(len(values)), "unchanged": values}))


def test_unchanged_figure_separates_the_bf16_remedies_that_coincide_at_full_scale():
    """Master weights, Kahan and stochastic rounding all leave ~0.9 of BF16 elements unchanged: on a
    0-1 axis beside FP32's ~0.01 they drew one curve (review F7); the second panel fits their range."""
    runs = {
        "fp32": _run(np.full(30, 0.01)),
        "bf16": _run(np.full(30, 0.90)),
        "bf16_master": _run(np.full(30, 0.88)),
        "bf16_sr": _run(np.linspace(0.85, 0.87, 30)),
    }
    fig = rp.plot_unchanged(runs)
    full, zoom = fig.axes
    assert [line.get_label() for line in full.lines] == list(runs)
    assert [line.get_label() for line in zoom.lines] == ["bf16", "bf16_master", "bf16_sr"]
    lo, hi = zoom.get_ylim()
    assert lo <= 0.85 and hi >= 0.90 and hi - lo < 0.1  # 0.02 apart is a visible gap on this axis
    styles = {(line.get_color(), line.get_linestyle()) for line in zoom.lines}
    assert len(styles) == 3


def test_unchanged_figure_with_only_the_baseline_has_one_panel():
    assert len(rp.plot_unchanged({"fp32": _run(np.full(5, 0.01))}).axes) == 1
