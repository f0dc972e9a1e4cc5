"""Scripts and stylesheets that a page links only if it uses them, or never (loaded on demand).

mkdocs links ``extra_javascript`` and every plugin's assets on every page; a few serve one kind of
page only. Each entry below names the asset and the markup that uses it: a page whose content lacks
that markup does not link the asset (the reader's first view is lighter by its gzip size).
"""

from __future__ import annotations

import re
from pathlib import Path

# asset file name -> markup of the content that needs it
PAGE_SPECIFIC = {
    "format-explorer.js": 'class="amp-format-explorer"',  # the Formats chapter's explorer
    "_mkdocstrings.css": 'class="doc doc-',  # mkdocstrings' API reference pages
    "notebook.css": 'class="jupyter-wrapper"',  # JupyterLab's notebook rules: the chapter pages (notebook_page)
}
# asset file names no page links: docs/assets/js/reader.js loads them on the first tap on a figure
LOADED_ON_DEMAND = ("glightbox.min.js", "glightbox.min.css")
_LINK = re.compile(
    r'<script\b[^>]*\bsrc="[^"]*/(?P<js>[^"/]+)"[^>]*>\s*</script>\s*|<link\b[^>]*\bhref="[^"]*/(?P<css>[^"/]+)"[^>]*>\s*',
    re.I,
)


def _content(output: str) -> str:
    start = output.find('class="md-content"')
    return output[start:] if start >= 0 else output


def without_unused_assets(output: str) -> str:
    """The page without links to the ``PAGE_SPECIFIC`` assets its content does not use, nor to
    those ``LOADED_ON_DEMAND``."""
    content = _content(output)
    unused = {name for name, marker in PAGE_SPECIFIC.items() if marker not in content} | set(LOADED_ON_DEMAND)

    def sub(m: re.Match) -> str:
        return "" if (m.group("js") or m.group("css")) in unused else m.group(0)

    return _LINK.sub(sub, output)


# A custom property declaration: its name and value (a value may hold ";" only inside quotes or url()).
_CUSTOM_PROPERTY = re.compile(r"""(?P<name>--[\w-]+)\s*:(?P<value>(?:url\([^)]*\)|"[^"]*"|'[^']*'|[^;{}"'])*);?""")
_VAR = re.compile(r"var\(\s*(--[\w-]+)")


def without_unused_custom_properties(css: str, *also_read_by: str) -> str:
    """``css`` without the custom properties (``--name: value``) that nothing reads: neither a
    ``var()`` in an ordinary declaration of ``css`` or of ``also_read_by`` (the site's other
    stylesheets), nor, in turn, the value of a property that is read. JupyterLab's stylesheet defines
    a design system of about 450 properties for an IDE; a notebook page reads a fifth of them."""
    values: dict[str, list[str]] = {}
    for m in _CUSTOM_PROPERTY.finditer(css):
        values.setdefault(m.group("name"), []).append(m.group("value"))
    read = set(_VAR.findall(_CUSTOM_PROPERTY.sub("", css)))
    for text in also_read_by:
        read |= set(_VAR.findall(text))
    todo = list(read)
    while todo:
        for value in values.get(todo.pop(), ()):
            new = set(_VAR.findall(value)) - read
            read |= new
            todo += new
    return _CUSTOM_PROPERTY.sub(lambda m: m.group(0) if m.group("name") in read else "", css)


def site_texts_reading_css(site_dir: Path, *, besides: Path) -> list[str]:
    """The built pages and stylesheets of ``site_dir`` (``besides`` excepted): what may read a
    custom property of the stylesheet ``besides`` (pages through inline styles)."""
    files = [p for p in site_dir.rglob("*") if p.suffix in (".html", ".css") and p != besides and p.is_file()]
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]
