"""What a chapter read when it executed, and whether any of it changed since.

The read recorder (``read_recorder.py``, installed in the chapter's kernel and in
every Python process it starts) writes what was read under the *roots* (the site's
folder and the library's checkout). ``collect`` turns those lines into the chapter's
inputs, each named by a label and given a content hash:

``file:<root>/<path>``       a file read (a module imported, a data file, an example)
``dir:<root>/<path>``        a folder listed (``glob``): the sorted names in it
``headings:<root>/<path>``   a chapter whose headings were read (``core.chapters``)
``tree:<root>``              every source and data file under a root: the fallback when
                             what the chapter read cannot be determined

A missing file hashes as ``absent``: a recorded input that disappears is a change.
``InputHasher`` hashes each label once per build (a library module many chapters
import is read once), and nothing in this module imports torch, so the no-op
path of the build stays fast.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from amp_docs_lib.docsite import read_recorder
from amp_docs_lib.docsite.hashing import tree_hash

ABSENT = "absent"
CHANGED_DURING_EXECUTION = "changed-during-execution"  # never equal to a content hash
FALLBACK_SUFFIXES = (
    ".py",
    ".json",
    ".toml",
    ".md",
    ".csv",
    ".txt",
    ".yml",
    ".yaml",
    ".bib",
    ".j2",
    ".css",
    ".npy",
    ".npz",
    ".ipynb",
    ".cfg",
    ".ini",
)
KINDS = ("file", "dir", "headings", "tree")


def _headings_hash(path: Path) -> str:
    from amp_docs_lib.core.chapters import headings

    return _sha(json.dumps(headings(path.read_text(encoding="utf-8"))).encode())


# Readers that use part of a file (``read_recorder.derived(kind)``) -> what of the file they use.
DERIVED: dict[str, Callable[[Path], str]] = {"headings": _headings_hash}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


class Roots:
    """Named folders under which reads are recorded: ``site`` (the folder of ``mkdocs.yml``)
    and ``lib`` (the library's checkout; omitted when it is the site's folder)."""

    def __init__(self, site: str | os.PathLike, lib: str | os.PathLike | None = None):
        site_p = Path(site).resolve()
        lib_p = Path(lib).resolve() if lib is not None else site_p
        self.named: dict[str, Path] = {"site": site_p}
        if lib_p != site_p:
            self.named["lib"] = lib_p

    def label(self, kind: str, path: str | os.PathLike) -> str | None:
        """``kind:<root>/<relative path>`` for a path under a root, else None."""
        p = Path(os.path.abspath(path))
        best = None
        for name, root in self.named.items():
            for spelled in (root, Path(os.path.abspath(root))):
                try:
                    rel = p.relative_to(spelled)
                except ValueError:
                    continue
                if best is None or len(rel.parts) < len(best[1].parts):
                    best = (name, rel)
        if best is None:
            try:  # reached through a symlink
                return self.label(kind, Path(path).resolve()) if Path(path).resolve() != p else None
            except OSError:
                return None
        return f"{kind}:{best[0]}/{best[1].as_posix()}".rstrip("/") if best[1].parts else f"{kind}:{best[0]}"

    def path(self, label: str) -> tuple[str, Path]:
        """The kind and path a label names; ``ValueError`` for a label of no known kind or root."""
        kind, _, rest = label.partition(":")
        root, _, rel = rest.partition("/")
        if kind not in KINDS or root not in self.named:
            raise ValueError(f"unknown input label {label!r}: kinds {KINDS}, roots {sorted(self.named)}")
        return kind, self.named[root] / rel if rel else self.named[root]

    def env(self) -> str:
        return os.pathsep.join(str(p) for p in self.named.values())

    def display(self, label: str) -> str:
        """A label as a person reads it: ``amp_docs_lib/formats.py``, ``headings of docs/chapters/x.md``."""
        kind, _, rest = label.partition(":")
        _, _, rel = rest.partition("/")
        rel = rel or rest
        return {
            "file": rel,
            "dir": f"folder {rel}/",
            "headings": f"headings of {rel}",
            "tree": f"everything under {rest} (inputs not recorded)",
        }.get(kind, label)


class InputHasher:
    """Content hashes of inputs, each computed once (make one per build: files change between builds)."""

    def __init__(self, roots: Roots):
        self.roots = roots
        self._memo: dict[str, str] = {}

    def __call__(self, label: str) -> str:
        if label not in self._memo:
            self._memo[label] = self._hash(label)
        return self._memo[label]

    def _hash(self, label: str) -> str:
        try:
            kind, path = self.roots.path(label)
        except ValueError:
            return ABSENT  # a root this build does not have: never equal to a recorded hash
        try:
            if kind == "file":
                return _sha(path.read_bytes())
            if kind == "dir":  # the names in it, less the interpreter's own byte-code folder
                return _sha("\n".join(sorted(n for n in os.listdir(path) if n != "__pycache__")).encode())
            if kind == "tree":
                return tree_hash(path, FALLBACK_SUFFIXES)[:32]  # as long as the other input hashes
            return DERIVED[kind](path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return ABSENT
        except OSError as e:
            return f"unreadable ({e.errno})"

    def changed(self, inputs: Mapping[str, str]) -> list[str]:
        """Labels of ``inputs`` whose hash differs now, in label order."""
        return [label for label, h in sorted(inputs.items()) if self(label) != h]


@dataclass
class Recorded:
    """What the recorder wrote during one execution."""

    reads: set[str] = field(default_factory=set)  # labels
    complete: bool = False  # the kernel's last cell ran with the recorder installed
    unknown: list[str] = field(default_factory=list)  # why the record cannot be trusted, if so


def recording_environment(env: Mapping[str, str], reads_dir: str | os.PathLike, roots: Roots) -> dict[str, str]:
    """A copy of ``env`` (a kernel's environment) that makes the kernel, and every Python process
    it starts, record what it reads into ``reads_dir``: ``hide_site/`` first on ``PYTHONPATH``
    (its ``sitecustomize`` installs the recorder) and the recorder's two variables."""
    from amp_docs_lib.core.packages import SITE_DIR

    out = dict(env)
    parts = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SITE_DIR)]
    out["PYTHONPATH"] = os.pathsep.join([str(SITE_DIR), *parts])
    out[read_recorder.READS_DIR_ENV_VAR] = str(reads_dir)
    out[read_recorder.READS_ROOTS_ENV_VAR] = roots.env()
    return out


# The hidden last cell of every execution: record the modules loaded and mark the record complete.
FINISH_CELL_SOURCE = (
    f"import sys as _amp_docs_sys\n"
    f"if '{read_recorder.MODULE_NAME}' in _amp_docs_sys.modules:\n"
    f"    _amp_docs_sys.modules['{read_recorder.MODULE_NAME}'].finish()\n"
    f"del _amp_docs_sys"
)


def read_records(reads_dir: str | os.PathLike, roots: Roots) -> Recorded:
    """Parse every process's ``<pid>.reads`` file in ``reads_dir``."""
    out = Recorded()
    written: set[str] = set()
    kinds = {"R": "file", "M": "file", "L": "dir"}
    files = sorted(Path(reads_dir).glob("*.reads")) if Path(reads_dir).is_dir() else []
    if not files:
        out.unknown.append("the kernel recorded nothing (read recorder not installed)")
    for f in files:
        for line in f.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            tag, _, rest = line.partition("\t")
            if tag in kinds:
                label = roots.label(kinds[tag], rest)
            elif tag == "D":
                derived_kind, _, path = rest.partition("\t")
                label = roots.label(derived_kind, path) if derived_kind in DERIVED else roots.label("file", path)
            elif tag == "U":
                out.unknown.append(rest)
                continue
            elif tag == "W":
                label = roots.label("file", rest)
                if label is not None:
                    written.add(label)
                continue
            elif tag == "E":
                out.complete = True
                continue
            else:
                continue
            if label is not None:
                out.reads.add(label)
    out.reads -= written  # read back after writing it: an output of the chapter, not an input
    if not out.complete and files:
        out.unknown.append("the record has no end mark (the recorder was not installed in the kernel)")
    return out


def snapshot(recorded: Recorded, roots: Roots, started_at: float, extra: Iterable[str] = ()) -> dict[str, str]:
    """The inputs of an execution that began at ``started_at`` (``time.time()``): label -> hash.

    A file modified after the execution started gets ``CHANGED_DURING_EXECUTION`` (the
    result may have used either version, so the next build re-executes). If the record
    is incomplete, every root's whole tree is an input too: never a stale page.
    """
    hasher = InputHasher(roots)
    inputs: dict[str, str] = {}
    for label in sorted(set(recorded.reads) | set(extra)):
        kind, path = roots.path(label)
        try:
            modified = path.stat().st_mtime > started_at if kind == "file" else False
        except OSError:
            modified = False
        inputs[label] = CHANGED_DURING_EXECUTION if modified else hasher(label)
    if recorded.unknown or not recorded.complete:
        for name in roots.named:
            inputs[f"tree:{name}"] = hasher(f"tree:{name}")
    return inputs
