"""A long chapter read as a chapter page plus sub-pages: executed once, rendered in parts.

A chapter stays one source file and one executed notebook (one kernel, one cache entry, one download).
Its author marks where a sub-page starts with ``SUBPAGE_MARKER`` on a line of its own, right before an
H2, in a Markdown cell::

    <!-- amp-docs:subpage -->
    ## MX block formats

``split_notebook`` slices the presented notebook at the markers: part 0 (title, summary, everything up
to the first marker) keeps the chapter's page and URL; each later part becomes a page of its own under
the chapter's folder (``chapters/fp8/<slug>/``, the slug being the H2's anchor), whose H2 becomes its H1
(the page's title). The chapter's "In this build" box (its last cell, ``page.summary.in_this_build``)
goes to part 0, where ``reader_layout.lesson_first`` puts it under the summary.

The plugin (``plugin.py``) makes each part a Markdown page (``notebook_page``), orders the nav (``nav_section``: the chapter becomes a section of its pages), and on each
page of a split chapter adds the "Part k of n" line (``add_part_line``; the chapter page also ends with
the list of the pages that continue it, ``with_following_pages``), and sends a link to an anchor that
moved to another part there (``AnchorMap``).
"""

from __future__ import annotations

import copy
import html
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

SUBPAGE_MARKER = "<!-- amp-docs:subpage -->"
# With a title (``<!-- amp-docs:subpage title="MX and NVFP4 blocks" -->``) the part's H1 is that title and its
# first ``## Heading`` stays an H2; without one the H2 becomes the H1. Part 0's name in the sidebar (the
# section is titled as the chapter) comes from ``<!-- amp-docs:first-part title="..." -->``.
_MARKER = re.compile(r'<!--[ \t]*amp-docs:subpage(?:[ \t]+title="(?P<title>[^"\n]+)")?[ \t]*-->')
_FIRST_PART = re.compile(r'<!--[ \t]*amp-docs:first-part[ \t]+title="(?P<title>[^"\n]+)"[ \t]*-->')
_ANY_MARKER = re.compile(r"<!--[ \t]*amp-docs:(?:subpage|first-part)\b[^>]*-->[ \t]*\n?")
_H2 = re.compile(r"\A\s*##[ \t]+(?P<text>[^\n]*?)[ \t#]*(?:\n|\Z)")
_H2_LINE = re.compile(r"^##[ \t]+\S", re.M)
_H1_END = re.compile(r"</h1>", re.I)
_ID = re.compile(r"""\bid=["']([^"']+)["']""")
_HEADING_ID = re.compile(r"""<h[2-6]\b[^>]*\bid=["']([^"']+)["']""", re.I)
_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)(")', re.I)


class SubpageError(ValueError):
    """A marker the build cannot honour (not followed by an H2, two parts with one slug)."""


@dataclass(frozen=True)
class Part:
    """One page of a split chapter: its cells (a notebook's), title and slug ("" for the chapter page).
    Part 0's title is its ``first-part`` name ("" without one: the chapter's title names it)."""

    index: int
    title: str
    slug: str
    cells: list[dict]


def heading_id(text: str) -> str:
    """The anchor Python-Markdown's ``toc`` extension (the pages' table of contents) gives a heading."""
    import markdown

    md = markdown.Markdown(extensions=["toc"])
    md.convert(f"## {text}")
    return md.toc_tokens[0]["id"]


def _source(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _with_source(cell: dict, text: str) -> dict:
    """A copy of ``cell`` with ``text`` (a marker's cell is cut in two; its halves go to two notebooks)."""
    cell = copy.deepcopy(cell)
    cell["source"] = text
    return cell


def _is_summary_cell(cell: dict) -> bool:
    from amp_docs_lib.page.summary import in_this_build

    return cell.get("cell_type") == "code" and f"{in_this_build.__name__}(" in _source(cell)


def split_notebook(nb: dict, chapter: str) -> list[Part]:
    """The parts of a presented notebook (a dict as nbformat writes it) at its ``SUBPAGE_MARKER`` lines.

    Without markers: one part, the whole notebook. Raises SubpageError naming ``chapter`` and the cell
    where a marker is not followed by an H2 (``## Heading``) or two parts' headings share a slug.
    """
    cells = nb.get("cells", [])
    summary = next((i for i in range(len(cells) - 1, -1, -1) if _is_summary_cell(cells[i])), None)
    parts: list[list[dict]] = [[]]
    titles = [""]
    for i, cell in enumerate(cells):
        if i == summary:
            continue
        text = _source(cell)
        if cell.get("cell_type") == "markdown" and len(parts) == 1 and (m := _FIRST_PART.search(text)):
            titles[0] = m.group("title").strip()
        if cell.get("cell_type") != "markdown" or not _MARKER.search(text):
            parts[-1].append(cell)
            continue
        before, *rest = _MARKER.split(text)
        if before.strip():
            parts[-1].append(_with_source(cell, before.rstrip() + "\n"))
        for title, after in zip(rest[::2], rest[1::2], strict=True):
            body = after.lstrip("\n")
            # A titled part may open with a few sentences before its first section (what the page covers).
            m = _H2.match(body) if not title else _H2.match(body[h.start() :]) if (h := _H2_LINE.search(body)) else None
            if m is None:
                first = after.strip().splitlines()[0] if after.strip() else "(nothing)"
                where = "followed by" if not title else "followed, after any opening sentences, by"
                raise SubpageError(
                    f"{chapter}: cell {i}: the sub-page marker {SUBPAGE_MARKER} must be {where} an H2 "
                    f"('## Heading') in the same Markdown cell; it is followed by {first!r}"
                )
            if title:  # the part's own H1; the section keeps its H2 (and its place in the table of contents)
                titles.append(title.strip())
                parts.append([_with_source(cell, f"# {title.strip()}\n\n{body}")])
            else:  # "## X" becomes "# X": the page's H1 and title
                titles.append(m.group("text").strip())
                parts.append([_with_source(cell, body[1:])])
    if len(parts) == 1:
        return [Part(0, titles[0], "", list(cells))]
    if summary is not None:
        parts[0].append(cells[summary])
    slugs = [""] + [heading_id(t) for t in titles[1:]]
    seen: dict[str, str] = {}
    for title, slug in zip(titles[1:], slugs[1:], strict=True):
        if slug in seen:
            raise SubpageError(f"{chapter}: two sub-pages would share the URL slug {slug!r}: {seen[slug]!r}, {title!r}")
        seen[slug] = title
    return [Part(k, titles[k], slugs[k], cells) for k, cells in enumerate(parts)]


def part_src_uri(chapter_src_uri: str, part: Part) -> str:
    """The source path mkdocs knows a part by: the chapter's own for part 0, ``<chapter>.<slug>.md`` otherwise,
    beside the chapter, so that its relative links resolve as in the chapter's source (its page is
    ``part_page_path``)."""
    return chapter_src_uri if part.index == 0 else f"{chapter_src_uri[:-3]}.{part.slug}.md"


def part_page_path(chapter_src_uri: str, part: Part) -> str:
    """The path a part's page is built as: the chapter's own for part 0, ``<chapter>/<slug>.md`` otherwise
    (its URL: ``chapters/fp8/<slug>/``)."""
    return chapter_src_uri if part.index == 0 else f"{chapter_src_uri[:-3]}/{part.slug}.md"


@dataclass
class SplitChapter:
    """A chapter built as several pages: its source path, title, whole presented notebook and pages."""

    src_uri: str
    title: str
    notebook: Path  # the whole chapter's presented notebook: the download is one runnable notebook
    parts: list[Part]
    urls: list[str]  # each part's page URL (relative to the site root), in order
    ids: list[set[str]]  # each part's element ids, once rendered (AnchorMap.record)
    headings: list[set[str]] = field(default_factory=list)  # each part's heading ids (AnchorMap.record)


def part_label(chapter: SplitChapter, k: int) -> str:
    """Part ``k``'s name: its title, or the chapter's for an unnamed part 0."""
    return chapter.parts[k].title or chapter.title


def part_line_html(chapter: SplitChapter, index: int, page_url: str) -> str:
    """ "Part k of n of <chapter>: 1. A · 2. B · 3. C" under the H1: every part numbered, the others linked."""
    from mkdocs.utils import get_relative_url

    def item(k: int) -> str:
        label = html.escape(f"{k + 1}. {part_label(chapter, k)}")
        if k == index:
            return f'<strong aria-current="page">{label}</strong>'
        return f'<a href="{html.escape(get_relative_url(chapter.urls[k], page_url))}">{label}</a>'

    return (
        f'<nav class="amp-parts" aria-label="Pages of this chapter">Part {index + 1} of {len(chapter.parts)} of '
        f"{html.escape(chapter.title)}: " + " · ".join(item(k) for k in range(len(chapter.parts))) + "</nav>"
    )


def following_pages_html(chapter: SplitChapter, index: int, page_url: str) -> str:
    """The closing line of every part but the last: the page that continues the chapter."""
    from mkdocs.utils import get_relative_url

    k = index + 1
    link = (
        f'<a href="{html.escape(get_relative_url(chapter.urls[k], page_url))}">'
        f"{html.escape(f'{k + 1}. {part_label(chapter, k)}')}</a>"
    )
    return f'<p class="amp-parts amp-parts--next">This chapter continues on the next page: {link}.</p>'


class AnchorMap:
    """Which page of a split chapter holds each anchor, so that links to an anchor that moved follow it."""

    def __init__(self, chapters: list[SplitChapter]):
        self.chapters = chapters
        self.by_url = {url: (c, k) for c in chapters for k, url in enumerate(c.urls)}

    def record(self, page_url: str, content: str) -> None:
        """Note the ids of a rendered page (its content, before any page is written)."""
        if page_url in self.by_url:
            chapter, k = self.by_url[page_url]
            chapter.ids[k] = set(_ID.findall(content))
            if len(chapter.headings) != len(chapter.parts):
                chapter.headings = [set() for _ in chapter.parts]
            chapter.headings[k] = set(_HEADING_ID.findall(content))

    def page_of(self, page_url: str) -> tuple[SplitChapter, int] | None:
        return self.by_url.get(page_url)

    def follow_moved_anchors(self, files) -> None:
        """Point mkdocs' record of each page's links to anchors (``page.links_to_anchors``, which ``validation:``
        checks after every page is written) at the part that holds the anchor, as ``rewrite`` points the links:
        a link to ``fp8.md#mx-blocks`` is to the part ``mx-blocks`` moved to (``on_env``: every page recorded)."""
        by_url = {f.url: f for f in files.documentation_pages()}
        for f in files.documentation_pages():
            links = getattr(f.page, "links_to_anchors", None)
            for target in list(links or ()):
                found = self.by_url.get(target.url)
                if found is None:
                    continue
                chapter, k = found
                for anchor in [a for a in links[target] if a not in chapter.ids[k]]:
                    holder = next((j for j, ids in enumerate(chapter.ids) if anchor in ids), None)
                    if holder is not None and (dest := by_url.get(chapter.urls[holder])) is not None:
                        links.setdefault(dest, {})[anchor] = links[target].pop(anchor)

    def rewrite(self, output: str, page_url: str) -> str:
        """Point each link of the page at ``page_url`` to an anchor of a split chapter's page that does not
        have it at the part that does (``#a`` on the page itself, ``../fp8/#a`` from another page)."""
        from mkdocs.utils import get_relative_url

        def sub(m: re.Match) -> str:
            href = m.group(2)
            parts = urlsplit(html.unescape(href))
            if parts.scheme or parts.netloc or not parts.fragment:
                return m.group(0)
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page_url + "x"), parts.path))
            target = "" if target == "." else target.lstrip("/")
            if parts.path == "":
                target = page_url
            elif not target.endswith((".html", "/")) and target:
                target += "/"
            found = self.by_url.get(target)
            if found is None:
                return m.group(0)
            chapter, k = found
            if parts.fragment in chapter.ids[k]:
                return m.group(0)
            holders = [j for j, ids in enumerate(chapter.ids) if parts.fragment in ids]
            if not holders:
                return m.group(0)  # left as written: the link check reports it
            rel = get_relative_url(chapter.urls[holders[0]], page_url)
            if not rel.endswith("/"):
                rel += "/"
            return m.group(1) + html.escape(f"{rel}#{parts.fragment}") + m.group(3)

        return _HREF.sub(sub, output)


def moved_sections_script(chapter: SplitChapter, page_url: str) -> str:
    """For the chapter page: a link from outside the site to a section that moved to a later part (a bookmark
    from before the split, ``chapters/fp8/#throughput``) follows it there instead of landing at the top."""
    from mkdocs.utils import get_relative_url

    moved = {
        h: get_relative_url(chapter.urls[k], page_url)
        for k in range(1, len(chapter.parts))
        for h in sorted(chapter.headings[k] if k < len(chapter.headings) else ())
    }
    if not moved:
        return ""
    return (
        "<script>(function(){var m=" + json.dumps(moved, sort_keys=True).replace("</", "<\\/") + ";"
        "var h=decodeURIComponent(location.hash.slice(1));"
        "if(h&&!document.getElementById(h)&&m[h])location.replace(m[h]+'#'+encodeURIComponent(h));})();</script>"
    )


def add_part_line(output: str, chapter: SplitChapter, index: int, page_url: str) -> str:
    """The "Part k of n" line right under the page's H1 (of the built page, ``on_post_page``); on the chapter
    page, also the script that sends links to sections that moved to a later part there."""
    m = _H1_END.search(output, output.find('class="md-content"') + 1)
    if m is None:
        return output
    extra = moved_sections_script(chapter, page_url) if index == 0 else ""
    return output[: m.end()] + part_line_html(chapter, index, page_url) + extra + output[m.end() :]


def with_following_pages(content: str, chapter: SplitChapter, index: int, page_url: str) -> str:
    """A part's content (``on_page_content``) ending with the page that continues the chapter (not the last part)."""
    return content + following_pages_html(chapter, index, page_url) if index < len(chapter.parts) - 1 else content


def nav_section(chapter: SplitChapter, page, files):
    """The nav entry of a split chapter: a section titled as the chapter, its pages in reading order."""
    from mkdocs.structure.nav import Section

    pages = [page] + [files.get_file_from_path(part_src_uri(chapter.src_uri, p)).page for p in chapter.parts[1:]]
    section = Section(title=chapter.title, children=pages)
    section.amp_docs_split = chapter
    for p in pages:
        p.parent = section
    return section


def name_first_parts(nav) -> None:
    """Give each split chapter's first page its part name in the nav, under the section named as the chapter
    (``on_env``: after mkdocs has set every page's title from its H1, before any page is written)."""
    for item in nav.items:
        chapter = getattr(item, "amp_docs_split", None)
        if chapter is not None and chapter.parts[0].title:
            item.children[0].title = chapter.parts[0].title


def tab_title(chapter: SplitChapter, index: int) -> str:
    """The browser tab's title of a part (``page.meta["title"]``, also previous/next's label): the part's name
    and the chapter's (the chapter's alone for an unnamed part 0)."""
    return chapter.title if not chapter.parts[index].title else f"{chapter.parts[index].title} · {chapter.title}"


def without_markers(text: str) -> str:
    """A Markdown cell's text as the downloaded notebook (one notebook for all the pages) shows it: no marker
    comments; where a titled part starts, a line saying so (its opening sentences speak of "this page")."""

    def note(m: re.Match) -> str:
        return f"*On the site, the page \u201c{m.group('title')}\u201d starts here.*\n\n" if m.group("title") else ""

    text = re.sub(_MARKER.pattern + r"[ \t]*\n?", note, text)
    return _ANY_MARKER.sub("", text)


def set_reading_order(nav) -> None:
    """Recompute the nav's page list, each page's previous and next page and each item's parent
    (mkdocs sets them before ``on_nav``; a section added there needs them again)."""

    def walk(items, parent):
        for item in items:
            item.parent = parent
            if item.is_section:
                yield from walk(item.children, item)
            elif item.is_page:
                yield item

    pages = list(walk(nav.items, None))
    for before, page, after in zip([None, *pages[:-1]], pages, [*pages[1:], None], strict=True):
        page.previous_page, page.next_page = before, after
    nav.pages = pages


_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)


def chapter_title(part: Part) -> str | None:
    """The first H1 of a part's Markdown cells (the chapter's title, on part 0)."""
    for cell in part.cells:
        if cell.get("cell_type") == "markdown" and (m := _H1.search(_source(cell))):
            return m.group(1).strip()
    return None
