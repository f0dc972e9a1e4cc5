"""Reader review 2026-11-24, finding 2 on a phone: at 390x844 most tables are wider than the column;
each one that scrolls says so where a reader looks (a fade on the side with more, and a line under
the table, from assets/js/reader.js), and the fade goes once the reader has scrolled to its end.

The decisive columns at 1400 px are checked by ``tests/test_polish_browser.py``
(``test_the_column_the_prose_names_is_in_view_without_scrolling``). ``AMP_DOCS_TEST_SITE=site`` runs
these against an existing build.
"""

from __future__ import annotations

import pytest
from browser_visits import CHROMIUM, TOUCH_PHONE, measure_pages, step

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]


# Every laid-out table of the page wider than its scroll box: whether the box fades on the right, and
# the line under it is there, visible and on the screen; then the same after scrolling the box to its end.
SCROLL_CUES = """async () => {
    const fades = (box) => (getComputedStyle(box).maskImage || getComputedStyle(box).webkitMaskImage || 'none') !== 'none';
    const out = [];
    for (const t of document.querySelectorAll('.md-content__inner table')) {
        const box = t.closest('.amp-table-scroll');
        if (!box || !t.getBoundingClientRect().width || t.closest('details:not([open])')) continue;
        if (box.scrollWidth <= box.clientWidth + 1) continue;
        const fig = t.closest('figure'), cap = fig && fig.querySelector('figcaption');
        const hint = box.nextElementSibling, r = hint ? hint.getBoundingClientRect() : null;
        const entry = {name: (cap ? cap.textContent : t.querySelector('th').textContent).trim().slice(0, 60),
                       fade: fades(box),
                       hint: !!hint && hint.classList.contains('amp-scroll-hint') && r.width > 0 && r.height > 0
                             && r.right <= window.innerWidth + 1 && hint.textContent.includes('scroll sideways')};
        box.scrollLeft = box.scrollWidth;
        await new Promise(requestAnimationFrame);
        await new Promise(requestAnimationFrame);
        entry.fadeAtEnd = fades(box);
        box.scrollLeft = 0;
        out.push(entry);
    }
    return out;
}"""


@step("scroll_cues", screens=(TOUCH_PHONE,), test="test_every_table_that_scrolls_on_a_phone_says_so")
def _scroll_cues(page, path, screen, visits) -> list[dict]:
    return page.evaluate(SCROLL_CUES)


def test_every_table_that_scrolls_on_a_phone_says_so(site, visits):
    faults, scrolling = [], 0
    for path in [p for p in measure_pages.page_paths(site) if p] + ["rebuild/"]:
        for t in visits.result(path, TOUCH_PHONE, "scroll_cues"):
            scrolling += 1
            if not (t["fade"] and t["hint"]):
                faults.append(f"{path} {t['name']!r}: scrolls sideways, fade {t['fade']}, line under it {t['hint']}")
            if t["fadeAtEnd"]:
                faults.append(f"{path} {t['name']!r}: still fades with nothing left to scroll to")
    assert scrolling, "no table scrolls at 390 px: the check checked nothing"
    assert not faults, "\n".join(faults)
