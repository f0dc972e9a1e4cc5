"""Cheap, torch-free hashes of the build's input files.

Kept free of heavy imports so that ``amp-docs build`` can tell in a fraction
of a second that nothing changed since the last successful build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

SOURCE_SUFFIXES = (".py", ".json", ".j2", ".css", ".bib")
# Example programs and the config files they read (exercises/precision.toml).
EXAMPLE_SUFFIXES = (".py", ".toml", ".json")


def tree_hash(root: Path, suffixes: Iterable[str] | None = SOURCE_SUFFIXES) -> str:
    """Hash of the files under ``root`` (relative path and content), optionally only some suffixes."""
    suffixes = None if suffixes is None else tuple(suffixes)
    h = hashlib.sha256()
    if not root.exists():
        return h.hexdigest()
    for path in sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and (suffixes is None or p.suffix in suffixes)
    ):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()
