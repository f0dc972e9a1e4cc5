"""Chapter length and the lesson first, as a reader's browser lays the built site out (issue 36).

No chapter is longer than ``MAX_SCREENS`` (25) screens at 1400x900, measured as
``scripts/measure_pages.py`` measures (document height over viewport height, after MathJax and the
lazy figures); every chapter's summary is on its first screen with its "In this build" box under
it, above the first section; the home page's first screen shows chapters' key results.
Headless system Chromium through Playwright, as ``tests/test_browser.py``; skipped without them.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import CHAPTERS, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import measure_pages  # noqa: E402  (scripts/ is not a package)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]

# Chapters still over the goal, with the most screens each may take until it is split into sub-pages
# (measured at 1400x900 on this branch's build; the test fails when one grows, and when one meets the
# goal, so that it leaves this list).
# Performance grew from 31 to 35 with the independent read's fixes (load-check and matmul-library tables);
# training regimes from 24.9 to 27.6 with the controls two reads asked for (100x-lr runs, fused AdamW, step agreement).
OVER_GOAL = {"fp8": 47, "quantization": 44, "gradscaler": 38, "formats": 34, "performance": 35, "training_regimes": 28}

DESKTOP = measure_pages.VIEWPORTS["1400x900"]


@pytest.fixture(scope="module")
def served(site):
    with measure_pages.serve(site) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=measure_pages.ARGS)
        yield b
        b.close()


def test_no_chapter_is_longer_than_25_screens_on_a_desktop(served, browser):
    too_long, met = {}, []
    for chapter in CHAPTERS:
        n = measure_pages.screens(browser, f"{served}chapters/{chapter.stem}/", *DESKTOP)
        limit = OVER_GOAL.get(chapter.stem, measure_pages.MAX_SCREENS)
        if n > limit:
            too_long[chapter.stem] = f"{n:.1f} screens (limit {limit})"
        elif chapter.stem in OVER_GOAL and n <= measure_pages.MAX_SCREENS:
            met.append(chapter.stem)
    assert not too_long, f"chapters longer than allowed at 1400x900: {too_long}"
    assert not met, (
        f"these chapters meet the {measure_pages.MAX_SCREENS}-screen goal now: remove them from OVER_GOAL: {met}"
    )


FIRST_SCREEN = """() => {
    const top = (el) => el ? el.getBoundingClientRect().top + window.scrollY : null;
    const h2 = document.querySelector('.md-content h2');
    return {summary: top(document.querySelector('.md-content .amp-summary')),
            box: top(document.querySelector('.md-content figure.amp-in-this-build')),
            boxes: document.querySelectorAll('.md-content figure.amp-in-this-build').length,
            section: top(h2), screen: window.innerHeight};
}"""


def test_every_chapter_opens_with_its_summary_and_key_results(served, browser):
    context = browser.new_context(viewport={"width": DESKTOP[0], "height": DESKTOP[1]})
    page = context.new_page()
    faults = []
    for chapter in CHAPTERS:
        page.goto(f"{served}chapters/{chapter.stem}/", wait_until="networkidle")
        at = page.evaluate(FIRST_SCREEN)
        if at["summary"] is None or at["summary"] > at["screen"]:
            faults.append(f"{chapter.stem}: the summary is not on the first screen ({at})")
        if at["boxes"] != 1 or not (at["summary"] or 0) < at["box"] < (at["section"] or float("inf")):
            faults.append(
                f"{chapter.stem}: not one 'In this build' box between the summary and the first section ({at})"
            )
    page.goto(served, wait_until="networkidle")
    home = page.evaluate("""() => [...document.querySelectorAll('.md-content figure.amp-in-this-build')]
        .map(f => ({top: f.getBoundingClientRect().top, link: !!f.querySelector('figcaption a'),
                    items: f.querySelectorAll('li').length}))""")
    if not home or home[0]["top"] > DESKTOP[1] or not all(b["link"] and b["items"] for b in home):
        faults.append(f"home: the first screen does not show a chapter's key results, linked ({home})")
    context.close()
    assert not faults, "\n".join(faults)
