"""Load the built site in headless Chromium and record every request it makes.

Needs Playwright (PyPI) and a system Chromium (Debian: `apt-get install chromium`);
skipped, with the reason, where either is missing. The static checks in
test_site.py run everywhere.
"""

import functools
import http.server
import shutil
import threading

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)")

PAGES = ["index.html", "chapters/formats/index.html", "chapters/autocast/index.html",
         "chapters/gradscaler/index.html"]


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


def test_pages_load_only_from_their_own_host_and_render_math(served, tmp_path):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        math_on_formats = 0
        for path in PAGES:
            page.goto(served + path, wait_until="networkidle")
            if "formats" in path:
                page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                page.evaluate("() => MathJax.startup.promise")
                math_on_formats = page.locator("mjx-container").count()
                page.screenshot(path=str(tmp_path / "formats.png"), full_page=False)
        browser.close()
    foreign = [u for u in requests if not u.startswith(served) and not u.startswith("data:")]
    assert not foreign, f"requests to other hosts: {foreign}"
    assert math_on_formats > 0, "MathJax rendered no math on the formats chapter"


def test_palette_toggle_switches_figures_to_their_dark_rendering(served):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(served + "chapters/gradscaler/", wait_until="networkidle")
        shown = "() => [...document.querySelectorAll('img.amp-fig')].map(i => i.className.split('--')[1] + ':' + getComputedStyle(i).display)"
        before = page.evaluate(shown)
        page.click("label[for='__palette_1']")  # Material's toggle to the dark (slate) scheme
        page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
        after = page.evaluate(shown)
        browser.close()
    visible = lambda states, kind: [s.split(":")[1] != "none" for s in states if s.startswith(kind)]  # noqa: E731
    assert before and all(visible(before, "light")) and not any(visible(before, "dark"))
    assert all(visible(after, "dark")) and not any(visible(after, "light"))
