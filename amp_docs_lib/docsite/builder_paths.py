"""No page or download names a path of the machine that built it.

The repository root becomes relative, installed packages ``site-packages/``, the home folder ``~``.
"""

from __future__ import annotations

from pathlib import Path


def builder_paths() -> list[tuple[str, str]]:
    """(absolute path of the building machine, what a reader sees instead), longest first: the
    repository root becomes relative, installed packages ``site-packages/``, the home folder ``~``."""
    import site
    import sys
    import sysconfig

    from amp_docs_lib.core.paths import REPO_ROOT

    pairs = [(str(REPO_ROOT) + "/", ""), (str(REPO_ROOT), ".")]
    lib_dirs = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    lib_dirs |= set(getattr(site, "getsitepackages", lambda: [])())
    for d in sorted(x for x in lib_dirs if x):
        pairs.append((d.rstrip("/") + "/", ("site-packages/" if "packages" in d else "python/")))
    for d in {sys.prefix, sys.exec_prefix, sys.base_prefix}:
        pairs.append((d.rstrip("/") + "/", "python/"))
    home = str(Path.home())
    if home not in ("/", ""):
        pairs.append((home.rstrip("/") + "/", "~/"))
    return sorted(set(pairs), key=lambda p: -len(p[0]))


def without_builder_paths(text: str) -> str:
    """``text`` with every absolute path of the building machine made relative or generic."""
    for path, shown in builder_paths():
        text = text.replace(path, shown)
    return text
