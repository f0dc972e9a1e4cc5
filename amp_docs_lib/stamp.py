"""Provenance stamps: every executed table and figure says what produced it.

``show_table`` and ``show_figure`` are how chapters display results. A result
measured in this build carries ``stamp_text()`` (device, torch/CUDA, library
version and revision, TF32 settings, profile, build date); data that was not
measured (documentation, a datasheet) is shown with ``source=`` and carries a
source stamp naming where it comes from instead, styled differently.

Conventions every chapter gets from here: not-applicable cells (``None``)
print as "n/a", never as NaN; a table longer than ``MAX_OPEN_ROWS`` rows is
collapsed into a ``<details>`` block (lead with a summary above it); every
figure is rendered twice, for the light and the dark palette.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import numpy as np
import pandas as pd

from amp_docs_lib import __version__
from amp_docs_lib.env import NO_CUDA, environment_report, stamp_fields, tf32_summary


def stamp_text(report: dict[str, Any] | None = None) -> str:
    """One line naming what produced a result: this process, or the environment ``report``
    (an ``env.environment_report()``, e.g. the build's memoised one)."""
    r = stamp_fields() if report is None else report
    cuda = "CPU build" if r["cuda"] == NO_CUDA else f"CUDA {r['cuda']}"
    return (
        f"{r['device']} · torch {r['torch']} ({cuda}) · "
        f"amp_docs_lib {__version__}@{r['git_revision']} · {tf32_summary(r['tf32'])} · "
        f"profile {r['profile']} · {r['build_date']}"
    )


# Longer tables are collapsed (a reader scans a summary, then opens the full table if they want it).
MAX_OPEN_ROWS = 15
NOT_APPLICABLE = "n/a"


class Stamped:
    """A rendered result (HTML) that carries its provenance stamp.

    ``source`` is None for a measurement of this build (stamped with
    ``stamp_text()``); otherwise it names the data's source and version, and
    the stamp says so instead.
    """

    def __init__(self, body_html: str, caption: str | None, kind: str, *, source: str | None = None,
                 collapsed: bool = False, size_note: str = "", report: dict[str, Any] | None = None):
        if source is not None and (not isinstance(source, str) or not source.strip()):
            raise ValueError(f"source must be a non-empty str naming where the data comes from, got {source!r}")
        self.body_html = body_html
        self.caption = caption
        self.kind = kind
        self.source = source
        self.collapsed = collapsed
        self.size_note = size_note
        self.stamp = stamp_text(report) if source is None else f"source: {source}"

    @property
    def is_measurement(self) -> bool:
        return self.source is None

    def _stamp_html(self) -> str:
        if self.is_measurement:
            return f'<div class="amp-stamp amp-stamp--measured">measured on {html.escape(self.stamp)}</div>'
        return (f'<div class="amp-stamp amp-stamp--source">not measured: documentation data · '
                f'{html.escape(self.stamp)}</div>')

    def _repr_html_(self) -> str:
        cap = html.escape(self.caption) if self.caption else ""
        if self.collapsed:
            label = cap or "Full table"
            body = (f'<details class="amp-details"><summary>{label} {html.escape(self.size_note)}</summary>'
                    f'{self.body_html}</details>')
            cap = ""
        else:
            body = self.body_html
        figcap = f"<figcaption>{cap}</figcaption>" if cap else ""
        return (f'<figure class="amp-result amp-{self.kind}">{figcap}{body}'
                f'{self._stamp_html()}</figure>')

    def __repr__(self) -> str:  # plain-text fallback (scripts, doctests)
        return f"<{self.kind}: {self.caption or ''} [{self.stamp}]>"


class StampedTable(Stamped):
    def __init__(self, df: pd.DataFrame, caption: str | None, html_body: str, **kw: Any):
        super().__init__(html_body, caption, "table", **kw)
        self.df = df

    def __repr__(self) -> str:
        return f"{self.caption or ''}\n{self.df.to_string()}\n[{self.stamp}]"


def table_from_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame from row dicts in which ``None`` stays ``None`` (not applicable).

    ``pd.DataFrame(rows)`` turns ``None`` in a numeric column into NaN, which a
    reader cannot tell from the value NaN. Columns holding a ``None`` keep
    object dtype (numbers stay Python numbers); the others get their usual dtype.
    """
    df = pd.DataFrame(rows, dtype=object)
    for col in df.columns:
        if not any(v is None for v in df[col]):
            df[col] = df[col].infer_objects()
    return df


def format_cell(v: Any, float_format: str = ".4g") -> str:
    """How a table cell prints: None/pd.NA as "n/a" (not applicable), NaN as the value NaN."""
    if v is None or v is pd.NA:
        return NOT_APPLICABLE
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v != v:
            return "NaN"
        return format(v, float_format)
    return str(v)


def _is_text(col: pd.Series) -> bool:
    """A column of strings (missing values aside), whatever dtype pandas gave it."""
    values = [v for v in col if not (v is None or (isinstance(v, float) and v != v))]
    return bool(values) and all(isinstance(v, str) for v in values)


def show_table(df: pd.DataFrame, caption: str | None = None, *, float_format: str = ".4g",
               index: bool = False, source: str | None = None,
               collapsed: bool | None = None, report: dict[str, Any] | None = None) -> StampedTable:
    """Render ``df`` as a stamped HTML table (the last expression of a cell).

    ``source``: for data that was not measured in this build (documented op
    lists, datasheet figures), the name and version of its source; the table
    then carries a source stamp instead of a measurement stamp.
    ``collapsed``: put the table in a closed ``<details>`` block; by default
    tables longer than ``MAX_OPEN_ROWS`` rows are collapsed. Cells holding
    ``None`` print as "n/a" (not applicable), distinct from a NaN value.
    ``report``: the environment report the measurement stamp names (default: this process's).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_table expects a pandas DataFrame, got {type(df).__name__}")
    if collapsed is None:
        collapsed = len(df) > MAX_OPEN_ROWS
    # Cells are formatted here, not through to_html's formatters, which pandas skips for None.
    # A missing value in a text column cannot be the number NaN: pandas stores a None there as
    # NaN, so it is shown as not applicable. Numeric columns keep None only via table_from_rows.
    def cell(v: Any, text_column: bool) -> str:
        if text_column and isinstance(v, float) and v != v:
            return NOT_APPLICABLE
        return format_cell(v, float_format)

    shown = pd.DataFrame({c: [cell(v, _is_text(df[c])) for v in df[c]] for c in df.columns}, index=df.index)
    shown.columns = df.columns
    body = shown.to_html(index=index, border=0, classes="amp-table", escape=True)
    return StampedTable(df, caption, body, source=source, collapsed=bool(collapsed),
                        size_note=f"({len(df)} rows)", report=report)


# Material's slate palette background, and the greys that replace black / white in the dark rendering.
DARK_BACKGROUND = "#1e2129"
_DARK_FOREGROUND = "#d5d7e2"


def _luminance(color: Any) -> float | None:
    from matplotlib.colors import to_rgba

    try:
        r, g, b, a = to_rgba(color)
    except (ValueError, TypeError):
        return None
    return None if a == 0 else 0.2126 * r + 0.7152 * g + 0.0722 * b


def _swap_neutral(color: Any) -> Any:
    """Near-black becomes light grey and near-white becomes the dark background; colours stay."""
    from matplotlib.colors import to_rgba

    lum = _luminance(color)
    if lum is None:
        return color
    r, g, b, a = to_rgba(color)
    if max(r, g, b) - min(r, g, b) > 0.08:  # a real colour: keep it
        return color
    if lum < 0.5:  # black and dark greys: mirror the grey level onto the light side
        v = 1.0 - 0.85 * lum
        return (0.84 * v, 0.85 * v, 0.89 * v, a)
    return (0.118, 0.129, 0.161, a) if lum > 0.97 else (0.55 * (1 - lum) + 0.2,) * 3 + (a,)


def _recolor_for_dark(fig: Any) -> None:
    """Turn a figure drawn for a light page into one for Material's dark (slate) palette."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    fig.patch.set_facecolor(DARK_BACKGROUND)
    for artist in fig.findobj():
        if artist is fig.patch:
            continue
        if isinstance(artist, Text):
            artist.set_color(_swap_neutral(artist.get_color()))
            bbox = artist.get_bbox_patch()
            if bbox is not None:
                bbox.set_facecolor(_swap_neutral(bbox.get_facecolor()))
                bbox.set_edgecolor(_swap_neutral(bbox.get_edgecolor()))
        elif isinstance(artist, Line2D):
            artist.set_color(_swap_neutral(artist.get_color()))
            artist.set_markerfacecolor(_swap_neutral(artist.get_markerfacecolor()))
            artist.set_markeredgecolor(_swap_neutral(artist.get_markeredgecolor()))
        elif isinstance(artist, Patch):
            artist.set_facecolor(_swap_neutral(artist.get_facecolor()))
            artist.set_edgecolor(_swap_neutral(artist.get_edgecolor()))
        elif isinstance(artist, Collection):
            fc, ec = artist.get_facecolor(), artist.get_edgecolor()
            if len(fc) and artist.get_array() is None:  # colour-mapped collections keep their map
                artist.set_facecolor([_swap_neutral(tuple(c)) for c in fc])
            if len(ec):
                artist.set_edgecolor([_swap_neutral(tuple(c)) for c in ec])
    for ax in fig.axes:
        ax.set_facecolor(DARK_BACKGROUND)
        ax.tick_params(colors=_DARK_FOREGROUND, which="both")
        for spine in ax.spines.values():
            spine.set_edgecolor(_swap_neutral(spine.get_edgecolor()))


def _png(fig: Any, dpi: int, facecolor: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.12, facecolor=facecolor)
    return base64.b64encode(buf.getvalue()).decode()


def show_figure(fig: Any, caption: str | None = None, *, dpi: int = 110) -> Stamped:
    """Draw the stamp into ``fig``'s footer, render it for both palettes and close it.

    The figure is saved as drawn (for the light palette), then recoloured for
    the dark palette (black text and lines become light grey, white
    backgrounds become the page's dark background; coloured data keeps its
    colour) and saved again; the page's CSS shows the rendering that matches
    the reader's palette. Closing stops the inline backend from showing the
    figure a second time.
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
    light = _png(fig, dpi, "white")
    _recolor_for_dark(fig)
    dark = _png(fig, dpi, DARK_BACKGROUND)
    plt.close(fig)
    alt = html.escape(caption or "figure")
    return Stamped(f'<img class="amp-fig amp-fig--light" src="data:image/png;base64,{light}" alt="{alt}"/>'
                   f'<img class="amp-fig amp-fig--dark" src="data:image/png;base64,{dark}" alt="{alt}"/>',
                   caption, "figure")


def environment_table(report: dict[str, Any] | None = None) -> StampedTable:
    """The full environment report as a table (the home page shows it); ``report`` defaults to
    ``env.environment_report()``."""
    r = environment_report() if report is None else report
    rows = [("device", r["device"]), ("platform", r["platform"]),
            ("CPU capability (torch)", r["cpu_capability"]), ("CPU 16-bit matmul", r["cpu_matmul"]),
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
    return show_table(df, "Environment of this build", report=r)
