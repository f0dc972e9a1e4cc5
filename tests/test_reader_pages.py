"""The reader's pages: Rebuild on your GPU (profiles generated) and Yours vs reference."""

import re

from amp_docs_lib.core.profiles import PROFILES
from amp_docs_lib.docsite.references import measurements_from_site

from conftest import CHAPTERS


def test_rebuild_page_lists_every_profile_size(site):
    html = (site / "rebuild" / "index.html").read_text(encoding="utf-8")
    assert "<!-- amp-docs:profiles -->" not in html
    for name, profile in PROFILES.items():
        assert f"<th>{name}</th>" in html
        for size in profile.sizes:
            assert f"<td>{size}</td>" in html, size
    assert "package-reference" in re.sub(r"<[^>]+>", "", html)


def test_yours_vs_reference_shows_every_published_measurement_and_chapter(site):
    html = (site / "yours-vs-reference" / "index.html").read_text(encoding="utf-8")
    assert "<!-- amp-docs:yours-vs-reference -->" not in html
    for name, m in measurements_from_site(site).items():
        section = html[html.index(f'id="{name}"'):]
        assert "This build" in section.split("</h2>", 2)[1] or "This build" in section[:2000]
        assert m["stamp"].split(" · ")[0] in section
    timing = html[html.index('id="chapter-execution-time"'):]
    for c in CHAPTERS:
        assert re.search(rf"<td>{c.stem}</td>\s*<td>[\d.]+</td>", timing), c.stem
