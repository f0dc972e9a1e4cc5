"""Checked sentences as a reader's browser shows them, on a phone (390x844, touch) and a desktop
(1400x900) (issue 36, reader review 2026-11-24 finding 5).

On every chapter: a claim between prose prints no verdict and has no box (it was a tinted box
ending in "checked in this build", one per sentence); its mark shows the verdict, inside the
window, when it is focused from the keyboard, tapped on a phone or hovered on a desktop, and hides it
again when focus leaves. A list of adjacent claims shows its verdict once, in its title, a mark per
line. Headless system Chromium through Playwright, as ``tests/test_browser.py``; skipped without them.
"""

from __future__ import annotations

import pytest
from browser_visits import CHROMIUM, DESKTOP, INTERACT, TOUCH_PHONE, measure_pages, step

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
# A claim outside a list of adjacent ones, that holds (a failing one is meant to be loud).
LONE = "article p.amp-claim:not(.amp-claims p):not(.amp-claim--fails)"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]

# What a reader sees of each claim: visible verdict text, box (background, border) and the tip's place.
LAYOUT = """() => {
    // (a closed <details> keeps its content laid out, unrendered: checkVisibility says so, a box does not)
    const seen = el => { const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && el.checkVisibility({visibilityProperty: true}); };
    const lone = [...document.querySelectorAll(%LONE%)].filter(seen).map(p => {
        const s = getComputedStyle(p);
        return {text: p.textContent.slice(0, 60), verdict_shown: seen(p.querySelector('.amp-claim-verdict')),
                boxed: s.backgroundColor !== 'rgba(0, 0, 0, 0)' || parseFloat(s.borderLeftWidth) > 0}; });
    const lists = [...document.querySelectorAll('article div.amp-claims')].filter(seen).map(d => ({
        titles: d.querySelectorAll('.amp-claims__title').length,
        lines: d.querySelectorAll('p.amp-claim').length,
        marks: [...d.querySelectorAll('p.amp-claim .amp-claim-mark')].filter(seen).length,
        verdicts: [...d.querySelectorAll('p.amp-claim .amp-claim-verdict')].filter(seen)
            .map(v => v.textContent) }));
    return {lone, lists};
}"""
VISIBLE_LONE = """() => [...document.querySelectorAll(%LONE%)]
    .map((p, i) => [p.checkVisibility({visibilityProperty: true}), i]).filter(([shown]) => shown).map(([, i]) => i)"""
TIP = """(i) => { const p = [...document.querySelectorAll(%LONE%)][i];
    const v = p.querySelector('.amp-claim-verdict'), r = v.getBoundingClientRect(), s = getComputedStyle(v);
    // what is drawn at the tip's centre is the tip: no ancestor clips it and nothing covers it
    const top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
    return {shown: r.width > 0 && v.checkVisibility({visibilityProperty: true}) && v.contains(top),
            text: v.textContent,
            inside: r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight,
            focused: document.activeElement === p.querySelector('.amp-claim-mark')}; }"""


LAYOUT, VISIBLE_LONE, TIP = (js.replace("%LONE%", repr(LONE)) for js in (LAYOUT, VISIBLE_LONE, TIP))


TEST = "test_claims_print_their_verdict_once_and_show_it_on_focus_tap_or_hover"


@step("claims", screens=(TOUCH_PHONE, DESKTOP), test=TEST, round=INTERACT)
def _claims(page, path, screen, visits) -> tuple[list[str], int, int]:
    """The chapter's faults, how many lone claims it shows and how many tips were tried."""
    phone = screen == TOUCH_PHONE
    faults, tips_seen = [], 0
    where = (
        f"{path.removeprefix('chapters/').strip('/')} at {page.viewport_size['width']}x{page.viewport_size['height']}"
    )
    seen = page.evaluate(LAYOUT)
    faults += [f"{where}: a lone claim prints its verdict: {c['text']!r}" for c in seen["lone"] if c["verdict_shown"]]
    faults += [f"{where}: a lone claim is a box: {c['text']!r}" for c in seen["lone"] if c["boxed"]]
    for d in seen["lists"]:
        if d["titles"] != 1 or d["marks"] != d["lines"] or "checked in this build" in d["verdicts"]:
            faults.append(f"{where}: a claim list does not say its verdict once with a mark per line: {d}")
    marks = page.locator(f"{LONE} .amp-claim-mark")
    shown = page.evaluate(VISIBLE_LONE)
    # The first and the last shown on the page: the tip must stay in the window wherever the claim is.
    for i in sorted({shown[0], shown[-1]} if shown else set()):
        mark = marks.nth(i)
        mark.scroll_into_view_if_needed()
        page.mouse.move(0, 0)  # no hover left over from the last claim
        mark.tap() if phone else mark.focus()
        tip = page.evaluate(TIP, i)
        if not (tip["shown"] and tip["inside"] and tip["focused"] and tip["text"]):
            faults.append(
                f"{where}: claim {i}'s verdict is not shown in the window on {'tap' if phone else 'focus'}: {tip}"
            )
        tips_seen += 1
        page.evaluate("() => document.activeElement.blur()")
        if page.evaluate(TIP, i)["shown"]:
            faults.append(f"{where}: claim {i}'s verdict stays shown after focus left it")
        if not phone:
            mark.hover()
            if not page.evaluate(TIP, i)["shown"]:
                faults.append(f"{where}: claim {i}'s verdict is not shown on hover")
    return faults, len(seen["lone"]), tips_seen


@pytest.mark.parametrize("screen", [TOUCH_PHONE, DESKTOP], ids=["390x844", "1400x900"])
def test_claims_print_their_verdict_once_and_show_it_on_focus_tap_or_hover(site, visits, screen):
    faults, lone_seen, tips_seen = [], 0, 0
    for path in [p for p in measure_pages.page_paths(site) if p]:  # every chapter page, sub-pages too
        found, lone, tips = visits.result(path, screen, "claims")
        faults += found
        lone_seen += lone
        tips_seen += tips
    assert lone_seen and tips_seen, "no claim between prose was found on any chapter"
    assert not faults, "\n".join(faults)
