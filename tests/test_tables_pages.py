"""Reader review 2026-11-24, findings 20, 24 and 41, read from the built pages.

20: GradScaler opens with the canonical AMP loop (its pattern, what changes and the full program),
before the 118-line ReferenceGradScaler listing, which is folded; ``update_scale``, the rule, stays open.
24: Training regimes shows one table of the regimes' outcome; the full summary and the published
outcome with speed (the same rows) are folded.
41: the Rebuild page's table of profile keys is folded, and the page says what decides a GPU build's
time and disk instead of a number nobody measured.
``AMP_DOCS_TEST_SITE=site`` runs them against an existing build.
"""

from __future__ import annotations

import pytest

bs4 = pytest.importorskip("bs4")


def page(site, path: str):
    return bs4.BeautifulSoup((site / path / "index.html").read_text(encoding="utf-8"), "html.parser")


def in_closed_fold(el) -> bool:
    return any(d.name == "details" and not d.has_attr("open") for d in el.parents)


def figure(soup, caption: str):
    found = [f for f in soup.select(".md-content figure") if caption in (f.figcaption or f).get_text(" ", strip=True)]
    assert found, f"no figure captioned {caption!r}"
    return found[0]


def test_gradscaler_opens_with_the_canonical_loop_and_folds_the_reference_class(site):
    soup = page(site, "chapters/gradscaler")
    sections = [h.get_text(" ", strip=True).rstrip("¶").strip() for h in soup.select(".md-content h2")]
    assert sections[0] == "The canonical AMP loop", sections
    body = str(soup.select_one(".md-content"))
    folds = [
        d
        for d in soup.select(".md-content details.amp-fold--listing")
        if "ReferenceGradScaler" in d.summary.get_text() and not d.has_attr("open")
    ]
    assert folds, "the ReferenceGradScaler listing is not folded"
    loop_tabs = soup.select_one(".md-content .amp-tabs")  # the first pattern's tabs: the canonical loop's
    assert loop_tabs is not None and "amp_loop.py" in loop_tabs.get_text()
    assert body.index(str(loop_tabs)) < body.index(str(folds[0]))
    rule = [c for c in soup.select(".md-content div.amp-code") if "def update_scale" in c.get_text()]
    assert rule and not in_closed_fold(rule[0]), "update_scale (the rule) should be shown open"


def test_training_regimes_shows_one_outcome_table_and_folds_the_others(site):
    soup = page(site, "chapters/training_regimes")
    outcome = figure(soup, "Outcome per regime")
    full = figure(soup, "Full summary: losses, status and memory")
    # The published summary sits with the speed measurements, on a sub-page of the chapter (docsite/subpages.py).
    published = next(
        figure(s, "losses, speed (interleaved timing")
        for s in (
            page(site, p.parent.relative_to(site)) for p in sorted((site / "chapters/training_regimes").rglob("*.html"))
        )
        if "losses, speed (interleaved timing" in s.get_text()
    )
    assert not in_closed_fold(outcome.table)
    assert in_closed_fold(full.table) and in_closed_fold(published.table)
    regimes = lambda f: [tr.td.get_text() for tr in f.table.select("tbody tr")]  # noqa: E731
    assert regimes(outcome) == regimes(full) == regimes(published)  # the same rows: one shown


def test_rebuild_folds_the_profile_keys_and_invents_no_build_time(site):
    soup = page(site, "rebuild")
    sizes = figure(soup, "Problem sizes per profile")
    assert in_closed_fold(sizes.table) and len(sizes.table.select("tbody tr")) > 15
    text = soup.select_one(".md-content").get_text(" ", strip=True)
    assert "No gpu-full build has been timed yet" in text
    assert "du -sh .venv .amp-docs-cache site" in text
