"""The executed notebook as a reader gets it, on the page and as a download."""

from __future__ import annotations

import json
from pathlib import Path

from amp_docs_lib.docsite.builder_paths import without_builder_paths
from amp_docs_lib.docsite.store import write_atomic


def presented_notebook(executed: Path, out_dir: Path) -> Path:
    """The executed notebook as a reader gets it, on the page and as a download: an error a cell
    raises on purpose shows as its last line (exception type and message), not a traceback, and
    no output names a path of the machine that built it. Written next to the cache (once per
    executed notebook); the cached notebook itself is left as executed. Each cell's id is its position,
    ``cell-<k>`` (the page's element ids: jupytext draws new random ones on every read)."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    for k, cell in enumerate(nb.get("cells", [])):
        cell["id"] = f"cell-{k}"
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    text = without_builder_paths(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    dest = out_dir / executed.name
    if not dest.is_file() or dest.read_text(encoding="utf-8") != text:
        write_atomic(dest, text)  # a unique temporary name: concurrent builds do not race on one
    return dest
