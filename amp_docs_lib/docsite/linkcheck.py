"""Check that every internal link and anchor of a built site resolves.

``mkdocs build --strict`` validates the links written in Markdown (the chapters' prose included), but
not those in the HTML a chapter's code prints (raw HTML to mkdocs) nor in HTML the plugin generates. This reads the built HTML itself: every ``href`` to the same site must name an existing
file (a directory means its ``index.html``), and every ``#fragment`` an ``id`` (or ``name``)
on the target page. Links to other hosts, ``mailto:`` and ``data:`` are not followed.

Run ``python -m amp_docs_lib.docsite.linkcheck site/`` after a build (exit status 1 on broken links).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

_IGNORED_SCHEMES = ("http", "https", "mailto", "data", "javascript", "tel", "ftp")


class _PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name") if tag == "a" else ("id",):
            if a.get(k):
                self.ids.add(a[k])
        if tag == "a" and a.get("href") is not None:
            self.links.append(a["href"])


@dataclass(frozen=True)
class BrokenLink:
    """One link that does not resolve: the page it is on, the href and why."""

    page: str
    href: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}: {self.href} ({self.reason})"


def _target_file(site: Path, page: Path, path: str) -> Path:
    base = site if path.startswith("/") else page.parent
    target = (base / unquote(path.lstrip("/"))).resolve() if path else page.resolve()
    if target.is_dir():
        target = target / "index.html"
    return target


def check_site(site: str | Path) -> list[BrokenLink]:
    """All broken internal links and anchors of the built site in ``site`` (empty list: all resolve)."""
    site = Path(site).resolve()
    if not (site / "index.html").is_file():
        raise ValueError(f"{site} is not a built site (no index.html); build it first with `amp-docs build`")
    parsed: dict[Path, _PageParser] = {}

    def parse(p: Path) -> _PageParser:
        if p not in parsed:
            parser = _PageParser()
            parser.feed(p.read_text(encoding="utf-8", errors="replace"))
            parsed[p] = parser
        return parsed[p]

    broken: list[BrokenLink] = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        if rel == "404.html":  # Material's 404 page uses absolute URLs of the deployed site
            continue
        for href in parse(page).links:
            parts = urlsplit(href)
            if parts.scheme in _IGNORED_SCHEMES or parts.netloc:
                continue
            target = _target_file(site, page, parts.path)
            if site not in target.parents and target != site:
                broken.append(BrokenLink(rel, href, "points outside the site"))
                continue
            if not target.exists():
                broken.append(BrokenLink(rel, href, "no such file"))
                continue
            frag = unquote(parts.fragment)
            if frag and target.suffix == ".html" and frag not in parse(target).ids:
                broken.append(BrokenLink(rel, href, f"no id {frag!r} on {target.relative_to(site).as_posix()}"))
    return broken


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m amp_docs_lib.docsite.linkcheck", description="check internal links and anchors of a built site"
    )
    ap.add_argument("site", nargs="?", default="site", help="the built site directory (default: site)")
    args = ap.parse_args(argv)
    try:
        broken = check_site(args.site)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for b in broken:
        print(b)
    print(f"{len(broken)} broken link(s) in {args.site}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
