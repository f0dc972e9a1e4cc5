"""Tables as a reader sees them (``show_table``).

Text columns are left-aligned and wrap; a text column of short labels (``SHORT_LABEL_CHARS`` at most:
"yes", "float32", "cpu, cuda") is a label column, as narrow as its longest label and never wrapped, so
that it does not take a prose column's minimum width; number columns are right-aligned with tabular
figures and never wrap mid-number. Every table sits in its own horizontal scroll container whose first
column stays put, so a wide table never widens the page. ``columns=`` shows only the columns that
carry the chapter's point, with the full table one click away in a fold; every table offers its
full data as CSV; ``show_cards`` shows a table whose rows are paragraphs (claims and their verdicts)
as one card per row. An empty table is not drawn: the page says in a sentence that there is none.
Cells holding ``None`` print as "n/a" (not applicable), distinct from a NaN value.
"""

from __future__ import annotations

import base64
import html
import re
from typing import Any, Sequence

import pandas as pd

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.core.env import environment_report, report_rows
from amp_docs_lib.core.tables import NOT_APPLICABLE, format_cell
from amp_docs_lib.page.stamp import Stamped

# Longer tables are collapsed (a reader scans a summary, then opens the full table if they want it).
MAX_OPEN_ROWS = 15
# A text column whose every cell is at most this long is a label column (``amp-label``): no minimum
# width and no wrapping. The minimum width of a prose column (7em, amp-docs.css) is about 14 characters.
SHORT_LABEL_CHARS = 14


def _is_text(col: pd.Series) -> bool:
    """A column of strings (missing values aside), whatever dtype pandas gave it."""
    values = [v for v in col if not (v is None or (isinstance(v, float) and v != v))]
    return bool(values) and all(isinstance(v, str) for v in values)


def _is_number(v: Any) -> bool:
    import numpy as np

    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _numeric_column(col: pd.Series) -> bool:
    """Numbers (n/a and NaN aside): right-aligned."""
    values = [v for v in col if v is not None and v is not pd.NA]
    return bool(values) and all(_is_number(v) for v in values)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "table"


def table_html(df: pd.DataFrame, *, float_format: str = ".4g", index: bool = False) -> str:
    """``df`` as the book's HTML table (alignment classes, formatted cells), in its scroll container."""
    if index:
        df = df.reset_index()
    # Cells are formatted here: pandas' formatters skip None. A missing value in a text column cannot
    # be the number NaN (pandas stores None there as NaN), so it is shown as not applicable.
    head, rows = [], []
    kinds = []
    columns = [df.iloc[:, j] for j in range(df.shape[1])]  # by position: column names may repeat
    shown = [[NOT_APPLICABLE if text and isinstance(v, float) and v != v else format_cell(v, float_format)
              for v in col] for col, text in ((col, _is_text(col)) for col in columns)]
    for c, col, cells in zip(df.columns, columns, shown, strict=True):
        kind = ("amp-num" if _numeric_column(col)
                else "amp-label" if max(map(len, cells), default=0) <= SHORT_LABEL_CHARS else "amp-text")
        kinds.append(kind)
        head.append(f'<th class="{kind}" scope="col">{html.escape(str(c))}</th>')
    for r in range(len(df)):
        cells = "".join(f'<td class="{kind}">{html.escape(col[r])}</td>' for kind, col in zip(kinds, shown, strict=True))
        rows.append("<tr>" + cells + "</tr>")
    return (f'<div class="amp-table-scroll"><table class="amp-table">'
            f'<thead><tr>{"".join(head)}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _csv_link(df: pd.DataFrame, caption: str | None, *, index: bool = False) -> str:
    """A link that downloads ``df`` as CSV (a data URI here; the site build moves it to a file)."""
    data = df.to_csv(index=index).encode()
    name = _slug(caption or "table") + ".csv"
    return (f'<a class="amp-csv" download="{name}" href="data:text/csv;base64,{base64.b64encode(data).decode()}">'
            f'CSV</a>')


class StampedTable(Stamped):
    def __init__(self, df: pd.DataFrame, caption: str | None, html_body: str, **kw: Any):
        super().__init__(html_body, caption, "table", **kw)
        self.df = df

    def __repr__(self) -> str:
        return f"{self.caption or ''}\n{self.df.to_string()}\n[{self.stamp}]"


class NoRows:
    """What an empty table shows: one sentence, no table and no stamp."""

    def __init__(self, df: pd.DataFrame, sentence: str):
        self.df, self.sentence = df, sentence

    def _repr_html_(self) -> str:
        return f'<p class="amp-empty">{html.escape(self.sentence)}</p>'

    def __repr__(self) -> str:
        return self.sentence


@shown_in_scripts
def show_table(df: pd.DataFrame, caption: str | None = None, *, float_format: str = ".4g",
               index: bool = False, source: str | None = None, collapsed: bool | None = None,
               columns: Sequence[str] | None = None, empty: str | None = None,
               report: dict[str, Any] | None = None) -> StampedTable | NoRows:
    """Render ``df`` as a stamped HTML table (the last expression of a cell).

    ``columns``: the columns that carry the point, shown inline; the full table follows in a
    closed fold. ``source``: for data not measured in this build (documented op lists, datasheet
    figures), the name and version of its source; the table then carries a source stamp.
    ``collapsed``: put the table in a closed fold; by default tables longer than ``MAX_OPEN_ROWS``
    rows are. ``empty``: the sentence shown instead of a table without rows (default: the caption
    and "none in this build"). ``report``: the environment report of a measurement made elsewhere.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_table expects a pandas DataFrame, got {type(df).__name__}")
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing or not len(columns):
            raise ValueError(f"columns {missing or list(columns)} are not columns of the table; "
                             f"valid: {list(df.columns)}")
    if df.empty:
        what = (caption or "Rows").rstrip(" .:…")
        return NoRows(df, empty or f"{what}: none in this build.")
    if collapsed is None:
        collapsed = len(df) > MAX_OPEN_ROWS
    full = table_html(df, float_format=float_format, index=index)
    rows = f"{len(df)} rows" if len(df) != 1 else "1 row"
    if columns is not None and list(columns) != list(df.columns):
        body = (table_html(df[list(columns)], float_format=float_format, index=index)
                + f'<details class="amp-details amp-details--full"><summary>Full table '
                  f'({len(df.columns) + (1 if index else 0)} columns, {rows})</summary>{full}</details>')
    else:
        body = full
    size_note = f"({rows})"
    body += _csv_link(df, caption, index=index)
    return StampedTable(df, caption, body, source=source, collapsed=bool(collapsed),
                        size_note=size_note, report=report)


@shown_in_scripts
def show_cards(df: pd.DataFrame, caption: str | None = None, *, title: str, badge: str,
               source: str | None = None, collapsed: bool = False, empty: str | None = None,
               report: dict[str, Any] | None = None, links: dict[str, str] | None = None) -> StampedTable | NoRows:
    """Render ``df`` as one card per row: a table too wide for the column, read row by row.

    Each card leads with the ``title`` column (a claim, say) and the ``badge`` column beside it
    (its verdict); every other column with a value in that row follows as a labelled line. Each
    row is printed once; the full data downloads as CSV. ``links`` maps a column to the column
    holding each row's URL for it: that cell is a link, and the URL column is not a line of its own.
    Arguments otherwise as ``show_table``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_cards expects a pandas DataFrame, got {type(df).__name__}")
    links = links or {}
    bad = [c for c in (title, badge, *links, *links.values()) if c not in df.columns]
    if bad:
        raise ValueError(f"title/badge/links {bad} are not columns of the table; valid: {list(df.columns)}")
    if df.empty:
        what = (caption or "Rows").rstrip(" .:…")
        return NoRows(df, empty or f"{what}: none in this build.")
    rest = [c for c in df.columns if c not in (title, badge, *links.values())]

    def cell(row, c) -> str:
        text = html.escape(format_cell(row[c], ".4g"))
        url = row[links[c]] if c in links else None
        return text if _missing(url) else f'<a href="{html.escape(str(url))}">{text}</a>'

    cards = []
    for _, row in df.iterrows():
        mark = str(row[badge])
        lines = "".join(f"<dt>{html.escape(str(c))}</dt><dd>{cell(row, c)}</dd>"
                        for c in rest if not _missing(row[c]))
        cards.append(f'<li class="amp-card"><p class="amp-card__title">'
                     f'<span class="amp-badge amp-badge--{_slug(mark)}">{html.escape(mark)}</span> '
                     f'{html.escape(str(row[title]))}</p><dl class="amp-card__details">{lines}</dl></li>')
    rows = f"{len(df)} rows" if len(df) != 1 else "1 row"
    body = f'<ul class="amp-cards">{"".join(cards)}</ul>' + _csv_link(df, caption)
    return StampedTable(df, caption, body, source=source, collapsed=collapsed, size_note=f"({rows})",
                        report=report)


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip())


def environment_table(report: dict[str, Any] | None = None) -> StampedTable:
    """The full environment report as a table (the home page shows it); ``report`` defaults to
    ``env.environment_report()``."""
    r = environment_report() if report is None else report
    df = pd.DataFrame(report_rows(r), columns=["item", "value"]).astype(str)
    return show_table(df, "Environment of this build", report=r)
