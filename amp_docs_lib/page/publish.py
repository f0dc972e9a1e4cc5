"""``publish``: show a chapter's key measurement and carry its data in the executed notebook.

The page shows the same stamped table as ``show_table``; the notebook output's metadata holds the
data (under ``amp_docs_measurement``), from which ``docsite.references`` builds "Yours vs
reference" and ``amp-docs package-reference`` packages this machine as a reference machine.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pandas as pd

from amp_docs_lib.page.notebook import shown_in_scripts
from amp_docs_lib.page.tables import StampedTable, show_table

METADATA_KEY = "amp_docs_measurement"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class PublishedTable(StampedTable):
    """A stamped table whose data also travels in the notebook output's metadata."""

    def __init__(self, name: str, table: StampedTable):
        self.__dict__.update(table.__dict__)
        self.name = name

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"text/html": self._repr_html_(), "text/plain": repr(self)}
        # JSON has no NaN/inf (to_json would write null, shown as "n/a"): keep them as the page shows them.
        df = self.df.astype(object).map(_json_safe)
        records = json.loads(df.to_json(orient="split", index=False, default_handler=str))
        meta = {METADATA_KEY: {"name": self.name, "caption": self.caption, "stamp": self.stamp,
                               "columns": records["columns"], "data": records["data"]}}
        return data, meta


def _json_safe(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("inf" if v > 0 else "-inf")
    return v


@shown_in_scripts
def publish(name: str, df: pd.DataFrame, caption: str, *, quiet: bool | None = None,
            **show_table_kw: Any) -> PublishedTable:
    """Show ``df`` like ``show_table`` and publish it as the key measurement ``name``.

    ``name``: lower-case letters, digits, ``_ . -``, unique across the site, prefixed with the
    chapter's name (``formats_spacing``). Raises ValueError for a bad name. ``quiet``: a timing's
    load-check verdict (``LoadCheck.quiet``); False marks the caption, which travels with the data
    into "Yours vs reference", so a timing taken on a busy machine is never compared unmarked.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"measurement name must match {_NAME.pattern} (e.g. 'perf_matmul_throughput'), "
                         f"got {name!r}")
    if quiet is False:
        caption += " (measured while the machine was busy: the load check drew no conclusion from it)"
    return PublishedTable(name, show_table(df, caption, **show_table_kw))


def measurements_from_notebook(nb: dict) -> dict[str, dict]:
    """The measurements a (JSON-loaded) executed notebook published, by name."""
    out = {}
    for cell in nb.get("cells", []):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            m = (o.get("metadata") or {}).get(METADATA_KEY)
            if m:
                out[m["name"]] = dict(m, chapter=nb.get("metadata", {}).get("amp_docs", {}).get("chapter"))
    return out
