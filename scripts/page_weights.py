"""Weigh the pages of a built site as a static host that compresses would send them: per page, the
first view (HTML + CSS + JS, gzip -6), what a reader downloads in the light and in the dark palette,
and every byte the page references (both renderings of each figure).

    python scripts/page_weights.py site/            # every page
    python scripts/page_weights.py site/ --markdown # a Markdown table

The first view is what a page requests before scrolling: its HTML, the stylesheets and scripts it links
(fonts and the search index aside: the browser fetches a font only for the glyphs a page shows, and the
search index is one file for the whole site). Images are lazy: they come on top as the reader scrolls.
Each figure has a light and a dark rendering (page/figures.py); the other palette's is display:none and
lazy, so a reader fetches one of them, but the page's full weight counts both. Images are counted as
sent: PNG, WebP and JPEG as they are (a host does not compress them again), SVG gzipped.
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
# The classes of a figure's two renderings (page/figures.py); an image with neither is shown in both palettes.
_PALETTE_CLASS = {"amp-fig--light": "light", "amp-fig--dark": "dark"}


def _references(text: str) -> tuple[list[str], dict[str, str]]:
    """The URLs of a page's stylesheets and scripts (each once, in order), and of the images it shows,
    each with the palette it is shown in ("light", "dark" or "both")."""
    linked, images = {}, {}
    for tag, attrs in _TAG.findall(text):
        a = {k.lower(): v for k, v in _ATTR.findall(attrs)}
        tag = tag.lower()
        if tag == "link" and "stylesheet" in a.get("rel", "").split() and a.get("href"):
            linked[a["href"]] = None
        elif tag == "script" and a.get("src"):
            linked[a["src"]] = None
        elif tag == "img" and a.get("src"):
            palettes = {_PALETTE_CLASS[c] for c in a.get("class", "").split() if c in _PALETTE_CLASS}
            shown = palettes.pop() if len(palettes) == 1 else "both"
            images[a["src"]] = shown if images.get(a["src"], shown) == shown else "both"
    return list(linked), images


@dataclass(frozen=True)
class PageWeight:
    page: str  # the page's URL relative to the site root
    html: int
    css: int
    js: int
    light_images: int  # bytes of the images a reader fetches in the light palette only
    dark_images: int  # ... in the dark palette only
    shared_images: int  # ... in either palette
    n_figures: int  # figures (a light and a dark rendering each) and other images

    @property
    def first_view(self) -> int:
        return self.html + self.css + self.js

    @property
    def light(self) -> int:
        """What a reader of the light palette downloads, scrolled to the end."""
        return self.first_view + self.shared_images + self.light_images

    @property
    def dark(self) -> int:
        """What a reader of the dark palette downloads, scrolled to the end."""
        return self.first_view + self.shared_images + self.dark_images

    @property
    def total(self) -> int:
        """Every byte the page references: both renderings of each figure."""
        return self.first_view + self.shared_images + self.light_images + self.dark_images


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


def _sent(path: Path) -> int:
    """An image's bytes as a host sends it: compressed formats as they are, SVG gzipped."""
    return _gz(path) if path.suffix == ".svg" else path.stat().st_size


def page_weight(site: Path, html_file: Path) -> PageWeight:
    """One page's weight, in each palette and in all."""
    text = html_file.read_text(encoding="utf-8")
    page_dir = html_file.parent.relative_to(site).as_posix()
    linked_urls, image_urls = _references(text)
    linked = [f for u in linked_urls if (f := _local(site, page_dir, u))]
    images = {"light": 0, "dark": 0, "both": 0}
    for url, shown in image_urls.items():
        if file := _local(site, page_dir, url):
            images[shown] += _sent(file)
    return PageWeight(
        page=page_dir if page_dir != "." else "",
        html=_gz(html_file),
        css=sum(_gz(f) for f in linked if f.suffix == ".css"),
        js=sum(_gz(f) for f in linked if f.suffix == ".js"),
        light_images=images["light"],
        dark_images=images["dark"],
        shared_images=images["both"],
        n_figures=sum(shown != "dark" for shown in image_urls.values()),
    )


def site_weights(site: Path, include_api: bool = False) -> list[PageWeight]:
    """Every page of a built site (the API reference only if asked), heaviest in all first."""
    pages = [p for p in site.rglob("index.html") if include_api or "api" not in p.relative_to(site).parts]
    return sorted((page_weight(site, p) for p in pages), key=lambda w: -w.total)


def _kb(n: int) -> str:
    return f"{n / 1024:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built site folder (mkdocs' site_dir)")
    parser.add_argument("--api", action="store_true", help="include the API reference pages")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"{args.site} is not a built site (no index.html)", file=sys.stderr)
        return 2
    header = ("page", "HTML", "CSS", "JS", "first view", "figures", "light", "dark", "all (both palettes)")
    rows = [
        (
            w.page or "home",
            _kb(w.html),
            _kb(w.css),
            _kb(w.js),
            _kb(w.first_view),
            str(w.n_figures),
            _kb(w.light),
            _kb(w.dark),
            _kb(w.total),
        )
        for w in site_weights(args.site, args.api)
    ]
    print(
        "KB as sent (text gzip -6, images as they are; 1 KB = 1,024 bytes); light/dark: what a reader of that palette downloads"
    )
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
