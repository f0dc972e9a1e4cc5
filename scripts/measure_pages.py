"""How long each page of a built site is, in screens, as a reader's browser lays it out.

Loads every chapter page (a split chapter's sub-pages too: ``page_paths``) and the home page of a
built site in headless Chromium (Playwright, the system ``chromium``, as ``tests/test_browser.py``
drives it) at 1400x900 and 390x844, waits for
MathJax and the lazy figures, and prints the document height over the viewport height per page::

    python scripts/measure_pages.py site              # this checkout's build
    python scripts/measure_pages.py /path/to/site --json

``tests/test_lead_browser.py`` checks the page-length goal (``MAX_SCREENS``) as ``screens`` below measures.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import shutil
import sys
import threading
from pathlib import Path

VIEWPORTS = {"1400x900": (1400, 900), "390x844": (390, 844)}
MAX_SCREENS = 25  # the longest a chapter's page may be at 1400x900 (issue 36): split a longer one into sub-pages
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The figures are lazy: scroll through the page so that each loads (and takes its height), then measure.
_SCREENS = """() => new Promise(done => { let y = 0; const step = () => {
    window.scrollTo(0, y += 700);
    if (y < document.documentElement.scrollHeight) setTimeout(step, 10);
    else { window.scrollTo(0, 0); done(document.documentElement.scrollHeight / window.innerHeight); } }; step(); })"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the table
        pass


def page_paths(site: Path) -> list[str]:
    """The home page and every page of every chapter of a built site (a split chapter's sub-pages too,
    ``chapters/<chapter>/<section>/``), as URL paths in URL order: the one list of the chapter pages
    the browser tests visit."""
    return [""] + sorted(f"{p.parent.relative_to(site).as_posix()}/" for p in (site / "chapters").rglob("index.html"))


@contextlib.contextmanager
def serve(site: Path):
    """The built site over HTTP on a free loopback port; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()


def screens(browser, url: str, width: int, height: int) -> float:
    """Document height over viewport height of the page at ``url`` in a ``width`` x ``height`` window."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url, wait_until="networkidle")
        if page.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
            page.evaluate("() => MathJax.startup.promise")
        page.evaluate(_SCREENS)
        page.wait_for_load_state("networkidle")
        return page.evaluate("() => document.documentElement.scrollHeight / window.innerHeight")
    finally:
        context.close()


def measure_each(site: Path, measure_page, paths: list[str] | None = None, chromium: str | None = None) -> dict:
    """``measure_page(browser, url, width, height)`` for every page of ``paths`` (default: ``page_paths``) of
    the built site in ``site`` at each of ``VIEWPORTS``: ``{path: {viewport: result}}``."""
    from playwright.sync_api import sync_playwright

    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    out: dict[str, dict] = {}
    with serve(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            for path in page_paths(site) if paths is None else paths:
                out[path] = {name: measure_page(browser, base + path, w, h) for name, (w, h) in VIEWPORTS.items()}
        finally:
            browser.close()
    return out


def measure(site: Path, chromium: str | None = None) -> dict[str, dict[str, float]]:
    """Screens per page (``""`` is the home page) and viewport of the built site in ``site``."""
    return measure_each(site, lambda *a: round(screens(*a), 1), chromium=chromium)


def site_arguments(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """The command line of a page-measuring script: a built site, ``--json``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built site (the folder with index.html)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = site_arguments(__doc__, argv)
    result = measure(args.site.resolve())
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"| page | screens {' | screens '.join(VIEWPORTS)} |")
    print("|---|" + "---|" * len(VIEWPORTS))
    for path, row in result.items():
        print(
            f"| {path.removeprefix('chapters/').strip('/') or 'home'} | "
            + " | ".join(f"{row[v]:.1f}" for v in VIEWPORTS)
            + " |"
        )
    longest = max((p for p in result if p), key=lambda p: result[p]["1400x900"])
    print(
        f"\nlongest chapter page at 1400x900: {longest} ({result[longest]['1400x900']:.1f} screens; goal {MAX_SCREENS})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
