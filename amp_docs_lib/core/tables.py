"""Table data conventions shared by every experiment: "n/a" for not applicable, never NaN.

Experiments return DataFrames built with ``table_from_rows``; the page kit renders them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

NOT_APPLICABLE = "n/a"


def short_dtype(dt: Any) -> str:
    """A dtype as a table shows it: ``torch.bfloat16`` -> ``'bfloat16'``; ``None`` -> ``'-'``."""
    return "-" if dt is None else str(dt).removeprefix("torch.")


def table_from_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame from row dicts in which ``None`` stays ``None`` (not applicable).

    ``pd.DataFrame(rows)`` turns ``None`` in a numeric column into NaN, which a
    reader cannot tell from the value NaN. Columns holding a ``None`` keep
    object dtype (numbers stay Python numbers); the others get their usual dtype.
    """
    df = pd.DataFrame(rows, dtype=object)
    for col in df.columns:
        if not any(v is None for v in df[col]):
            df[col] = df[col].infer_objects()
    return df


def format_cell(v: Any, float_format: str = ".4g") -> str:
    """How a table cell prints: None/pd.NA as "n/a" (not applicable), NaN as the value NaN."""
    if v is None or v is pd.NA:
        return NOT_APPLICABLE
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v != v:
            return "NaN"
        return format(v, float_format)
    return str(v)


def na_to_none(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every missing value (NaN, None, pd.NA) as ``None``: shown as "n/a", never NaN.

    For a frame pandas built (a merge, a pivot); build one from rows with ``table_from_rows``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"na_to_none expects a pandas DataFrame, got {type(df).__name__}")
    return df.astype(object).where(df.notna(), None)
