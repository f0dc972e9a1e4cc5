"""Links between chapters in notebook pages become page URLs.

``[text](formats.md#anchor)`` inside an executed chapter: mkdocs rewrites such links in Markdown pages,
but not in the notebooks mkdocs-jupyter renders.
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
    """Turn ``x.md#a`` links of a page rendered from a notebook into relative page URLs."""
    if not str(page.file.abs_src_path or "").endswith(".ipynb"):
        return output  # Markdown pages: mkdocs has rewritten (and --strict validated) their links
    from mkdocs.utils import get_relative_url

    docs_dir = Path(config["docs_dir"])
    # A sub-page of a split chapter (docsite/subpages.py) links as its chapter's source does.
    src_dir = posixpath.dirname(getattr(page.file, "amp_docs_chapter", None) or page.file.src_uri)

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
