"""The reader's pages: Rebuild on your GPU (profiles generated) and Yours vs reference."""

import html as htmllib
import re

from amp_docs_lib.core.profiles import PROFILES
from amp_docs_lib.docsite.references import measurements_from_site

from conftest import CHAPTERS
from test_reference_machines import REQUIRED


def _bare_cells(html: str) -> str:
    """The page with its table cells' attributes dropped (the page kit adds alignment classes)."""
    return re.sub(r"<(t[dh])\b[^>]*>", r"<\1>", html)


def test_rebuild_page_lists_every_profile_size(site):
    html = _bare_cells((site / "rebuild" / "index.html").read_text(encoding="utf-8"))
    assert "<!-- amp-docs:profiles -->" not in html
    for name, profile in PROFILES.items():
        assert f"<th>{name}</th>" in html
        for size in profile.sizes:
            assert f"<td>{size}</td>" in html, size
    assert "package-reference" in re.sub(r"<[^>]+>", "", html)


def test_yours_vs_reference_shows_every_published_measurement_and_chapter(site):
    html = _bare_cells((site / "yours-vs-reference" / "index.html").read_text(encoding="utf-8"))
    assert "<!-- amp-docs:yours-vs-reference -->" not in html
    top = html[: html.index("<h2 ")]
    measurements = measurements_from_site(site)
    # the channel from a chapter's publish() to this page holds: the measurements CI requires are here
    assert set().union(*REQUIRED.values()) <= set(measurements), sorted(measurements)
    for name, m in measurements.items():
        section = html[html.index(f'id="{name}"') :]
        assert "This build" in section.split("</h2>", 2)[1] or "This build" in section[:2000]
        # this build's stamp is said once, above the first measurement
        assert f"This build: measured on {htmllib.escape(m['stamp'])}" in top, m["stamp"]
    timing = html[html.index('id="chapter-execution-time"') :]
    for c in CHAPTERS:
        assert re.search(rf"<td>{c.stem}</td>\s*<td>[\d.]+</td>", timing), c.stem
