"""What every built page gets for its reader (the plugin's ``on_post_page`` calls ``post_page``).

* links between chapters written as ``[text](formats.md#anchor)`` inside an executed chapter
  become page URLs (mkdocs rewrites such links in Markdown pages, but not in the notebooks
  mkdocs-jupyter renders);
* every highlighted code block gets Material's copy button (``downloads.wrap_bare_code``);
* every chapter page gets its download bar (``downloads``).

Everything works for any chapter under ``docs/chapters/``; nothing is listed by name.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR
from amp_docs_lib.docsite import downloads
from amp_docs_lib.docsite.fragments import FragmentMemo

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
    src_dir = posixpath.dirname(page.file.src_uri)

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


PROFILES_MARKER = "<!-- amp-docs:profiles -->"


def profiles_html() -> str:
    """Every problem size of every profile, side by side (from ``amp_docs_lib.core.profiles``)."""
    from amp_docs_lib.core.profiles import PROFILES
    from amp_docs_lib.page.tables import show_table
    from amp_docs_lib.core.tables import table_from_rows

    names = sorted({k for p in PROFILES.values() for k in p.sizes})
    rows = [{"size": k, **{n: p.sizes.get(k) for n, p in PROFILES.items()}} for k in names]
    return show_table(table_from_rows(rows), "Problem sizes per profile",
                      source="amp_docs_lib/core/profiles.py of this build", collapsed=False)._repr_html_()


# It starts with a literal (no \b, no lookbehind) so that re searches megabyte pages fast.
_CELL_ID = re.compile(r'id="cell-id=[0-9a-f-]+"')


def stable_cell_ids(output: str) -> str:
    """Replace the random cell ids nbconvert puts on cells (jupytext draws new ones on every
    read) with their position, so that two builds of the same chapter give the same page."""
    counter = iter(range(1_000_000))
    return _CELL_ID.sub(lambda m: f'id="cell-{next(counter)}"', output)


_LIGHTBOX_DATA_HREF = re.compile(
    r'(<a class="glightbox"[^>]*?) href="(data:[^"]+)"([^>]*>\s*<img\b[^>]*?\bsrc=")\2"')


def lightbox_links_without_copies(output: str) -> str:
    """mkdocs-glightbox links each figure to its own ``src``; for figures embedded as data URIs
    that repeats every image in the page. The link gets ``href="#"`` and a marker instead, and
    ``assets/js/reader.js`` copies the image's ``src`` into it before GLightbox starts."""
    return _LIGHTBOX_DATA_HREF.sub(lambda m: f'{m.group(1)} href="#" data-amp-href-from-img{m.group(3)}{m.group(2)}"',
                                   output)


def post_page(output: str, page, config, fragments: FragmentMemo) -> str:
    """All reader features of one page (see the module docstring); ``fragments`` memoises
    generated tables across builds (the plugin passes its own)."""
    output = lightbox_links_without_copies(stable_cell_ids(output))
    if PROFILES_MARKER in output:
        # The profiles are library code, which the memo's key covers: no other input.
        output = output.replace(PROFILES_MARKER, fragments.html("profiles", None, profiles_html))
    return downloads.post_page(rewrite_md_links(output, page, config), page, config)


COMPARISON_MARKER = "<!-- amp-docs:yours-vs-reference -->"


def post_build(config, fragments: FragmentMemo) -> None:
    """Fill any built page holding ``COMPARISON_MARKER`` with this build's key measurements beside
    every committed reference machine's (after all chapters, whose notebooks it reads, are written)."""
    from amp_docs_lib.docsite.hashing import tree_hash

    site = Path(config["site_dir"])
    references = Path(config["docs_dir"]) / "reference-results"  # committed reference machines

    def render() -> str:
        from amp_docs_lib.docsite.references import comparison_html  # pandas: only when inputs changed
        return comparison_html(site, references)

    body = None
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if COMPARISON_MARKER in text:
            if body is None:
                inputs = {"notebooks": tree_hash(site / CHAPTER_DOWNLOADS_DIR, (".ipynb",)),
                          "reference_results": tree_hash(references, None)}
                body = fragments.html("yours-vs-reference", inputs, render)
            page.write_text(text.replace(COMPARISON_MARKER, body), encoding="utf-8")
