"""The one tree hasher: cheap, torch-free hashes of the build's input folders.

Kept free of heavy imports so that ``amp-docs build`` can tell in a fraction
of a second that nothing changed since the last successful build. Every caller
(the build manifest, the fragment memo, the environment memo, the wheel's key,
a chapter whose reads are unknown) hashes a folder through ``tree_hash``, so one
folder has one answer for one choice of suffixes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

# the library's code and data, and the vendored KaTeX the build renders math with (docsite/katex/)
SOURCE_SUFFIXES = (".py", ".json", ".css", ".bib", ".js", ".cjs")
# Example programs and the config files they read (exercises/precision.toml).
EXAMPLE_SUFFIXES = (".py", ".toml", ".json")
# Folders no build input lives in: dot-folders (.git, caches, venvs), the built site, bytecode, node's.
SKIPPED_DIRS = (".*", "site", "__pycache__", "node_modules")


def tree_hash(
    root: Path,
    suffixes: Iterable[str] | None = SOURCE_SUFFIXES,
    skip_dirs: Iterable[str] = SKIPPED_DIRS,
) -> str:
    """SHA-256 of the files under ``root`` (relative path and content), in a fixed order.

    Only files ending in one of ``suffixes`` count (``None``: every file); folders whose name
    matches one of the ``skip_dirs`` patterns are not entered. A missing ``root`` hashes as empty;
    an unreadable file as a marker, so it still differs from a readable one.
    """
    suffixes = None if suffixes is None else tuple(suffixes)
    skip_dirs = tuple(skip_dirs)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, pat) for pat in skip_dirs))
        for name in sorted(filenames):
            if suffixes is not None and not name.endswith(suffixes):
                continue
            p = Path(dirpath, name)
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            try:
                h.update(p.read_bytes())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
    return h.hexdigest()
