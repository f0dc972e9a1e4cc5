"""``torch.profiler`` without its backend's log lines on the page.

The profiler's backend (Kineto) writes lines such as ``USDT: ... profiler_start`` and, on a
machine without a GPU, ``gpuGetDeviceCount failed`` straight to file descriptor 2, past
Python's ``sys.stderr``; a chapter cell would show them as output. ``quiet_stderr`` points
descriptor 2 at ``/dev/null`` for the duration.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence what native code writes to file descriptor 2 inside the block (Python's errors still raise)."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def c_stdout_lines(fn) -> list[str]:
    """The lines that ``fn()`` writes to the C-level stdout (file descriptor 1, where oneDNN's and MKL's
    verbose logs go, not ``sys.stdout``), captured through a temporary file for the call."""
    import tempfile

    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+b") as log:
        saved = os.dup(1)
        try:
            os.dup2(log.fileno(), 1)
            fn()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        log.seek(0)
        return log.read().decode(errors="replace").splitlines()
