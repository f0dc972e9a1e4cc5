"""``show_figure``: a matplotlib figure rendered for both palettes, with its provenance stamp.

The figure is saved as drawn (for the light palette), then recoloured for the dark palette and
saved again; the page's CSS shows the rendering that matches the reader's palette.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from amp_docs_lib.page.stamp import Stamped, stamp_text

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
