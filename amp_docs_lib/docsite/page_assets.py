"""Scripts and stylesheets that a page links only if it uses them.

mkdocs links ``extra_javascript`` and every plugin's assets on every page; a few serve one kind of
page only. Each entry below names the asset and the markup that uses it: a page whose content lacks
that markup does not link the asset (the reader's first view is lighter by its gzip size).
"""

from __future__ import annotations

import re

# asset file name -> markup of the content that needs it
PAGE_SPECIFIC = {
    "format-explorer.js": 'class="amp-format-explorer"',  # the Formats chapter's explorer
    "_mkdocstrings.css": 'class="doc doc-',  # mkdocstrings' API reference pages
}
_LINK = re.compile(
    r'<script\b[^>]*\bsrc="[^"]*/(?P<js>[^"/]+)"[^>]*>\s*</script>\s*|<link\b[^>]*\bhref="[^"]*/(?P<css>[^"/]+)"[^>]*>\s*',
    re.I,
)


def _content(output: str) -> str:
    start = output.find('class="md-content"')
    return output[start:] if start >= 0 else output


def without_unused_assets(output: str) -> str:
    """The page without links to the ``PAGE_SPECIFIC`` assets its content does not use."""
    content = _content(output)
    unused = {name for name, marker in PAGE_SPECIFIC.items() if marker not in content}
    if not unused:
        return output

    def sub(m: re.Match) -> str:
        return "" if (m.group("js") or m.group("css")) in unused else m.group(0)

    return _LINK.sub(sub, output)
