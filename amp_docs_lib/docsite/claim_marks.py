"""A checked sentence that stands alone reads as prose with a ✓ in its margin, not as a tinted box.

``page.claims`` renders each claim with its mark and its verdict ("checked in this build",
"measured on this machine"); ``pages.group_claims`` makes adjacent ones a list that says the verdict
once, except for a line whose verdict differs from the list's. Here a list of mixed lines gets a
legend for a title (each mark with its verdict, once) instead of those suffixes, and a claim between
prose, tables and figures gets its mark as the way to read the verdict (focusable, named by it, for
a screen reader and the keyboard), the verdict a tip shown while the mark is hovered, focused or
tapped (``docs/assets/css/amp-docs.css``): no verdict is printed once per sentence. A failing claim
keeps its box and its verdict in sight.
"""

from __future__ import annotations

LONE_CLASS = "amp-claim--lone"
QUIET = ("amp-claim--holds", "amp-claim--machine")  # what a machine did is never loud either


def mark_lone_claims(soup) -> None:
    """Each checked sentence outside a claim list: its mark named by its verdict (``aria-labelledby``:
    the text stays written once) and focusable, its verdict a tip (hidden from assistive technology,
    which reads the mark's name instead)."""
    taken = {el["id"] for el in soup.find_all(id=True)}
    n = 0
    for claim in soup.select("p.amp-claim"):
        classes = claim.get("class", [])
        if claim.find_parent("div", class_="amp-claims") is not None or not any(c in classes for c in QUIET):
            continue
        mark = claim.find("span", class_="amp-claim-mark")
        verdict = claim.find("span", class_="amp-claim-verdict")
        if mark is None or verdict is None:
            continue
        while f"amp-verdict-{n}" in taken:
            n += 1
        verdict["id"] = f"amp-verdict-{n}"
        taken.add(verdict["id"])
        claim["class"] = [*classes, LONE_CLASS]
        del mark["aria-hidden"]
        mark.attrs.update({"tabindex": "0", "role": "img", "aria-labelledby": verdict["id"]})
        verdict["aria-hidden"] = "true"


def _quiet(claim) -> bool:
    return any(c in claim.get("class", []) for c in QUIET)


def legend_for_mixed_lists(soup) -> None:
    """A claim list whose quiet lines have more than one verdict (checked sentences and what this
    machine did): its title names each mark with its verdict, in order of appearance, and no quiet
    line keeps a verdict of its own."""
    for group in soup.select("div.amp-claims"):
        title = group.find("p", class_="amp-claims__title")
        lines = [c for c in group.select("p.amp-claim") if _quiet(c)]
        kept = [v for c in lines if (v := c.find("span", class_="amp-claim-verdict")) is not None]
        if title is None or not kept:
            continue
        legend: dict[str, str] = {}
        for c in lines:
            mark = c.find("span", class_="amp-claim-mark")
            verdict = c.find("span", class_="amp-claim-verdict")
            said = verdict.get_text(" ", strip=True) if verdict is not None else title.get_text(" ", strip=True)
            if mark is not None:
                legend.setdefault(mark.get_text(strip=True), said[:1].upper() + said[1:])
        title.string = " · ".join(f"{mark} {said}" for mark, said in legend.items())
        for v in kept:
            v.decompose()
