"""Links to chapters in the HTML a chapter's code prints become page URLs.

mkdocs rewrites ``[text](formats.md#anchor)`` in a chapter's Markdown (its cells are Markdown, see
``notebook_page``), but not ``<a href="formats.md">`` in a code cell's HTML output (raw HTML to it).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

_MD_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^":#?]+\.md)(#[^"]*)?(")', re.I)


def page_url_of(src_uri: str, use_directory_urls: bool = True) -> str:
    """The URL (relative to the site root) mkdocs gives the page built from ``src_uri``."""
    stem = src_uri[:-3]
    if posixpath.basename(stem) in ("index", "README"):
        d = posixpath.dirname(stem)
        return f"{d}/" if d else ""
    return f"{stem}/" if use_directory_urls else f"{stem}.html"


def rewrite_md_links(output: str, page, config) -> str:
    """Turn the ``x.md#a`` links left on a chapter's page (those in its outputs) into relative page URLs."""
    if getattr(page.file, "amp_docs_notebook", None) is None:
        return output  # other pages are written by hand: mkdocs has rewritten (and --strict validated) their links
    from mkdocs.utils import get_relative_url

    docs_dir = Path(config["docs_dir"])
    # A sub-page of a split chapter (docsite/subpages.py) links as its chapter's source does.
    src_dir = posixpath.dirname(page.file.amp_docs_chapter)

    def sub(m: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(src_dir, m.group(2)))
        if not (docs_dir / target).is_file():
            return m.group(0)  # left as written: linkcheck reports it
        url = page_url_of(target, config.get("use_directory_urls", True))
        rel = get_relative_url(url or ".", page.url)
        if (url == "" or url.endswith("/")) and not rel.endswith("/"):
            rel += "/"
        return m.group(1) + rel + (m.group(3) or "") + m.group(4)

    return _MD_HREF.sub(sub, output)
