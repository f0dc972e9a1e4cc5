"""Benchmark of the site build: cold build, no-op rebuilds, and rebuilds after typical edits.

Run from the repository root: ``amp-docs bench-build``. It builds a private copy
of the checkout into a temporary directory with an empty cache, so it never
disturbs your own site or cache. It reports wall times and which chapters
executed in each build, and why. Two no-op figures are reported: ``amp-docs build``
(which returns at once when no input changed) and ``amp-docs build --force``
(mkdocs runs and renders every page, every chapter comes from the cache).
Then, each from the warm cache the previous build left (``EDITS``): a one-word
prose edit in a chapter (nothing executes: the new Markdown is merged into the
cached outputs), a comment added to the quantization chapter's affine-quantization
module (only the chapters that imported it execute), a comment added to the site's
execution module (nothing executes: the machinery is no chapter's input) and an
edited example program (only the chapters that show or run it execute).

It also compares a plain ``mkdocs build`` with nothing changed against mkdocs
alone building the same pages: a copy of the site in which each chapter is the
Markdown page of its executed notebook (``docsite.notebook_page``) and the amp-docs
plugin is removed, everything else in ``mkdocs.yml`` unchanged: what the plugin's
no-op costs on top of rendering. The two are timed
alternately, several rounds, and their medians compared (target: at most 1.2x).
``--noop-only`` skips the cold build and uses the checkout's own execution cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amp_docs_lib.core.paths import BUILD_LOG, CACHE_DIR, EXECUTED_DIR
from amp_docs_lib.docsite.checkout import copy_checkout


def _build(root: Path, site: Path, *extra: str, env: dict | None = None) -> tuple[float, dict | None]:
    """Time one ``amp-docs build``; return the seconds and the plugin's log (None if mkdocs never ran)."""
    log_path = root / BUILD_LOG
    log_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "amp_docs_lib", "build", *extra, "--strict", "-q", "-d", str(site)],
        cwd=root,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1", **(env or {})),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    dt = time.perf_counter() - t0
    return dt, json.loads(log_path.read_text()) if log_path.exists() else None


NOOP_TARGET = 1.2  # a plain no-op build may take at most this times mkdocs' own build of the same pages


def _mkdocs_seconds(root: Path, site: Path, library_from: Path | None = None) -> float:
    """Seconds of one ``mkdocs build`` of ``root``; ``library_from``: the checkout whose
    ``amp_docs_lib`` the API reference documents (the plain copy has none of its own)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if library_from is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(library_from), env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"mkdocs build in {root} failed:\n{r.stderr[-3000:]}")
    return time.perf_counter() - t0


def executed_notebooks(repo: Path) -> dict[str, Path]:
    """Each chapter's newest executed notebook in ``repo``'s cache (chapter file name -> notebook);
    ``ValueError`` naming the chapters that have none."""
    cache = repo / EXECUTED_DIR
    found, missing = {}, []
    for md in sorted((repo / "docs" / "chapters").glob("*.md")):
        entries = sorted(cache.glob(f"{md.stem}-*.ipynb"), key=lambda p: p.stat().st_mtime)
        if entries:
            found[md.name] = entries[-1]
        else:
            missing.append(md.name)
    if missing:
        raise ValueError(
            f"no executed notebook for {', '.join(missing)} in {cache}: run `amp-docs build` in {repo} first"
        )
    return found


def plain_markdown_copy(repo: Path, dest: Path) -> Path:
    """``dest``: the site of ``repo`` as mkdocs alone builds it, each chapter the Markdown page of its
    executed notebook (the newest cache entry of each chapter), without the amp-docs plugin."""
    from amp_docs_lib.docsite.notebook_page import notebook_markdown

    notebooks = executed_notebooks(repo)
    shutil.copytree(repo / "docs", dest / "docs")
    for md in sorted((dest / "docs" / "chapters").glob("*.md")):
        md.write_text(notebook_markdown(json.loads(notebooks[md.name].read_text(encoding="utf-8"))), encoding="utf-8")
    text = (repo / "mkdocs.yml").read_text()
    text = re.sub(r"(?m)^  - amp-docs:\n(?:      .*\n)*", "", text)  # the plugin and its options
    text = re.sub(r"(?m)^watch:\n(?:  - .*\n)*", "", text)  # watched library folders are not copied
    if re.search(r"(?m)^\s*- amp-docs\b", text):
        raise ValueError("could not remove the amp-docs plugin from mkdocs.yml")
    (dest / "mkdocs.yml").write_text(text)
    return dest


def noop_comparison(repo: Path, work: Path, rounds: int = 5) -> dict[str, float]:
    """Median seconds of a no-op ``mkdocs build`` of ``repo`` (already built once, so every chapter
    is cached) and of mkdocs alone building the same pages (``plain_markdown_copy``), timed alternately."""
    base = plain_markdown_copy(repo, work / "plain")
    ours_site, base_site = work / "site-ours", work / "site-plain"
    _mkdocs_seconds(repo, ours_site), _mkdocs_seconds(base, base_site, repo)  # first builds fill both caches
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(_mkdocs_seconds(repo, ours_site))
        theirs.append(_mkdocs_seconds(base, base_site, repo))
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"ours_s": o, "plain_s": t, "ratio": o / t, "rounds": rounds}


def print_noop_comparison(r: dict[str, float]) -> None:
    verdict = "within" if r["ratio"] <= NOOP_TARGET else "ABOVE"
    print(
        f"no-op mkdocs build, median of {r['rounds']}: amp-docs {r['ours_s']:.2f} s, "
        f"mkdocs alone {r['plain_s']:.2f} s, ratio {r['ratio']:.2f} "
        f"({verdict} the {NOOP_TARGET}x target)"
    )


def noop_only(rounds: int = 5) -> int:
    """The no-op comparison alone, on a copy of this checkout with its execution cache."""
    root = Path.cwd()
    if not (root / EXECUTED_DIR).is_dir():
        print("no execution cache here: run `amp-docs build` first", file=sys.stderr)
        return 2
    try:
        executed_notebooks(root)  # here, before copying: the error names this checkout, not the copy
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="amp-docs-noop-"))
    try:
        copy_checkout(root, work / "repo")
        print_noop_comparison(noop_comparison(work / "repo", work, rounds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


_WORD = re.compile(r"(?<![\w-])[a-z]{5,}\b")


def edit_one_word(text: str) -> str:
    """``text`` (a chapter) with one word of its first prose line replaced (no code cell changes)."""
    lines, fence, front = text.split("\n"), False, text.startswith("---\n")
    for i, line in enumerate(lines):
        if front:
            front = not (i > 0 and line.strip() == "---")
            continue
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and line.strip() and not line.lstrip().startswith(("#", "<", "|", "-", "*", "!")):
            m = _WORD.search(line)
            if m:
                lines[i] = line[: m.start()] + "edited" + line[m.end() :]
                return "\n".join(lines)
    raise ValueError("no prose line with a word to edit")


def _append_comment(text: str) -> str:
    return text + "\n# bench-build: an edit that changes nothing the code does\n"


# (name, file, edit): each applied in turn to the warm copy, each followed by one ``amp-docs build``.
EDITS = (
    ("comment in quantization/affine.py", "amp_docs_lib/quantization/affine.py", _append_comment),
    ("comment in docsite/execute.py", "amp_docs_lib/docsite/execute.py", _append_comment),
    ("example amp_patterns/amp_loop.py", "examples/amp_patterns/amp_loop.py", _append_comment),
)


def main(touch: str = "docs/chapters/formats.md", serial: bool = False, rounds: int = 5) -> int:
    """Run the builds and print their times; ``serial`` first adds a cold build with one job
    (``AMP_DOCS_JOBS=1``) into its own cache, to compare with the parallel cold build."""
    root = Path.cwd()
    if not (root / "mkdocs.yml").exists():
        print("run from the repository root (where mkdocs.yml is)", file=sys.stderr)
        return 2
    check_touch(root, touch)  # before the cold build, not six minutes after it
    work = Path(tempfile.mkdtemp(prefix="amp-docs-bench-"))
    try:
        return _run_benchmark(root, work, touch, serial, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a full copy of the checkout and its site


def check_touch(root: Path, touch: str) -> None:
    """``ValueError`` naming ``touch`` unless it is a chapter of ``root`` with a prose word to edit."""
    path = root / touch
    if not path.is_file():
        chapters = sorted(str(p.relative_to(root)) for p in (root / "docs" / "chapters").glob("*.md"))
        raise ValueError(f"no chapter {touch!r} in {root}; valid chapters: {', '.join(chapters) or 'none'}")
    try:
        edit_one_word(path.read_text(encoding="utf-8"))
    except ValueError:
        raise ValueError(f"{touch!r} has no prose line with a word to edit; choose another chapter") from None


def _run_benchmark(root: Path, work: Path, touch: str, serial: bool, rounds: int) -> int:
    copy_checkout(root, work / "repo", CACHE_DIR.name)
    repo, site = work / "repo", work / "site"
    results = {}
    if serial:
        results["cold, serial (AMP_DOCS_JOBS=1)"] = _build(repo, site, env={"AMP_DOCS_JOBS": "1"})
        shutil.rmtree(repo / CACHE_DIR, ignore_errors=True)
        shutil.rmtree(site, ignore_errors=True)
    results.update(
        {
            "cold": _build(repo, site),
            "no-op (amp-docs build)": _build(repo, site),
            "no-op (--force: mkdocs runs)": _build(repo, site, "--force"),
        }
    )
    for name, rel, edit in (("one-word prose edit in " + Path(touch).name, touch, edit_one_word), *EDITS):
        path = repo / rel
        path.write_text(edit(path.read_text()))
        results[name] = _build(repo, site)
    print(f"{'build':<40}{'seconds':>8}  executed chapters (why)")
    for name, (secs, log) in results.items():
        if log is None:
            ex = "none (up to date: mkdocs not started)"
        else:
            reasons = log.get("reasons", {})
            ex = "; ".join(f"{k} ({v:.1f}s: {reasons.get(k, '?')})" for k, v in log["executed"].items()) or "none"
            if log.get("merged"):
                ex += f"; Markdown merged: {', '.join(log['merged'])}"
        print(f"{name:<40}{secs:8.2f}  {ex}")
    cold = results["cold"][0]
    for name in ("no-op (amp-docs build)", "no-op (--force: mkdocs runs)"):
        print(f"{name} / cold = {results[name][0] / cold:.1%}")
    if rounds:
        print_noop_comparison(noop_comparison(repo, work, rounds))
    return 0
