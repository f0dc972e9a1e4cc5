"""Find claims whose check cannot fail, before a chapter runs.

A claim's check must fail exactly when its sentence is false. Some mistakes
make that impossible, and they can be seen in the code without running it:

``self-comparison``
    ``claim(s, x, x)``: the expected value is the measured expression itself.
``constant verdict``
    ``claim(s, m, holds=True)``: the verdict is a constant.
``definition as measurement``
    the measured value is a field of the format registry's definition
    (``get_format("TF32").mantissa_bits``): it equals what the registry was
    written with, so nothing is measured. State such facts as cited prose.
``discarded result``
    a ``show_*``/``claim``/``on_this_machine`` call whose value is thrown away (not the
    cell's last expression, not passed to ``display``): the page shows the call and nothing
    else, so the reader never sees the listing, table, figure or checked sentence.

A name assigned exactly once in the cell (``m = fmt.mantissa_bits``) is read as the
expression it was assigned, so ``y = x; claim(s, x, y)`` is a self-comparison too.
``on_this_machine(..., holds=True)`` is a constant verdict like ``claim``'s.

``lint_source(code)`` checks one code cell; ``lint_chapter(path)`` every code
cell of a chapter. The executor refuses to run a chapter with findings, so
every chapter gets the check. The lint sees syntax within one cell: what it
cannot see (a value computed in another cell or a function, a check weaker than
its sentence, such as a stated value checked only for ``> 0``) stays a review
convention (ARCHITECTURE.md, chapter conventions).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# Fields of amp_docs_lib.numbers.formats.NumberFormat that are the format's definition, not a measurement.
DEFINITION_FIELDS = frozenset({"mantissa_bits", "exponent_bits", "total_bits", "bias"})
CLAIM_FUNCTIONS = frozenset({"claim", "Statement"})
VERDICT_FUNCTIONS = CLAIM_FUNCTIONS | {"on_this_machine"}  # calls that take ``holds=``
# Page functions whose value is what the reader sees: a cell shows it only as its last expression.
SHOWN_FUNCTIONS = frozenset({"claim", "on_this_machine", "check_statements", "show_table", "show_cards",
                             "show_figure", "show_source", "show_diff", "show_pattern", "publish"})


@dataclass(frozen=True)
class LintFinding:
    """One claim that cannot fail: where it is, which rule, and the offending code."""

    rule: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.rule}: {self.code}"


def _name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _arg(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _reads_definition(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in DEFINITION_FIELDS


def _single_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Names the cell assigns exactly once (``x = expr``, a plain name target), with the expression."""
    seen: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    value = node.value if isinstance(node, ast.Assign) and t is n else None
                    seen.setdefault(n.id, []).append(value)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _resolved(node: ast.expr | None, assigned: dict[str, ast.expr]) -> ast.expr | None:
    """``node`` with a bare name assigned once in the cell replaced by its expression (one level deep
    at a time, at most a few steps, so ``a = b; b = a`` cannot loop)."""
    for _ in range(8):
        if not (isinstance(node, ast.Name) and node.id in assigned):
            break
        node = assigned[node.id]
    return node


def lint_source(code: str) -> list[LintFinding]:
    """Findings for the ``claim(...)`` and ``Statement(...)`` calls in ``code`` (one cell's source),
    and for page calls whose result the cell throws away.

    Code that does not parse (IPython magics, say) is skipped: the executor
    reports real syntax errors when it runs the cell.
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    assigned = _single_assignments(tree)
    last = tree.body[-1] if tree.body else None
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and node is not last and isinstance(node.value, ast.Call) \
                and _name(node.value) in SHOWN_FUNCTIONS:
            snippet = " ".join((ast.get_source_segment(code, node) or "").split())[:160]
            found.append(LintFinding("discarded result", node.lineno, snippet))
        if not (isinstance(node, ast.Call) and _name(node) in VERDICT_FUNCTIONS):
            continue
        snippet = ast.get_source_segment(code, node) or ""
        snippet = " ".join(snippet.split())[:160]
        holds = _resolved(_arg(node, 99, "holds"), assigned)
        if isinstance(holds, ast.Constant) and holds.value is True:
            found.append(LintFinding("constant verdict", node.lineno, snippet))
        if _name(node) not in CLAIM_FUNCTIONS:
            continue
        is_claim = _name(node) == "claim"
        # claim(statement, measured, expected) / Statement(statement, source, claimed, measured)
        measured = _resolved(_arg(node, 1 if is_claim else 3, "measured"), assigned)
        expected = _resolved(_arg(node, 2, "expected" if is_claim else "claimed"), assigned)
        if measured is not None and expected is not None and ast.dump(measured) == ast.dump(expected):
            found.append(LintFinding("self-comparison", node.lineno, snippet))
        if measured is not None and _reads_definition(measured):
            found.append(LintFinding("definition as measurement", node.lineno, snippet))
    return found


def lint_chapter(path: str | Path) -> list[tuple[int, LintFinding]]:
    """(cell index, finding) for every code cell of the chapter at ``path``."""
    from amp_docs_lib.core.chapters import read_chapter

    nb = read_chapter(path)
    return [(i, f) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for f in lint_source(cell.source)]
