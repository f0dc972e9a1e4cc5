"""``show_table``: a DataFrame as a stamped HTML table, the way chapters show results.

Not-applicable cells (``None``) print as "n/a", never as NaN; a table longer than
``MAX_OPEN_ROWS`` rows is collapsed into a ``<details>`` block (lead with a summary above it).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from amp_docs_lib.core.env import environment_report, report_rows
from amp_docs_lib.core.tables import NOT_APPLICABLE, format_cell
from amp_docs_lib.page.stamp import Stamped

# Longer tables are collapsed (a reader scans a summary, then opens the full table if they want it).
MAX_OPEN_ROWS = 15


class StampedTable(Stamped):
    def __init__(self, df: pd.DataFrame, caption: str | None, html_body: str, **kw: Any):
        super().__init__(html_body, caption, "table", **kw)
        self.df = df

    def __repr__(self) -> str:
        return f"{self.caption or ''}\n{self.df.to_string()}\n[{self.stamp}]"


def _is_text(col: pd.Series) -> bool:
    """A column of strings (missing values aside), whatever dtype pandas gave it."""
    values = [v for v in col if not (v is None or (isinstance(v, float) and v != v))]
    return bool(values) and all(isinstance(v, str) for v in values)


def show_table(df: pd.DataFrame, caption: str | None = None, *, float_format: str = ".4g",
               index: bool = False, source: str | None = None,
               collapsed: bool | None = None, report: dict[str, Any] | None = None) -> StampedTable:
    """Render ``df`` as a stamped HTML table (the last expression of a cell).

    ``source``: for data that was not measured in this build (documented op
    lists, datasheet figures), the name and version of its source; the table
    then carries a source stamp instead of a measurement stamp.
    ``collapsed``: put the table in a closed ``<details>`` block; by default
    tables longer than ``MAX_OPEN_ROWS`` rows are collapsed. Cells holding
    ``None`` print as "n/a" (not applicable), distinct from a NaN value.
    ``report``: the environment report the measurement stamp names (default: this process's).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_table expects a pandas DataFrame, got {type(df).__name__}")
    if collapsed is None:
        collapsed = len(df) > MAX_OPEN_ROWS
    # Cells are formatted here, not through to_html's formatters, which pandas skips for None.
    # A missing value in a text column cannot be the number NaN: pandas stores a None there as
    # NaN, so it is shown as not applicable. Numeric columns keep None only via table_from_rows.
    def cell(v: Any, text_column: bool) -> str:
        if text_column and isinstance(v, float) and v != v:
            return NOT_APPLICABLE
        return format_cell(v, float_format)

    shown = pd.DataFrame({c: [cell(v, _is_text(df[c])) for v in df[c]] for c in df.columns}, index=df.index)
    shown.columns = df.columns
    body = shown.to_html(index=index, border=0, classes="amp-table", escape=True)
    return StampedTable(df, caption, body, source=source, collapsed=bool(collapsed),
                        size_note=f"({len(df)} rows)", report=report)


def environment_table(report: dict[str, Any] | None = None) -> StampedTable:
    """The full environment report as a table (the home page shows it); ``report`` defaults to
    ``env.environment_report()``."""
    r = environment_report() if report is None else report
    df = pd.DataFrame(report_rows(r), columns=["item", "value"]).astype(str)
    return show_table(df, "Environment of this build", report=r)
