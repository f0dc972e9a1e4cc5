"""Atomic writes and keyed JSON records: the one way the build stores what it memoises.

Every file the build trusts later (executed chapters, the environment memo, generated HTML
fragments, the up-to-date manifest) is written to a temporary file in the same folder and
renamed into place, so a build killed mid-write leaves the old file or none, never half of one.
A keyed record holds the key it was made for; reading it under another key is a miss.
"""

from __future__ import annotations

import json
import os
import tempfile
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
