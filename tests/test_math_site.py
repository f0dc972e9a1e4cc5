"""The built site: math rendered by the build (no page loads a math engine) and the page-weight goals.

Uses the session's build of the real site (the ``site`` fixture in conftest.py). Weights are measured
by ``scripts/page_weights.py`` (what a page requests as sent: text gzip -6, images as they are; in each
palette, and with both renderings of every figure).
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from conftest import CHAPTERS, REPO_ROOT

pytestmark = pytest.mark.site

# issue 35: the heaviest chapter's first view (HTML + CSS + JS) and any page with its images, in each
# palette (what its reader downloads).
FIRST_VIEW_MAX_KB = 150
WITH_IMAGES_MAX_KB = 500
ENGINE_SCRIPT = re.compile(r'<script\b[^>]*\bsrc="[^"]*(?:mathjax|katex|tex-chtml|tex-svg|tex-mml)[^"]*"', re.I)
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_SOURCE_MATH = re.compile(r"(?<![\\$\w])\$[^$\s][^$\n]*?(?<!\s)\$(?!\w)")


def _weights():
    spec = importlib.util.spec_from_file_location("page_weights", REPO_ROOT / "scripts" / "page_weights.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["page_weights"] = module
    spec.loader.exec_module(module)
    return module


def test_no_page_loads_a_math_engine(site):
    offenders = [
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if ENGINE_SCRIPT.search(p.read_text("utf-8"))
    ]
    assert not offenders, f"pages that load a math engine script: {offenders}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_with_tex_has_rendered_math_and_its_stylesheet(site, chapter):
    page = (site / "chapters" / chapter.stem / "index.html").read_text("utf-8")
    has_tex = bool(_SOURCE_MATH.search(_FENCE.sub("", chapter.read_text("utf-8"))))
    assert ('class="katex"' in page) == has_tex
    assert ("assets/katex/katex.min.css" in page) == has_tex


def test_pages_meet_the_weight_goals(site):
    pages = _weights().site_weights(site)
    chapters = [w for w in pages if w.page.startswith("chapters/")]
    assert chapters, "no chapter pages in the built site"
    heaviest = max(chapters, key=lambda w: w.first_view)
    assert heaviest.first_view <= FIRST_VIEW_MAX_KB * 1024, (
        f"{heaviest.page}: first view {heaviest.first_view / 1024:.0f} KB gz > {FIRST_VIEW_MAX_KB} KB"
    )
    # What a reader of each palette downloads: the figures are lazy files, one rendering per palette
    # (tests/test_webp_browser.py checks that only the shown palette's files are fetched). The page with
    # both renderings (``w.total``) is what the host stores; scripts/page_weights.py prints it.
    over = [
        f"{w.page} {name}: {kb / 1024:.0f} KB"
        for w in pages
        for name, kb in (("light palette", w.light), ("dark palette", w.dark))
        if kb > WITH_IMAGES_MAX_KB * 1024
    ]
    assert not over, f"pages over {WITH_IMAGES_MAX_KB} KB as sent with their images: {over}"
