"""Claims between prose and the API reference's navigation, as the site lays them out (issue 36,
reader review 2026-11-24 findings 5 and 13).

Finding 5: a checked sentence that is not in a list of adjacent ones was a tinted box ending in
"checked in this build", one suffix per sentence. Now it is prose with its mark in the margin; the
mark is focusable and named by the verdict, and the verdict is a tip (hidden from assistive
technology, which reads the mark's name). ``tests/test_claimsui_browser.py`` checks what a reader's
browser shows. Finding 13: the build machinery's packages are grouped apart from the teaching ones.
"""

from __future__ import annotations

from bs4 import BeautifulSoup

from amp_docs_lib.docsite import reader_layout as pages


def _output(html_: str) -> str:
    return (
        '<div class="jp-Cell jp-CodeCell"><div class="jp-Cell-outputWrapper"><div class="jp-OutputArea">'
        f'<div class="jp-OutputArea-child"><div class="jp-RenderedHTMLCommon jp-OutputArea-output" '
        f'data-mime-type="text/html">{html_}</div></div></div></div></div>'
    )


def _prose(text: str) -> str:
    return f'<div class="jp-Cell jp-MarkdownCell"><p>{text}</p></div>'


def _claim(text: str) -> str:
    from amp_docs_lib.page.claims import claim

    return claim(text + " {measured}.", 1, 1)._repr_html_()


def _fact(text: str) -> str:
    from amp_docs_lib.page.claims import on_this_machine

    return on_this_machine(text, "not " + text, holds=True)._repr_html_()


def _visible_verdicts(soup) -> list[str]:
    """Verdicts printed as text a reader sees without acting: list titles and verdict spans that are
    not tips (a tip is aria-hidden and shown only while its mark is hovered or focused)."""
    shown = [t.get_text(strip=True) for t in soup.select(".amp-claims__title")]
    return shown + [v.get_text(strip=True) for v in soup.select(".amp-claim-verdict") if v.get("aria-hidden") != "true"]


def _name(soup, el) -> str:
    """``el``'s accessible name from its ``aria-labelledby`` (the only way these marks are named)."""
    return " ".join(soup.find(id=i).get_text(" ", strip=True) for i in el["aria-labelledby"].split())


def test_claims_between_prose_print_no_verdict_each_and_their_mark_carries_it():
    """N lone claims printed N boxes with N suffixes; now none is printed, and each mark says it."""
    page = "".join(_prose(f"Prose {i}.") + _output(_claim(f"Sentence {i}")) for i in range(4))
    page += _prose("More prose.") + _output(_fact("BF16 matmul is native."))
    soup = BeautifulSoup(pages.reader_layout(page), "html.parser")
    claims = soup.select("p.amp-claim")
    assert len(claims) == 5 and not soup.select(".amp-claims"), "lone claims are not a list"
    ids = [el["id"] for el in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), "an id given twice on the page"
    assert _visible_verdicts(soup) == [], "a lone claim prints its verdict as a suffix"
    for c in claims:
        mark = c.find("span", class_="amp-claim-mark")
        verdict = c.find("span", class_="amp-claim-verdict").get_text(strip=True)
        assert "amp-claim--lone" in c["class"]
        assert mark.get("tabindex") == "0" and mark.get("aria-hidden") is None, "the mark is reachable"
        assert mark.get("role") == "img" and _name(soup, mark) == verdict, "the mark is named by its verdict"
    assert [_name(soup, c.find("span", class_="amp-claim-mark")) for c in claims] == [
        *["checked in this build"] * 4,
        "measured on this machine",
    ]


def test_a_list_of_adjacent_claims_says_its_verdict_once_and_adds_no_stops():
    page = _prose("Before.") + "".join(_output(_claim(f"Sentence {i}")) for i in range(5)) + _prose("After.")
    soup = BeautifulSoup(pages.reader_layout(page), "html.parser")
    assert len(soup.select("div.amp-claims")) == 1 and len(soup.select("div.amp-claims p.amp-claim")) == 5
    assert _visible_verdicts(soup) == ["Checked in this build"]
    assert not soup.select("[tabindex]"), "a list's lines need no tip: its title says the verdict"
    assert len(soup.select("div.amp-claims .amp-claim-mark")) == 5, "a ✓ per line"


def test_a_list_of_checks_and_machine_facts_names_each_mark_once_in_its_title():
    """A mixed list printed the verdict of every line that differed from its title's."""
    page = _prose("Before.") + _output(_fact("BF16 is native.")) + _output(_claim("One")) + _output(_claim("Two"))
    page += _output(_fact("FP16 is emulated."))
    soup = BeautifulSoup(pages.reader_layout(page), "html.parser")
    assert len(soup.select("div.amp-claims p.amp-claim")) == 4
    assert _visible_verdicts(soup) == ["◆ Measured on this machine · ✓ Checked in this build"]


def test_a_failing_claim_keeps_its_verdict_in_sight():
    failing = _claim("Sentence").replace("amp-claim--holds", "amp-claim--fails")
    soup = BeautifulSoup(pages.reader_layout(_prose("Before.") + _output(failing)), "html.parser")
    assert "amp-claim--lone" not in soup.select_one("p.amp-claim")["class"]
    assert _visible_verdicts(soup) == ["checked in this build"]


def test_the_api_reference_groups_the_site_machinery_apart_from_the_teaching_packages():
    from amp_docs_lib.docsite import api_pages

    (entries,) = api_pages.nav_entry().values()
    top = [next(iter(e)) for e in entries]
    machinery = [e for e in entries if api_pages.MACHINERY_TITLE in e]
    assert len(machinery) == 1 and top[-1] == api_pages.MACHINERY_TITLE
    grouped = [next(iter(e)) for e in machinery[0][api_pages.MACHINERY_TITLE]]
    assert set(grouped) == {"page", "docsite", "cli"}
    assert not {"page", "docsite", "cli"} & set(top) and {"numbers", "amp", "fp8"} <= set(top)
    overview = api_pages.index_markdown()
    teaching, _, site = overview.partition(f"## {api_pages.MACHINERY_TITLE}")
    assert "[`docsite`]" in site and "[`page`]" in site and "[`cli`]" in site
    assert "[`docsite`]" not in teaching and "[`numbers`]" in teaching


def test_reader_text_names_no_build_internals():
    """Finding 13: the chapters said how the build schedules them and what the site's tests check."""
    from conftest import REPO_ROOT

    for name, internals in {
        "performance": ("timing_sensitive", "front matter"),
        "quantization": ("timing_sensitive", "timing-sensitive"),
        "formats": ("site's tests", "tests check"),
    }.items():
        text = (REPO_ROOT / "docs" / "chapters" / f"{name}.md").read_text(encoding="utf-8")
        prose = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text  # the front matter may say it
        for phrase in internals:
            assert phrase not in prose, f"{name}: {phrase!r} is about the build, not the lesson"
