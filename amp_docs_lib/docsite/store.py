"""Atomic writes, keyed JSON records and folders replaced whole: the one way the build stores its output.

Every file the build trusts later (executed chapters, the environment memo, generated HTML
fragments, the up-to-date manifest) is written to a temporary file in the same folder and
renamed into place, so a build killed mid-write leaves the old file or none, never half of one.
A keyed record holds the key it was made for; reading it under another key is a miss.
The site is built in a staging folder beside it and swapped in whole (``swap_into_place``);
staging and temporary folders carry their process id, so a later run removes those of dead
processes (``clean_stale_staging``, ``clean_stale_temp_dirs``) and never a live build's.
``sigterm_as_interrupt`` makes SIGTERM clean up as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TEMP_PREFIX, TEMP_SUFFIX = ".tmp-", ".part"  # what a killed write can leave behind (evicted later)


def write_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes it visible
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_keyed(path: str | os.PathLike, key: str) -> Any | None:
    """The value stored at ``path`` under ``key``; None if missing, unreadable or made for another key."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    return record.get("value")


def write_keyed(path: str | os.PathLike, key: str, value: Any, *, indent: int | None = None) -> Path:
    """Store ``value`` (JSON-able) at ``path`` under ``key``, atomically."""
    return write_atomic(path, json.dumps({"key": key, "value": value}, indent=indent, default=str))


# --- Folders replaced whole: the built site, and temporary folders named after their process ---

SITE_NEW, SITE_OLD = "amp-docs-new", "amp-docs-old"  # the site being built, the previous one moved away
_PID_DIR = re.compile(r"^\.?(?P<base>.*)\.(?P<kind>amp-docs-new|amp-docs-old)-(?P<pid>\d+)$")


class SiteDirError(ValueError):
    """The site directory cannot hold a site: it is a file, or its folder is not writable."""


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def check_site_dir(site: str | os.PathLike) -> Path:
    """``site`` resolved, or ``SiteDirError`` naming it if no site can be built there: checked before any
    work, since the build writes the new site beside it (``<parent>/.<name>.amp-docs-new-<pid>``)."""
    site = Path(site).resolve()
    if site.exists() and not site.is_dir():
        raise SiteDirError(f"site directory {site} is not a folder (it is a file); give a folder with -d/--site-dir")
    parent = site.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # the first existing folder: mkdocs creates the rest
    try:  # a real try: os.access says yes to root, even under /proc
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=f".{site.name}.amp-docs-check-"))
    except OSError:
        raise SiteDirError(
            f"site directory {site} cannot be written: {parent} is not a writable folder; "
            "give a folder you can write with -d/--site-dir"
        ) from None
    return site


def staging_dir(site: Path, kind: str = SITE_NEW, pid: int | None = None) -> Path:
    """The folder beside ``site`` where process ``pid`` (default: this one) builds the new site (``kind``
    ``SITE_NEW``) or moves the previous one (``SITE_OLD``); hidden, named after the process."""
    return site.with_name(f".{site.name}.{kind}-{os.getpid() if pid is None else pid}")


def swap_into_place(new: Path, site: Path) -> None:
    """Make the complete folder ``new`` the folder ``site``: the previous one is renamed away, ``new`` renamed
    in, the previous one deleted. Between the two renames a kill leaves the previous site beside its place,
    and ``clean_stale_staging`` puts it back."""
    old = staging_dir(site, SITE_OLD)
    if old.exists():
        shutil.rmtree(old)
    if site.exists():
        os.replace(site, old)
    os.replace(new, site)
    shutil.rmtree(old, ignore_errors=True)


def clean_stale_staging(site: Path) -> list[Path]:
    """Remove the staging folders beside ``site`` left by builds that died (their process is gone); if
    ``site`` is missing and a dead build had moved it away, move it back. Return what was removed."""
    removed: list[Path] = []
    if not site.parent.is_dir():
        return removed
    for p in sorted(site.parent.glob(f".{glob.escape(site.name)}.amp-docs-*-*")):
        m = _PID_DIR.match(p.name)
        if m is None or m["base"] != site.name or pid_alive(int(m["pid"])):
            continue
        if m["kind"] == SITE_OLD and not site.exists():
            os.replace(p, site)  # the previous site, whole
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def pid_temp_dir(prefix: str) -> str:
    """``tempfile.mkdtemp`` named ``<prefix><pid>-...``, so ``clean_stale_temp_dirs`` knows its owner."""
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")


def clean_stale_temp_dirs(prefix: str, older_than_s: float = 6 * 3600) -> list[Path]:
    """Remove folders ``<tmp>/<prefix>*`` of processes that are gone (named by ``pid_temp_dir``), and
    unnamed ones older than ``older_than_s`` (from versions that did not record the pid)."""
    removed = []
    owned = re.compile(rf"^{re.escape(prefix)}(\d+)-")
    for p in Path(tempfile.gettempdir()).glob(f"{glob.escape(prefix)}*"):
        m = owned.match(p.name)
        try:
            stale = not pid_alive(int(m[1])) if m else time.time() - p.stat().st_mtime > older_than_s
        except OSError:
            continue
        if stale and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


INTERRUPTED = 130  # exit status after Ctrl-C or SIGTERM (128 + SIGINT), as a shell reports Ctrl-C


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does, so both clean up the same
    way (only in the main thread, and only where SIGTERM has its default action or is already ours).
    The handler before the block is restored after it: nbclient resets SIGTERM to the default when
    its kernel stops, and an enclosing block (several chapters in a row) keeps its own."""
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous not in (signal.SIG_DFL, _interrupt):
        yield
        return
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
