"""Load every page of the built site in headless Chromium and check what a reader sees.

For every page: no console errors, no failed requests, no request to another host, every image
loaded, math typeset where the source has math, a copy button on every code block. For every
chapter: a screenshot in each palette, figures shown in the palette's rendering. Also: search
finds "GradScaler" and leads to its page, figures open in the lightbox, and the Formats page's
format explorer agrees with ``amp_docs_lib.numbers.formats.decode``.

Needs Playwright (PyPI) and a system Chromium (Debian: `apt-get install chromium`); skipped,
with the reason, where either is missing (CI installs Chromium, see `.ci/run`). The static
checks (test_site.py, test_links.py) run everywhere. Screenshots go to pytest's temporary
folder (printed), or to ``$AMP_DOCS_SCREENSHOTS`` if set.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest


from conftest import CHAPTERS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [pytest.mark.browser, pytest.mark.site,
              pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)")]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
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


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    out = Path(os.environ.get("AMP_DOCS_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {out}")
    return out


class Recorder:
    """Console errors, page errors, failed requests and foreign requests of one page."""

    def __init__(self, page, base: str):
        self.base, self.problems = base, []
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url} ({r.failure})"))
        page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))
        page.on("request", self._request)

    def _request(self, r):
        if not (r.url.startswith(self.base) or r.url.startswith(("data:", "blob:", "about:"))):
            self.problems.append(f"request to another host: {r.url}")


def wait_for_math(page) -> None:
    if page.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
        page.evaluate("() => MathJax.startup.promise")


IMAGES_BROKEN = """() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
                                          .map(i => i.src.slice(0, 80))"""
CODE_WITHOUT_COPY = """() => [...document.querySelectorAll('.md-content pre > code')]
    .filter(c => !c.closest('pre').querySelector('button[data-md-type="copy"]')).length"""
FIGURES = """() => [...document.querySelectorAll('img.amp-fig--light, img.amp-fig--dark')].map(i => ({
    kind: i.classList.contains('amp-fig--dark') ? 'dark' : 'light',
    shown: getComputedStyle(i).display !== 'none' && i.getBoundingClientRect().width > 0,
    width: i.getBoundingClientRect().width, loaded: i.complete && i.naturalWidth > 0}))"""


def dark_palette(page) -> None:
    page.click("label[for='__palette_1']")  # Material's toggle to the dark (slate) scheme
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")


def test_every_page_is_clean_in_the_browser(site, served, browser, screenshots):
    paths = page_paths(site)
    chapters = {f"chapters/{c.stem}/" for c in CHAPTERS}
    assert chapters <= set(paths), f"chapter pages missing from the site: {chapters - set(paths)}"
    problems: dict[str, list[str]] = {}
    for path in paths:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        rec = Recorder(page, served)
        page.goto(served + path, wait_until="networkidle")
        wait_for_math(page)
        found = list(rec.problems)
        broken = page.evaluate(IMAGES_BROKEN)
        found += [f"image did not load: {u}" for u in broken]
        n_math = page.locator("mjx-container").count()
        if chapter_has_math(path) and n_math == 0:
            found.append("the chapter's source has $math$ but nothing was typeset")
        if page.locator("mjx-merror, mjx-container [data-mjx-error]").count():
            found.append("MathJax reported a TeX error")
        missing_copy = page.evaluate(CODE_WITHOUT_COPY)
        if missing_copy:
            found.append(f"{missing_copy} code block(s) without a copy button")
        if page.locator(".md-content pre code code").count():
            found.append("a code block is wrapped in <code> twice")
        if path in chapters:
            name = path.split("/")[1]
            figs = page.evaluate(FIGURES)
            if any(f["shown"] for f in figs if f["kind"] == "dark") or not all(
                    f["shown"] and f["loaded"] and f["width"] > 100 for f in figs if f["kind"] == "light"):
                found.append(f"light palette shows the wrong figure renderings: {figs}")
            first = page.locator("img.amp-fig--light").first
            if figs:
                first.scroll_into_view_if_needed()
            page.screenshot(path=str(screenshots / f"{name}-light.png"))
            dark_palette(page)
            figs = page.evaluate(FIGURES)
            if any(f["shown"] for f in figs if f["kind"] == "light") or not all(
                    f["shown"] and f["loaded"] and f["width"] > 100 for f in figs if f["kind"] == "dark"):
                found.append(f"dark palette shows the wrong figure renderings: {figs}")
            page.screenshot(path=str(screenshots / f"{name}-dark.png"))
        found += rec.problems  # including anything after the palette toggle
        context.close()
        if found:
            problems[path or "index"] = sorted(set(found))
    assert not problems, json.dumps(problems, indent=1)[:4000]
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


def test_figures_open_full_size_in_the_lightbox(served, browser):
    chapter = next((f"chapters/{c.stem}/" for c in CHAPTERS if "show_figure" in c.read_text()), None)
    if chapter is None:
        pytest.skip("no chapter shows a figure")
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
    from amp_docs_lib.numbers.formats import cast_rules
    saturates = cast_rules(["FP8 E4M3FN"])["FP8 E4M3FN"]["overflow"] == "saturate"  # torch-version dependent
    assert row("FP8 E4M3FN").nth(2).inner_text() == ("0x7E" if saturates else "0x7F")
    assert row("FP8 E4M3FN").nth(4).inner_text() == ("448" if saturates else "NaN")
    fnuz_nan = cast_rules(["FP8 E4M3FNUZ"])["FP8 E4M3FNUZ"]["overflow"] == "nan"
    assert row("FP8 E4M3FNUZ").nth(2).inner_text() == ("0x80" if fnuz_nan else "0x7F")  # FNUZ: its one NaN
    assert row("FP8 E5M2").nth(4).inner_text() == "1024"
    assert row("FP16").nth(7).inner_text() == "0"                 # 1000 is exact in FP16
    page.fill(".amp-fx-input", "1")
    row("FP16").nth(1).locator("button").first.click()            # the sign bit
    assert row("FP16").nth(4).inner_text() == "-1"
    assert row("FP16").nth(2).inner_text() == "0xBC00"
    context.close()
    assert not rec.problems, rec.problems
