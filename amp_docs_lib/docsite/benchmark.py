"""Benchmark of the site build: cold build, no-op rebuilds, rebuild after touching one chapter.

Run from the repository root: ``amp-docs bench-build``. It builds a private copy
of the checkout into a temporary directory with an empty cache, so it never
disturbs your own site or cache. It reports wall times and which chapters
executed in each build. Two no-op figures are reported: ``amp-docs build``
(which returns at once when no input changed) and ``amp-docs build --force``
(mkdocs runs and renders every page, every chapter comes from the cache).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amp_docs_lib.docsite.plugin import BUILD_LOG


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


def main(touch: str = "docs/chapters/formats.md", serial: bool = False) -> int:
    """Run the builds and print their times; ``serial`` first adds a cold build with one job
    (``AMP_DOCS_JOBS=1``) into its own cache, to compare with the parallel cold build."""
    root = Path.cwd()
    if not (root / "mkdocs.yml").exists():
        print("run from the repository root (where mkdocs.yml is)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="amp-docs-bench-"))
    shutil.copytree(root, work / "repo", ignore=shutil.ignore_patterns(
        ".git", "site", ".amp-docs-cache", "__pycache__"))
    repo, site = work / "repo", work / "site"
    results = {}
    if serial:
        results["cold, serial (AMP_DOCS_JOBS=1)"] = _build(repo, site, env={"AMP_DOCS_JOBS": "1"})
        shutil.rmtree(repo / ".amp-docs-cache", ignore_errors=True)
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
    shutil.rmtree(work, ignore_errors=True)
    return 0
