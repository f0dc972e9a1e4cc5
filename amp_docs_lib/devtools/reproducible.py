"""Two cold builds must give the same pages, apart from timings, dates and stamps.

``compare_builds(a, b)`` normalises every HTML page of two built sites (stamps, dates and times,
the home page's execution seconds) and returns the pages that still differ, with the first
differing lines. ``cold_builds(project, chapters)`` makes two copies of a project holding only
the named chapters, builds each from an empty cache, and compares them.

Run ``python -m amp_docs_lib.devtools.reproducible formats autocast`` (chapters by name; default:
the smallest chapter) to check the real site; exit status 1 if pages differ.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from amp_docs_lib.core.paths import CACHE_DIR, REPO_ROOT
from amp_docs_lib.docsite.checkout import copy_checkout

# What legitimately changes between two builds of the same inputs.
NORMALISE = [
    (re.compile(r'<div class="amp-stamp[^"]*">.*?</div>', re.S), '<div class="amp-stamp">STAMP</div>'),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?"), "DATETIME"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "DATE"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|µs|us|ns)\b(?! *=)"), "DURATION"),
]
# The home page's chapter table: execution seconds per chapter.
_STATUS_ROW = re.compile(r"(<tr><td>[\w/-]+</td><td>[^<]*</td><td>[^<]*</td><td>)[\d.?]+(</td>)")


# Tables of timings (class "amp-timing", e.g. chapter execution seconds): their numbers.
_TIMING_TABLE = re.compile(r"<table[^>]*\bamp-timing\b.*?</table>", re.S)
_NUMBER_CELL = re.compile(r"<td>[-+\d.e]+</td>")


def normalise(html: str) -> str:
    """The page with stamps, dates, times and execution seconds replaced by placeholders."""
    for pat, rep in NORMALISE:
        html = pat.sub(rep, html)
    html = _TIMING_TABLE.sub(lambda m: _NUMBER_CELL.sub("<td>TIME</td>", m.group(0)), html)
    return _STATUS_ROW.sub(r"\1SECONDS\2", html)


def compare_builds(a: str | Path, b: str | Path, context: int = 2) -> dict[str, str]:
    """Pages of site ``a`` that differ from site ``b`` after ``normalise``: page -> diff excerpt."""
    a, b = Path(a), Path(b)
    pages_a = {p.relative_to(a).as_posix() for p in a.rglob("*.html")}
    pages_b = {p.relative_to(b).as_posix() for p in b.rglob("*.html")}
    out = {p: "only in one build" for p in pages_a ^ pages_b}
    for rel in sorted(pages_a & pages_b):
        x = normalise((a / rel).read_text(encoding="utf-8"))
        y = normalise((b / rel).read_text(encoding="utf-8"))
        if x != y:
            diff = difflib.unified_diff(x.splitlines(), y.splitlines(), "first", "second", n=context, lineterm="")
            out[rel] = "\n".join(line[:300] for line in list(diff)[:40])
    return out


def _copy_project(project: Path, dest: Path, chapters: list[str]) -> Path:
    copy_checkout(project, dest, CACHE_DIR.name)
    for md in (dest / "docs" / "chapters").glob("*.md"):
        if md.stem not in chapters:
            md.unlink()
    cfg_path = dest / "mkdocs.yml"
    text = cfg_path.read_text()
    # Drop the nav (it names every chapter); mkdocs builds one from the files present.
    lines, out, skipping = text.splitlines(), [], False
    for line in lines:
        if line.startswith("nav:"):
            skipping = True
            continue
        if skipping and (line.startswith(" ") or line.startswith("-") or not line.strip()):
            continue
        skipping = False
        out.append(line)
    cfg_path.write_text("\n".join(out) + "\n")
    return dest


def cold_builds(
    project: str | Path = REPO_ROOT, chapters: list[str] | None = None, workdir: str | Path | None = None
) -> dict[str, str]:
    """Build ``project`` twice from empty caches with only ``chapters``; return ``compare_builds``."""
    project = Path(project)
    have = sorted(p.stem for p in (project / "docs" / "chapters").glob("*.md"))
    chapters = chapters or [min(have, key=lambda c: (project / "docs" / "chapters" / f"{c}.md").stat().st_size)]
    bad = [c for c in chapters if c not in have]
    if bad:
        raise ValueError(f"unknown chapter(s) {bad}; valid: {have}")
    work = Path(workdir or tempfile.mkdtemp(prefix="amp-docs-repro-")).resolve()
    if project.resolve() in (work, *work.parents):
        raise ValueError(f"workdir {work} must not be inside the project {project}")
    sites = []
    for i in (1, 2):
        root = _copy_project(project, work / f"build{i}", chapters)
        env = dict(
            os.environ,
            NO_MKDOCS_2_WARNING="1",
            PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
        )
        r = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "-d", str(root / "site")],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(f"build {i} failed:\n{r.stderr[-3000:]}")
        sites.append(root / "site")
    return compare_builds(*sites)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m amp_docs_lib.devtools.reproducible",
        description="build chapters twice from empty caches and compare the pages",
    )
    ap.add_argument("chapters", nargs="*", help="chapter names (default: the smallest chapter)")
    args = ap.parse_args(argv)
    try:
        diffs = cold_builds(REPO_ROOT, args.chapters or None)
    except ValueError as e:
        ap.error(str(e))
    for page, d in diffs.items():
        print(f"--- {page} differs:\n{d}\n")
    print(f"{len(diffs)} page(s) differ beyond timings, dates and stamps")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
