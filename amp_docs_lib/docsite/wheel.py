"""The library's wheel, offered in the site's downloads so that every example runs after one install.

``build_wheel`` builds ``amp_docs_lib`` from a copy of its sources (the checkout is never written
to) with the build backend ``pyproject.toml`` names, via ``pip wheel``. Into that copy it places
the example programs and the chapters' sources (``amp_docs_lib/examples/``, ``amp_docs_lib/chapters/``,
so that snippets and downloaded notebooks find them without a checkout, ``core/paths.py``) and the checkout's git revision (``REVISION``, which
the stamp then names). ``library_wheel`` keeps the result under the build's cache, keyed by the
library's sources, the examples, the chapters and ``pyproject.toml``, so a rebuild with them unchanged does not
build it again; it builds into a temporary folder renamed into place, and rebuilds a cached wheel
that is not a sound zip file.

Each example says what it needs in its ``# Install:`` line (``install_line`` reads it): the wheel
(``amp_docs_lib-*.whl``, matched by the shell) and any package the wheel does not depend on.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from amp_docs_lib.core.paths import (
    CHAPTERS_DIR,
    EXAMPLES_DIR,
    LIBRARY_ROOT,
    PACKAGED_CHAPTERS_DIR,
    PACKAGED_EXAMPLES_DIR,
    REPO_ROOT,
    REVISION_FILE,
    WHEEL_CACHE_DIR,
)
from amp_docs_lib.docsite.hashing import tree_hash

NOTEBOOK_EXTRA = "notebook"  # the wheel's extra that runs a downloaded notebook (pyproject.toml)
WHEEL_PATTERN = "amp_docs_lib-*.whl"  # what an example's install line names (one wheel per site)
_INSTALL = re.compile(r"^# Install: pip install (?P<args>[^(#\n]+?)\s*(?:\(.*\))?$", re.M)


def project_metadata(pyproject: Path = REPO_ROOT / "pyproject.toml") -> dict:
    """The ``[project]`` table of ``pyproject.toml``."""
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]


def wheel_filename(pyproject: Path = REPO_ROOT / "pyproject.toml") -> str:
    """The wheel's file name, from the project's name and version (PEP 427: ``-`` and ``.`` become ``_``)."""
    meta = project_metadata(pyproject)
    return f"{re.sub(r'[-_.]+', '_', meta['name']).lower()}-{meta['version']}-py3-none-any.whl"


def wheel_dependencies(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """The distributions installing the wheel brings (its ``dependencies``, names only)."""
    return [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip() for d in project_metadata(pyproject)["dependencies"]]


def notebook_requirements(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """The distributions the wheel's ``notebook`` extra adds (names only)."""
    return [
        re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip()
        for d in project_metadata(pyproject)["optional-dependencies"][NOTEBOOK_EXTRA]
    ]


def sources_key() -> str:
    """Hash of what goes into the wheel: the library's files, the examples, the chapters, ``pyproject.toml``
    and ``README.md`` (the wheel's description), each as ``build_wheel`` copies it."""
    h = hashlib.sha256()
    for name in ("pyproject.toml", "README.md"):
        h.update((REPO_ROOT / name).read_bytes() + b"\0")
    for folder, suffixes in ((LIBRARY_ROOT, None), (EXAMPLES_DIR, None), (CHAPTERS_DIR, (".md",))):
        h.update(tree_hash(folder, suffixes, skip_dirs=("__pycache__",)).encode())  # copied whole but bytecode
    return h.hexdigest()[:16]


def _unmet_build_requirements(pyproject: Path) -> list[tuple[str, str]]:
    """``(requirement, what is installed)`` for each ``[build-system] requires`` entry not satisfied here."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    unmet = []
    for spec in tomllib.loads(pyproject.read_text(encoding="utf-8"))["build-system"]["requires"]:
        req = Requirement(spec)
        try:
            have = version(req.name)
        except PackageNotFoundError:
            unmet.append((spec, "not installed"))
            continue
        if not req.specifier.contains(have, prereleases=True):
            unmet.append((spec, f"installed: {have}"))
    return unmet


def missing_build_requirements(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """``[build-system] requires`` entries this environment does not satisfy, each with what is installed.

    The wheel is built without build isolation (the build runs offline), so the backend comes
    from this environment; an old setuptools fails deep inside pip with "invalid command
    'bdist_wheel'", which this check turns into a sentence naming the requirement.
    """
    return _described(_unmet_build_requirements(pyproject))


def _described(unmet: list[tuple[str, str]]) -> list[str]:
    return [f"{spec} ({have})" for spec, have in unmet]


def build_wheel(dest: Path) -> Path:
    """Build the wheel into ``dest`` (created) and return its path.

    Raises:
        RuntimeError: this environment lacks a build requirement (named, with the pip command that
            fixes it), or pip failed (its output included).
    """
    unmet = _unmet_build_requirements(REPO_ROOT / "pyproject.toml")
    if unmet:
        raise RuntimeError(
            f"building the amp_docs_lib wheel for the site's downloads needs "
            f"{', '.join(_described(unmet))}, from pyproject.toml's "
            f"[build-system] requires; run: pip install {' '.join(repr(spec) for spec, _ in unmet)}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="amp-docs-wheel-") as tmp:
        src = Path(tmp) / "src"
        from amp_docs_lib.core.env import git_revision

        package = src / LIBRARY_ROOT.name
        shutil.copytree(LIBRARY_ROOT, package, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(
            EXAMPLES_DIR,
            package / PACKAGED_EXAMPLES_DIR.name,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        shutil.copytree(
            CHAPTERS_DIR,
            package / PACKAGED_CHAPTERS_DIR.name,
            dirs_exist_ok=True,
            ignore=lambda folder, names: [n for n in names if not n.endswith(".md")],
        )
        (package / REVISION_FILE.name).write_text(git_revision() + "\n", encoding="utf-8")
        for name in ("pyproject.toml", "README.md"):  # README.md: the project's ``readme``
            shutil.copy2(REPO_ROOT / name, src / name)
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "--wheel-dir",
                str(dest),
                str(src),
            ],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(
                f"building the amp_docs_lib wheel failed (pip exit {r.returncode}):\n"
                f"{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
            )
    built = dest / wheel_filename()
    if not built.is_file():
        raise RuntimeError(f"pip built {sorted(p.name for p in dest.glob('*.whl'))}, expected {built.name}")
    return built


def is_sound_wheel(path: Path) -> bool:
    """Whether ``path`` is a zip file whose every member reads back with its CRC."""
    try:
        with zipfile.ZipFile(path) as z:
            return z.testzip() is None
    except (OSError, zipfile.BadZipFile):
        return False


def cached_wheel_path(project_root: Path) -> Path:
    """Where ``library_wheel`` keeps the wheel of the library's current sources for a site in ``project_root``."""
    return project_root / WHEEL_CACHE_DIR / sources_key() / wheel_filename()


def library_wheel(project_root: Path) -> Path:
    """The wheel of the library as it is now, built once per change of its sources (cached).

    Built into a temporary folder renamed into place, so a build killed mid-way leaves no
    partial wheel; a cached wheel that is not a sound zip (``is_sound_wheel``) is rebuilt.
    """
    path = cached_wheel_path(project_root)
    folder, cache = path.parent, path.parent.parent
    if is_sound_wheel(path):
        return path
    for old in cache.glob("*"):  # older sources' wheels, a corrupt one, leftovers of killed builds
        shutil.rmtree(old, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
    try:
        build_wheel(tmp)
        try:
            os.replace(tmp, folder)
        except OSError:  # another build put the same wheel there first
            if not is_sound_wheel(path):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def install_line(script: Path) -> list[str] | None:
    """What a script's ``# Install: pip install ...`` line installs, or None if it has none."""
    m = _INSTALL.search(script.read_text(encoding="utf-8"))
    return m.group("args").split() if m else None
