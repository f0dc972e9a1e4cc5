"""Weigh the pages of a built site: per page, the first view (HTML + CSS + JS, gzip -6) and the total
with its images, as a static host that compresses would send them.

    python scripts/page_weights.py site/            # every page
    python scripts/page_weights.py site/ --markdown # a Markdown table

The first view is what a page requests before scrolling: its HTML, the stylesheets and scripts it links
(fonts and the search index aside: the browser fetches a font only for the glyphs a page shows, and the
search index is one file for the whole site). Images are lazy: they come on top as the reader scrolls;
of each figure only the rendering for the reader's palette is fetched (the light one is counted).
"""

from __future__ import annotations

import argparse
import gzip
import posixpath
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_TAG = re.compile(r"<(link|script|img)\b([^>]*)>", re.I)
_ATTR = re.compile(r'\b(rel|href|src|class)="([^"]*)"', re.I)
# The figure rendering for the other palette (page/figures.py): display:none and lazy, so never fetched.
_OTHER_PALETTE = "amp-fig--dark"


def _references(text: str, both_palettes: bool = False) -> tuple[list[str], list[str]]:
    """The URLs of a page's stylesheets and scripts, and of the images it shows (each once, in order)."""
    linked, images = {}, {}
    for tag, attrs in _TAG.findall(text):
        a = {k.lower(): v for k, v in _ATTR.findall(attrs)}
        tag = tag.lower()
        if tag == "link" and "stylesheet" in a.get("rel", "").split() and a.get("href"):
            linked[a["href"]] = None
        elif tag == "script" and a.get("src"):
            linked[a["src"]] = None
        elif tag == "img" and a.get("src") and (both_palettes or _OTHER_PALETTE not in a.get("class", "").split()):
            images[a["src"]] = None
    return list(linked), list(images)


@dataclass(frozen=True)
class PageWeight:
    page: str  # the page's URL relative to the site root
    html: int
    css: int
    js: int
    images: int
    n_images: int

    @property
    def first_view(self) -> int:
        return self.html + self.css + self.js

    @property
    def total(self) -> int:
        return self.first_view + self.images


@cache
def _gz(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6))


def _local(site: Path, page_dir: str, url: str) -> Path | None:
    """The file a page's relative URL names, or None for another host, a data URI or a missing file."""
    if re.match(r"^[a-z]+:", url, re.I) or url.startswith("//"):
        return None
    path = url.split("#")[0].split("?")[0]
    target = posixpath.normpath(posixpath.join(page_dir, path)) if not path.startswith("/") else path.lstrip("/")
    file = site / target
    if file.is_dir():
        file = file / "index.html"
    return file if file.is_file() else None


def page_weight(site: Path, html_file: Path, both_palettes: bool = False) -> PageWeight:
    """One page's weight; ``both_palettes`` counts each figure's light and dark renderings."""
    text = html_file.read_text(encoding="utf-8")
    page_dir = html_file.parent.relative_to(site).as_posix()
    linked_urls, image_urls = _references(text, both_palettes)
    linked = [f for u in linked_urls if (f := _local(site, page_dir, u))]
    images = [f for u in image_urls if (f := _local(site, page_dir, u))]
    return PageWeight(
        page=page_dir if page_dir != "." else "",
        html=_gz(html_file),
        css=sum(_gz(f) for f in linked if f.suffix == ".css"),
        js=sum(_gz(f) for f in linked if f.suffix == ".js"),
        images=sum(_gz(f) for f in images),
        n_images=len(images),
    )


def site_weights(site: Path, include_api: bool = False, both_palettes: bool = False) -> list[PageWeight]:
    """Every page of a built site (the API reference only if asked), heaviest first view first."""
    pages = [p for p in site.rglob("index.html") if include_api or "api" not in p.relative_to(site).parts]
    return sorted((page_weight(site, p, both_palettes) for p in pages), key=lambda w: -w.first_view)


def _kb(n: int) -> str:
    return f"{n / 1024:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built site folder (mkdocs' site_dir)")
    parser.add_argument("--api", action="store_true", help="include the API reference pages")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument(
        "--both-palettes", action="store_true", help="count both renderings of each figure (as if both were fetched)"
    )
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"{args.site} is not a built site (no index.html)", file=sys.stderr)
        return 2
    header = ("page", "HTML", "CSS", "JS", "first view", "images (n)", "with images")
    rows = [
        (
            w.page or "home",
            _kb(w.html),
            _kb(w.css),
            _kb(w.js),
            _kb(w.first_view),
            f"{_kb(w.images)} ({w.n_images})",
            _kb(w.total),
        )
        for w in site_weights(args.site, args.api, args.both_palettes)
    ]
    print("KB gzip -6 (1 KB = 1,024 bytes)")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        for r in (header, *rows):
            print(
                "  ".join(
                    str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths, strict=True))
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
