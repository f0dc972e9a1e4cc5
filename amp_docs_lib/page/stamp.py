"""Provenance stamps: every executed table and figure says what produced it.

A result measured in this build carries ``stamp_text()`` (device, torch/CUDA, library version
and revision, TF32 settings, profile, build date); data that was not measured (documentation,
a datasheet) is shown with ``source=`` and carries a source stamp naming where it comes from
instead, styled differently. ``page.tables.show_table`` and ``page.figures.show_figure`` build
the ``Stamped`` results chapters display.
"""

from __future__ import annotations

import html
from typing import Any

from amp_docs_lib import __version__
from amp_docs_lib.core.env import NO_CUDA, stamp_fields, tf32_summary


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
