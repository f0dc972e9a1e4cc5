"""The built site: offline, stamped, and free of unexpected errors.

Uses the session's build of the real site (the ``site`` fixture in conftest.py).
"""

import re
from html.parser import HTMLParser

import pytest

from conftest import CHAPTERS

REMOTE = re.compile(r"^(?:https?:)?//", re.I)


class ResourceCollector(HTMLParser):
    """Every URL the browser would fetch while loading a page (not plain links)."""

    def __init__(self):
        super().__init__()
        self.fetched: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed") and "src" in a:
            self.fetched.append(a["src"] or "<empty src>")
        if tag == "link" and set((a.get("rel") or "").split()) & {
            "stylesheet",
            "preload",
            "preconnect",
            "icon",
            "modulepreload",
            "prefetch",
            "dns-prefetch",
        }:
            self.fetched.append(a.get("href", ""))


def test_site_requests_nothing_from_other_hosts(site):
    offenders = []
    for page in site.rglob("*.html"):
        c = ResourceCollector()
        c.feed(page.read_text(encoding="utf-8"))
        offenders += [(page.relative_to(site), u) for u in c.fetched if REMOTE.match(u) or u == "<empty src>"]
        text = page.read_text(encoding="utf-8")
        offenders += [(page.relative_to(site), m) for m in re.findall(r"""import\(\s*["'](?:https?:)?//[^"']+""", text)]
    for css in site.rglob("*.css"):
        offenders += [
            (css.relative_to(site), m)
            for m in re.findall(r"""(?:@import\s+|url\()\s*["']?(?:https?:)?//[^"')]+""", css.read_text())
        ]
    assert not offenders, f"remote resources in the built site: {offenders[:10]}"


def test_math_is_served_locally(site):
    page = (site / "chapters" / "formats" / "index.html").read_text()
    # Rendered by the build (KaTeX); the page links KaTeX's stylesheet, whose fonts are served beside it.
    assert 'class="katex"' in page and "assets/katex/katex.min.css" in page
    assert (site / "assets" / "katex" / "fonts" / "KaTeX_Main-Regular.woff2").is_file()


@pytest.mark.parametrize("chapter", [c.stem for c in CHAPTERS])
def test_chapter_pages_are_rendered_and_stamped(site, chapter):
    html = (site / "chapters" / chapter / "index.html").read_text()
    assert "jupyter-wrapper" in html, "chapter was not rendered from an executed notebook"
    assert html.count('class="amp-provenance"') == 1, "every chapter has one provenance card"
    assert "```python" not in html, "a code fence leaked into the page as text"


def test_rebuild_page_shows_environment_and_chapters(site):
    """The build's environment and chapter table are on the Rebuild page; the home page leads with
    what the site shows (chapters' key results, issue 36 finding 14)."""
    html = (site / "rebuild" / "index.html").read_text()
    assert "Environment of this build" in html and "hardware fingerprint" in html
    for c in CHAPTERS:
        assert f"<td>{c.stem}</td>" in html
    home = (site / "index.html").read_text()
    assert "amp-docs:in-this-build" not in home and home.count("amp-in-this-build") >= 2
