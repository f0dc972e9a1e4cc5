"""The batch sweep's figure, as the site fits it to the text column (issue 36, reader 1, finding 5)."""

import matplotlib
import pandas as pd
import pytest

from amp_docs_lib.page.figures import fit_to_column, layout_faults
from amp_docs_lib.quantization import speed

matplotlib.use("Agg")

# The chapter's variant names: long enough that a legend of them in two columns is wider than the column.
LABELS = [
    "FP32",
    "torchao INT8 weight-only",
    "torchao INT4 weight-only (Intx, group 32)",
    "torchao INT8 dynamic act + INT8 weight",
    "torch.ao quantize_dynamic (deprecated, fbgemm)",
    "FP32 again (A/A control)",
]


def sweep_frame(batches) -> pd.DataFrame:
    rows = []
    for i, v in enumerate(LABELS):
        for b in batches:
            s = None if v == "FP32" else 1.0 + 0.1 * i
            rows.append(
                {
                    "variant": v,
                    "batch": b,
                    "median (us)": 10.0 * b * (1 + i),
                    "speedup vs FP32 (x)": s,
                    "interval low": None if s is None else 0.9 * s,
                    "interval high": None if s is None else 1.1 * s,
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("batches", [(1, 8, 64, 256, 1024), (1, 16, 128, 1024, 4096)])  # the CPU and GPU profiles
def test_the_sweep_figure_keeps_its_panels_wide_and_labels_every_batch(batches):
    fig = speed.plot_batch_sweep(sweep_frame(batches))
    fit_to_column(fig)
    renderer = fig.canvas.get_renderer()
    drawn_px = fig.get_tightbbox(renderer).width * fig.dpi
    latency, speedup = fig.axes[0], fig.axes[1]
    assert speedup.get_ylabel() == "speedup over FP32 (x), interval"
    for ax in (latency, speedup):
        # each panel takes about a third of the image; the old figure's took 2% beside a two-column legend
        assert ax.get_window_extent(renderer).width > 0.25 * drawn_px
        assert [t.get_text() for t in ax.get_xticklabels()] == [speed._batch_label(b) for b in batches]
    assert layout_faults(fig) == []
