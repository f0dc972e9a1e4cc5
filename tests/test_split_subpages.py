"""A long chapter as a chapter page plus sub-pages (issue 36): one executed notebook, sliced at
``<!-- amp-docs:subpage -->`` markers (``amp_docs_lib/docsite/subpages.py``)."""

from __future__ import annotations

import json
import re

import pytest

from amp_docs_lib.docsite.linkcheck import check_site
from amp_docs_lib.docsite.subpages import (
    SUBPAGE_MARKER,
    AnchorMap,
    SplitChapter,
    SubpageError,
    heading_id,
    part_page_path,
    part_src_uri,
    split_notebook,
)
from conftest import FRONT_MATTER, mkdocs_build


def md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": text}


def notebook(*cells: dict) -> dict:
    return {"cells": list(cells), "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}


def sources(part) -> list[str]:
    return [c["source"] for c in part.cells]


def test_markers_slice_the_notebook_into_parts_whose_h2_becomes_the_h1():
    nb = notebook(
        md("# The chapter\n\nIntro."),
        code("x = 1"),
        md(f"Last words of part 0.\n\n{SUBPAGE_MARKER}\n## MX block formats: E8M0 scales\n\nMX text."),
        code("y = x"),
        md(f"{SUBPAGE_MARKER}\n## Training, at last\n\nMore."),
        code("z = y"),
    )
    parts = split_notebook(nb, "chapters/x.md")
    assert [p.title for p in parts] == ["", "MX block formats: E8M0 scales", "Training, at last"]
    assert [p.slug for p in parts] == ["", "mx-block-formats-e8m0-scales", "training-at-last"]
    assert sources(parts[0]) == ["# The chapter\n\nIntro.", "x = 1", "Last words of part 0.\n"]
    assert sources(parts[1]) == ["# MX block formats: E8M0 scales\n\nMX text.", "y = x"]
    assert sources(parts[2]) == ["# Training, at last\n\nMore.", "z = y"]
    assert part_src_uri("chapters/x.md", parts[0]) == "chapters/x.md"
    # Known beside the chapter (its relative links resolve as the chapter's), built in the chapter's folder.
    assert part_src_uri("chapters/x.md", parts[2]) == "chapters/x.training-at-last.md"
    assert part_page_path("chapters/x.md", parts[2]) == "chapters/x/training-at-last.md"


def test_a_chapter_without_markers_is_one_part_as_it_was():
    box = code("in_this_build({'a': 1})")
    nb = notebook(md("# T\n\n## A section"), box, code("x = 1"))
    (part,) = split_notebook(nb, "chapters/x.md")
    assert part.cells == nb["cells"]


def test_the_in_this_build_box_goes_to_the_chapter_page_under_its_summary():
    box = code('from amp_docs_lib.page.summary import in_this_build\nin_this_build({"a": 1})')
    nb = notebook(md("# T"), md(f"{SUBPAGE_MARKER}\n## Later"), code("y = 2"), box)
    parts = split_notebook(nb, "chapters/x.md")
    assert parts[0].cells[-1] is box
    assert box not in parts[1].cells


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"{SUBPAGE_MARKER}\n\nSome prose first.\n\n## Heading", "Some prose first."),
        (f"{SUBPAGE_MARKER}\n### A third-level heading", "### A third-level heading"),
        (f"Prose.\n{SUBPAGE_MARKER}", "(nothing)"),
    ],
)
def test_a_marker_not_followed_by_an_h2_is_an_error_naming_chapter_and_cell(text, shown):
    nb = notebook(md("# T"), code("x = 1"), md(text))
    with pytest.raises(SubpageError) as e:
        split_notebook(nb, "chapters/fp8.md")
    assert "chapters/fp8.md: cell 2:" in str(e.value) and repr(shown) in str(e.value)


def test_two_parts_with_one_slug_are_an_error():
    nb = notebook(md("# T"), md(f"{SUBPAGE_MARKER}\n## Memory"), md(f"{SUBPAGE_MARKER}\n## Memory!"))
    with pytest.raises(SubpageError, match="share the URL slug 'memory'"):
        split_notebook(nb, "chapters/x.md")


def test_the_slug_is_the_anchor_the_table_of_contents_gives_the_heading():
    assert heading_id("DeepSeek-V3's recipe: tiles, blocks and promoted accumulation") == (
        "deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation"
    )
    assert heading_id("torch.compile and the profiler") == "torchcompile-and-the-profiler"


def _split(ids: list[set[str]]) -> AnchorMap:
    chapter = SplitChapter(
        "chapters/fp8.md", "FP8", None, [None] * 3, ["chapters/fp8/", "chapters/fp8/mx/", "chapters/fp8/train/"], ids
    )
    return AnchorMap([chapter])


def test_links_to_an_anchor_that_moved_follow_it_to_its_part():
    anchors = _split([{"intro", "top"}, {"mx", "ref-a"}, {"train"}])
    page = '<a href="#mx">a</a><a href="#intro">b</a><a href="#gone">c</a><a href="mx/#ref-a">d</a>'
    assert anchors.rewrite(page, "chapters/fp8/") == (
        '<a href="mx/#mx">a</a><a href="#intro">b</a><a href="#gone">c</a><a href="mx/#ref-a">d</a>'
    )
    # From a part: to the chapter page and to another part.
    assert anchors.rewrite('<a href="#intro">x</a><a href="#train">y</a>', "chapters/fp8/mx/") == (
        '<a href="../#intro">x</a><a href="../train/#train">y</a>'
    )
    # From another page, and from the home page.
    assert anchors.rewrite('<a class="k" href="../fp8/#train">x</a>', "chapters/formats/") == (
        '<a class="k" href="../fp8/train/#train">x</a>'
    )
    assert anchors.rewrite('<a href="chapters/fp8/#mx">x</a>', "") == '<a href="chapters/fp8/mx/#mx">x</a>'
    # A link elsewhere, or to an anchor still on the chapter page, is left alone.
    same = '<a href="../formats/#train">x</a><a href="../fp8/#top">y</a><a href="https://x.org/#mx">z</a>'
    assert anchors.rewrite(same, "chapters/formats/") == same


def test_the_nav_walks_the_chapter_then_its_parts_then_the_next_chapter():
    from types import SimpleNamespace

    from amp_docs_lib.docsite.subpages import set_reading_order

    class Item(SimpleNamespace):
        is_section = False
        is_page = True

    a, b0, b1, b2, c = (Item(name=n) for n in ("a", "b", "b1", "b2", "c"))
    section = SimpleNamespace(is_section=True, is_page=False, children=[b0, b1, b2])
    nav = SimpleNamespace(items=[a, section, c], pages=[a, b0, c])
    set_reading_order(nav)
    assert [p.name for p in nav.pages] == ["a", "b", "b1", "b2", "c"]
    assert (b1.previous_page, b1.next_page, c.previous_page, a.previous_page) == (b0, b2, b2, None)
    assert b2.parent is section and a.parent is None


# ---- a mini site with a split chapter -----------------------------------------------------------------

SPLIT_CHAPTER = f"""{FRONT_MATTER}
# Chapter b
<!-- amp-docs:first-part title="Opening" -->

The details are [on the next page](#details-here).

```python
print('part zero ran')
```

<!-- amp-docs:subpage title="Second part" -->
## Where it goes on

### Details here

Text of the details.

```python
print('part one ran')
```
"""


@pytest.mark.site
def test_a_split_chapter_builds_as_a_page_and_its_part(mini_site):
    docs = mini_site / "docs"
    (docs / "chapters" / "b.md").write_text(SPLIT_CHAPTER)
    (docs / "chapters" / "a.md").write_text(
        (docs / "chapters" / "a.md").read_text() + "\nSee [the details](b.md#details-here).\n"
    )
    # mkdocs checks links to anchors (--strict fails on a missing one): the moved anchor is found on its part.
    (mini_site / "mkdocs.yml").write_text((mini_site / "mkdocs.yml").read_text() + "validation:\n  anchors: warn\n")
    mkdocs_build(mini_site)
    site = mini_site / "site"
    chapter = (site / "chapters" / "b" / "index.html").read_text()
    part = (site / "chapters" / "b" / "second-part" / "index.html").read_text()
    # The part: its H1, its section still an H2, its tab title naming the chapter, its Part line, the
    # chapter's whole notebook in its (compact) downloads bar.
    assert re.search(r'<h1 id="second-part"', part) and re.search(r'<h2 id="where-it-goes-on"', part)
    assert "<title>Second part - mini</title>" in part  # the mkdocs theme; Material reads meta.title (below)
    assert "Part 2 of 2 of Chapter b: " in part and 'href="../">1. Opening</a>' in part
    assert "part one ran" in part and "part zero ran" not in part
    assert 'href="../../../downloads/chapters/b.ipynb"' in part
    assert "One notebook for both pages of the chapter; how to run it" in part
    whole = json.loads((site / "downloads" / "chapters" / "b.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in whole["cells"] for o in c.get("outputs", []))
    assert "part zero ran" in printed and "part one ran" in printed
    assert "amp-docs:" not in json.dumps(whole["cells"])  # no marker comments in the download
    # The chapter page: part 0, the list of the following pages, the link to the moved anchor followed.
    assert "part zero ran" in chapter and "part one ran" not in chapter
    assert "copied with the cells above it also runs" in chapter
    assert 'continues on the next page: <a href="second-part/">2. Second part</a>' in chapter
    assert 'href="second-part/#details-here"' in chapter
    a = (site / "chapters" / "a" / "index.html").read_text()
    assert 'href="../b/second-part/#details-here"' in a
    # Reading order (the mkdocs theme's prev/next links): a, b, its part; then nothing.
    assert '<a rel="prev" href="../a/"' in chapter and '<a rel="next" href="second-part/"' in chapter
    assert '<a rel="prev" href="../"' in part and '<a rel="next" class="nav-link disabled">' in part
    # The nav shows the chapter as a section of its pages (the mkdocs theme: a dropdown titled as the
    # chapter), its first page under its own name.
    assert re.search(r"dropdown-toggle[^>]*>\s*Chapter b\s*<", chapter)
    assert re.search(r'href="\./"[^>]*>\s*Opening\s*<', chapter) or re.search(r">\s*Opening\s*</a>", chapter)
    assert not check_site(site)


@pytest.mark.site
def test_a_bad_marker_fails_the_build_naming_chapter_and_cell(mini_site):
    (mini_site / "docs" / "chapters" / "b.md").write_text(
        f"{FRONT_MATTER}\n# B\n\n```python\nprint(1)\n```\n\n{SUBPAGE_MARKER}\n\nNo heading here.\n"
    )
    r = mkdocs_build(mini_site, check=False)
    assert r.returncode != 0
    assert "chapters/b.md: cell 2: the sub-page marker" in r.stderr + r.stdout, r.stderr[-2000:]


def test_the_part_line_numbers_every_part_and_links_all_but_its_own():
    from amp_docs_lib.docsite.subpages import Part, part_line_html

    parts = [Part(0, "", "", []), Part(1, "MX", "mx", []), Part(2, "Training", "train", [])]
    chapter = SplitChapter(
        "chapters/fp8.md", "FP8", None, parts, ["chapters/fp8/", "chapters/fp8/mx/", "chapters/fp8/train/"], []
    )
    line = part_line_html(chapter, 1, "chapters/fp8/mx/")
    assert (
        'Part 2 of 3 of FP8: <a href="../">1. FP8</a> · <strong aria-current="page">2. MX</strong> · '
        '<a href="../train/">3. Training</a></nav>'
    ) in line
    named = SplitChapter(chapter.src_uri, "FP8", None, [Part(0, "Formats", "", []), *parts[1:]], chapter.urls, [])
    first = part_line_html(named, 0, "chapters/fp8/")
    assert (
        '<strong aria-current="page">1. Formats</strong> · <a href="mx/">2. MX</a> · <a href="train/">3. Training</a>'
        in first
    )


def test_every_part_but_the_last_says_which_page_continues_the_chapter():
    from amp_docs_lib.docsite.subpages import Part, with_following_pages

    parts = [Part(0, "", "", []), Part(1, "MX", "mx", []), Part(2, "Training", "train", [])]
    urls = ["chapters/fp8/", "chapters/fp8/mx/", "chapters/fp8/train/"]
    chapter = SplitChapter("chapters/fp8.md", "FP8", None, parts, urls, [])
    assert with_following_pages("<p>x</p>", chapter, 0, urls[0]).endswith(
        'continues on the next page: <a href="mx/">2. MX</a>.</p>'
    )
    assert with_following_pages("<p>x</p>", chapter, 1, urls[1]).endswith(
        'continues on the next page: <a href="../train/">3. Training</a>.</p>'
    )
    assert with_following_pages("<p>x</p>", chapter, 2, urls[2]) == "<p>x</p>"


def test_a_titled_marker_gives_the_part_its_own_h1_and_keeps_the_section_an_h2():
    nb = notebook(
        md('# The chapter\n<!-- amp-docs:first-part title="Formats and scaling" -->\n\nIntro.'),
        md('<!-- amp-docs:subpage title="MX, NVFP4 and block GEMMs" -->\n## MX block formats\n\n### Deeper'),
        code("y = 1"),
    )
    parts = split_notebook(nb, "chapters/x.md")
    assert [p.title for p in parts] == ["Formats and scaling", "MX, NVFP4 and block GEMMs"]
    assert parts[1].slug == "mx-nvfp4-and-block-gemms"
    assert sources(parts[1])[0] == "# MX, NVFP4 and block GEMMs\n\n## MX block formats\n\n### Deeper"
    # Untitled and titled markers mix; a first-part marker after the first split names nothing.
    nb["cells"].append(md(f"{SUBPAGE_MARKER}\n## Last\n" + '<!-- amp-docs:first-part title="Ignored" -->'))
    assert [p.title for p in split_notebook(nb, "chapters/x.md")] == [
        "Formats and scaling",
        "MX, NVFP4 and block GEMMs",
        "Last",
    ]


def test_the_downloaded_notebook_has_no_subpage_markers():
    from amp_docs_lib.docsite.downloads import downloadable_notebook

    nb = notebook(
        md('# T\n<!-- amp-docs:first-part title="A" -->\nx'),
        md(f"{SUBPAGE_MARKER}\n## B"),
        md('<!-- amp-docs:subpage title="C and D" -->\nThis page covers C.\n\n## C'),
        code("1"),
    )
    cells = json.loads(downloadable_notebook(json.dumps(nb)))["cells"]
    assert [c["source"] for c in cells if c["cell_type"] == "markdown"] == [
        "# T\nx",
        "## B",
        "*On the site, the page \u201cC and D\u201d starts here.*\n\nThis page covers C.\n\n## C",
    ]


def test_a_titled_part_may_open_with_sentences_before_its_first_section():
    nb = notebook(
        md("# T"),
        md('<!-- amp-docs:subpage title="Later things" -->\nThis page covers later things.\n\n## First later'),
    )
    part = split_notebook(nb, "chapters/x.md")[1]
    assert sources(part)[0] == "# Later things\n\nThis page covers later things.\n\n## First later"
    # Still an error without any H2 after the sentences; an untitled marker must be followed by the H2 itself.
    for text in ('<!-- amp-docs:subpage title="L" -->\nOnly prose.', f"{SUBPAGE_MARKER}\nProse.\n\n## H"):
        with pytest.raises(SubpageError, match="must be followed"):
            split_notebook(notebook(md("# T"), md(text)), "chapters/x.md")


def test_a_used_chapters_parts_stay_in_the_presented_folder_and_an_old_ones_go(tmp_path):
    import os
    import time

    from amp_docs_lib.docsite.plugin import evict_presented

    old = time.time() - 7200
    for name in ("a-1.ipynb", "a-1.part0.ipynb", "a-1.part1.ipynb", "a-0.ipynb", "a-0.part1.ipynb"):
        (tmp_path / name).write_text("{}")
        os.utime(tmp_path / name, (old, old))
    removed = evict_presented(tmp_path, {tmp_path / "executed" / "a-1.ipynb"}, min_age_s=3600)
    assert sorted(p.name for p in removed) == ["a-0.ipynb", "a-0.part1.ipynb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-1.ipynb", "a-1.part0.ipynb", "a-1.part1.ipynb"]


def test_tab_titles_name_the_part_and_its_chapter():
    from amp_docs_lib.docsite.subpages import Part, tab_title

    parts = [Part(0, "Formats", "", []), Part(1, "MX", "mx", [])]
    chapter = SplitChapter("chapters/fp8.md", "FP8", None, parts, ["chapters/fp8/", "chapters/fp8/mx/"], [])
    assert (tab_title(chapter, 0), tab_title(chapter, 1)) == ("Formats · FP8", "MX · FP8")
    unnamed = SplitChapter(chapter.src_uri, "FP8", None, [Part(0, "", "", []), parts[1]], chapter.urls, [])
    assert tab_title(unnamed, 0) == "FP8"


@pytest.mark.site
def test_the_sites_split_chapters_name_their_parts_in_the_tab_and_the_sidebar(site):
    from browser_visits import measure_pages

    parts = [p for p in measure_pages.page_paths(site) if p.count("/") == 3]  # chapters/<chapter>/<part>/
    assert parts, "no chapter of the site is split into sub-pages"
    for path in parts:
        page = (site / path / "index.html").read_text(encoding="utf-8")
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S).group(1)
        h1 = re.sub(r"<[^>]+>|¶", "", h1).strip()
        assert re.search(rf"<title>{re.escape(h1)} · [^<]+ - amp-docs</title>", page), (path, h1)


def test_the_chapter_page_sends_links_to_sections_that_moved_to_their_part():
    from amp_docs_lib.docsite.subpages import Part, moved_sections_script

    parts = [Part(0, "", "", []), Part(1, "MX", "mx", []), Part(2, "Training", "train", [])]
    urls = ["chapters/fp8/", "chapters/fp8/mx/", "chapters/fp8/train/"]
    chapter = SplitChapter("chapters/fp8.md", "FP8", None, parts, urls, [], [{"intro"}, {"mx-blocks"}, {"throughput"}])
    script = moved_sections_script(chapter, urls[0])
    assert '"mx-blocks": "mx/"' in script and '"throughput": "train/"' in script and "intro" not in script
    assert "!document.getElementById(h)" in script  # an anchor still on the page is left alone
    assert moved_sections_script(SplitChapter("c.md", "C", None, parts[:1], urls[:1], [], [set()]), urls[0]) == ""


@pytest.mark.site
@pytest.mark.browser
def test_a_bookmark_to_a_section_that_moved_lands_on_its_part(site, served, browser):
    from browser_visits import measure_pages

    chapter, part = next((p.rsplit("/", 2)[0] + "/", p) for p in measure_pages.page_paths(site) if p.count("/") == 3)
    heading = re.search(r'<h2 id="([^"]+)"', (site / part / "index.html").read_text(encoding="utf-8")).group(1)
    page = browser.new_page()
    try:
        page.goto(f"{served}{chapter}#{heading}", wait_until="load")
        page.wait_for_url(f"**/{part}#{heading}", timeout=10_000)
    finally:
        page.close()
