"""Load every page of the built site in headless Chromium and check what a reader sees.

For every page, in both palettes, at 1400x900 and at 390x844: no table wider than the column
outside its own scroll container, no image shown at less than 1/2.2 of its pixels, as many
lightbox slides as visible figures, exactly one copy button per code block, no sideways page
scroll, no measurement stamp repeated (the page's provenance card says it once); no console
errors, no failed requests, no request to another host, every image loaded, math typeset where
the source has math (rendered by the build: KaTeX markup, no math engine loaded). A failure names the page, the
screen, the palette and the element. For every chapter: a screenshot in each palette. Also: search
finds "GradScaler" and leads to its page, figures open in the lightbox, and the Formats page's
format explorer agrees with ``amp_docs_lib.numbers.formats.decode``.

Needs Playwright (PyPI) and a system Chromium (Debian: `apt-get install chromium`); skipped,
with the reason, where either is missing (CI installs Chromium, see `.ci/run`). The static
checks (test_site.py, test_links.py) run everywhere. Screenshots go to pytest's temporary
folder (printed), or to ``$AMP_DOCS_SCREENSHOTS`` if set.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from browser_visits import (
    CHROMIUM,
    DESKTOP,
    INTERACT,
    LAST,
    PHONE,
    TOUCH_PHONE,
    Recorder,
    dark_palette,
    load_all_images,
    measure_pages,
    step,
)
from conftest import CHAPTERS

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [pytest.mark.browser, pytest.mark.site,
              pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)")]

_MATH = re.compile(r"(?<![\\$])\$[^$\n]+\$")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def page_paths(site: Path) -> list[str]:
    """URL paths of every page of the built site (discovered, not listed)."""
    out = []
    for p in sorted(site.rglob("index.html")):
        rel = p.parent.relative_to(site).as_posix()
        out.append("" if rel == "." else rel + "/")
    return out


def chapter_has_math(path: str) -> bool:
    src = [c for c in CHAPTERS if path == f"chapters/{c.stem}/"]
    return bool(src) and bool(_MATH.search(_FENCE.sub("", src[0].read_text(encoding="utf-8"))))


# A lazily loaded image that is not displayed (the other palette's rendering) is not fetched.
IMAGES_BROKEN = """() => [...document.images].filter(i => getComputedStyle(i).display !== 'none')
                                          .filter(i => !(i.complete && i.naturalWidth > 0))
                                          .map(i => i.src.slice(0, 80))"""
CODE_WITHOUT_COPY = """() => [...document.querySelectorAll('.md-content pre > code')]
    .filter(c => !c.closest('pre').querySelector('button[data-md-type="copy"]')).length"""
FIGURES = """() => [...document.querySelectorAll('img.amp-fig--light, img.amp-fig--dark')].map(i => ({
    kind: i.classList.contains('amp-fig--dark') ? 'dark' : 'light',
    shown: getComputedStyle(i).display !== 'none' && i.getBoundingClientRect().width > 0,
    width: i.getBoundingClientRect().width, loaded: i.complete && i.naturalWidth > 0}))"""


SCREEN_NAMES = {DESKTOP: "desktop", PHONE: "mobile"}
MAX_DOWNSCALE = 2.2  # natural / displayed image width: more and the figure's text is too small to read

# What a reader sees, checked in the page: each entry names the element it faults.
READER_FAULTS = """(mobile) => {
    const faults = [];
    const name = (el) => {
        const fig = el.closest('figure');
        const cap = fig && fig.querySelector('figcaption');
        if (cap) return JSON.stringify(cap.textContent.trim().slice(0, 60));
        const th = el.querySelector && el.querySelector('th');
        return el.tagName.toLowerCase() + (th ? ' headed ' + JSON.stringify(th.textContent.trim().slice(0, 30)) : '')
            + (el.id ? '#' + el.id : '');
    };
    const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const article = document.querySelector('.md-content__inner');
    const column = article.getBoundingClientRect();
    // Material's own table wrapper reaches into the article's side padding: the content box is the bound.
    const content = document.querySelector('.md-content').getBoundingClientRect();
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    for (const t of article.querySelectorAll('table')) {
        if (!visible(t) || t.closest('details:not([open])')) continue;
        let box = t.parentElement, contained = false;
        for (; box && box !== article; box = box.parentElement) if (scrolls(box)) { contained = true; break; }
        const w = t.getBoundingClientRect().width;
        if (contained) {
            const b = box.getBoundingClientRect();
            if (b.right > content.right + 1 || b.left < content.left - 1) faults.push(`scroll container of table ${name(t)} is ${Math.round(b.width)} px wide, wider than the ${Math.round(column.width)} px column`);
            // A table that still scrolls says so (a fade and a line under it, assets/js/reader.js).
            if (box.scrollWidth > box.clientWidth + 1 && !(box.classList.contains('amp-overflowing')
                    && box.nextElementSibling && box.nextElementSibling.classList.contains('amp-scroll-hint')))
                faults.push(`table ${name(t)} scrolls sideways with no cue that it does`);
        } else if (w > column.width + 1) {
            faults.push(`table ${name(t)} is ${Math.round(w)} px wide in a ${Math.round(column.width)} px column, outside a scroll container`);
        }
    }
    for (const i of article.querySelectorAll('img')) {
        if (!visible(i) || !i.complete || !i.naturalWidth) continue;
        const shown = i.getBoundingClientRect();
        const ratio = i.naturalWidth / shown.width;
        if (shown.right > column.right + 1) faults.push(`image ${name(i)} is cut: ${Math.round(shown.width)} px wide in a ${Math.round(column.width)} px column`);
        // On a phone a figure fits the column and opens full-size in the lightbox on a tap.
        if (mobile && i.closest('a.amp-lightbox')) continue;
        if (ratio > MAX_DOWNSCALE + 1e-6) faults.push(`image ${name(i)} is shown at ${Math.round(i.getBoundingClientRect().width)} px, 1/${ratio.toFixed(2)} of its ${i.naturalWidth} px`);
    }
    // Every highlighted block (notebook input, listing, diff, Markdown code) has its copy button.
    for (const pre of article.querySelectorAll('.highlight-ipynb > pre, .highlight > pre'))
        if (!pre.querySelector('button[data-md-type="copy"]')) faults.push(`code block starting ${JSON.stringify(pre.textContent.trim().slice(0, 40))} has no copy button`);
    for (const c of article.querySelectorAll('pre > code')) {
        const n = c.closest('pre').parentElement.querySelectorAll('button[data-md-type="copy"], .md-clipboard, clipboard-copy').length;
        if (n !== 1) faults.push(`code block starting ${JSON.stringify(c.textContent.trim().slice(0, 40))} has ${n} copy buttons`);
    }
    if (document.querySelector('clipboard-copy, .zeroclipboard-container')) faults.push('a second (notebook) copy button is on the page');
    for (const tag of article.querySelectorAll('.celltoolbar, .cell-tag')) if (visible(tag)) faults.push(`a cell tag is printed: ${JSON.stringify(tag.textContent.trim())}`);
    const stamps = {};
    for (const s of article.querySelectorAll('.amp-stamp--measured')) stamps[s.textContent.trim()] = (stamps[s.textContent.trim()] || 0) + 1;
    for (const [text, n] of Object.entries(stamps)) if (n > 1) faults.push(`the stamp ${JSON.stringify(text.slice(0, 80))} is repeated ${n} times (it belongs in the page's provenance card)`);
    if (document.querySelectorAll('.amp-provenance').length > 1) faults.push('more than one provenance card');
    return faults;
}""".replace("MAX_DOWNSCALE", str(MAX_DOWNSCALE))
SCROLL_WIDTH = "() => ({page: document.documentElement.scrollWidth, view: window.innerWidth})"
VISIBLE_FIGURES = """() => [...document.querySelectorAll('.md-content img.amp-fig')]
    .filter(i => getComputedStyle(i).display !== 'none').length"""


def lightbox_slides(page) -> int | None:
    """How many slides the lightbox holds when opened on the first visible figure (None: no figure)."""
    first = page.locator("a.amp-lightbox img.amp-fig:visible").first
    if not first.count():
        return None
    first.scroll_into_view_if_needed()
    first.click()
    page.locator(".glightbox-container .gslide").first.wait_for(state="attached", timeout=10_000)
    n = page.locator(".glightbox-container .gslide").count()
    page.keyboard.press("Escape")
    page.wait_for_selector(".glightbox-container", state="detached", timeout=10_000)
    return n


def reader_faults(page, label: str) -> list[str]:
    mobile = page.viewport_size["width"] < 600
    found = [f"{label}: {f}" for f in page.evaluate(READER_FAULTS, mobile)]
    w = page.evaluate(SCROLL_WIDTH)
    if w["page"] > w["view"]:
        found.append(f"{label}: the page scrolls sideways ({w['page']} px wide in a {w['view']} px window)")
    return found


def _palette_faults(page, path: str, screen: str, palette: str, screenshots) -> list[str]:
    """Issue 19's checks of the page in one palette, as shown at ``screen``."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    label = f"{width}x{height} {palette}"
    found = reader_faults(page, label)
    figs = page.evaluate(FIGURES)
    wrong = "dark" if palette == "light" else "light"
    if any(f["shown"] for f in figs if f["kind"] == wrong) or not all(
            f["shown"] and f["loaded"] and f["width"] > 100 for f in figs if f["kind"] == palette):
        found.append(f"{label}: the palette shows the wrong figure renderings: {figs}")
    if screen == DESKTOP:
        slides, shown = lightbox_slides(page), page.evaluate(VISIBLE_FIGURES)
        if slides is not None and slides != shown:
            found.append(f"{label}: the lightbox holds {slides} slides for {shown} figures")
        if path in {f"chapters/{c.stem}/" for c in CHAPTERS}:
            name = path.split("/")[1]
            try:
                page.screenshot(path=str(screenshots / f"{name}-{palette}.png"), timeout=90_000)
            except playwright.TimeoutError:
                found.append(f"{label}: the screenshot timed out")
    return found


@step("clean_light", screens=(DESKTOP, PHONE), test="test_every_page_is_clean_in_the_browser", round=INTERACT)
def _clean_light(page, path, screen, visits) -> list[str]:
    found = [f"{SCREEN_NAMES[screen]}: image did not load: {u}" for u in page.evaluate(IMAGES_BROKEN)]
    if chapter_has_math(path) and page.locator(".katex .katex-html").count() == 0:
        found.append("the chapter's source has $math$ but the page has no rendered math")
    if page.evaluate("() => !!(window.MathJax || window.katex)"):
        found.append("a math engine is loaded (math is rendered by the build)")
    if page.locator(".md-content pre code code").count():
        found.append("a code block is wrapped in <code> twice")
    return found + _palette_faults(page, path, screen, "light", visits.screenshots)


@step("clean_dark", screens=(DESKTOP, PHONE), test="test_every_page_is_clean_in_the_browser", round=LAST)
def _clean_dark(page, path, screen, visits) -> list[str]:
    dark_palette(page)
    load_all_images(page)  # the dark renderings load (lazily) once they are shown
    return _palette_faults(page, path, screen, "dark", visits.screenshots)


def test_every_page_is_clean_in_the_browser(site, visits, screenshots):
    """Every page, in both palettes, on a desktop and a phone screen: the checks of issue 19
    (tables fit or scroll in their own box, figures not shrunk past legibility, one lightbox slide
    per figure, one copy button per code block, no sideways page scroll, one provenance card) and
    the basics (no console errors, nothing from another host, images load, math typeset)."""
    paths = page_paths(site)
    chapters = {f"chapters/{c.stem}/" for c in CHAPTERS}
    assert chapters <= set(paths), f"chapter pages missing from the site: {chapters - set(paths)}"
    # $AMP_DOCS_TEST_PAGES (comma-separated URL paths, "" for the home page): check only those.
    only = os.environ.get("AMP_DOCS_TEST_PAGES")
    if only is not None:
        paths = [p for p in paths if p in only.split(",")]
        chapters &= set(paths)
    problems: dict[str, list[str]] = {}
    for path in paths:
        found: list[str] = []
        for screen, name in SCREEN_NAMES.items():
            found += visits.result(path, screen, "clean_light") + visits.result(path, screen, "clean_dark")
            found += [f"{name}: {p}" for p in visits.problems(path, screen)]
        if found:
            problems[path or "index"] = sorted(set(found))
    assert not problems, json.dumps(problems, indent=1)[:6000]
    shots = sorted(p.name for p in screenshots.glob("*.png"))
    assert len(shots) == 2 * len(chapters), shots


def test_search_finds_gradscaler_and_leads_to_its_page(served, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    rec = Recorder(page, served)
    page.goto(served, wait_until="networkidle")
    link = page.locator(".md-search-result__item a[href*='chapters/gradscaler/']").first
    for _ in range(10):  # a query typed before the search worker has loaded its index is dropped
        page.fill("input.md-search__input", "")
        page.locator("input.md-search__input").press_sequentially("GradScaler")
        try:
            link.wait_for(timeout=3_000)
            break
        except playwright.TimeoutError:
            continue
    link.click()
    page.wait_for_url(re.compile(r".*/chapters/gradscaler/.*"))
    assert "GradScaler" in page.title() or page.locator("h1", has_text="GradScaler").count()
    context.close()
    assert not rec.problems, rec.problems


def test_figures_open_full_size_in_the_lightbox(site, served, browser):
    chapter = next(
        (p for p in measure_pages.page_paths(site)[1:] if "amp-fig--light" in (site / p / "index.html").read_text()),
        None,
    )
    if chapter is None:
        pytest.skip("no chapter page shows a figure")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    rec = Recorder(page, served)
    page.goto(served + chapter, wait_until="networkidle")
    fig = page.locator("a.glightbox img.amp-fig--light").first
    fig.scroll_into_view_if_needed()
    fig.click()
    big = page.locator(".glightbox-container .gslide-image img").first
    big.wait_for(state="visible", timeout=10_000)
    assert big.evaluate("i => i.complete && i.naturalWidth > 0")
    assert big.evaluate("i => i.src") == fig.evaluate("i => i.src"), "the lightbox opened another image"
    page.keyboard.press("Escape")
    page.wait_for_selector(".glightbox-container", state="detached", timeout=10_000)
    # In the dark palette it opens the dark rendering of the same figure.
    dark_palette(page)
    dark = page.locator("a.glightbox img.amp-fig--dark").first
    dark.click()
    big = page.locator(".glightbox-container .gslide-image img").first
    big.wait_for(state="visible", timeout=10_000)
    assert big.evaluate("i => i.src") == dark.evaluate("i => i.src"), "the dark palette's lightbox shows the light figure"
    context.close()
    assert not rec.problems, rec.problems


def test_format_explorer_agrees_with_the_library(served, browser):
    from format_cases import explorer_cases

    cases = explorer_cases()
    context = browser.new_context()
    page = context.new_page()
    rec = Recorder(page, served)
    page.goto(served + "chapters/formats/", wait_until="networkidle")
    page.wait_for_function("() => window.AmpFormatExplorer && document.querySelector('.amp-fx-table tbody tr td')")
    bad = page.evaluate("""(cases) => {
        const X = window.AmpFormatExplorer, bad = [];
        const num = (s) => s === "nan" ? NaN : s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s);
        const same = (a, b) => Number.isNaN(b) ? Number.isNaN(a) : Object.is(a, b);
        for (const c of cases) {
            const bits = X.encode(num(c.input), c.format), d = X.decode(c.bits, c.format);
            const up = c.above === null ? null : X.neighbours(c.bits, c.format).above;
            if (bits !== c.bits || d.cls !== c.cls || !same(d.value, num(c.value))
                || (c.above !== null && !same(up, num(c.above))))
                bad.push({...c, js_bits: bits, js_cls: d.cls, js_value: String(d.value), js_above: String(up)});
        }
        return bad;
    }""", cases)
    assert len(cases) > 1000
    assert not bad, f"{len(bad)} of {len(cases)} disagree, e.g. {bad[:5]}"

    # The widget itself: type a number, read a row; flip a bit, read the new value.
    row = lambda fmt: page.locator(f".amp-fx-table tr[data-format='{fmt}'] td")  # noqa: E731
    page.fill(".amp-fx-input", "1000")
    # Columns: format, stored value, rounding error, relative error, bits, hex, class, neighbours.
    from amp_docs_lib.numbers.formats import cast_rules
    saturates = cast_rules(["FP8 E4M3FN"])["FP8 E4M3FN"]["overflow"] == "saturate"  # torch-version dependent
    assert row("FP8 E4M3FN").nth(5).inner_text() == ("0x7E" if saturates else "0x7F")
    assert row("FP8 E4M3FN").nth(1).inner_text() == ("448" if saturates else "NaN")
    fnuz_nan = cast_rules(["FP8 E4M3FNUZ"])["FP8 E4M3FNUZ"]["overflow"] == "nan"
    assert row("FP8 E4M3FNUZ").nth(5).inner_text() == ("0x80" if fnuz_nan else "0x7F")  # FNUZ: its one NaN
    assert row("FP8 E5M2").nth(1).inner_text() == "1024"
    assert row("FP16").nth(2).inner_text() == "0"                 # 1000 is exact in FP16
    page.fill(".amp-fx-input", "0.1")
    assert row("FP16").nth(2).inner_text() == "-2.441e-5"         # an error reads as 4 digits, not a raw double
    page.fill(".amp-fx-input", "1")
    row("FP16").nth(4).locator("button").first.click()            # the sign bit
    assert row("FP16").nth(1).inner_text() == "-1"
    assert row("FP16").nth(5).inner_text() == "0xBC00"
    # The bit colours are the bit-layout figure's (one palette, amp_docs_lib.core.palette).
    from amp_docs_lib.core.palette import BIT_FIELD_COLORS
    css = page.evaluate("""() => ['s', 'e', 'm'].map(k => getComputedStyle(
        document.querySelector('.amp-fx-bit--' + k)).color)""")
    def rgb(hex_):
        return "rgb({}, {}, {})".format(*(int(hex_[i:i + 2], 16) for i in (1, 3, 5)))
    assert css == [rgb(BIT_FIELD_COLORS[k]) for k in ("sign", "exponent", "mantissa")]
    context.close()
    assert not rec.problems, rec.problems


def test_search_ranks_the_chapter_above_the_api_reference(served, browser):
    """A format name leads to the chapter that explains it, not to the API reference (whose pages
    carry a lower search boost)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served, wait_until="networkidle")
    first = page.locator(".md-search-result__item a").first
    for _ in range(10):  # a query typed before the search worker has loaded its index is dropped
        page.fill("input.md-search__input", "")
        page.locator("input.md-search__input").press_sequentially("E4M3")
        try:
            first.wait_for(timeout=3_000)
            break
        except playwright.TimeoutError:
            continue
    href = first.get_attribute("href")
    context.close()
    assert "chapters/" in href and "api/" not in href, f"first hit for E4M3: {href}"


def test_search_does_not_index_copy_button_labels(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    labelled = [d["location"] for d in index["docs"] if "Copied!" in d.get("text", "")]
    assert not labelled, f'the copy-button label "Copied!" is indexed in {labelled[:5]}'


# Every copy button of a page, checked against the block it sits on: Material's button copies the
# element its data-clipboard-target names, so that element must be this block's <code>.
COPY_TARGETS = """() => [...document.querySelectorAll('.md-content pre button[data-md-type="copy"]')].map(b => {
    const pre = b.closest('pre'), code = pre.querySelector(':scope > code');
    const target = document.querySelector(b.getAttribute('data-clipboard-target'));
    return {block: code ? code.textContent.trim().slice(0, 60) : null,
            same: !!target && target === code,
            target: target ? target.textContent.trim().slice(0, 60) : null};
})"""
DUPLICATE_IDS = """() => { const seen = {}, dup = new Set();
    for (const el of document.querySelectorAll('[id]')) { if (seen[el.id]) dup.add(el.id); seen[el.id] = 1; }
    return [...dup]; }"""


@step("copy", screens=(DESKTOP,), test="test_every_copy_button_copies_the_block_it_sits_on", round=INTERACT)
def _copy_buttons(page, path, screen, visits) -> tuple[list[str], int]:
    """The page's faults and how many copy buttons it has."""
    # Material mounts its buttons after load: wait until every pre > code has one.
    page.wait_for_function("""() => [...document.querySelectorAll('.md-content pre > code')]
        .every(c => c.closest('pre').querySelector('button[data-md-type="copy"]'))""", timeout=30_000)
    found = [f"id {i!r} is used twice" for i in page.evaluate(DUPLICATE_IDS)]
    buttons = page.evaluate(COPY_TARGETS)
    found += [f"the copy button of the block starting {b['block']!r} copies {b['target']!r}"
              for b in buttons if not b["same"]]
    if path.startswith("chapters/") and not buttons:
        found.append("a chapter page without a single copy button")
    if path.startswith("chapters/"):
        found += clicked_copies(page)
    return found, len(buttons)


# The i-th copy button scrolled to the middle of the window: where a real click lands on it, and its
# block's text; null where it is hidden (a closed fold, an unselected tab: its target was checked above).
COPY_BUTTON_AT = """i => {
    const b = document.querySelectorAll('.md-content pre button[data-md-type="copy"]')[i];
    if (!b.getClientRects().length || !b.closest('pre').checkVisibility()) return null;
    b.scrollIntoView({block: "center", behavior: "instant"});
    const r = b.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    return {x, y, hit: !!hit && b.contains(hit), text: b.closest('pre').querySelector(':scope > code').innerText};
}"""


def clicked_copies(page) -> list[str]:
    """Each visible copy button clicked with the mouse (a real click, where nothing covers it), the
    clipboard read back and compared with its block's text. Three calls per button: Playwright's own
    hover and click (each waiting for the button to be stable) took most of the browser tests' time."""
    found = []
    buttons = page.locator(".md-content pre button[data-md-type='copy']")
    for i in range(buttons.count()):
        at = page.evaluate(COPY_BUTTON_AT, i)
        if at is None:
            continue
        if at["hit"]:
            page.mouse.click(at["x"], at["y"])
        else:  # covered (a sticky header, a toast): Playwright's click waits until it can reach it
            buttons.nth(i).click()
        copied = page.evaluate("() => navigator.clipboard.readText()")
        if copied.rstrip() != at["text"].rstrip():
            found.append(f"clicking the copy button of the block starting {at['text'].strip()[:60]!r} "
                         f"copied {copied.strip()[:60]!r}")
    return found


def test_every_copy_button_copies_the_block_it_sits_on(site, visits):
    """Each copy button's target is its own block on every page (ids unique per page), and on
    each chapter the clipboard, read back after a real click, holds exactly the block's text for
    every visible block (issue 36: 30 buttons copied the one-line cell above a listing)."""
    paths = page_paths(site)
    only = os.environ.get("AMP_DOCS_TEST_PAGES")
    if only is not None:
        paths = [p for p in paths if p in only.split(",")]
    problems: dict[str, list[str]] = {}
    checked = 0
    for path in paths:
        found, buttons = visits.result(path, DESKTOP, "copy")
        checked += buttons
        if found:
            problems[path or "index"] = found
    assert checked > 0, "no copy button found"
    assert not problems, json.dumps(problems, indent=1)[:6000]


def test_search_indexes_prose_and_headings_not_table_cells(site):
    """Finding 8: table cells were indexed run together ("formatbits (s e m)hex..."), 159 section
    titles ended in the permalink's pilcrow, and dotted API names were one word."""
    from bs4 import BeautifulSoup

    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert not [d["title"] for d in index["docs"] if "¶" in d["title"]]
    text = "\n".join(d.get("text", "") for d in index["docs"])
    runs = []
    for page in sorted((site / "chapters").rglob("index.html")):  # a split chapter's sub-pages too
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for row in soup.select("table.amp-table thead tr"):
            run = "".join(th.get_text() for th in row.find_all("th"))
            if len(row.find_all("th")) >= 3 and run not in "".join(p.get_text() for p in soup.select("p")):
                runs.append((page.parent.name, run))
    assert runs, "no table header found to check"
    indexed = [r for r in runs if r[1] in text]
    assert not indexed, f"{len(indexed)} of {len(runs)} table header rows are in the search index, e.g. {indexed[:3]}"
    separator = re.compile(index["config"]["separator"])
    assert "set_float32_matmul_precision" in separator.split("torch.set_float32_matmul_precision(x)")


# Every figure of a page as displayed: its box, the text column's, the width it was drawn for (the
# width attribute, page/figures.py), and whether a box around it scrolls (a cut figure).
FIGURE_BOXES = """() => { const col = document.querySelector('.md-content__inner').getBoundingClientRect();
    return [...document.querySelectorAll('.md-content img.amp-fig')].filter(i => getComputedStyle(i).display !== 'none')
    .map(i => { const r = i.getBoundingClientRect(), box = i.closest('.amp-figure-scroll');
        return {alt: i.alt.slice(0, 50), left: r.left, right: r.right, width: r.width, height: r.height,
                drawn: Number(i.getAttribute('width')), natural: i.naturalWidth, naturalHeight: i.naturalHeight, colLeft: col.left, colRight: col.right,
                scrolls: !!box && box.scrollWidth > box.clientWidth + 1}; }); }"""


def _figure_chapters(site) -> list[str]:
    """The chapter pages (sub-pages too) that show a figure."""
    return [p for p in measure_pages.page_paths(site)[1:]
            if "amp-fig--light" in (site / p / "index.html").read_text(encoding="utf-8")]


@step("figure_boxes", screens=(DESKTOP,), test="test_figures_are_shown_at_the_size_they_were_drawn_for_on_a_desktop")
def _figure_boxes(page, path, screen, visits) -> list[dict]:
    return page.evaluate(FIGURE_BOXES)


def test_figures_are_shown_at_the_size_they_were_drawn_for_on_a_desktop(site, visits):
    """At 1400 px a figure is shown at the width it was drawn for (COLUMN_PX or less), so the text
    sizes show_figure checks (at least 10 px, page/figures.py layout_faults) are the sizes a reader sees."""
    problems = []
    chapters = _figure_chapters(site)
    assert chapters, "no chapter with a figure"
    for path in chapters:
        for f in visits.result(path, DESKTOP, "figure_boxes"):
            if abs(f["width"] - f["drawn"]) > 1 or f["scrolls"]:
                problems.append(f"{path} {f['alt']!r}: shown {f['width']:.0f} px wide, drawn for {f['drawn']} px")
    assert not problems, problems[:10]


@step("phone_figures", screens=(TOUCH_PHONE,), test="test_figures_fit_a_phone_and_open_full_size_on_a_tap", round=INTERACT)
def _phone_figures(page, path, screen, visits) -> list[str] | None:
    """The figures' faults on a phone, and the lightbox's on a tap on the first (None: no figure to tap)."""
    fig = page.locator("a.amp-lightbox img.amp-fig:visible").first
    if not path.startswith("chapters/") or not fig.count():
        return None
    problems = []
    figures = page.evaluate(FIGURE_BOXES)
    for f in figures:
        if f["left"] < f["colLeft"] - 1 or f["right"] > f["colRight"] + 1 or f["scrolls"]:
            problems.append(f"{path} {f['alt']!r}: {f['left']:.0f}..{f['right']:.0f} px in a column "
                            f"{f['colLeft']:.0f}..{f['colRight']:.0f} px{' (its box scrolls)' if f['scrolls'] else ''}")
        elif not (f["height"] and f["naturalHeight"]):
            problems.append(f"{path} {f['alt']!r}: not loaded (shown {f['height']:.0f} px high)")
        elif abs(f["width"] / f["height"] / (f["natural"] / f["naturalHeight"]) - 1) > 0.02:
            problems.append(f"{path} {f['alt']!r}: scaled out of proportion")
    fig.scroll_into_view_if_needed()
    inline = fig.evaluate("i => ({src: i.src, width: i.getBoundingClientRect().width})")
    fig.tap()
    big = page.locator(".glightbox-container .gslide-image img").first
    # The first tap also loads GLightbox (reader.js): generous waits, since a loaded CI machine is slow.
    big.wait_for(state="visible", timeout=30_000)
    page.wait_for_function("() => { const i = document.querySelector('.glightbox-container .gslide-image img');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30_000)
    # The lightbox zooms in from a small box: read the image once its opening animation is over.
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')", timeout=30_000)
    shown = big.evaluate("i => ({src: i.src, width: i.getBoundingClientRect().width, loaded: i.complete && i.naturalWidth > 0})")
    if shown["src"] != inline["src"] or not shown["loaded"]:
        problems.append(f"{path}: a tap on a figure opened another image")
    elif shown["width"] < inline["width"] - 1:
        problems.append(f"{path}: the lightbox shows the figure {shown['width']:.0f} px wide, "
                        f"smaller than the page's {inline['width']:.0f} px")
    page.keyboard.press("Escape")
    page.wait_for_selector(".glightbox-container", state="detached", timeout=30_000)
    return problems


def test_figures_fit_a_phone_and_open_full_size_on_a_tap(site, visits):
    """Reader finding 3: at 390 px every figure showed its left half in a box that scrolled with no cue.
    Now each figure is scaled down to the column (never cropped, never scrolling) and a tap on it opens
    the same image in the lightbox, larger than in the page."""
    problems = []
    chapters = _figure_chapters(site)
    assert chapters, "no chapter with a figure"
    for path in chapters:
        found = visits.result(path, TOUCH_PHONE, "phone_figures")
        problems += [f"{path}: no figure in a lightbox to tap"] if found is None else found
    assert not problems, problems[:10]
