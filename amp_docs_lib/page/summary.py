"""The top of a chapter: what it shows, and this build's key results.

A chapter opens with a summary under its title (Markdown: ``<div class="admonition abstract
amp-summary">``, a few sentences on what it shows) and ONE "In this build" box of key results.
The values exist only once the chapter has run, so the box is made by ``in_this_build`` in the
chapter's last cell (tagged ``hide-input``) and ``docsite.reader_layout.lesson_first`` moves it under the
summary on the page. The downloaded notebook keeps it where it ran.
"""

from __future__ import annotations

import html
from typing import Any

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.page.stamp import Stamped

SUMMARY_CLASS = "amp-summary"  # the summary block under a chapter's title
BOX_KIND = "in-this-build"  # rendered as <figure class="amp-result amp-in-this-build">
BOX_TITLE = "In this build"


class InThisBuild(Stamped):
    """A chapter's key results, measured by this build: one line per result, stamped."""

    def __init__(self, results: dict[str, Any]):
        # Imported here: the site machinery reads this module's names on every page (docsite.reader_layout.lesson_first),
        # and page.claims imports pandas, which a build with nothing changed never needs.
        from amp_docs_lib.page.claims import format_value, inline_markdown

        if not results:
            raise ValueError("in_this_build needs at least one result")
        self.results = dict(results)
        items = "".join(
            f'<li><span class="amp-key__label">{inline_markdown(label)}</span>: '
            f"<strong>{html.escape(format_value(value))}</strong></li>"
            for label, value in self.results.items()
        )
        super().__init__(f'<ul class="amp-key-results">{items}</ul>', BOX_TITLE, BOX_KIND)

    def __repr__(self) -> str:  # a script prints the results as lines
        from amp_docs_lib.page.claims import format_value

        lines = "\n".join(f"  {label}: {format_value(value)}" for label, value in self.results.items())
        return f"{BOX_TITLE} [{self.stamp}]\n{lines}"


@shown_in_scripts
def in_this_build(results: dict[str, Any]) -> InThisBuild:
    """The chapter's key results as one stamped box (the last expression of the chapter's last
    cell): ``{label: value}``, the label a short phrase with its unit (code spans allowed), the
    value as this build computed it (numbers shown as claims show them: 4 significant digits
    unless exact in 6). Raises ValueError for an empty dict."""
    return InThisBuild(results)
