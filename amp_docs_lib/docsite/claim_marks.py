"""A checked sentence that stands alone reads as prose with a ✓ in its margin, not as a tinted box.

``page.claims`` renders each claim with its mark and its verdict ("checked in this build",
"measured on this machine"); ``pages.group_claims`` makes adjacent ones a list that says the verdict
once. What is left is a claim between prose, tables and figures: here its mark becomes the way to
read the verdict (focusable, named by it, for a screen reader and the keyboard) and the verdict a
tip shown while the mark is hovered, focused or tapped (``docs/assets/css/amp-docs.css``), so the
suffix is not printed once per sentence. A failing claim keeps its box and its verdict in sight.
"""

from __future__ import annotations

LONE_CLASS = "amp-claim--lone"
QUIET = ("amp-claim--holds", "amp-claim--machine")  # what a machine did is never loud either


def mark_lone_claims(soup) -> None:
    """Each checked sentence outside a claim list: its mark named by its verdict and focusable, its
    verdict a tip (hidden from assistive technology, which reads the mark's name instead)."""
    for claim in soup.select("p.amp-claim"):
        classes = claim.get("class", [])
        if claim.find_parent("div", class_="amp-claims") is not None or not any(c in classes for c in QUIET):
            continue
        mark = claim.find("span", class_="amp-claim-mark")
        verdict = claim.find("span", class_="amp-claim-verdict")
        if mark is None or verdict is None:
            continue
        claim["class"] = [*classes, LONE_CLASS]
        del mark["aria-hidden"]
        mark.attrs.update({"tabindex": "0", "role": "img", "aria-label": verdict.get_text(" ", strip=True)})
        verdict["aria-hidden"] = "true"
