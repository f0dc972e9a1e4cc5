"""Generated parts of pages: the profiles table, "Yours vs reference" and the home page's showcase.

Each is filled in where its marker stands: the profiles (Rebuild on your GPU) on every page, the other
two after every page is written.
"""

from __future__ import annotations

import html as _html
from pathlib import Path

from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR
from amp_docs_lib.docsite.fragments import FragmentMemo

PROFILES_MARKER = "<!-- amp-docs:profiles -->"


def profiles_html() -> str:
    """Every problem size of every profile, side by side (from ``amp_docs_lib.core.profiles``), folded:
    70 rows of internal size names are reference, not the page's lesson."""
    from amp_docs_lib.core.profiles import PROFILES
    from amp_docs_lib.core.tables import table_from_rows
    from amp_docs_lib.page.tables import show_table

    names = sorted({k for p in PROFILES.values() for k in p.sizes})
    rows = [{"size": k, **{n: p.sizes.get(k) for n, p in PROFILES.items()}} for k in names]
    return show_table(
        table_from_rows(rows),
        "Problem sizes per profile",
        source="amp_docs_lib/core/profiles.py of this build",
        collapsed=True,
    )._repr_html_()


def fill_profiles(output: str, fragments: FragmentMemo) -> str:
    """Replace ``PROFILES_MARKER`` in a page with ``profiles_html`` (memoised in ``fragments``)."""
    if PROFILES_MARKER in output:
        # The profiles are library code, which the memo's key covers: no other input.
        output = output.replace(PROFILES_MARKER, fragments.html("profiles", None, profiles_html))
    return output


COMPARISON_MARKER = "<!-- amp-docs:yours-vs-reference -->"


def fill_comparison(site: Path, references: Path, fragments: FragmentMemo) -> None:
    """Fill any built page holding ``COMPARISON_MARKER`` with this build's key measurements beside every
    committed reference machine's (``references``), after all chapters, whose notebooks it reads, are written."""
    from amp_docs_lib.docsite.hashing import tree_hash

    def render() -> str:
        from amp_docs_lib.docsite.references import comparison_html  # pandas: only when inputs changed

        return comparison_html(site, references)

    body = None
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if COMPARISON_MARKER in text:
            if body is None:
                inputs = {
                    "notebooks": tree_hash(site / CHAPTER_DOWNLOADS_DIR, (".ipynb",)),
                    "reference_results": tree_hash(references, None),
                }
                body = fragments.html("yours-vs-reference", inputs, render)
            page.write_text(text.replace(COMPARISON_MARKER, body), encoding="utf-8")


# ---- the home page's first screen: what the site shows ------------------------------------------
SHOWCASE_MARKER = "<!-- amp-docs:in-this-build -->"
SHOWCASE_CHAPTERS = ("formats", "training_regimes")  # the first chapter, and the one experiment all of it leads to


def showcase_html(site: Path, chapters: tuple[str, ...] = SHOWCASE_CHAPTERS, page_url: str = "") -> str:
    """What the site shows, for the home page: each named chapter's "In this build" box as its built
    page shows it, titled with a link to the chapter and stamped with its provenance card's summary,
    and the first checked sentence of the first of them as a reader meets it there. Chapters not
    built (or without a box) are left out."""
    from bs4 import BeautifulSoup

    from amp_docs_lib.page.summary import BOX_KIND

    parts, stamps, claim_html = [], [], ""
    for name in chapters:
        page = site / "chapters" / name / "index.html"
        if not page.is_file():
            continue
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        box, title = soup.select_one(f"figure.amp-{BOX_KIND}"), soup.select_one(".md-content h1")
        if box is None or title is None:
            continue
        href = f"{page_url}chapters/{name}/"
        chapter = title.get_text(" ", strip=True).rstrip("¶").strip()
        for a in box.select("a[href]"):  # the box's own links (to a section of the chapter) from the home page
            a["href"] = _from_home(href, a["href"])
        caption = box.find("figcaption")
        if caption is not None:
            caption.clear()
            link = soup.new_tag("a", href=href)
            link.string = chapter
            caption.append("In this build: ")
            caption.append(link)
        card = soup.select_one("details.amp-provenance summary")
        for own in box.select("div.amp-stamp"):
            own.decompose()
        stamps.append(card.get_text(" ", strip=True).removeprefix("Measured on").strip() if card is not None else "")
        parts.append(str(box))
        first = soup.select_one("p.amp-claim--holds")
        if not claim_html and first is not None:
            claim_html = (
                f'<p class="amp-showcase__claim-intro">A sentence checked by this build, as '
                f'<a href="{href}">{_html.escape(chapter)}</a> shows it (the build fails if it stops '
                f'holding):</p><div class="amp-claims">{first}</div>'
            )
    if not parts:
        return ""
    # One stamp for boxes measured on one machine (the page says it once, as a chapter's card does).
    said = [
        f'<div class="amp-stamp amp-stamp--measured">measured on {_html.escape(s)}</div>'
        for s in dict.fromkeys(stamps)
        if s
    ]
    if len(said) == 1:
        return f'<div class="amp-showcase">{"".join(parts)}{said[0]}{claim_html}</div>'
    boxes = "".join(
        p.replace(
            "</figure>", f'<div class="amp-stamp amp-stamp--measured">measured on {_html.escape(s)}</div></figure>'
        )
        if s
        else p
        for p, s in zip(parts, stamps, strict=True)
    )
    return f'<div class="amp-showcase">{boxes}{claim_html}</div>'


def _from_home(chapter_href: str, link: str) -> str:
    """``link``, written on the chapter page at ``chapter_href``, as the home page must write it."""
    from urllib.parse import urljoin, urlsplit

    if urlsplit(link).scheme or link.startswith("/"):
        return link
    base = "http://home.invalid/"  # urljoin resolves against a URL; the host is cut off again
    return urljoin(urljoin(base, chapter_href), link).removeprefix(base)


def fill_showcase(site: Path) -> None:
    """Replace ``SHOWCASE_MARKER`` in the built home page with ``showcase_html`` (after every
    chapter page is written)."""
    home = site / "index.html"
    if not home.is_file():
        return
    text = home.read_text(encoding="utf-8")
    if SHOWCASE_MARKER in text:
        home.write_text(text.replace(SHOWCASE_MARKER, showcase_html(site)), encoding="utf-8")
