"""The execution cache: a chapter's result is reused while nothing it used has changed.

mkdocs-jupyter and sphinx-gallery key on a page's whole source, jupyter-cache on
its code cells only. A cache entry here is an executed notebook plus a small
*record* (``<chapter>-<id>.json`` beside ``<chapter>-<id>.ipynb``) of what decided it:

* the **environment**: package versions, the hardware fingerprint, the profile and
  the hidden-package set (``Environment``);
* the **code**: each code cell's source and metadata (tags), and the notebook's own
  metadata (front matter), but not its Markdown (``code_key``);
* the **inputs**: what the chapter read while it executed, as recorded in its kernel
  (``docsite/inputs.py``): the library modules it imported, the example and data files
  it opened, the other chapters' headings it read; or, when that could not be
  determined, the whole library (never a stale page).

An entry is valid while its environment and code are those of now and each input
hashes as recorded. A valid entry whose code matches but whose Markdown differs is
*merged*: the new Markdown takes the cached code cells' outputs, as jupyter-cache
does, and nothing executes; a result shown in prose comes from a code cell, so this
loses nothing. Otherwise the chapter executes, and ``Lookup.reason`` says why.

Entries are written atomically (temporary file, then ``os.replace``), the notebook
before its record; each notebook records its own id and a completion flag, and each
record the hash of the notebook it was written with (``nb_sha``), so neither a build
killed mid-way nor a notebook edited afterwards leaves anything a later build trusts.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from amp_docs_lib.core import settings
from amp_docs_lib.core.packages import hidden_packages
from amp_docs_lib.docsite.inputs import ABSENT, InputHasher, Roots
from amp_docs_lib.docsite.store import TEMP_PREFIX, TEMP_SUFFIX, write_atomic

CACHE_FORMAT = 3  # 3: records hold their notebook's hash (``nb_sha``)


UNREADABLE = "cached notebook missing or unreadable"
EDITED = "cached notebook changed since it was written"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Environment:
    """What besides the chapter and its inputs decides a result: versions, machine, profile, hidden set."""

    packages: tuple[tuple[str, str], ...]
    hardware: str
    profile: str
    hidden_packages: tuple[str, ...] = ()  # $AMP_DOCS_HIDE_PACKAGES: never reuse a full build's results
    load_check: str | None = None  # $AMP_DOCS_LOAD_CHECK's forced outcome: a forced branch is never served as measured

    @classmethod
    def current(cls, report: dict[str, Any] | None = None) -> Environment:
        """The environment now; ``report`` is this machine's ``env.environment_report()`` (the build
        passes the memoised one, so that it need not import torch), computed here if omitted."""
        if report is None:
            from amp_docs_lib.core.env import environment_report

            report = environment_report()
        return cls(
            packages=tuple(sorted(report["packages"].items())),
            hardware=report["hardware_fingerprint"],
            profile=report["profile"],
            hidden_packages=hidden_packages(),
            load_check=settings.load_check_override(),
        )

    def key(self) -> str:
        fields = asdict(self)
        if fields["load_check"] is None:  # measured load checks: the key entries made before this field had
            del fields["load_check"]
        return _sha(json.dumps({"format": CACHE_FORMAT, **fields}, sort_keys=True))

    def differences(self, recorded: dict[str, Any]) -> list[str]:
        """What differs from a recorded environment, in words (empty if nothing)."""
        out = []
        now = asdict(self)
        old_pkgs, new_pkgs = dict(map(tuple, recorded.get("packages", []))), dict(self.packages)
        changed = [
            f"{n} {old_pkgs.get(n, 'absent')} -> {new_pkgs.get(n, 'absent')}"
            for n in sorted(set(old_pkgs) | set(new_pkgs))
            if old_pkgs.get(n) != new_pkgs.get(n)
        ]
        if changed:
            out.append("packages changed (" + ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "") + ")")
        for name, words in (
            ("hardware", "hardware changed"),
            ("profile", "profile changed"),
            ("hidden_packages", "hidden packages changed"),
            ("load_check", "load checks' forced outcome changed"),
        ):
            old, new = recorded.get(name), now[name]
            if (list(old) if isinstance(old, (list, tuple)) else old) != (
                list(new) if isinstance(new, (list, tuple)) else new
            ):
                out.append(f"{words} ({old} -> {new})" if name != "hardware" else words)
        return out


def code_cells(nb: Any) -> list[str]:
    """One hash per code cell: its source and its metadata (tags), in order."""
    return [
        _sha(json.dumps({"source": c.source, "metadata": c.get("metadata", {})}, sort_keys=True))[:32]
        for c in nb.cells
        if c.cell_type == "code"
    ]


def code_key(nb: Any) -> str:
    """Hash of what executes: the code cells and the notebook's metadata (front matter) but no Markdown.

    Only jupytext's own bookkeeping (its version, the text format) is left out.
    """
    meta = {k: v for k, v in nb.metadata.items() if k != "jupytext"}
    return _sha(json.dumps({"cells": code_cells(nb), "metadata": meta}, sort_keys=True, default=str))


def merge_markdown(executed: Any, source: Any) -> Any:
    """``source`` (the chapter as parsed now) with the outputs of ``executed``'s code cells.

    The code cells of both must be the same, in the same order (the code key says so);
    Markdown cells come from ``source``. ``ValueError`` if the code cells differ.
    """
    old = [c for c in executed.cells if c.cell_type == "code"]
    new = [c for c in source.cells if c.cell_type == "code"]
    if [c.source for c in old] != [c.source for c in new]:
        raise ValueError("cannot merge: the code cells differ from the executed notebook's")
    for o, n in zip(old, new, strict=True):
        n.outputs = o.get("outputs", [])
        n.execution_count = o.get("execution_count")
        n.metadata = o.get("metadata", {})
    source.metadata = executed.metadata
    return source


@dataclass
class Lookup:
    """The cache's answer for one chapter: ``hit`` (same page), ``merged`` (new Markdown, cached
    outputs) or ``miss`` (execute; ``reason`` says which input changed)."""

    status: str
    path: Path | None = None
    nb: Any = None
    reason: str = ""


class ExecutionCache:
    """Executed notebooks on disk with the records that decide whether they are still valid."""

    def __init__(self, directory: str | os.PathLike, roots: Roots):
        self.directory = Path(directory)
        self.roots = roots

    @staticmethod
    def _stem(chapter_id: str) -> str:
        return chapter_id.replace("/", "__")

    def _paths(self, chapter_id: str, entry_id: str) -> tuple[Path, Path]:
        base = self.directory / f"{self._stem(chapter_id)}-{entry_id}"
        return base.with_suffix(".ipynb"), base.with_suffix(".json")

    def records(self, chapter_id: str) -> list[dict[str, Any]]:
        """This chapter's readable records, newest first."""
        out = []
        for p in self.directory.glob(f"{self._stem(chapter_id)}-*.json"):
            try:
                r = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if (
                isinstance(r, dict)
                and r.get("format") == CACHE_FORMAT
                and r.get("chapter") == chapter_id
                and isinstance(r.get("inputs"), dict)
                and p.name.endswith(f"-{r.get('id')}.json")
                and isinstance(r.get("written", 0), (int, float))
                and isinstance(r.get("code_cells", []), list)
            ):
                out.append(r)  # a record of another shape is no record
        return sorted(out, key=lambda r: r.get("written", 0), reverse=True)

    def inputs_of(self, chapter_id: str, nb_path: Path) -> dict[str, str]:
        """The recorded inputs (label -> hash) of the entry whose notebook is ``nb_path`` ({} if unreadable)."""
        try:
            r = json.loads(Path(nb_path).with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return r.get("inputs", {}) if isinstance(r, dict) and r.get("chapter") == chapter_id else {}

    def _read_notebook(self, chapter_id: str, record: dict[str, Any]) -> tuple[Path, Any] | str:
        """The entry's notebook, or why it cannot be used (missing, unreadable, not what was written)."""
        from nbformat.v4 import nbjson

        path = self._paths(chapter_id, record["id"])[0]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return UNREADABLE
        if _sha(text) != record.get("nb_sha"):  # before parsing: only what ``_write`` wrote is read
            return EDITED
        try:
            # Our own entries, written complete by ``put``: read as nbformat reads a v4 notebook
            # but without its schema validation, which doubles the time.
            nb = nbjson.reads(text)
        except (ValueError, AttributeError):
            return UNREADABLE
        meta = nb.get("metadata", {}).get("amp_docs", {}) if isinstance(nb.get("metadata"), dict) else {}
        if meta.get("cache_key") != record["id"] or not meta.get("complete"):
            return UNREADABLE
        try:
            os.utime(path)  # eviction reads a recent time as "in use"
            os.utime(path.with_suffix(".json"))
        except OSError:
            return UNREADABLE
        return path, nb

    def lookup(
        self, chapter_id: str, text: str, env: Environment, hasher: InputHasher, parse: Callable[[str], Any]
    ) -> Lookup:
        """The cached result for a chapter whose source is ``text``, under ``env``.

        ``parse(text)`` -> the chapter as a notebook (jupytext), called only if no entry is
        for this very text (the Markdown changed, or nothing valid is cached).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        records = self.records(chapter_id)
        env_key, text_sha = env.key(), _sha(text)
        valid = [r for r in records if r.get("env_key") == env_key and not hasher.changed(r["inputs"])]
        unusable = UNREADABLE  # why a valid record's notebook was not used, if one was not
        for r in valid:  # the same page: no parsing at all
            if r.get("text_sha") == text_sha:
                got = self._read_notebook(chapter_id, r)
                if isinstance(got, str):
                    unusable = got
                elif got[1].metadata["amp_docs"].get("text_sha") == text_sha:
                    return Lookup("hit", *got)
        source = parse(text)
        key = code_key(source)
        for r in valid:
            if r.get("code_key") == key:
                got = self._read_notebook(chapter_id, r)
                if isinstance(got, str):
                    unusable = got
                    continue
                nb = merge_markdown(got[1], source)
                nb.metadata["amp_docs"]["text_sha"] = text_sha
                return Lookup("merged", self._write(chapter_id, nb, dict(r, text_sha=text_sha)), nb)
        return Lookup("miss", reason=self.explain(records, env, key, code_cells(source), hasher, unusable))

    def explain(
        self,
        records: list[dict[str, Any]],
        env: Environment,
        key: str,
        cells: list[str],
        hasher: InputHasher,
        unusable: str = "",
    ) -> str:
        """Why no record is valid, in words: the first difference from the newest record; ``unusable``
        if the record matches but its notebook cannot be used."""
        if not records:
            return "no cached result"
        same_env = [r for r in records if r.get("env_key") == env.key()]
        if not same_env:
            return "; ".join(env.differences(records[0].get("env", {}))) or "environment changed"
        r = same_env[0]
        changed = hasher.changed(r["inputs"])
        if changed:
            words = []
            for label in changed:
                what = self.roots.display(label)
                words.append(f"{what} is missing" if hasher(label) == ABSENT else f"{what} changed")
            return ", ".join(words[:3]) + (f" and {len(words) - 3} more" if len(words) > 3 else "")
        if r.get("code_key") != key:
            old = r.get("code_cells", [])
            diff = [
                i for i in range(max(len(old), len(cells))) if i >= len(old) or i >= len(cells) or old[i] != cells[i]
            ]
            if not diff:
                return "front matter changed"
            return f"code cell {diff[0] + 1} changed" + (f" (and {len(diff) - 1} more)" if len(diff) > 1 else "")
        return unusable or UNREADABLE

    def put(
        self,
        chapter_id: str,
        nb: Any,
        *,
        text: str,
        source: Any,
        inputs: dict[str, str],
        env: Environment,
        unknown: list[str] | None = None,
    ) -> Path:
        """Store executed notebook ``nb`` of the chapter whose text is ``text`` with its record; return
        the notebook's path. ``source``: the chapter as parsed before execution (its code key);
        ``inputs``: what it read (``inputs.snapshot``); ``unknown``: why that is not known, if so."""
        key = code_key(source)
        entry_id = _sha(json.dumps({"env": env.key(), "code": key, "inputs": inputs}, sort_keys=True))[:20]
        record = {
            "format": CACHE_FORMAT,
            "chapter": chapter_id,
            "id": entry_id,
            "env_key": env.key(),
            "env": asdict(env),
            "code_key": key,
            "code_cells": code_cells(source),
            "text_sha": _sha(text),
            "inputs": inputs,
            "inputs_unknown": list(unknown or []),
            "executed_at": nb.metadata.get("amp_docs", {}).get("executed_at"),
        }
        nb.metadata.setdefault("amp_docs", {})["text_sha"] = record["text_sha"]
        return self._write(chapter_id, nb, record)

    def _write(self, chapter_id: str, nb: Any, record: dict[str, Any]) -> Path:
        import nbformat

        nb.metadata.setdefault("amp_docs", {}).update({"cache_key": record["id"], "complete": True})
        nb_path, record_path = self._paths(chapter_id, record["id"])
        text = nbformat.writes(nb)
        write_atomic(nb_path, text)  # the notebook first: a record never names a missing one
        write_atomic(record_path, json.dumps(dict(record, nb_sha=_sha(text), written=time.time()), indent=1))
        return nb_path

    def evict_except(self, keep: set[Path], min_age_s: float = 0.0) -> list[Path]:
        """Delete entries (notebook and record) and leftover temp files not in ``keep`` and untouched
        for ``min_age_s`` seconds; return what was removed.

        The age guard protects a concurrent build (``mkdocs serve`` beside ``amp-docs build``):
        entries it wrote or hit recently, and its temp files, are not removed under it.
        """
        removed = []
        if not self.directory.is_dir():
            return removed
        kept = {k.resolve() for k in keep} | {k.resolve().with_suffix(".json") for k in keep}
        cutoff = time.time() - min_age_s
        for p in [
            *self.directory.glob("*.ipynb"),
            *self.directory.glob("*.json"),
            *self.directory.glob(f"{TEMP_PREFIX}*{TEMP_SUFFIX}"),
        ]:
            try:
                recent = p.stat().st_mtime > cutoff
            except OSError:
                continue
            if p.resolve() not in kept and not recent:
                p.unlink(missing_ok=True)
                removed.append(p)
        return removed
