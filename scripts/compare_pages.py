"""Compare what a reader sees on every page of two built sites: the article's text blocks, in order.

    python scripts/compare_pages.py BEFORE_SITE AFTER_SITE [--context 1] [--page chapters/formats/]

For each HTML page present in both sites, the page's title, navigation, table of contents and
previous / next links, then the article (``article.md-content__inner``) is reduced to its
text blocks (headings, paragraphs, list items, table rows, code blocks, figure captions, summaries of
folds), each with its kind and whitespace collapsed, a heading with its anchor, each followed by where its
links go and what it sets as code, bold or italic, and the two sequences are diffed. Heading permalinks
(the pilcrow), scripts and styles are not text. Prints a unified diff per page that differs and a count.
Exit status 1 when any page differs (so a rendering change can be checked to be the intended one).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "tr", "pre", "figcaption", "summary", "dt", "dd")


def text_blocks(html: str) -> list[str]:
    """The article's text blocks as ``kind: text`` lines, in document order."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    out = [f"title: {soup.title.string if soup.title else ''}"]
    # The page's place in the site: its navigation, table of contents and previous / next links (Material).
    for kind, selector in (
        ("nav", "nav.md-nav--primary"),
        ("toc", "nav.md-nav--secondary"),
        ("footer", "nav.md-footer__inner"),
    ):
        if (nav := soup.select_one(selector)) is not None:
            out += [
                f"{kind}: {' '.join(a.get_text(' ').split())} -> {a.get('href', '')}"
                for a in nav.select("a, label.md-nav__link")
            ]
    article = soup.select_one("article.md-content__inner") or soup.body or soup
    for el in article.select("script, style, a.headerlink, a.anchor-link"):
        el.decompose()
    for el in article.find_all([*BLOCKS, "div"]):
        # A displayed formula: its own block, whether Markdown wrapped it in a <p> or arithmatex in a <div>.
        math = "katex-display" in (el.get("class") or [])
        if el.name == "div" and not math:
            continue
        if el.name != "pre" and not math and el.find_parent(BLOCKS):
            continue  # its text is in the enclosing block
        kind = "math" if math else el.name
        if (
            el.name == "p"
            and el.find(class_="katex-display")
            and not el.get_text(strip=True).replace(el.find(class_="katex-display").get_text(strip=True), "")
        ):
            continue  # a paragraph holding only a displayed formula: the formula is the block
        sep = "\n" if el.name == "pre" else " "
        text = el.get_text(sep)
        text = text if el.name == "pre" else re.sub(r"\s+", " ", text).strip()
        if text.strip():
            anchor = f"#{el['id']}" if el.name.startswith("h") and el.get("id") else ""
            out.append(f"{kind}{anchor}: {text.rstrip()}")
            # Where its links go and what it emphasises (markup the text alone would not show).
            out += [f"  -> {a.get('href')}" for a in el.find_all("a") if el.name != "pre"]
            out += [
                f"  <{c.name}> {' '.join(c.get_text(' ').split())[:60]}"
                for c in el.find_all(["code", "strong", "em", "img"])
                if el.name != "pre" and c.name != "img"
            ]
            out += [f"  <img> {i.get('alt', '')}" for i in el.find_all("img")]
    return out


def pages(site: Path) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*.html")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--context", type=int, default=1)
    ap.add_argument("--page", default="", help="only pages whose path starts with this")
    args = ap.parse_args(argv)
    before, after = pages(args.before), pages(args.after)
    for only, where in ((before - after, "before"), (after - before, "after")):
        for p in sorted(only):
            print(f"only {where}: {p}")
    differing = 0
    for rel in sorted(before & after):
        if not rel.startswith(args.page):
            continue
        a = text_blocks((args.before / rel).read_text(encoding="utf-8"))
        b = text_blocks((args.after / rel).read_text(encoding="utf-8"))
        if a == b:
            continue
        differing += 1
        diff = difflib.unified_diff(a, b, f"before/{rel}", f"after/{rel}", n=args.context, lineterm="")
        print("\n".join(diff))
    print(f"{differing} of {len(before & after)} pages differ", file=sys.stderr)
    return 1 if differing or before != after else 0


if __name__ == "__main__":
    raise SystemExit(main())
