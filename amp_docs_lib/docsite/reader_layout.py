"""What a reader sees of a notebook page: the passes over its parsed tree, in order (``reader_layout``).

Done on a parsed tree (BeautifulSoup, which nbconvert itself requires), not on patterns over the
template's text: each pass names the elements it changes by their classes. The folds of code are in
``docsite/folds.py``.
"""

from __future__ import annotations

from amp_docs_lib.docsite.folds import fold_answers, fold_long_listings, fold_plumbing, fold_presentation, fold_setup


def reader_layout(content: str) -> str:
    """A page body laid out for its reader: every code block has an id of its own (Material's copy
    button copies the block whose id it names), setup and
    checking code is folded, an exercise's answer is folded, adjacent claims form one list, a lone claim reads as prose with its verdict on its mark, and search indexes prose and headings,
    not table cells, program output or heading permalinks."""
    from bs4 import BeautifulSoup

    from amp_docs_lib.docsite.claim_marks import legend_for_mixed_lists, mark_lone_claims

    if "<" not in content:
        return content
    soup = BeautifulSoup(content, "html.parser")
    code_in_every_block(soup)
    unique_code_ids(soup)
    fold_plumbing(soup)
    fold_setup(soup)
    fold_presentation(soup)
    fold_answers(soup)
    fold_long_listings(soup)
    group_claims(soup)
    legend_for_mixed_lists(soup)
    mark_lone_claims(soup)
    lesson_first(soup)
    exclude_from_search(soup)
    return str(soup)


def code_in_every_block(soup) -> None:
    """Material adds its copy button to ``pre > code``; the listings Pygments writes into an output
    (``show_source``) are a bare ``<pre>``: their contents go into a ``<code>``."""
    for pre in soup.select("div.highlight-ipynb > pre, div.highlight > pre"):
        if pre.find("code", recursive=False) is None:
            code = soup.new_tag("code")
            for child in list(pre.contents):
                code.append(child.extract())
            pre.append(code)


def unique_code_ids(soup) -> None:
    """Give every ``<pre>`` an id of its own. Material names a code block after its closest element
    with an id (``__code_<id>``) and its copy button copies ``#__code_<id> > code``; in a notebook
    page that is the cell, shared by the input and every listing in its output, so each of their
    buttons copied the input."""
    taken = {el["id"] for el in soup.find_all(id=True)}
    n = 0
    for pre in soup.find_all("pre"):
        if pre.get("id"):
            continue
        while f"amp-code-{n}" in taken:
            n += 1
        pre["id"] = f"amp-code-{n}"
        taken.add(pre["id"])


def _only_wrappers_between(a, b) -> bool:
    """Whether nothing a reader sees lies between elements ``a`` and ``b`` (document order):
    only the notebook's wrapper divs, folds of plumbing code and whitespace."""
    inside = {id(d) for d in a.descendants}
    for el in a.next_elements:
        if el is b:
            return True
        if id(el) in inside:
            continue
        if isinstance(el, str):
            if el.strip() and not el.find_parent("details", class_="amp-fold"):
                return False
        elif el.name not in ("div", "details", "summary") and not el.find_parent("details", class_="amp-fold"):
            return False
    return False


def group_claims(soup) -> None:
    """Adjacent checked sentences become one list under one heading (its verdict, said once),
    instead of a tinted box each; a sentence whose verdict differs keeps its own."""
    claims = soup.select("p.amp-claim")
    runs: list[list] = []
    for c in claims:
        if runs and _only_wrappers_between(runs[-1][-1], c):
            runs[-1].append(c)
        else:
            runs.append([c])
    for run in runs:
        if len(run) < 2:
            continue
        verdicts = [v.get_text(strip=True) if (v := c.find("span", class_="amp-claim-verdict")) else "" for c in run]
        # The most common verdict; a tie goes to the first in page order (a set's order follows the hash seed).
        common = max(verdicts, key=verdicts.count)
        machine = all("amp-claim--machine" in c.get("class", []) for c in run)  # facts, not checks
        group = soup.new_tag("div", attrs={"class": "amp-claims amp-claims--machine" if machine else "amp-claims"})
        title = soup.new_tag("p", attrs={"class": "amp-claims__title"})
        title.string = common[:1].upper() + common[1:] if common else "Checked"
        run[0].insert_before(group)
        group.append(title)
        emptied = []
        for c, verdict in zip(run, verdicts, strict=True):
            holder = c.find_parent("div", class_="jp-Cell")
            group.append(c.extract())
            if verdict == common and (v := c.find("span", class_="amp-claim-verdict")):
                v.decompose()
            if holder is not None:
                emptied.append(holder)
        for holder in emptied:  # a cell left with no visible content is removed whole
            outer = holder
            while (
                outer.parent is not None and outer.parent.name == "div" and "jp-Cell" in outer.parent.get("class", [])
            ):
                outer = outer.parent
            if (
                outer.parent is not None
                and not outer.get_text(strip=True)
                and not outer.find(["img", "table", "pre"])
                and group not in outer.descendants
            ):
                outer.decompose()


def exclude_from_search(soup) -> None:
    """Search indexes prose and headings: tables, figures and program output are left out (their
    cells ran together into noise), and so is each heading's permalink mark."""
    for el in soup.select(
        "div.amp-table-scroll, div.amp-stamp, div.jp-OutputArea-output pre, pre.amp-output, "
        "a.anchor-link, a.headerlink, details.amp-fold"
    ):
        el["data-search-exclude"] = ""


# ---- the lesson first: summary and key results on the first screen ---------------------------------
# A chapter's top is its summary (``page.summary``: ``<div class="... amp-summary">``) and its "In this
# build" box, which the chapter's last cell makes (the values exist only then).


def lesson_first(soup) -> None:
    """Move the chapter's "In this build" box (``page.summary.in_this_build``, made by its last
    cell) under its summary, and drop the cell it leaves empty."""
    from amp_docs_lib.page.summary import BOX_KIND, SUMMARY_CLASS

    box = soup.select_one(f"figure.amp-{BOX_KIND}")
    summary = soup.select_one(f"div.{SUMMARY_CLASS}")
    if box is None or summary is None:
        return
    holder = box.find_parent("div", class_="jp-Cell")
    while holder is not None and holder.parent is not None and "jp-Cell" in (holder.parent.get("class") or []):
        holder = holder.parent
    summary.insert_after(box.extract())
    if holder is not None and not any(
        o.get_text(strip=True) or o.find(["img", "table", "figure"]) for o in holder.select("div.jp-OutputArea-output")
    ):
        holder.decompose()  # nothing of it is left to read (its input is the box's hidden code)
