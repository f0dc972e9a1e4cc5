"""``amp-docs build``: build the site, or say it is up to date.

Like ``make``, it first compares a manifest of every input of the build (the
docs tree, ``mkdocs.yml``, the library and example sources, package versions,
the machine, the profile override and the arguments) with the manifest of the
last successful build into the same site directory. If nothing changed it
returns at once; otherwise it runs ``mkdocs build`` (whose amp-docs plugin then
re-executes only the chapters whose own inputs changed) and records the
new manifest. Besides those trees, the manifest holds every input the chapters
recorded when they executed (``last-build.json``'s ``inputs``, with the hashes the
cache checks), so a file a chapter read outside them is an input here too: the
same rules as the chapters' own cache. The check imports neither torch nor mkdocs,
so it is fast.

The site's manifest entry is removed before mkdocs runs and written back only when it
succeeds, so a failed, interrupted or killed build is never called up to date.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from amp_docs_lib.core.machine import environment_inputs, machine_light
from amp_docs_lib.core.packages import ALL_DISTRIBUTIONS, installed_versions
from amp_docs_lib.core.paths import BUILD_LOG, REPO_ROOT, SITE_MANIFEST
from amp_docs_lib.docsite.hashing import EXAMPLE_SUFFIXES, tree_hash
from amp_docs_lib.docsite.inputs import InputHasher, Roots
from amp_docs_lib.docsite.store import INTERRUPTED, check_site_dir, sigterm_as_interrupt, write_atomic

MANIFEST = SITE_MANIFEST


def input_manifest(root: Path, mkdocs_args: list[str]) -> str:
    """Hash of everything a build of ``root`` with ``mkdocs_args`` depends on."""
    lib = root / "amp_docs_lib"
    blob = {
        "docs": tree_hash(root / "docs", None),
        "mkdocs.yml": hashlib.sha256((root / "mkdocs.yml").read_bytes()).hexdigest(),
        "library": tree_hash(lib),
        "examples": tree_hash(root / "examples", EXAMPLE_SUFFIXES),
        "packages": installed_versions(ALL_DISTRIBUTIONS),
        "machine": machine_light(),
        "env": environment_inputs(),
        "args": mkdocs_args,
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def _site_dir(root: Path, mkdocs_args: list[str]) -> Path:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("-d", "--site-dir", default="site")
    known, _ = ap.parse_known_args(mkdocs_args)
    return (root / known.site_dir).resolve()


def read_manifest(path: Path) -> dict:
    """The recorded manifests (site directory -> entry); {} if the file is missing, unreadable or not a
    JSON object (a manifest of another shape is no record)."""
    try:
        last = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return last if isinstance(last, dict) else {}


def is_up_to_date(root: Path, mkdocs_args: list[str], manifest: str | None = None) -> bool:
    """Whether the site ``mkdocs build MKDOCS_ARGS`` would write in ``root`` was built by the last successful
    build with the same inputs, none of which changed since (what ``amp-docs build`` checks before it builds).
    ``manifest``: ``input_manifest(root, mkdocs_args)``, if the caller has it."""
    site = _site_dir(root, mkdocs_args)
    entry = read_manifest(root / MANIFEST).get(str(site))
    return (
        isinstance(entry, dict)
        and entry.get("manifest") == (input_manifest(root, mkdocs_args) if manifest is None else manifest)
        and (site / "index.html").exists()
        and not recorded_inputs_changed(root, entry.get("inputs"))
    )


def build(mkdocs_args: list[str], *, force: bool = False, root: Path | None = None) -> int:
    """Build the site with ``mkdocs build MKDOCS_ARGS`` unless it is up to date; return the exit code.

    ``SiteDirError`` (before any work) if the site directory is a file or cannot be written.
    """
    root = Path.cwd() if root is None else root
    if not (root / "mkdocs.yml").exists():
        print(f"amp-docs build: no mkdocs.yml in {root}; run it from the repository root", file=sys.stderr)
        return 2
    site = check_site_dir(_site_dir(root, mkdocs_args))
    manifest_path = root / MANIFEST
    manifest = input_manifest(root, mkdocs_args)
    last = read_manifest(manifest_path)
    if not force and is_up_to_date(root, mkdocs_args, manifest):
        print(f"amp-docs build: {site} is up to date (no input changed since its last build)")
        return 0
    if str(site) in last:  # from here until mkdocs succeeds, nothing says this site is up to date
        del last[str(site)]
        write_atomic(manifest_path, json.dumps(last, indent=1))
    rc = run_mkdocs(root, mkdocs_args)
    if rc == 0:
        try:
            recorded = json.loads((root / BUILD_LOG).read_text(encoding="utf-8")).get("inputs")
        except (OSError, ValueError, AttributeError):
            recorded = None  # unknown: the next check runs mkdocs again
        last = read_manifest(manifest_path)  # afresh: a concurrent build may have recorded its own site
        last[str(site)] = {"manifest": manifest, "inputs": recorded}
        write_atomic(manifest_path, json.dumps(last, indent=1))  # a killed build never records a manifest
    return rc


def run_mkdocs(root: Path, mkdocs_args: list[str]) -> int:
    """``mkdocs build MKDOCS_ARGS`` in ``root``; its exit status, or ``INTERRUPTED`` after Ctrl-C or SIGTERM,
    once mkdocs has stopped its kernels and removed its staging folder."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's end-of-life banner is no build output
    with subprocess.Popen([sys.executable, "-m", "mkdocs", "build", *mkdocs_args], cwd=root, env=env) as proc:
        try:
            with sigterm_as_interrupt():
                return proc.wait()
        except KeyboardInterrupt:
            pass
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        try:
            # Ctrl-C reached mkdocs too (same process group); a SIGTERM sent to this process alone did not.
            for sig, wait_s in ((None, 10.0), (signal.SIGINT, 60.0), (signal.SIGKILL, None)):
                if sig is not None:
                    proc.send_signal(sig)
                try:
                    rc = proc.wait(wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            signal.signal(signal.SIGINT, previous)
    if rc != INTERRUPTED:  # mkdocs itself says where it was when it stopped executing a chapter
        print("amp-docs build: interrupted; the site is as the last complete build left it", file=sys.stderr)
    return INTERRUPTED


def recorded_inputs_changed(root: Path, inputs: dict[str, str] | None) -> bool:
    """Whether any input the chapters recorded (label -> hash) differs now; True if unknown."""
    if not isinstance(inputs, dict):
        return True
    return bool(InputHasher(Roots(root, REPO_ROOT)).changed(inputs))
