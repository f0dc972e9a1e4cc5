"""Benchmark of the site build: cold build, no-op rebuild, rebuild after touching one chapter.

Run from the repository root: ``amp-docs bench-build``. It builds into a
temporary site directory with a temporary cache, so it never disturbs your own.
Reports wall times and which chapters executed in each build.
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

from amp_docs_lib.build.plugin import BUILD_LOG


def _build(root: Path, site: Path, env: dict[str, str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
                   cwd=root, env=env, check=True)
    dt = time.perf_counter() - t0
    return dt, json.loads((root / BUILD_LOG).read_text())


def main(touch: str = "docs/chapters/formats.md") -> int:
    root = Path.cwd()
    if not (root / "mkdocs.yml").exists():
        print("run from the repository root (where mkdocs.yml is)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="amp-docs-bench-"))
    # A private copy of the checkout keeps the user's cache and chapters untouched.
    shutil.copytree(root, work / "repo", ignore=shutil.ignore_patterns(".git", "site", ".amp-docs-cache",
                                                                      "__pycache__"))
    repo, site, env = work / "repo", work / "site", dict(os.environ)
    results = {}
    results["cold"] = _build(repo, site, env)
    results["no-op"] = _build(repo, site, env)
    chapter = repo / touch
    chapter.write_text(chapter.read_text() + "\n")
    results["touch one chapter"] = _build(repo, site, env)
    print(f"{'build':<20}{'seconds':>9}  executed chapters")
    for name, (secs, log) in results.items():
        ex = ", ".join(f"{k} ({v:.1f}s)" for k, v in log["executed"].items()) or "none"
        print(f"{name:<20}{secs:9.1f}  {ex}")
    cold, noop = results["cold"][0], results["no-op"][0]
    print(f"no-op / cold = {noop / cold:.1%}")
    shutil.rmtree(work, ignore_errors=True)
    return 0
