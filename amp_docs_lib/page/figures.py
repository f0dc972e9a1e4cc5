"""Figures as a reader sees them: drawn for the text column, legible, crisp, in both palettes.

``show_figure`` is how chapters display a matplotlib figure. The figure is redrawn for the
column it is shown in (``COLUMN_PX`` CSS pixels wide at ``CSS_DPI`` pixels per inch): a wider
figure is narrowed (and made relatively taller, so panels keep some height), no text is smaller
than ``MIN_FONT_PT`` (11 CSS px), and it is saved at twice its display size so it stays crisp on
high-density screens. No stamp is drawn into the image: the page's provenance card (and, where a
figure's provenance differs, the stamp under it) says what produced it. ``layout_faults`` names
what a reader could not read in a fitted figure (text drawn over text, a legend on another
panel, text under ``MIN_TEXT_PX``); ``show_figure`` refuses a figure that has any, so every
figure the site draws is checked when its chapter executes.

This module is the one home of figure style: the text floor, the column width, the check. The
concept packages draw with matplotlib's defaults and the palette of ``core.palette``.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from typing import Any

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.page.stamp import Stamped

# Material's text column at 1220 px and wider (two sidebars): 648 CSS px.
COLUMN_PX = 648
# CSS pixels per inch of figure size: a 6.48 in figure is shown 648 px wide.
CSS_DPI = 100
# Saved at this many image pixels per CSS pixel (2x: crisp on high-density screens).
PIXEL_RATIO = 2
# libwebp's effort for lossless WebP, 0-6: 4 (with quality 100). On 12 of the site's figure renderings 6
# saved 0.6% of the bytes at 33x the encoding time (21 s against 0.65 s), which a cold build pays per figure.
WEBP_METHOD = 4
# White space saved around the drawn figure, inches.
PAD_IN = 0.06
# Smallest text in a figure: 8 pt at 100 px/in is 11.1 CSS px.
MIN_FONT_PT = 8.0
# Smallest text a reader is asked to read, in CSS px as displayed on a desktop (a figure is shown
# at its drawn size there: COLUMN_PX fits Material's column at 1400 px), MIN_FONT_PT is above it.
MIN_TEXT_PX = 10.0
# A narrowed figure keeps this much more of its height than plain scaling would (capped at the
# original height), so wide multi-panel figures do not become strips.
TALLER = 1.3

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


def _relayout(fig: Any) -> None:
    """Lay a resized figure out again: its own layout engine does that on draw; otherwise
    ``tight_layout`` (a figure that cannot be laid out keeps its positions)."""
    engine = fig.get_layout_engine()
    if engine is not None and type(engine).__name__ != "PlaceHolderLayoutEngine":
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fig.tight_layout()
        except (ValueError, RuntimeError):
            pass


def _log_y_ticks(ax: Any) -> None:
    """Label a base-10 log y axis with the sparsest ticks that put two in view: decades, else 1-2-5,
    else every integer multiple; minor ticks unlabelled. Matplotlib's default labels a subset of the
    minor ticks when fewer than two decades lie in view, and those labels overlap on a short axis (a
    measured range decides that: a speedup axis from 0.28 to 4.5 drew 3x10^-1 over 4x10^-1). An axis
    with its own locator or formatter keeps them."""
    import numpy as np
    from matplotlib import ticker

    axis = ax.yaxis
    if (ax.get_yscale() != "log" or type(axis.get_major_locator()) is not ticker.LogLocator
            or type(axis.get_major_formatter()) is not ticker.LogFormatterSciNotation
            or axis.get_transform().base != 10):
        return

    class SparsestLogLocator(ticker.LogLocator):
        def tick_values(self, vmin: float, vmax: float):
            lo, hi = sorted((vmin, vmax))
            decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) if lo > 0 else range(0)
            for subs in ((1.0,), (1.0, 2.0, 5.0), tuple(range(1, 10))):
                if sum(lo <= s * 10.0**d <= hi for d in decades for s in subs) >= 2:
                    self.set_params(subs=subs)
                    return super().tick_values(vmin, vmax)
            return ticker.MaxNLocator(nbins=3).tick_values(vmin, vmax)  # under a tenth of a decade

    axis.set_major_locator(SparsestLogLocator(base=10))
    axis.set_major_formatter(ticker.LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(np.inf, np.inf)))
    axis.set_minor_formatter(ticker.NullFormatter())


def fit_to_column(fig: Any) -> None:
    """Resize ``fig`` for the text column and floor its text at ``MIN_FONT_PT``.

    After this, the figure with everything drawn around its axes (legends, labels) is at most
    ``COLUMN_PX / CSS_DPI`` inches wide, no text in it is smaller than ``MIN_FONT_PT``, and a log
    y axis is labelled so that its labels cannot crowd (``_log_y_ticks``).
    """
    from matplotlib.text import Text

    column_in = COLUMN_PX / CSS_DPI - 2 * PAD_IN  # the saved image adds the padding on each side
    width, height = fig.get_size_inches()
    if width > column_in:
        fig.set_size_inches(column_in, min(height, height * column_in / width * TALLER))
    for ax in fig.axes:
        _log_y_ticks(ax)
        for axis in (ax.xaxis, ax.yaxis):
            sizes = [t.get_fontsize() for t in axis.get_ticklabels(which="both")]
            if sizes and min(sizes) < MIN_FONT_PT:
                axis.set_tick_params(which="both", labelsize=MIN_FONT_PT)
    for text in fig.findobj(Text):
        if text.get_fontsize() < MIN_FONT_PT:
            text.set_fontsize(MIN_FONT_PT)
    _relayout(fig)
    # Legends or labels placed outside the axes can make the drawn figure wider than its size.
    for _ in range(3):
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())
        if drawn.width <= column_in * 1.005:
            break
        width, height = fig.get_size_inches()
        fig.set_size_inches(max(1.0, width - (drawn.width - column_in) - 0.02), height)
        _relayout(fig)


class FigureLayoutError(ValueError):
    """A figure a reader could not read: text over text, a legend on a panel, text too small."""


def _texts(fig: Any) -> list[Any]:
    """Every visible, non-empty text of ``fig`` as drawn (titles, labels, the tick labels of the
    ticks in view, legend entries, annotations)."""
    from matplotlib.text import Text

    tick_labels, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                tick_labels.update((tick.label1, tick.label2))
            if ax.get_visible() and ax.axison and axis.get_visible():
                for tick in axis._update_ticks():  # the ticks matplotlib draws (in the view limits)
                    drawn += [lab for lab in (tick.label1, tick.label2) if lab.get_visible()]
    out = [t for t in fig.findobj(Text) if t not in tick_labels and t.get_visible()
           and (t.axes is None or t.axes.get_visible())] + drawn
    return [t for t in dict.fromkeys(out) if t.get_text().strip()]


def layout_faults(fig: Any) -> list[str]:
    """What a reader could not read in ``fig`` as drawn now (call after ``fit_to_column``):

    - two texts whose boxes overlap (titles, axis labels, tick labels, legend entries, annotations);
    - a legend whose frame covers a text that is not its own, or lies on a panel it does not belong to;
    - a text smaller than ``MIN_TEXT_PX`` CSS px at its displayed size (the figure is displayed at
      ``CSS_DPI`` px per inch, up to ``COLUMN_PX`` wide).
    """
    from matplotlib.legend import Legend

    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    width_px = fig.get_tightbbox(renderer).width * CSS_DPI + 2 * PAD_IN * CSS_DPI
    shown = min(1.0, COLUMN_PX / width_px)  # a wider figure is shown scaled down to the column
    faults = []
    texts = _texts(fig)
    boxes = [t.get_window_extent(renderer).padded(-0.5) for t in texts]
    for t in texts:
        px = t.get_fontsize() * CSS_DPI / 72 * shown
        if px < MIN_TEXT_PX - 1e-6:
            faults.append(f"text {t.get_text()!r} is {px:.1f} px, under {MIN_TEXT_PX:g} px")
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if boxes[i].overlaps(boxes[j]):
                faults.append(f"text {texts[i].get_text()!r} overlaps text {texts[j].get_text()!r}")
    legends = [a for a in fig.findobj(Legend) if a.get_visible()]
    for legend in legends:
        frame = legend.get_window_extent(renderer).padded(-0.5)
        own = set(legend.get_texts()) | {legend.get_title()}
        for t, box in zip(texts, boxes, strict=True):
            if t not in own and frame.overlaps(box):
                faults.append(f"a legend ({legend.get_texts()[0].get_text()!r}, ...) covers text {t.get_text()!r}")
        for ax in fig.axes:
            if ax.get_visible() and legend.axes is not ax and frame.overlaps(ax.get_window_extent(renderer).padded(-0.5)):
                faults.append(f"a legend ({legend.get_texts()[0].get_text()!r}, ...) lies on a panel it does not belong to")
    return faults


def _webp(fig: Any, facecolor: str) -> tuple[str, int, int]:
    """The figure quantized to 256 colours (flat plot colours survive; the true-colour image took 1.4 to
    1.7 times the bytes as lossless WebP on three test figures) at ``PIXEL_RATIO`` image pixels per CSS
    pixel, as a lossless WebP: (base64, width, height) in image pixels. It keeps every pixel of the
    optimised PNG the site sent before in 19 to 40% fewer bytes (each of the site's 60 renderings; 27%
    in all), and Chromium, Firefox and Safari 14 and later show it, so no PNG fallback is sent."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=CSS_DPI * PIXEL_RATIO, bbox_inches="tight", pad_inches=PAD_IN,
                facecolor=facecolor)
    image = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    # Median cut keeps the large flat areas (the background, each series's colour) exact.
    small = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="WEBP", lossless=True, method=WEBP_METHOD, quality=100)
    return base64.b64encode(out.getvalue()).decode(), image.width, image.height


@shown_in_scripts
def show_figure(fig: Any, caption: str | None = None, *, source: str | None = None,
                report: dict[str, Any] | None = None) -> Stamped:
    """Show ``fig`` fitted to the text column, in a light and a dark rendering, and close it.

    The figure is fitted (``fit_to_column``) and saved as drawn (for the light palette), then
    recoloured for the dark palette (black text and lines become light grey, white backgrounds
    become the page's dark background; coloured data keeps its colour) and saved again; the page's
    CSS shows the rendering that matches the reader's palette, and the lightbox opens that one.
    ``source``/``report``: as for ``show_table`` (a figure of documentation data, or measured
    elsewhere). Closing stops the inline backend from showing the figure a second time.
    """
    import matplotlib.figure
    import matplotlib.pyplot as plt

    if not isinstance(fig, matplotlib.figure.Figure):
        raise TypeError(f"show_figure expects a matplotlib Figure, got {type(fig).__name__}")
    fit_to_column(fig)
    faults = layout_faults(fig)
    if faults:
        plt.close(fig)
        raise FigureLayoutError(f"{caption or 'a figure'}: " + "; ".join(sorted(set(faults))[:8]))
    light, w, h = _webp(fig, "white")
    _recolor_for_dark(fig)
    dark, _, _ = _webp(fig, DARK_BACKGROUND)
    plt.close(fig)
    alt = html.escape(caption or "figure")
    size = f'width="{round(w / PIXEL_RATIO)}" height="{round(h / PIXEL_RATIO)}"'
    body = (f'<div class="amp-figure-scroll"><a class="glightbox amp-lightbox" data-type="image" href="#">'
            f'<img class="amp-fig amp-fig--light" src="data:image/webp;base64,{light}" {size} alt="{alt}"/>'
            f'<img class="amp-fig amp-fig--dark" src="data:image/webp;base64,{dark}" {size} alt="{alt}"/>'
            f'</a></div>')
    return Stamped(body, caption, "figure", source=source, report=report)
