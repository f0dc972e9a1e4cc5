"""Copies of a checkout for throwaway builds (``bench-build``, the reproducibility check)."""

from __future__ import annotations

import shutil
from pathlib import Path

# Never copied: version control, build outputs, byte code, and any virtual environment (a
# newcomer's `.venv` holds gigabytes of torch).
SKIPPED = (
    ".git",
    "site",
    ".site.amp-docs-*",
    "__pycache__",
    "*.egg-info",
)  # .site.amp-docs-*: docsite/store.py's staging


def copy_checkout(src: Path, dest: Path, *skip: str) -> Path:
    """Copy the checkout ``src`` to ``dest`` without ``SKIPPED``, ``skip`` or any virtual environment."""
    names = shutil.ignore_patterns(*SKIPPED, *skip)

    def ignore(folder: str, entries: list[str]) -> set[str]:
        venvs = {e for e in entries if (Path(folder) / e / "pyvenv.cfg").is_file()}
        return set(names(folder, entries)) | venvs

    shutil.copytree(src, dest, ignore=ignore)
    return dest
