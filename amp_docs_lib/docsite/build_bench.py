"""Benchmark of the site build: cold build, no-op rebuilds, rebuild after touching one chapter.

Run from the repository root: ``amp-docs bench-build``. It builds a private copy
of the checkout into a temporary directory with an empty cache, so it never
disturbs your own site or cache. It reports wall times and which chapters
executed in each build. Two no-op figures are reported: ``amp-docs build``
(which returns at once when no input changed) and ``amp-docs build --force``
(mkdocs runs and renders every page, every chapter comes from the cache).

It also compares a plain ``mkdocs build`` with nothing changed against
mkdocs-jupyter's own no-op build of the same chapters: a copy of the site in
which each chapter is its executed notebook (``.ipynb``) and the amp-docs plugin
is removed, everything else in ``mkdocs.yml`` unchanged. The two are timed
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


def _build(root: Path, site: Path, *extra: str, env: dict | None = None) -> tuple[float, dict | None]:
    """Time one ``amp-docs build``; return the seconds and the plugin's log (None if mkdocs never ran)."""
    log_path = root / BUILD_LOG
    log_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "amp_docs_lib", "build", *extra, "--strict", "-q",
                    "-d", str(site)], cwd=root, env=dict(os.environ, NO_MKDOCS_2_WARNING="1", **(env or {})),
                   check=True, stdout=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    return dt, json.loads(log_path.read_text()) if log_path.exists() else None


NOOP_TARGET = 1.2  # a plain no-op build may take at most this times mkdocs-jupyter's own


def _mkdocs_seconds(root: Path, site: Path, library_from: Path | None = None) -> float:
    """Seconds of one ``mkdocs build`` of ``root``; ``library_from``: the checkout whose
    ``amp_docs_lib`` the API reference documents (the jupyter-only copy has none of its own)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if library_from is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(library_from), env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], cwd=root, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mkdocs build in {root} failed:\n{r.stderr[-3000:]}")
    return time.perf_counter() - t0


def jupyter_only_copy(repo: Path, dest: Path) -> Path:
    """``dest``: the site of ``repo`` as mkdocs-jupyter alone builds it, from ``repo``'s executed
    notebooks (the newest cache entry of each chapter) and without the amp-docs plugin."""
    cache = repo / EXECUTED_DIR
    shutil.copytree(repo / "docs", dest / "docs")
    for md in sorted((dest / "docs" / "chapters").glob("*.md")):
        entries = sorted(cache.glob(f"{md.stem}-*.ipynb"), key=lambda p: p.stat().st_mtime)
        if not entries:
            raise ValueError(f"no executed notebook for {md.name} in {cache}: build {repo} first")
        shutil.copy(entries[-1], md.with_suffix(".ipynb"))
        md.unlink()
    text = (repo / "mkdocs.yml").read_text()
    text = re.sub(r"(?m)^  - amp-docs:\n(?:      .*\n)*", "", text)  # the plugin and its options
    text = re.sub(r"(?m)^watch:\n(?:  - .*\n)*", "", text)  # watched library folders are not copied
    text = re.sub(r"(chapters/[\w-]+)\.md\b", r"\1.ipynb", text)
    if re.search(r"(?m)^\s*- amp-docs\b", text):
        raise ValueError("could not remove the amp-docs plugin from mkdocs.yml")
    (dest / "mkdocs.yml").write_text(text)
    return dest


def noop_comparison(repo: Path, work: Path, rounds: int = 5) -> dict[str, float]:
    """Median seconds of a no-op ``mkdocs build`` of ``repo`` (already built once, so every chapter
    is cached) and of mkdocs-jupyter's own no-op build of the same notebooks, timed alternately."""
    base = jupyter_only_copy(repo, work / "jupyter-only")
    ours_site, base_site = work / "site-ours", work / "site-jupyter-only"
    _mkdocs_seconds(repo, ours_site), _mkdocs_seconds(base, base_site, repo)  # first builds fill both caches
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(_mkdocs_seconds(repo, ours_site))
        theirs.append(_mkdocs_seconds(base, base_site, repo))
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"ours_s": o, "jupyter_only_s": t, "ratio": o / t, "rounds": rounds}


def print_noop_comparison(r: dict[str, float]) -> None:
    verdict = "within" if r["ratio"] <= NOOP_TARGET else "ABOVE"
    print(f"no-op mkdocs build, median of {r['rounds']}: amp-docs {r['ours_s']:.2f} s, "
          f"mkdocs-jupyter alone {r['jupyter_only_s']:.2f} s, ratio {r['ratio']:.2f} "
          f"({verdict} the {NOOP_TARGET}x target)")


def noop_only(rounds: int = 5) -> int:
    """The no-op comparison alone, on a copy of this checkout with its execution cache."""
    root = Path.cwd()
    if not (root / EXECUTED_DIR).is_dir():
        print("no execution cache here: run `amp-docs build` first", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="amp-docs-noop-"))
    shutil.copytree(root, work / "repo", ignore=shutil.ignore_patterns(".git", "site", "__pycache__"))
    try:
        print_noop_comparison(noop_comparison(work / "repo", work, rounds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(touch: str = "docs/chapters/formats.md", serial: bool = False, rounds: int = 5) -> int:
    """Run the builds and print their times; ``serial`` first adds a cold build with one job
    (``AMP_DOCS_JOBS=1``) into its own cache, to compare with the parallel cold build."""
    root = Path.cwd()
    if not (root / "mkdocs.yml").exists():
        print("run from the repository root (where mkdocs.yml is)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="amp-docs-bench-"))
    shutil.copytree(root, work / "repo", ignore=shutil.ignore_patterns(
        ".git", "site", CACHE_DIR.name, "__pycache__"))
    repo, site = work / "repo", work / "site"
    results = {}
    if serial:
        results["cold, serial (AMP_DOCS_JOBS=1)"] = _build(repo, site, env={"AMP_DOCS_JOBS": "1"})
        shutil.rmtree(repo / CACHE_DIR, ignore_errors=True)
        shutil.rmtree(site, ignore_errors=True)
    results.update({
        "cold": _build(repo, site),
        "no-op (amp-docs build)": _build(repo, site),
        "no-op (--force: mkdocs runs)": _build(repo, site, "--force"),
    })
    chapter = repo / touch
    chapter.write_text(chapter.read_text() + "\n")
    results[f"touch {Path(touch).name}"] = _build(repo, site)
    print(f"{'build':<32}{'seconds':>8}  executed chapters")
    for name, (secs, log) in results.items():
        if log is None:
            ex = "none (up to date: mkdocs not started)"
        else:
            ex = ", ".join(f"{k} ({v:.1f}s)" for k, v in log["executed"].items()) or "none"
        print(f"{name:<32}{secs:8.2f}  {ex}")
    cold = results["cold"][0]
    for name in ("no-op (amp-docs build)", "no-op (--force: mkdocs runs)"):
        print(f"{name} / cold = {results[name][0] / cold:.1%}")
    print_noop_comparison(noop_comparison(repo, work, rounds))
    shutil.rmtree(work, ignore_errors=True)
    return 0
