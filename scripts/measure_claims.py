"""How much of each chapter's height its checked sentences take, as a reader's browser lays it out.

Loads every chapter of a built site in headless Chromium (as ``measure_pages.py`` does) at 1400x900
and 390x844 and prints, per chapter, the claims' share of the article's height: the summed height of
each claim list (``div.amp-claims``) and each claim outside one (``p.amp-claim``), over the height of
the page's article. Also the article's height, and the number of claims shown, of boxes, of lists
and of verdict suffixes a reader sees (a claim inside a closed fold is not shown)::

    python scripts/measure_claims.py site              # this checkout's build
    python scripts/measure_claims.py /path/to/site --json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure_pages  # noqa: E402  (scripts/ is not a package)

# Visible boxes: a list of claims counts once, a claim outside a list counts alone. A suffix is a
# verdict a reader sees without hovering (a list's title, or a verdict span that is rendered).
_SHARE = """() => {
    const article = document.querySelector('article.md-content__inner') || document.body;
    // A closed <details> keeps its content laid out but unrendered: checkVisibility tells, a box does not.
    const shown = el => { const r = el.getBoundingClientRect();
        return r.height > 2 && r.width > 2 && el.checkVisibility({visibilityProperty: true, opacityProperty: true}); };
    const boxes = [...article.querySelectorAll('.amp-claims, p.amp-claim')]
        .filter(el => !el.parentElement.closest('.amp-claims') && shown(el));
    const suffixes = [...article.querySelectorAll('.amp-claims__title, .amp-claim-verdict')].filter(shown).length;
    const height = boxes.reduce((h, el) => h + el.getBoundingClientRect().height, 0);
    return {share: height / article.getBoundingClientRect().height, article_px: article.getBoundingClientRect().height,
            claims: [...article.querySelectorAll('p.amp-claim')].filter(shown).length,
            boxes: boxes.length, lists: boxes.filter(el => el.classList.contains('amp-claims')).length,
            suffixes: suffixes};
}"""


def claim_share(browser, url: str, width: int, height: int) -> dict:
    """The claims' share of the article's height at ``url`` in a ``width`` x ``height`` window, with counts."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url, wait_until="networkidle")
        if page.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
            page.evaluate("() => MathJax.startup.promise")
        page.evaluate(measure_pages._SCREENS)  # lazy figures take their height
        page.wait_for_load_state("networkidle")
        return page.evaluate(_SHARE)
    finally:
        context.close()


def measure(site: Path, chromium: str | None = None) -> dict[str, dict[str, dict]]:
    paths = measure_pages.page_paths(site)[1:]  # the chapters' pages
    found = measure_pages.measure_each(site, claim_share, paths, chromium)
    return {path.strip("/").split("/")[-1]: row for path, row in found.items()}


def main(argv: list[str] | None = None) -> int:
    args = measure_pages.site_arguments(__doc__, argv)
    result = measure(args.site.resolve())
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    views = list(measure_pages.VIEWPORTS)
    print(
        "| chapter | claims | boxes (lists) | suffixes shown | "
        + " | ".join(f"share {v} | article px {v}" for v in views)
        + " |"
    )
    print("|---|---|---|---|" + "---|---|" * len(views))
    for chapter, row in result.items():
        d = row[views[0]]
        print(
            f"| {chapter} | {d['claims']} | {d['boxes']} ({d['lists']}) | {d['suffixes']} | "
            + " | ".join(f"{100 * row[v]['share']:.1f}% | {row[v]['article_px']:.0f}" for v in views)
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
