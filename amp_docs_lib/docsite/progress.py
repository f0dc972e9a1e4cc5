"""Build progress on the terminal: one line per chapter start and end, and per cell.

A GPU-profile build executes chapters for many minutes; these lines show what
runs. They go to stderr as whole lines (one ``write`` each, under a lock), so
chapters executing in parallel interleave cleanly::

    amp-docs: [fp8] started: 48 code cells (re-executed: amp_docs_lib/fp8/scaling.py changed)
    amp-docs: [fp8] cell 12/48 done in 3.1 s
    amp-docs: [fp8] cell 13/48 skipped (needs cuda)
    amp-docs: [fp8] finished in 85.3 s

``$AMP_DOCS_PROGRESS`` picks the detail: ``cells`` (every line), ``chapters``
(start and end only) or ``off``. Unset: ``cells``, or ``chapters`` when mkdocs
runs quiet (``mkdocs build -q`` sets the ``mkdocs`` logger above INFO).
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TextIO

from amp_docs_lib.core import settings

PROGRESS_ENV_VAR = settings.PROGRESS_ENV_VAR
LEVELS = settings.PROGRESS_LEVELS
_lock = threading.Lock()


def progress_level() -> str:
    """``$AMP_DOCS_PROGRESS`` if set, else ``chapters`` under ``mkdocs -q``, else ``cells``."""
    level = settings.progress_override()
    if level is not None:
        return level
    # The mkdocs command sets its logger's level (INFO, or ERROR with -q); elsewhere it is unset.
    return "chapters" if logging.getLogger("mkdocs").level > logging.INFO else "cells"


class ChapterProgress:
    """Progress lines of one chapter's execution.

    Args:
        chapter_id: the chapter's name, shown in brackets.
        n_cells: the number of code cells (cells are numbered 1..n_cells).
        level: one of ``LEVELS``; default ``progress_level()``.
        stream: where lines go; default ``sys.stderr`` (looked up at each write).
    """

    def __init__(self, chapter_id: str, n_cells: int, level: str | None = None, stream: TextIO | None = None):
        level = progress_level() if level is None else level
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        self.chapter_id, self.n_cells, self.level, self._stream = chapter_id, n_cells, level, stream

    def _write(self, text: str, detail: bool = False) -> None:
        if self.level == "off" or (detail and self.level != "cells"):
            return
        stream = self._stream or sys.stderr
        with _lock:
            stream.write(f"amp-docs: [{self.chapter_id}] {text}\n")
            stream.flush()

    def started(self, reason: str | None = None) -> None:
        """The chapter started executing; ``reason``: why (which input changed), from the cache."""
        self._write(f"started: {self.n_cells} code cells" + (f" (re-executed: {reason})" if reason else ""))

    def cell(self, number: int, seconds: float | None, outcome: str = "done") -> None:
        """Cell ``number`` (1-based) finished: ``done``, ``failed``, or ``skipped (...)``."""
        timing = "" if seconds is None else f" in {seconds:.1f} s"
        self._write(f"cell {number}/{self.n_cells} {outcome}{timing}", detail=True)

    def finished(self, seconds: float) -> None:
        self._write(f"finished in {seconds:.1f} s")

    def failed(self, seconds: float, number: int | None) -> None:
        where = "" if number is None else f" at cell {number}/{self.n_cells}"
        self._write(f"failed{where} after {seconds:.1f} s")
