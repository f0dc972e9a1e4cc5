"""Reference machines: this build's key measurements beside other machines'.

A chapter *publishes* a key measurement with ``page.publish.publish`` instead of
``show_table``: the page shows the same stamped table, and the executed notebook
carries the data (in the output's metadata, under ``amp_docs_measurement``) so that

* ``amp-docs package-reference`` can package this machine's results as a new reference
  machine, ``docs/reference-results/<machine>/`` (``machine.json``, ``measurements.json``,
  ``report.json``/``report.html``, and the outputs of the gated cells that ran here, which
  machines without that hardware then show in place of the skipped cell);
* the "Yours vs reference" page shows each published measurement from this build beside the
  same measurement of every committed reference machine, each with its stamp.

Nothing here lists chapters or measurements by name: whatever the chapters publish is collected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from amp_docs_lib.core.paths import CHAPTER_DOWNLOADS_DIR, REFERENCE_RESULTS
from amp_docs_lib.page.publish import measurements_from_notebook

REFERENCE_ROOT = REFERENCE_RESULTS  # relative to the project (the working directory)
MACHINE_FILE = "machine.json"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def measurements_from_site(site: str | Path) -> dict[str, dict]:
    """Every measurement published by the executed notebooks of a built site (``downloads/chapters``)."""
    nbs = sorted((Path(site) / CHAPTER_DOWNLOADS_DIR).glob("*.ipynb"))
    if not nbs:
        raise ValueError(
            f"no executed notebooks under {Path(site) / CHAPTER_DOWNLOADS_DIR}: build the site first (`amp-docs build`)"
        )
    out: dict[str, dict] = {}
    for p in nbs:
        out.update(measurements_from_notebook(json.loads(p.read_text(encoding="utf-8"))))
    return out


def machine_name() -> str:
    """A folder name for this machine: the GPU's name, or the CPU's with its vector ISA."""
    from amp_docs_lib.core.env import cpu_capability, cpu_model, gpus

    g = gpus()
    raw = g[0]["name"] if g else f"cpu {cpu_model()} {cpu_capability()}"
    return re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")[:60]


def reference_machines(root: str | Path = REFERENCE_ROOT) -> dict[str, dict]:
    """Committed reference machines: folder name -> {machine: ..., measurements: ...}."""
    out = {}
    for d in sorted(Path(root).glob(f"*/{MACHINE_FILE}")):
        m = d.parent
        meas = m / "measurements.json"
        out[m.name] = {
            "machine": json.loads(d.read_text()),
            "measurements": json.loads(meas.read_text()) if meas.exists() else {},
        }
    return out


def _table(m: dict) -> pd.DataFrame:
    return pd.DataFrame(m["data"], columns=m["columns"], dtype=object)  # object: null stays None ("n/a"), not NaN


_PUBLISH_CALL = re.compile(r"""publish\(\s*["']([a-z0-9][a-z0-9_.-]*)["']""")


def skipped_measurements(site: str | Path) -> dict[str, list[str]]:
    """Measurements whose cell this build skipped (gated on hardware it lacks): name -> unmet requirements.

    Found by reading the ``publish("name", ...)`` calls in the skipped cells of the site's executed
    notebooks (``downloads/chapters``).
    """
    out: dict[str, list[str]] = {}
    for p in sorted((Path(site) / CHAPTER_DOWNLOADS_DIR).glob("*.ipynb")):
        for cell in json.loads(p.read_text(encoding="utf-8")).get("cells", []):
            unmet = (cell.get("metadata") or {}).get("amp_docs", {}).get("skipped")
            if cell.get("cell_type") == "code" and unmet:
                src = cell.get("source", "")
                for name in _PUBLISH_CALL.findall("".join(src) if isinstance(src, list) else src):
                    out[name] = list(unmet)
    return out


def _describe(requirement: str) -> str:
    from amp_docs_lib.core.gating import describe

    try:
        return describe(requirement)
    except ValueError:  # a requirement this version does not know (an older or newer notebook)
        return requirement


def _differences_html(tables: list[tuple[str, pd.DataFrame]]) -> str:
    """A note naming the rows (by first column) and columns that not every machine has."""
    import html

    if len(tables) < 2:
        return ""
    notes = []
    cols = {label: list(df.columns) for label, df in tables}
    all_cols = list(dict.fromkeys(c for cs in cols.values() for c in cs))
    odd_cols = [c for c in all_cols if not all(c in cs for cs in cols.values())]
    if odd_cols:
        notes.append(
            "Columns not on every machine: "
            + "; ".join(
                f"<code>{html.escape(str(c))}</code> ({', '.join(html.escape(label) for label, cs in cols.items() if c in cs)})"
                for c in odd_cols
            )
        )
    firsts = {df.columns[0] for _, df in tables if len(df.columns)}
    if len(firsts) == 1:
        keys = {label: [str(v) for v in df.iloc[:, 0]] for label, df in tables}
        all_keys = list(dict.fromkeys(k for ks in keys.values() for k in ks))
        odd = [k for k in all_keys if not all(k in ks for ks in keys.values())]
        if odd:
            notes.append(
                f"Rows (by <code>{html.escape(str(next(iter(firsts))))}</code>) not on every machine: "
                + "; ".join(
                    f"<code>{html.escape(k)}</code> ({', '.join(html.escape(label) for label, ks in keys.items() if k in ks)})"
                    for k in odd
                )
            )
    return "".join(f"<p class='amp-compare-note'>{n}.</p>" for n in notes)


def _number(v) -> float | None:
    """``v`` as a float when it is a number (``"NaN"``, how a notebook stores NaN, included); else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if v == "NaN":
        return float("nan")
    return None


def side_by_side(tables: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame | None:
    """One measurement from several machines as one table: a row per (row of the measurement, numeric
    column), a column per machine, and this build's value divided by each reference's.

    Rows are matched by the measurement's non-numeric columns (its keys); ``None`` when fewer than two
    machines have the measurement or their tables have different keys (then each is shown alone)."""
    if len(tables) < 2:
        return None

    def key_columns(df: pd.DataFrame) -> list[str]:
        return [c for c in df.columns if any(v is not None and _number(v) is None for v in df[c])]

    keys = key_columns(tables[0][1])
    if not keys or any(key_columns(df) != keys for _, df in tables[1:]):
        return None
    cells: dict[tuple, dict[str, float | None]] = {}
    for label, df in tables:
        for _, row in df.iterrows():
            key = tuple(str(row[c]) for c in keys)
            for col in df.columns:
                if col not in keys:
                    cells.setdefault((*key, str(col)), {})[label] = _number(row[col])
    labels = [label for label, _ in tables]
    mine = "This build" if "This build" in labels else None
    rows = []
    for key, values in cells.items():
        row = dict(zip([*keys, "quantity"], key, strict=True))
        row.update({label: values.get(label) for label in labels})
        if mine is not None:
            for label in labels:
                if label != mine:
                    a, b = values.get(mine), values.get(label)
                    ok = a is not None and b is not None and b != 0 and a == a and b == b
                    row[f"this build ÷ {label.removeprefix('Reference: ')}"] = a / b if ok else None
        rows.append(row)
    return pd.DataFrame(rows, dtype=object)


def comparison_html(site: str | Path, root: str | Path = REFERENCE_ROOT) -> str:
    """HTML of the "Yours vs reference" page body: per measurement, one table with a column per machine
    and this build's ratio to each (``side_by_side``), then each machine's own table in a fold; a
    measurement whose machines' tables do not line up shows them one under the other."""
    import html

    from amp_docs_lib.page.tables import table_html

    def tbl_df(df: pd.DataFrame) -> str:
        return table_html(df, float_format=".4g")  # aligned, in its own scroll box

    def tbl(m: dict) -> str:
        return tbl_df(_table(m))

    mine = measurements_from_site(site)
    skipped = skipped_measurements(site)
    refs = reference_machines(root)
    timing = _timing_html(site, refs)

    def named(k: str) -> str:  # each machine's stamp is said here, once; a table repeats it only if its own differs
        label, stamp = refs[k]["machine"].get("label"), refs[k]["machine"].get("stamp")
        return (
            f"<li><code>{html.escape(k)}</code>{': ' + html.escape(label) if label else ''}"
            + (f"<p class='amp-stamp amp-stamp--measured'>measured on {html.escape(stamp)}</p>" if stamp else "")
            + "</li>"
        )

    committed = (
        f"<p class='amp-references'>Reference machines committed with this site:</p>"
        f"<ul class='amp-references'>{''.join(named(k) for k in sorted(refs))}</ul>"
        if refs
        else "<p class='amp-references'>No reference machine is committed with this site yet, so "
        "every table below has only this build's column. A machine is added with "
        "<code>amp-docs package-reference</code> (see Rebuild on your GPU).</p>"
    )

    names = sorted(set(mine) | {n for r in refs.values() for n in r["measurements"]})
    if not names:
        return (
            committed
            + (
                "<p>No chapter publishes a key measurement yet (chapters publish with "
                "<code>amp_docs_lib.page.publish.publish</code>).</p>"
            )
            + timing
        )
    parts = []
    this_build: dict[str, None] = {}  # this build's stamps, in order, once each
    for name in names:
        any_m = mine.get(name) or next(r["measurements"][name] for r in refs.values() if name in r["measurements"])
        heading = any_m.get("caption") or name
        parts.append(f'<h2 id="{html.escape(name)}">{html.escape(heading)}</h2>')
        cols = [("This build", mine.get(name))]
        cols += [(f"Reference: {k}", r["measurements"].get(name)) for k, r in refs.items()]
        blocks, tables = [], []
        for label, m in cols:
            if m:
                body = tbl(m)
                tables.append((label, _table(m)))
            elif label == "This build" and name in skipped:
                body = (
                    f"<p class='amp-skip'>not measured on this machine: its cell needs "
                    f"{html.escape(' and '.join(_describe(r) for r in skipped[name]))}</p>"
                )
            elif label == "This build":
                body = "<p class='amp-skip'>not measured on this machine: no chapter of this build published it</p>"
            else:
                body = "<p class='amp-skip'>not measured on this reference machine</p>"
            if m and label == "This build":  # said once, at the top of the page
                this_build.setdefault(m.get("stamp") or "")
            machine_stamp = refs[label[len("Reference: ") :]]["machine"].get("stamp") if label != "This build" else None
            stamp = (
                f"<div class='amp-stamp amp-stamp--measured'>{html.escape(m.get('stamp') or '')}</div>"
                if m and label != "This build" and _bare(m.get("stamp")) != _bare(machine_stamp)
                else ""
            )
            if m and m.get("caption") and m["caption"] != heading:  # e.g. another profile's problem size
                label = f"{label}: {m['caption']}"
            blocks.append(
                f"<div class='amp-result amp-compare'><figcaption>{html.escape(label)}</figcaption>{body}{stamp}</div>"
            )
        merged = side_by_side(tables)
        if merged is None:
            parts.append(_differences_html(tables))
            parts += blocks
        else:  # one table to compare in; each machine's own table, with its stamp, one click away
            parts.append(f"<div class='amp-result amp-compare amp-compare--merged'>{tbl_df(merged)}</div>")
            parts.append(
                "<details class='amp-details amp-compare-each'><summary>Each machine's table as published</summary>"
                + _differences_html(tables)
                + "".join(blocks)
                + "</details>"
            )
    provenance = "".join(
        f"<p class='amp-stamp amp-stamp--measured'>This build: measured on {html.escape(s)}</p>"
        for s in this_build
        if s
    )
    return committed + provenance + "\n".join(parts) + timing


def _bare(stamp: str | None) -> str:
    """A stamp without its "measured on" prefix (measurements and machine files differ in that only)."""
    return (stamp or "").removeprefix("measured on ").strip()


def _timing_html(site: str | Path, refs: dict[str, dict]) -> str:
    """Chapter execution seconds: this build, then each reference machine (its machine.json)."""
    from amp_docs_lib.core.tables import table_from_rows

    mine = {}
    for p in sorted((Path(site) / CHAPTER_DOWNLOADS_DIR).glob("*.ipynb")):
        meta = json.loads(p.read_text(encoding="utf-8")).get("metadata", {}).get("amp_docs", {})
        mine[p.stem] = meta
    chapters = sorted(set(mine) | {c for r in refs.values() for c in r["machine"].get("chapters", {})})
    rows = []
    for c in chapters:
        row = {
            "chapter": c,
            "this build (s)": (mine.get(c) or {}).get("seconds"),
            "this build's profile": (mine.get(c) or {}).get("profile"),
        }
        for k, r in refs.items():
            row[f"{k} (s)"] = (r["machine"].get("chapters", {}).get(c) or {}).get("seconds")
        rows.append(row)
    from amp_docs_lib.docsite.fragments import TIMING_ANCHOR
    from amp_docs_lib.page.tables import table_html

    return (
        f'<h2 id="{TIMING_ANCHOR}">Chapter execution time</h2>'
        "<p>Seconds each chapter took to execute, read from the executed notebooks of this "
        "build and from each reference machine's <code>machine.json</code>.</p>"
        + table_html(table_from_rows(rows), float_format=".3g")
    )
