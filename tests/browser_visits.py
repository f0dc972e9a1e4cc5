"""One load per page and screen for the browser tests (issue 35: three modules each loaded every page).

A browser test reads what it checks from ``visits.result(path, screen, step)`` (the session fixture
``visits`` in ``conftest.py``). The first test to ask for a (page, screen) loads it once, in a fresh
browser context: every lazily loaded image brought into view and loaded, then the network idle.
Then every step registered for that screen (``@step``, in the test modules) runs on that one loaded
page and its result, or the exception it raised, is kept for the test that reads it. Steps run in
three rounds: reads of the page as loaded (``READ``), then interactions that put the page back as
they found it (``INTERACT``: a lightbox closed, focus and hover moved away), then steps that change
it for good (``LAST``: the dark palette). Between steps the page is scrolled back to the top, the
mouse moved off it and focus taken from it. A step whose test this session does not run is skipped.

Only the shared machinery is here; what each test checks, and its JavaScript, stays in its module.
"""

from __future__ import annotations

import os
import queue
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import measure_pages  # noqa: E402  (scripts/ is not a package)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = measure_pages.ARGS
DESKTOP, PHONE, TOUCH_PHONE = "1400x900", "390x844", "390x844 touch"
SCREENS = {
    DESKTOP: {"viewport": {"width": 1400, "height": 900}},
    # A 390 px window as it is: with mobile emulation a page wider than the screen widens the layout
    # viewport (zooms out), which would hide the very overflow the page checks look for.
    PHONE: {"viewport": {"width": 390, "height": 844}},
    # A phone as emulated (touch, mobile viewport, a 2x screen), for what a tap does and shows.
    TOUCH_PHONE: {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
}
READ, INTERACT, LAST = 0, 1, 2
# Between steps: no focus, at the top (at once: Material's CSS may ask for smooth scrolling).
UNTOUCHED = """() => { if (document.activeElement) document.activeElement.blur();
    window.scrollTo({top: 0, left: 0, behavior: "instant"}); }"""


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


def dark_palette(page) -> None:
    # Material's toggle to the dark (slate) scheme; clicked from script, since a page scrolled by
    # the checks (or a closing lightbox) can keep the header button "unstable" for Playwright.
    page.evaluate("() => document.querySelector(\"label[for='__palette_1']\").click()")
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")


def load_all_images(page) -> None:
    """Bring each shown image into view and wait (up to 15 s each) until it has loaded or failed, so that
    lazily loaded figures are loaded whatever the machine's speed, then scroll back to the top. (A quick
    scroll then "network idle" let a dark rendering be checked before its request had started.)"""
    page.evaluate("""async () => {
        for (const img of document.images) {
            if (!img.getClientRects().length) continue;  // not rendered in this palette or fold
            img.scrollIntoView({block: "center"});
            if (!img.complete) await new Promise(done => {
                img.addEventListener("load", done, {once: true});
                img.addEventListener("error", done, {once: true});
                setTimeout(done, 15000);
            });
        }
        window.scrollTo(0, 0);
    }""")
    page.wait_for_load_state("networkidle")


@dataclass
class Step:
    name: str
    fn: Callable  # (page, path, screen, visits) -> result
    screens: tuple[str, ...]
    test: str  # the test that reads the result: the step is skipped when the session does not run it
    round: int = READ


STEPS: dict[str, Step] = {}


def step(name: str, *, screens: tuple[str, ...], test: str, round: int = READ):
    """Register ``fn(page, path, screen, visits)`` to run on every visited page at ``screens``."""

    def register(fn):
        STEPS[name] = Step(name, fn, screens, test, round)
        return fn

    return register


@dataclass
class Visit:
    """What the steps found on one page at one screen, and what the page did meanwhile."""

    results: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # the Recorder's, over the whole visit
    seconds: dict[str, float] = field(default_factory=dict)  # the load, then each step: where the time goes


class Visits:
    """Pages loaded once per screen, shared by the session's browser tests (see the module docstring)."""

    def __init__(self, browser, base: str, tests: set[str], screenshots: Path):
        self.browser, self.base, self.tests, self.screenshots = browser, base, tests, screenshots
        self._done: dict[tuple[str, str], Visit] = {}
        self._ahead: dict[tuple[str, str], Future] = {}
        self._workers: list[threading.Thread] = []
        self._queue: queue.Queue = queue.Queue()

    def visit_ahead(self, keys: list[tuple[str, str]], workers: int) -> None:
        """Visit ``keys`` ((path, screen) pairs, in the order the tests will ask) in ``workers`` threads,
        each with its own Playwright and Chromium (Playwright's sync API is one per thread): a page
        load mostly waits (the network idle, lazy images), so two visits at a time keep both cores of a
        2-core machine busy. ``visit`` then waits for a key's result instead of loading it again."""
        for key in keys:
            if key not in self._done and key not in self._ahead:
                self._ahead[key] = Future()
                self._queue.put(key)
        for _ in range(workers):
            self._queue.put(None)  # each worker stops at one of these
            t = threading.Thread(target=self._work, name="browser-visits", daemon=True)
            t.start()
            self._workers.append(t)

    def _work(self) -> None:
        from playwright.sync_api import sync_playwright

        key = ...  # None once this worker has taken its stop sentinel
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                try:
                    while (key := self._queue.get()) is not None:
                        future = self._ahead[key]
                        if future.set_running_or_notify_cancel():
                            try:
                                future.set_result(self._visit(*key, browser=browser))
                            except BaseException as e:  # noqa: BLE001 -- the test that reads it reports it
                                future.set_exception(e)
                finally:
                    browser.close()
        except Exception:  # noqa: BLE001 -- a worker that cannot run leaves its keys to be visited when asked
            while key is not None and (key := self._queue.get()) is not None:
                self._ahead[key].cancel()

    def close(self) -> None:
        """Cancel visits not started and wait for the workers (each closes its own Chromium)."""
        for future in self._ahead.values():
            future.cancel()
        for t in self._workers:
            t.join(timeout=120)

    def result(self, path: str, screen: str, name: str):
        """The result of step ``name`` on ``path`` at ``screen`` (raises what the step raised)."""
        if name not in STEPS or screen not in STEPS[name].screens:
            raise KeyError(f"no step {name!r} for {screen}")
        out = self.visit(path, screen).results[name]
        if isinstance(out, BaseException):
            raise out
        return out

    def problems(self, path: str, screen: str) -> list[str]:
        """Console errors, failed and foreign requests while the page was visited."""
        return self.visit(path, screen).problems

    def visit(self, path: str, screen: str) -> Visit:
        key = (path, screen)
        if key not in self._done:
            ahead = self._ahead.get(key)
            self._done[key] = ahead.result() if ahead is not None and not ahead.cancelled() else self._visit(*key)
        return self._done[key]

    def _visit(self, path: str, screen: str, browser=None) -> Visit:
        steps = sorted(
            (s for s in STEPS.values() if screen in s.screens and s.test in self.tests), key=lambda s: s.round
        )
        visit = Visit()
        context = (browser or self.browser).new_context(**SCREENS[screen])
        try:
            context.grant_permissions(["clipboard-read", "clipboard-write"])
            page = context.new_page()
            rec = Recorder(page, self.base)
            started = time.perf_counter()
            try:
                page.goto(self.base + path, wait_until="load")
                load_all_images(page)  # ends when the network is idle
            except Exception as e:  # every step's test reports the failed load
                visit.results = {s.name: e for s in steps}
                return visit
            visit.seconds["load"] = time.perf_counter() - started
            for s in steps:
                started = time.perf_counter()
                try:
                    page.evaluate(UNTOUCHED)
                    page.mouse.move(0, 0)
                    visit.results[s.name] = s.fn(page, path, screen, self)
                except Exception as e:
                    visit.results[s.name] = e
                visit.seconds[s.name] = time.perf_counter() - started
            visit.problems = rec.problems
        finally:
            context.close()
        return visit


def seconds_report(visits: Visits) -> str:
    """Where the visits' time went: per step (the load included) summed over pages and screens, then
    the slowest single (page, screen, step)s; printed at the session's end (``pytest -s``)."""
    rows = [(t, path, screen, name) for (path, screen), v in visits._done.items() for name, t in v.seconds.items()]
    per_step: dict[str, float] = {}
    for t, _, screen, name in rows:
        per_step[f"{name} @ {screen}"] = per_step.get(f"{name} @ {screen}", 0.0) + t
    lines = [f"browser visits: {sum(t for t, *_ in rows):.1f} s over {len(visits._done)} page loads"]
    lines += [f"{t:8.2f} s  {k}" for k, t in sorted(per_step.items(), key=lambda kv: -kv[1])]
    lines += ["slowest:"] + [
        f"{t:8.2f} s  {p or 'index'} @ {sc}: {n}" for t, p, sc, n in sorted(rows, reverse=True)[:15]
    ]
    return "\n".join(lines)


def screenshot_folder(tmp_path_factory) -> Path:
    out = Path(os.environ.get("AMP_DOCS_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {out}")
    return out
