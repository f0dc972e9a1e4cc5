"""Folds of a notebook page: code a reader need not read, long listings and exercises' answers.

Imports, setup, the code of checks and of presentation, long ``show_source`` listings and the answer
cells of an exercise are each folded into a ``<details>``, one click away.
"""

from __future__ import annotations


def _code_of(input_wrapper) -> str | None:
    pre = input_wrapper.find("pre")
    return pre.get_text() if pre is not None else None


def _only_claims(output) -> bool:
    """Whether an output shows checked sentences and nothing else."""
    claims = output.select("p.amp-claim")
    return bool(claims) and len(output.get_text(strip=True)) == sum(len(c.get_text(strip=True)) for c in claims)


def plumbing_kind(code: str, outputs: list) -> str | None:
    """What a code cell's input is when it is plumbing rather than lesson (None: lesson): only
    imports, or code whose every output is a checked sentence (``claim``/``on_this_machine``)."""
    import ast

    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    if body and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body):
        return "imports"
    if outputs and all(_only_claims(o) for o in outputs):
        return "checks"
    return None


FOLD_SUMMARY = {"imports": "Imports", "checks": "Code of the checks"}


def fold_plumbing(soup) -> None:
    """Fold the input of cells that only import or only build checked sentences (the Polars guide
    and PyTorch's AMP examples show only the code a reader writes); the code stays one click away."""
    for wrapper in soup.select("div.jp-Cell-inputWrapper"):
        cell = wrapper.find_parent("div", class_="jp-CodeCell")
        code = _code_of(wrapper)
        if cell is None or code is None:
            continue
        outputs = cell.select("div.jp-OutputArea-output")
        kind = plumbing_kind(code, outputs)
        if kind is None:
            continue
        lines = len(code.strip().splitlines())
        fold = soup.new_tag("details", attrs={"class": f"amp-details amp-fold amp-fold--{kind}"})
        summary = soup.new_tag("summary")
        summary.string = f"{FOLD_SUMMARY[kind]} ({lines} line{'s' if lines != 1 else ''})"
        wrapper.wrap(fold)
        fold.insert(0, summary)


ANSWER_TAG = "answer"  # a cell whose output answers an exercise's question
ANSWER_SUMMARY = "This build's run and checks (open it after you have made your prediction)"


def fold_answers(soup) -> None:
    """Fold each run of consecutive cells tagged ``answer`` (input and output) into one closed fold:
    an exercise's task and command stay visible, the output that answers it is one click away."""
    for notebook in soup.select("div.jp-Notebook"):
        fold = None
        for cell in [c for c in notebook.children if getattr(c, "name", None)]:
            if f"celltag_{ANSWER_TAG}" not in (cell.get("class") or []):
                fold = None
                continue
            if fold is None:
                fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--answer"})
                summary = soup.new_tag("summary")
                summary.string = ANSWER_SUMMARY
                cell.insert_before(fold)
                fold.append(summary)
            fold.append(cell.extract())


# A listing longer than this many lines is folded under its file or object name (the way a table
# longer than MAX_OPEN_ROWS is): a 100-line class before the first pattern buried the lesson.
MAX_OPEN_LISTING_LINES = 40


def fold_long_listings(soup) -> None:
    """Fold each long ``show_source`` listing (not one inside a pattern's tabs, where the full
    program is the tab's point) under a summary naming it and its length."""
    for listing in soup.select("div.amp-code"):
        if listing.find_parent(class_="amp-tabs") or listing.find_parent("details"):
            continue
        pre = listing.find("pre")
        lines = len(pre.get_text().rstrip("\n").splitlines()) if pre is not None else 0
        if lines <= MAX_OPEN_LISTING_LINES:
            continue
        title = listing.find(class_="filename")
        fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--listing"})
        summary = soup.new_tag("summary")
        summary.string = f"{title.get_text(strip=True) if title else 'Source'} ({lines} lines)"
        listing.wrap(fold)
        fold.insert(0, summary)


# Calls whose only job is to show a result: a cell made of nothing else is presentation, not lesson.
PRESENTATION_CALLS = frozenset(
    {
        "display",
        "show_table",
        "show_figure",
        "show_cards",
        "publish",
        "Markdown",
        "claim",
        "on_this_machine",
        "check_statements",
        "in_this_build",
        "print",
    }
)
MIN_FOLDED_PRESENTATION_LINES = 3  # a shorter cell takes no more room than the fold's summary line


def _outer_call(stmt) -> str | None:
    import ast

    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


TABLE_BUILDERS = frozenset({"DataFrame", "table_from_rows"})  # a table typed out as data, for show_table


def _table_literal(stmt) -> bool:
    """``name = pd.DataFrame([...])`` / ``table_from_rows([...])`` or a literal: data the page shows."""
    import ast

    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    value = stmt.value
    return isinstance(value, (ast.List, ast.Dict, ast.Tuple, ast.Constant)) or _outer_call(stmt) in TABLE_BUILDERS


def presentation_only(code: str) -> bool:
    """Whether a cell only assembles what the page shows: every statement a call that shows a result
    (``show_table(...)``, ``display(...)``, ``publish(...)``) or a table typed out as data for one
    (``decision = pd.DataFrame([...])``), with at least one such call."""
    import ast

    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    shows = [_outer_call(s) in PRESENTATION_CALLS for s in body]
    return any(shows) and all(shown or _table_literal(s) for shown, s in zip(shows, body, strict=True))


def fold_setup(soup) -> None:
    """Fold a chapter's first code cell when it begins with imports: its setup (imports, the profile,
    the device, a helper), 10 to 25 lines that filled the first screen of every chapter. A page's first
    cell that shows a result (a top-level ``show_table``, ``display``, ``publish``... other than a
    ``print`` of the device) is lesson, not setup: a sub-page's first cell can be an experiment that
    imports what it uses, and its fold read "Imports and setup" over the figure's code."""
    import ast

    first = soup.select_one("div.jp-CodeCell div.jp-Cell-inputWrapper")
    code = _code_of(first) if first is not None else None
    if code is None or first.find_parent("details"):
        return
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return
    if not body or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
        return
    if any(_outer_call(s) in PRESENTATION_CALLS - {"print"} for s in body):
        return
    lines = len(code.strip().splitlines())
    fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--setup"})
    summary = soup.new_tag("summary")
    summary.string = f"Imports and setup ({lines} line{'s' if lines != 1 else ''})"
    first.wrap(fold)
    fold.insert(0, summary)


def fold_presentation(soup) -> None:
    """Fold the input of cells that only assemble what the page shows (a table's DataFrame, a
    figure's call, a list of checks), three lines or longer; their output stays open."""
    for wrapper in soup.select("div.jp-Cell-inputWrapper"):
        cell = wrapper.find_parent("div", class_="jp-CodeCell")
        code = _code_of(wrapper)
        if cell is None or code is None or wrapper.find_parent("details"):
            continue
        lines = len(code.strip().splitlines())
        if lines < MIN_FOLDED_PRESENTATION_LINES or not presentation_only(code):
            continue
        fold = soup.new_tag("details", attrs={"class": "amp-details amp-fold amp-fold--presentation"})
        summary = soup.new_tag("summary")
        summary.string = f"Code that shows the result ({lines} lines)"
        wrapper.wrap(fold)
        fold.insert(0, summary)
