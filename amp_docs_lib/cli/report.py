"""``amp-docs report``'s output: the collected :class:`~amp_docs_lib.bench.report.Report` rendered as one
self-contained HTML file (inline CSS, no scripts, no requests) and as the Markdown summary the command
prints. Values are formatted by ``core.tables.format_cell``, the site's convention ("n/a" for not applicable).
"""

from __future__ import annotations

import datetime as _dt
import html
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from amp_docs_lib.bench.peaks import DATASHEET_SOURCE as PEAK_SOURCE
from amp_docs_lib.bench.report import SECTIONS, Report, collect
from amp_docs_lib.core.tables import format_cell


def _cell(v: Any) -> str:
    """A value in a Markdown table cell."""
    return format_cell(v).replace("|", "\\|").replace("\n", " ")


def _env_value(key: str, value: Any) -> str:
    """An environment entry in words: the TF32 switches as ``env.tf32_summary`` says them, other
    mappings as ``name value`` pairs."""
    from amp_docs_lib.core.env import tf32_summary

    if key == "tf32" and isinstance(value, dict):
        return tf32_summary(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {format_cell(v)}" for k, v in value.items())
    return format_cell(value)


def markdown_table(df: pd.DataFrame, max_rows: int = 40) -> str:
    """A DataFrame as a GitHub Markdown table (cells by ``core.tables.format_cell``: None as n/a)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.head(max_rows).itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    if len(df) > max_rows:
        lines.append(f"\n... {len(df) - max_rows} more rows in the HTML report")
    return "\n".join(lines)


def markdown_summary(rep: Report) -> str:
    """The summary the command prints: environment lines, then each section's table."""
    env = rep.environment
    out = ["# Precision landscape of this machine", ""]
    for k in ("device", "cpu_capability", "cpu_matmul", "tf32", "profile"):
        if k in env:
            out.append(f"- **{k}**: {_env_value(k, env[k])}")
    pk = env.get("packages") or {}
    if pk:
        out.append("- **versions**: " + _env_value("packages", pk))
    for name, df in rep.tables.items():
        out += ["", f"## {SECTIONS[name]}", ""]
        if name == "matmul":
            out.append(f"Datasheet peaks: {PEAK_SOURCE}.\n")
        if name == "autocast" and df.empty:
            out.append("The measured policy matches the documentation on every probed op.")
        else:
            out.append(markdown_table(df))
    out += ["", "Section times (s): " + ", ".join(f"{k} {v}" for k, v in rep.seconds.items())]
    return "\n".join(out)


_CSS = """body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:70em;
padding:0 1em;color:#1d1d1f}table{border-collapse:collapse;margin:.6em 0 1.6em;font-size:12.5px}
th,td{border-bottom:1px solid #ddd;padding:.25em .7em;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f3f4f8}h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em}
.stamp{color:#666;font-size:12px}@media (prefers-color-scheme:dark){body{background:#16171d;color:#ddd}
th{background:#262833}th,td{border-color:#3a3d4a}}"""


def to_html(rep: Report) -> str:
    """One self-contained HTML document (inline CSS; no scripts, fonts or images to fetch)."""
    env_rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_env_value(k, v))}</td></tr>"
        for k, v in rep.environment.items()
    )
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>amp-docs report</title><style>{_CSS}</style></head><body>",
        "<h1>Precision landscape of this machine</h1>",
        f"<p class='stamp'>amp-docs report, {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC; "
        f"section times (s): {html.escape(str(rep.seconds))}</p>",
        f"<h2>{SECTIONS['environment']}</h2><table>{env_rows}</table>",
    ]
    for name, df in rep.tables.items():
        parts.append(f"<h2>{html.escape(SECTIONS[name])}</h2>")
        if name == "autocast" and df.empty:
            parts.append("<p>The measured policy matches the documentation on every probed op.</p>")
        else:
            parts.append(df.astype(object).map(format_cell).to_html(index=False, border=0, escape=True))
    parts.append("</body></html>")
    return "\n".join(parts)


def check_writable(folder: Path, what: str) -> None:
    """Raise ValueError unless a file can be created in ``folder`` (a probe, removed at once), so that
    an output that cannot be written fails before the work, not after it. ``what`` names the option."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".amp-docs-probe-"):
            pass
    except OSError as e:
        raise ValueError(f"{what}: cannot write in {str(folder)!r} ({e.strerror or e})") from None


def write_report(output: str = "amp-docs-report.html", size: int | None = None, skip: tuple[str, ...] = ()) -> int:
    """Collect the report, write ``output`` and print the Markdown summary."""
    out = Path(output)
    if out.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"--output must be an .html file, got {output!r}")
    if not out.parent.resolve().is_dir():
        raise ValueError(f"--output's folder {str(out.parent)!r} does not exist")
    check_writable(out.parent, "--output")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValueError(f"--output {output!r} exists and cannot be written")
    t0 = time.perf_counter()
    rep = collect(size=size, skip=skip, progress=lambda s: print(s, file=sys.stderr, flush=True))
    out.write_text(to_html(rep), encoding="utf-8")
    print(markdown_summary(rep))
    print(f"\nHTML report written to {out} ({time.perf_counter() - t0:.1f} s in all)", file=sys.stderr)
    return 0
