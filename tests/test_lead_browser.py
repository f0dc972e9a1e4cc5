"""Chapter length and the lesson first, as a reader's browser lays the built site out (issue 36).

No chapter page (a split chapter's sub-pages too) is longer than ``MAX_SCREENS`` (25) screens at 1400x900, measured as
``scripts/measure_pages.py`` measures (document height over viewport height, after MathJax and the
lazy figures); every chapter's summary is on its first screen with its "In this build" box under
it, above the first section; the home page's first screen shows chapters' key results.
Headless system Chromium through Playwright, as ``tests/test_browser.py``; skipped without them.
"""

from __future__ import annotations

import pytest
from browser_visits import CHROMIUM, DESKTOP, measure_pages, step

from conftest import CHAPTERS

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]


@step("screens", screens=(DESKTOP,), test="test_no_chapter_is_longer_than_25_screens_on_a_desktop")
def _screens(page, path, screen, visits) -> float:
    """Document height over viewport height, measured as ``measure_pages.screens`` measures it."""
    page.evaluate(measure_pages._SCREENS)  # its scroll through the lazy figures
    page.wait_for_load_state("networkidle")
    return page.evaluate("() => document.documentElement.scrollHeight / window.innerHeight")


def test_no_chapter_is_longer_than_25_screens_on_a_desktop(site, visits):
    """Every page of every chapter (a long chapter is split into sub-pages, docsite/subpages.py)."""
    pages = [p for p in measure_pages.page_paths(site) if p]
    assert {f"chapters/{c.stem}/" for c in CHAPTERS} <= set(pages), pages
    too_long = {}
    for path in pages:
        n = visits.result(path, DESKTOP, "screens")
        if n > measure_pages.MAX_SCREENS:
            too_long[path] = f"{n:.1f} screens"
    assert not too_long, f"chapter pages longer than {measure_pages.MAX_SCREENS} screens at 1400x900: {too_long}"


FIRST_SCREEN = """() => {
    const top = (el) => el ? el.getBoundingClientRect().top + window.scrollY : null;
    const h2 = document.querySelector('.md-content h2');
    return {summary: top(document.querySelector('.md-content .amp-summary')),
            box: top(document.querySelector('.md-content figure.amp-in-this-build')),
            boxes: document.querySelectorAll('.md-content figure.amp-in-this-build').length,
            section: top(h2), screen: window.innerHeight};
}"""


HOME_RESULTS = """() => [...document.querySelectorAll('.md-content figure.amp-in-this-build')]
    .map(f => ({top: f.getBoundingClientRect().top, link: !!f.querySelector('figcaption a'),
                items: f.querySelectorAll('li').length}))"""


@step("first_screen", screens=(DESKTOP,), test="test_every_chapter_opens_with_its_summary_and_key_results")
def _first_screen(page, path, screen, visits):
    return page.evaluate(HOME_RESULTS if path == "" else FIRST_SCREEN)


def test_every_chapter_opens_with_its_summary_and_key_results(visits):
    faults = []
    for chapter in CHAPTERS:
        at = visits.result(f"chapters/{chapter.stem}/", DESKTOP, "first_screen")
        if at["summary"] is None or at["summary"] > at["screen"]:
            faults.append(f"{chapter.stem}: the summary is not on the first screen ({at})")
        if at["boxes"] != 1 or not (at["summary"] or 0) < at["box"] < (at["section"] or float("inf")):
            faults.append(
                f"{chapter.stem}: not one 'In this build' box between the summary and the first section ({at})"
            )
    home = visits.result("", DESKTOP, "first_screen")
    if (
        not home
        or home[0]["top"] > measure_pages.VIEWPORTS[DESKTOP][1]
        or not all(b["link"] and b["items"] for b in home)
    ):
        faults.append(f"home: the first screen does not show a chapter's key results, linked ({home})")
    assert not faults, "\n".join(faults)
