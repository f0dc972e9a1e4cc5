"""Provenance: every executed table and figure says what produced it, once per page.

A result measured in this build is stamped with ``stamp_text()`` (device, torch/CUDA, library
version and revision, TF32 settings, profile, build date), and its stamp carries the full
provenance (``provenance()``, CPU capability included) as data. The site build gathers a page's
stamps into ONE provenance card at the top of the page and keeps a result's own stamp only where
it differs from the page's (measured on another machine: a committed reference result). Data
that was not measured (documentation, a datasheet) is shown with ``source=`` and always carries
a source stamp naming where it comes from, styled differently. In a downloaded notebook every
result keeps its stamp.
"""

from __future__ import annotations

import html
import json
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


def provenance(report: dict[str, Any] | None = None) -> dict[str, str]:
    """The provenance card's fields, in reading order (labels -> values)."""
    r = stamp_fields() if report is None else report
    capability = r.get("cpu_capability")
    if capability is None and report is None:
        from amp_docs_lib.core.env import cpu_capability
        capability = cpu_capability()
    fields = {"device": r["device"]}
    if capability:
        fields["CPU capability (torch)"] = str(capability)
    fields.update({
        "torch": r["torch"],
        "CUDA": "none (CPU build)" if r["cuda"] == NO_CUDA else r["cuda"],
        "amp_docs_lib": f"{__version__} @ {r['git_revision']}",
        "TF32": tf32_summary(r["tf32"]),
        "profile": r["profile"],
        "build date": r["build_date"],
    })
    return fields


class Stamped:
    """A rendered result (HTML) that carries its provenance stamp.

    ``source`` is None for a measurement (stamped with ``stamp_text(report)``); otherwise it names
    the data's source and version, and the stamp says so instead.
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
        self.provenance = provenance(report) if source is None else None

    @property
    def is_measurement(self) -> bool:
        return self.source is None

    def _stamp_html(self) -> str:
        if self.is_measurement:
            data = html.escape(json.dumps(self.provenance, ensure_ascii=False), quote=True)
            return (f'<div class="amp-stamp amp-stamp--measured" data-search-exclude data-amp-provenance="{data}">'
                    f'measured on {html.escape(self.stamp)}</div>')
        return (f'<div class="amp-stamp amp-stamp--source" data-search-exclude>not measured: documentation data · '
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
