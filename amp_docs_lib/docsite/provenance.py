"""One provenance card per page: the page's measurement stamps gathered into one card under the title."""

from __future__ import annotations

import html as _html
import json
import re
from collections import Counter

# Attribute order and spelling vary with the HTML parsers the page went through.
_MEASURED = re.compile(
    r'<div class="amp-stamp amp-stamp--measured"[^>]*?\bdata-amp-provenance="([^"]*)"[^>]*>(.*?)</div>', re.S
)


def provenance_card(output: str) -> str:
    """Gather the page's measurement stamps into one card at the top; a result keeps its own stamp
    only where it differs from the page's (e.g. a committed reference machine's result)."""
    stamps = _MEASURED.findall(output)
    if not stamps:
        return output

    def machine(data: str) -> str:
        # The stamp without its date: a chapter whose execution crosses midnight (UTC) is still
        # measured on one machine, and its stamps differ only in the date.
        fields = json.loads(_html.unescape(data))
        fields.pop("build date", None)
        return json.dumps(fields, sort_keys=True)

    common, _ = Counter(machine(data) for data, _ in stamps).most_common(1)[0]
    fields = json.loads(_html.unescape(next(data for data, _ in stamps if machine(data) == common)))
    rest = sum(1 for data, _ in stamps if machine(data) != common)
    output = _MEASURED.sub(lambda m: "" if machine(m.group(1)) == common else m.group(0), output)
    summary = " · ".join(
        _html.escape(f"{label}{fields[k]}")
        for k, label in (("device", ""), ("torch", "torch "), ("profile", "profile "), ("build date", ""))
        if k in fields
    )
    rows = "".join(f"<dt>{_html.escape(k)}</dt><dd>{_html.escape(v)}</dd>" for k, v in fields.items())
    note = (
        "Every table and figure on this page was measured by this build on this machine"
        + (
            f", except {rest} that carr{'ies' if rest == 1 else 'y'} {'its' if rest == 1 else 'their'} own stamp."
            if rest
            else "."
        )
        + " Tables from documentation carry a source stamp instead."
    )
    card = (
        f'<details class="amp-provenance"><summary><span class="amp-provenance__label">Measured on</span> '
        f"{summary}</summary><dl>{rows}</dl><p>{note}</p></details>"
    )
    return _insert_after_h1(output, card)


_H1_END = re.compile(r"</h1>", re.I)


def _insert_after_h1(output: str, html_block: str) -> str:
    start = output.find('class="md-content"')
    m = _H1_END.search(output, start + 1)
    if m is None:
        return output
    # after the download bar when there is one
    bar = re.compile(r'<div class="amp-downloads".*?</div>', re.S).match(output, m.end())
    at = bar.end() if bar else m.end()
    return output[:at] + html_block + output[at:]
