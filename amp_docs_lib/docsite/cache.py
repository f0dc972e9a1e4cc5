"""The environment-aware execution cache.

mkdocs-jupyter's own cache keys only on a chapter's text, so a changed
library, an upgraded torch or another GPU would silently show stale numbers.
Our key covers all of them:

* the chapter's text,
* the source of ``amp_docs_lib`` (every ``.py`` and data file),
* the programs in ``examples/`` (chapters show and run them),
* the versions of the packages that execute (``env.package_versions``),
* the hardware fingerprint (``env.hardware_fingerprint``),
* the profile.

Entries are executed notebooks written atomically (temp file, then
``os.replace``), and each records its own key, so a build killed mid-way
leaves nothing a later build would trust.
"""

from __future__ import annotations

import hashlib
import json
import re
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import nbjson

from amp_docs_lib.core.paths import EXAMPLES_DIR as EXAMPLES_ROOT, LIBRARY_ROOT
from amp_docs_lib.core.packages import hidden_packages
from amp_docs_lib.docsite.hashing import EXAMPLE_SUFFIXES, tree_hash
from amp_docs_lib.docsite.store import TEMP_PREFIX, TEMP_SUFFIX, write_atomic
from amp_docs_lib.core.env import environment_report

CACHE_FORMAT = 1


def library_source_hash(root: Path = LIBRARY_ROOT) -> str:
    """Hash of every source and data file of the library (path and content)."""
    return tree_hash(root)


def examples_source_hash(root: Path = EXAMPLES_ROOT) -> str:
    """Hash of the example programs and their config files (chapters show and run them)."""
    return tree_hash(root, EXAMPLE_SUFFIXES)


@dataclass(frozen=True)
class KeyInputs:
    """Everything except the chapter text that decides whether a result is still valid."""

    library_hash: str
    examples_hash: str
    packages: tuple[tuple[str, str], ...]
    hardware: str
    profile: str
    hidden_packages: tuple[str, ...] = ()  # $AMP_DOCS_HIDE_PACKAGES: never reuse a full build's results

    @classmethod
    def current(cls, report: dict[str, Any] | None = None) -> "KeyInputs":
        """The inputs now; ``report`` is this machine's ``env.environment_report()`` (the build
        passes the memoised one, so that it need not import torch), computed here if omitted."""
        if report is None:
            report = environment_report()
        return cls(library_hash=library_source_hash(),
                   examples_hash=examples_source_hash(),
                   packages=tuple(sorted(report["packages"].items())),
                   hardware=report["hardware_fingerprint"],
                   profile=report["profile"],
                   hidden_packages=hidden_packages())


_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_READS_CHAPTERS = re.compile(r"^\s*reads_chapters:\s*true\b", re.M)


def reads_chapters(chapter_text: str) -> bool:
    """Whether a chapter's front matter says ``amp_docs: {reads_chapters: true}`` (read without YAML)."""
    m = _FRONT_MATTER.match(chapter_text)
    return bool(m and _READS_CHAPTERS.search(m.group(1)))


def key_text(path: str | os.PathLike) -> str:
    """What a chapter's key hashes besides ``KeyInputs``: its own text, and, for a chapter that
    reads other chapters (the literature chapter's reading map shows their headings), theirs too."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if not reads_chapters(text):
        return text
    others = sorted(p for p in path.parent.glob("*.md") if p.resolve() != path.resolve())
    return text + "".join(f"\n\0{p.name}\0{p.read_text(encoding='utf-8')}" for p in others)


def cache_key(chapter_text: str, inputs: KeyInputs) -> str:
    """The cache key of one chapter under ``inputs``."""
    if not isinstance(chapter_text, str):
        raise TypeError(f"chapter_text must be a str, got {type(chapter_text).__name__}")
    blob = json.dumps({"format": CACHE_FORMAT, "chapter": chapter_text, **asdict(inputs)},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class ExecutionCache:
    """Executed notebooks on disk, one file per (chapter, key)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def _path(self, chapter_id: str, key: str) -> Path:
        return self.directory / f"{chapter_id.replace('/', '__')}-{key[:20]}.ipynb"

    def get(self, chapter_id: str, key: str) -> tuple[Path, Any] | None:
        """The cached notebook for ``key``, or None; never returns a partial entry.

        A hit refreshes the entry's modification time, which eviction reads as "in use".
        """
        path = self._path(chapter_id, key)
        try:
            # Our own entries, written complete by ``put``: read as nbformat reads a v4 notebook
            # (multi-line strings rejoined) but without its schema validation, which doubles the time.
            nb = nbjson.reads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(nb.get("metadata"), dict):
            return None
        meta = nb.metadata.get("amp_docs", {})
        if meta.get("cache_key") != key or not meta.get("complete"):
            return None
        try:
            os.utime(path)
        except OSError:
            return None  # removed meanwhile: treat as a miss
        return path, nb

    def put(self, chapter_id: str, key: str, nb: Any) -> Path:
        """Store ``nb`` under ``key`` atomically and return its path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        nb.metadata.setdefault("amp_docs", {}).update({"cache_key": key, "complete": True})
        return write_atomic(self._path(chapter_id, key), nbformat.writes(nb))

    def evict_except(self, keep: set[Path], min_age_s: float = 0.0) -> list[Path]:
        """Delete entries (and leftover temp files) not in ``keep`` and untouched for
        ``min_age_s`` seconds; return what was removed.

        The age guard protects a concurrent build (``mkdocs serve`` beside ``amp-docs build``):
        entries it wrote or hit recently, and its temp files, are not removed under it.
        """
        removed = []
        if not self.directory.is_dir():
            return removed
        kept = {k.resolve() for k in keep}
        cutoff = time.time() - min_age_s
        for p in list(self.directory.glob("*.ipynb")) + list(self.directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}")):
            try:
                recent = p.stat().st_mtime > cutoff
            except OSError:
                continue
            if p.resolve() not in kept and not recent:
                p.unlink(missing_ok=True)
                removed.append(p)
        return removed
