"""The environment report, memoised so that a build with nothing changed never imports torch.

The build needs ``env.environment_report()`` twice over: its hardware fingerprint,
package versions and profile are part of every chapter's cache key, and the home
page shows the whole report. Computing it imports torch, which costs seconds, most
of a rebuild in which nothing changed. Everything in the report is decided by
things that can be read without torch: the CPU (model, flags, count), the GPUs
``nvidia-smi`` lists, the installed package versions, and the environment
variables that change dispatch or the profile. ``environment_report_memo`` hashes
those (``light_key``); while the hash is unchanged it returns the stored report,
with the two fields that change without the machine changing (the build date and
the git revision) read afresh. Any change recomputes the report with torch.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from amp_docs_lib.core.machine import cpu_flags, environment_inputs, machine_light
from amp_docs_lib.core.packages import installed_versions
from amp_docs_lib.core.paths import ENVIRONMENT_MEMO, LIBRARY_ROOT
from amp_docs_lib.docsite.hashing import tree_hash
from amp_docs_lib.docsite.store import read_keyed, write_keyed

MEMO_FILE = ENVIRONMENT_MEMO.name
REPORT_CODE_DIR = LIBRARY_ROOT / "core"  # env.py, machine.py, profiles.py, packages.py and what they import


def light_key() -> str:
    """Hash of everything the environment report depends on, read without importing torch."""
    blob = {
        "machine": machine_light(),  # CPU model and count, native matmul, nvidia-smi's GPUs
        "cpu_flags": sorted(cpu_flags()),
        "packages": installed_versions(),
        "env": environment_inputs(),
        # The code that computes the report and the fingerprint (env, machine, profiles, packages):
        # an edit to it changes the report (``__version__`` is never bumped for one).
        "report_code": tree_hash(REPORT_CODE_DIR, (".py",)),
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def environment_report_memo(cache_dir: str | os.PathLike) -> dict[str, Any]:
    """``env.environment_report()``, from ``cache_dir/environment.json`` while ``light_key`` is unchanged.

    A missing, unreadable or stale memo is recomputed (importing torch) and rewritten atomically.
    """
    from amp_docs_lib.core.env import git_revision

    path = Path(cache_dir) / MEMO_FILE
    key = light_key()
    memo = read_keyed(path, key)
    if isinstance(memo, dict):
        return dict(memo, git_revision=git_revision(), build_date=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d"))
    from amp_docs_lib.core.env import environment_report

    report = environment_report()
    write_keyed(path, key, report, indent=1)
    return report
