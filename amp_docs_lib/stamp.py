"""Provenance stamps: every executed table and figure says what produced it.

``show_table`` and ``show_figure`` are how chapters display results; both
attach ``stamp_text()`` (device, torch/CUDA, library version and revision,
TF32 settings, profile, build date).
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import pandas as pd

from amp_docs_lib import __version__
from amp_docs_lib.env import device_summary, environment_report, git_revision, tf32_summary
from amp_docs_lib.profiles import active_profile


def stamp_text() -> str:
    """One line naming what produced a result."""
    import datetime as _dt

    import torch

    cuda = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU build"
    return (
        f"{device_summary()} · torch {torch.__version__} ({cuda}) · "
        f"amp_docs_lib {__version__}@{git_revision()} · {tf32_summary()} · "
        f"profile {active_profile().name} · {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d}"
    )


class Stamped:
    """A rendered result (HTML) that carries its provenance stamp."""

    def __init__(self, body_html: str, caption: str | None, kind: str):
        self.body_html = body_html
        self.caption = caption
        self.kind = kind
        self.stamp = stamp_text()

    def _repr_html_(self) -> str:
        cap = f"<figcaption>{html.escape(self.caption)}</figcaption>" if self.caption else ""
        return (f'<figure class="amp-result amp-{self.kind}">{cap}{self.body_html}'
                f'<div class="amp-stamp">measured on {html.escape(self.stamp)}</div></figure>')

    def __repr__(self) -> str:  # plain-text fallback (scripts, doctests)
        return f"<{self.kind}: {self.caption or ''} [{self.stamp}]>"


class StampedTable(Stamped):
    def __init__(self, df: pd.DataFrame, caption: str | None, html_body: str):
        super().__init__(html_body, caption, "table")
        self.df = df

    def __repr__(self) -> str:
        return f"{self.caption or ''}\n{self.df.to_string()}\n[{self.stamp}]"


def _format_cell(v: Any, float_format: str) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v != v:
            return "NaN"
        return format(v, float_format)
    return str(v)


def show_table(df: pd.DataFrame, caption: str | None = None, *, float_format: str = ".4g",
               index: bool = False) -> StampedTable:
    """Render ``df`` as a stamped HTML table (the last expression of a cell)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_table expects a pandas DataFrame, got {type(df).__name__}")
    body = df.to_html(index=index, border=0, classes="amp-table",
                      formatters={c: (lambda v, f=float_format: _format_cell(v, f)) for c in df.columns},
                      escape=True)
    return StampedTable(df, caption, body)


def show_figure(fig: Any, caption: str | None = None, *, dpi: int = 110) -> Stamped:
    """Draw the stamp into ``fig``'s footer, render it to PNG and close it.

    Closing stops the inline backend from showing the figure a second time.
    """
    import matplotlib.figure
    import matplotlib.pyplot as plt

    if not isinstance(fig, matplotlib.figure.Figure):
        raise TypeError(f"show_figure expects a matplotlib Figure, got {type(fig).__name__}")
    text = stamp_text()
    # Put the stamp just below everything already drawn (tick labels, x labels, legends);
    # the tight bounding box used when saving then grows to include it.
    renderer = fig.canvas.get_renderer()
    bbox = fig.get_tightbbox(renderer)
    y = bbox.y0 / fig.get_figheight() - 0.01
    label = fig.text(0.99, y, text, ha="right", va="top", fontsize=6, color="0.45")
    if label.get_window_extent(renderer).width > 0.98 * fig.bbox.width:
        # Too wide for a narrow figure: break at the separator nearest the middle.
        parts = text.split(" · ")
        half = max(1, len(parts) // 2)
        label.set_text(" · ".join(parts[:half]) + "\n" + " · ".join(parts[half:]))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.12)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    alt = html.escape(caption or "figure")
    return Stamped(f'<img src="data:image/png;base64,{data}" alt="{alt}"/>', caption, "figure")


def environment_table() -> StampedTable:
    """The full environment report as a table (the home page shows it)."""
    r = environment_report()
    rows = [("device", r["device"]), ("platform", r["platform"]),
            ("torch", r["torch"]), ("CUDA (build)", r["cuda"]),
            ("CUDA available", r["cuda_available"]), ("cuDNN", r["cudnn"]),
            ("amp_docs_lib", f"{r['amp_docs_lib']} @ {r['git_revision']}"),
            *((f"TF32: {k}", v) for k, v in r["tf32"].items()),
            ("profile", r["profile"]), ("hardware fingerprint", r["hardware_fingerprint"]),
            ("build date", r["build_date"])]
    for g in r["gpus"]:
        rows.append((f"GPU {g['index']}", f"{g['name']}, sm {g['compute_capability']}, "
                     f"{g['memory_gib']} GiB, bf16 {'yes' if g['bf16_supported'] else 'no'}"))
    rows += [(f"package: {k}", v) for k, v in r["packages"].items()]
    df = pd.DataFrame(rows, columns=["item", "value"]).astype(str)
    return show_table(df, "Environment of this build")
