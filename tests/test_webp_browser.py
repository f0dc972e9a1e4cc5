"""Issue 35/36: a reader fetches only the renderings of the palette they see (what ``scripts/page_weights.py``
counts as the light and the dark weight), and the WebP figures load."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest
from browser_visits import CHROMIUM, dark_palette, load_all_images

from conftest import CHAPTERS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt-get install chromium)"),
]
_RENDERING = re.compile(r'<img\b[^>]*class="amp-fig amp-fig--(light|dark)"[^>]*>')
_SRC = re.compile(r'\bsrc="([^"]+)"')


def _fetched_figures(context, url: str) -> set[str]:
    """The figure files a page requests when a reader scrolls through it to the end."""
    page = context.new_page()
    fetched: set[str] = set()
    page.on("request", lambda r: "/assets/figures/" in r.url and fetched.add(r.url))
    page.goto(url, wait_until="networkidle")
    load_all_images(page)
    broken = page.evaluate("""() => [...document.querySelectorAll('img.amp-fig')]
        .filter(i => getComputedStyle(i).display !== 'none' && !(i.complete && i.naturalWidth > 0)).length""")
    assert not broken, f"{url}: {broken} figures did not load"
    page.close()
    return fetched


def test_a_reader_fetches_only_the_renderings_of_their_palette(site, served, browser):
    chapters = [c.stem for c in CHAPTERS if (site / "chapters" / c.stem / "index.html").exists()]
    counts = {
        s: (site / "chapters" / s / "index.html").read_text(encoding="utf-8").count("amp-fig--light") for s in chapters
    }
    stem = max(counts, key=counts.get)
    assert counts[stem], "no chapter with a figure"
    url = f"{served}chapters/{stem}/"
    renderings: dict[str, set[str]] = {"light": set(), "dark": set()}
    for kind, tag in (
        (m.group(1), m.group(0))
        for m in _RENDERING.finditer((site / "chapters" / stem / "index.html").read_text("utf-8"))
    ):
        renderings[kind].add(urljoin(url, _SRC.search(tag).group(1)))
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    assert _fetched_figures(context, url) == renderings["light"]
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    dark_palette(page)  # Material keeps the choice for the next page
    page.close()
    assert _fetched_figures(context, url) == renderings["dark"]
    context.close()
