"""Claims: a sentence of prose bound to the measurement that backs it.

``claim(...)`` renders the sentence with the value measured in this build.
A claim states something that holds on every machine; one that the
measurement contradicts raises ``ClaimContradicted``, which fails the build
and names the chapter.

``on_this_machine(...)`` is for facts that depend on the hardware (does this
device raise, is BF16 native, which dtype did the op run in). It takes one
sentence for each outcome and renders the one that matches what was measured,
neutrally, with a calm mark: what a machine does is never a failure.

``check_statements(...)`` is for statements made elsewhere (common figures,
other documents): each is compared with a measurement and shown with a
verdict; a wrong one is corrected on the page instead of failing the build.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pandas as pd

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.page.tables import StampedTable, show_table
from amp_docs_lib.page.stamp import stamp_text

_MISSING = object()


class ClaimContradicted(AssertionError):
    """A hardware-independent claim disagrees with what the build measured."""


def format_value(v: Any) -> str:
    """A measured value as prose shows it: a number that is exact in 6 significant digits as it
    is (``0.0078125``), any other to 4 (``0.4476``, not ``0.447595``); a list as words
    (``a, b and c``), not a Python repr."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == int(v) and abs(v) < 1e16:
            return f"{int(v)}"
        exact = f"{v:.6g}"
        return exact if float(exact) == v else f"{v:.4g}"
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [format_value(x) for x in (sorted(v, key=str) if isinstance(v, (set, frozenset)) else v)]
        if not items:
            return "none"
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    if hasattr(v, "item") and callable(v.item):  # tensors / numpy scalars
        try:
            return format_value(float(v.item()) if not isinstance(v.item(), bool) else v.item())
        except (TypeError, ValueError):
            pass
    return str(v)


def values_match(measured: Any, expected: Any, rel_tol: float = 0.0) -> bool:
    """Equality that treats NaN == NaN and allows a relative tolerance for numbers."""
    if isinstance(measured, (int, float)) and isinstance(expected, (int, float)) \
            and not isinstance(measured, bool) and not isinstance(expected, bool):
        m, e = float(measured), float(expected)
        if math.isnan(m) or math.isnan(e):
            return math.isnan(m) and math.isnan(e)
        return m == e or math.isclose(m, e, rel_tol=rel_tol, abs_tol=0.0)
    return measured == expected


def _scalar(v: Any) -> Any:
    """``v`` as a Python scalar if it is one (a float, a numpy scalar, a 0-d tensor), else None."""
    if isinstance(v, (bool, int, float)):
        return v
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        return v.item()
    return None


def _is_nan(v: Any) -> bool:
    x = _scalar(v)
    return isinstance(x, float) and math.isnan(x)


_CODE_SPAN = re.compile(r"`([^`]+)`")
_MD_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def inline_markdown(text: str) -> str:
    """``text`` as HTML, with the two pieces of Markdown a sentence of prose carries rendered:
    code spans (backticks) and links to other pages in Markdown form (the site turns .md links into
    page URLs).
    Everything else is escaped, so a measured value can never inject markup."""
    out = html.escape(text, quote=False)
    out = _CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    return _MD_LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', out)


def _render(text: str, cls: str, mark: str, verdict: str, source: str | None) -> str:
    src = f' <span class="amp-claim-source">({html.escape(source)})</span>' if source else ""
    return (f'<p class="amp-claim amp-claim--{cls}" title="{html.escape(stamp_text())}">'
            f'<span class="amp-claim-mark" aria-hidden="true">{mark}</span> {inline_markdown(text)}{src} '
            f'<span class="amp-claim-verdict">{verdict}</span></p>')


@dataclass
class Claim:
    """A statement that holds on every machine, checked against this build's measurement."""

    statement: str
    measured: Any
    expected: Any
    holds: bool
    source: str | None

    @property
    def text(self) -> str:
        return self.statement.format(measured=format_value(self.measured))

    def _repr_html_(self) -> str:
        return _render(self.text, "holds", "✓", "checked in this build", self.source)

    def __repr__(self) -> str:
        return f"[checked] {self.text}"


@dataclass
class MachineFact:
    """What this machine does, measured: rendered neutrally whichever way it came out."""

    text: str
    holds: bool
    measured: Any
    source: str | None

    def _repr_html_(self) -> str:
        return _render(self.text, "machine", "◆", "measured on this machine", self.source)

    def __repr__(self) -> str:
        return f"[this machine] {self.text}"


@shown_in_scripts
def claim(statement: str, measured: Any, expected: Any = _MISSING, *,
          holds: bool | None = None, rel_tol: float = 0.0, source: str | None = None) -> Claim:
    """State a fact that holds on every machine, together with its measurement.

    ``statement`` may contain ``{measured}``, replaced by the measured value.
    Give either ``expected`` (compared with ``measured``) or ``holds`` (a
    verdict computed by the caller). The check must fail exactly when the
    sentence is false: compare with a value computed independently (a
    definition, an analytic prediction, another library), never with the
    measurement itself. A claim that does not hold raises ``ClaimContradicted``.
    ``expected=nan`` is refused (a broken measurement would match it): claim
    ``math.isnan(x)`` with ``expected=True``; so is a float ``holds`` (``bool(nan)`` is True).
    Facts that depend on the hardware go through :func:`on_this_machine`.
    """
    if not isinstance(statement, str):
        raise TypeError(f"statement must be a str, got {type(statement).__name__}")
    if (expected is _MISSING) == (holds is None):
        raise ValueError("give exactly one of expected= or holds=")
    if _is_nan(expected):
        # NaN == NaN in values_match would let a failed measurement pass as checked.
        raise ValueError(f"expected={format_value(expected)}: a NaN cannot be checked by value (any failed "
                         f"measurement is NaN too); claim that the result is NaN with "
                         f"measured=math.isnan(x), expected=True")
    if isinstance(_scalar(holds), float):
        # bool(nan) and bool(0.3) are True: a number is not a verdict.
        raise TypeError(f"holds must be a bool (the caller's verdict), got {holds!r} ({type(holds).__name__})")
    if holds is None:
        holds = values_match(measured, expected, rel_tol)
    c = Claim(statement, measured, None if expected is _MISSING else expected, bool(holds), source)
    if not c.holds:
        exp = "" if expected is _MISSING else f", expected {format_value(expected)}"
        raise ClaimContradicted(f"claim contradicted: {c.text!r} (measured {format_value(measured)}{exp})")
    return c


@shown_in_scripts
def on_this_machine(if_true: str, if_false: str, *, holds: bool, measured: Any = None,
                    source: str | None = None) -> MachineFact:
    """A hardware-dependent fact, phrased as what this machine does.

    ``holds`` is the measured outcome; the sentence for that outcome is shown
    (``{measured}`` in it is replaced by ``measured``), prefixed with the
    device, e.g. ``on_this_machine("BF16 matmul is native.", "BF16 matmul is
    emulated.", holds=...)`` renders "On this machine (CPU: ...): BF16 matmul is
    emulated." No outcome fails the build or reads as an error.
    """
    for name, sentence in (("if_true", if_true), ("if_false", if_false)):
        if not isinstance(sentence, str):
            raise TypeError(f"{name} must be a str, got {type(sentence).__name__}")
    if not isinstance(holds, (bool, int)) and not hasattr(holds, "item"):
        raise TypeError(f"holds must be a bool, got {type(holds).__name__}")
    holds = bool(holds)
    from amp_docs_lib.core.env import short_device_name

    sentence = (if_true if holds else if_false).format(measured=format_value(measured))
    return MachineFact(f"On this machine ({short_device_name()}): {sentence}", holds, measured, source)


@dataclass
class Statement:
    """A statement made elsewhere, to be checked against a measurement."""

    statement: str
    source: str
    claimed: Any
    measured: Any
    rel_tol: float = 0.0
    judge: Callable[[Any, Any], bool] | None = None

    @property
    def holds(self) -> bool:
        if self.judge is not None:
            return bool(self.judge(self.claimed, self.measured))
        return values_match(self.measured, self.claimed, self.rel_tol)


@shown_in_scripts
def check_statements(statements: Iterable[Statement], caption: str | None = None) -> StampedTable:
    """Table of external statements, each with the measured value and a verdict."""
    rows = []
    for s in statements:
        if not isinstance(s, Statement):
            raise TypeError(f"check_statements takes Statement objects, got {type(s).__name__}")
        rows.append({
            "statement": s.statement, "source": s.source,
            "claimed": format_value(s.claimed), "measured here": format_value(s.measured),
            "verdict": "correct" if s.holds else "wrong: use the measured value",
        })
    return show_table(pd.DataFrame(rows), caption)
