"""The packages that matter to the site, listed once, and building as if some were missing.

``PACKAGES`` is the one list: the cache key and the up-to-date manifest record the versions of
every entry, ``AMP_DOCS_HIDE_PACKAGES=optional`` hides the optional ones, and gating accepts
``requires:pkg:NAME`` only for a NAME listed here (a test checks every chapter's tags).

``AMP_DOCS_HIDE_PACKAGES=onnxruntime,transformers`` (or ``optional``) makes a build behave as on
a machine without those packages, to check that every chapter still builds there:

* ``gating.requirement_met("pkg:onnxruntime")`` is False, so cells tagged
  ``requires:pkg:onnxruntime`` are skipped with a note;
* each chapter's kernel (and every Python process it starts, e.g. an example
  run by ``run_snippet``) starts with ``docsite/hide_site/`` first on ``PYTHONPATH``;
  its ``sitecustomize`` installs ``HiddenPackageFinder``, so ``import
  onnxruntime`` raises ``ModuleNotFoundError`` and ``importlib.util.find_spec``
  returns None;
* the hidden set is part of the chapter cache key and of ``amp-docs build``'s
  up-to-date manifest, so such a build never reuses a full build's results.

This module imports only the standard library: ``hide_site/sitecustomize.py``
loads it by path at interpreter start-up.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import importlib.util
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HIDE_ENV_VAR = "AMP_DOCS_HIDE_PACKAGES"
ALL_OPTIONAL = "optional"
# The start-up hook every kernel and snippet process gets (processes started by `page` and
# `distributed` need it, and those layers may not import `docsite`, so its place is named here,
# once; tests/test_packages_hook.py fails if the hook or the recorder moves without this).
SITE_DIR = Path(__file__).resolve().parents[1] / "docsite" / "hide_site"
READ_RECORDER_FILE = SITE_DIR.parent / "read_recorder.py"  # loaded by the hook, by path
READ_RECORDER_MODULE = "amp_docs_read_recorder"  # the recorder's name in sys.modules once installed


@dataclass(frozen=True)
class Package:
    """A package whose presence or version changes what the site computes or how it renders it."""

    module: str  # the import name, as in ``requires:pkg:<module>``
    distribution: str  # the name its version is recorded under (package metadata)
    role: str  # "core" (required), "optional" (the site builds without it) or "render" (turns notebooks into pages)
    install: str | None = None  # the command a skip note gives, where ``pip install <distribution>`` is not it
    needs: str | None = None  # what the machine needs before that command works (the package's own install guide)


PACKAGES = (
    Package("torch", "torch", "core"),
    Package("numpy", "numpy", "core"),
    Package("pandas", "pandas", "core"),
    Package("matplotlib", "matplotlib", "core"),
    Package("ml_dtypes", "ml_dtypes", "core"),
    Package("torchao", "torchao", "core"),
    Package("nbclient", "nbclient", "core"),
    Package("ipykernel", "ipykernel", "core"),
    Package("jupytext", "jupytext", "core"),
    Package("onnx", "onnx", "core"),
    Package("onnxscript", "onnxscript", "core"),
    Package("sklearn", "scikit-learn", "core"),
    Package("optimi", "torch-optimi", "core"),
    Package("pybtex", "pybtex", "core"),
    Package("transformers", "transformers", "optional"),
    Package("onnxruntime", "onnxruntime", "optional"),
    Package(
        "transformer_engine",
        "transformer_engine",
        "optional",
        install="pip install --no-build-isolation transformer_engine[pytorch]",
        needs="an NVIDIA GPU with its driver and CUDA 12.1 or newer (Transformer Engine's installation guide: "
        "its PyTorch extension ships as a source distribution that builds against the CUDA toolkit)",
    ),
    Package("jax", "jax", "optional"),
    Package("tensorflow", "tensorflow", "optional"),
    Package("mslk", "mslk", "optional"),
    Package("mkdocs", "mkdocs", "render"),
    Package("material", "mkdocs-material", "render"),
    Package("mkdocstrings", "mkdocstrings", "render"),
    Package("mkdocstrings_handlers", "mkdocstrings-python", "render"),
    Package("nbconvert", "nbconvert", "render"),
    Package("pymdownx", "pymdown-extensions", "render"),
    Package("markdown", "markdown", "render"),
    Package("pygments", "Pygments", "render"),  # highlights the code cells nbconvert renders
    Package("quickjs", "quickjs", "render"),  # runs the vendored KaTeX (docsite/math_render.py)
)
ROLES = ("core", "optional", "render")
# What the chapters compute depends on these (the cache key); the site's pages on all of them.
EXECUTION_DISTRIBUTIONS = tuple(p.distribution for p in PACKAGES if p.role != "render")
ALL_DISTRIBUTIONS = tuple(p.distribution for p in PACKAGES)
RENDER_DISTRIBUTIONS = tuple(p.distribution for p in PACKAGES if p.role == "render")
OPTIONAL_PACKAGES = tuple(p.module for p in PACKAGES if p.role == "optional")
KNOWN_MODULES = tuple(p.module for p in PACKAGES)


def check_known(module: str) -> str:
    """``module`` if it is one of ``PACKAGES``; ValueError naming the valid ones otherwise."""
    if module not in KNOWN_MODULES:
        raise ValueError(
            f"unknown package {module!r} in requires:pkg:{module}; add it to "
            f"amp_docs_lib/core/packages.py PACKAGES, or use one of: {', '.join(KNOWN_MODULES)}"
        )
    return module


def installed_versions(distributions: Iterable[str] = EXECUTION_DISTRIBUTIONS) -> dict[str, str]:
    """Versions from package metadata ('absent' if not installed, or hidden); imports nothing.

    A hidden package reads as absent, so hiding one changes every key built from these versions.
    """
    hidden = set(hidden_packages())
    hidden_dists = {p.distribution for p in PACKAGES if p.module in hidden}
    out = {"python": platform.python_version()}
    for name in distributions:
        if name in hidden_dists:
            out[name] = "absent (hidden)"
            continue
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def hidden_packages(
    environ: Mapping[str, str] | None = None, allowed: Iterable[str] = KNOWN_MODULES
) -> tuple[str, ...]:
    """The top-level package names hidden by ``$AMP_DOCS_HIDE_PACKAGES``, sorted (empty if unset).

    The value is a comma-separated list of import names from ``allowed`` (default: every package
    of ``PACKAGES``; the example tests hide core ones to mimic a reader's venv, while a build allows
    only the optional ones, ``core/settings.py``); ``optional`` stands for ``OPTIONAL_PACKAGES``.
    Raises ``ValueError`` naming any other entry and the valid ones: a misspelt name would hide
    nothing, yet change every chapter's cache key.
    """
    raw = (os.environ if environ is None else environ).get(HIDE_ENV_VAR, "")
    allowed = tuple(allowed)
    names: set[str] = set()
    for item in (s.strip() for s in raw.split(",")):
        if not item:
            continue
        if item == ALL_OPTIONAL:
            names.update(OPTIONAL_PACKAGES)
        elif item in allowed:
            names.add(item)
        else:
            raise ValueError(
                f"{HIDE_ENV_VAR}={raw!r}: {item!r} is not a package it can hide; valid: "
                f"{ALL_OPTIONAL!r} (the optional packages) or a comma-separated list of "
                f"{', '.join(allowed)}"
            )
    return tuple(sorted(names))


def is_hidden(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether module ``name`` (e.g. ``onnxruntime.quantization``) belongs to a hidden package."""
    return name.partition(".")[0] in hidden_packages(environ)


class HiddenPackageFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder that makes the hidden packages unimportable."""

    def __init__(self, names: tuple[str, ...]):
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by {HIDE_ENV_VAR})", name=fullname)
        return None


def install_blocker(names: tuple[str, ...] | None = None) -> HiddenPackageFinder | None:
    """Hide ``names`` (default: ``hidden_packages()``) in this interpreter; None if nothing to hide.

    Puts a ``HiddenPackageFinder`` first on ``sys.meta_path`` and makes
    ``importlib.util.find_spec`` answer None for hidden names (as it does for a
    package that is not installed) instead of raising.
    """
    names = hidden_packages() if names is None else tuple(names)
    if not names:
        return None
    finder = HiddenPackageFinder(names)
    sys.meta_path.insert(0, finder)
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None):
        try:
            return real_find_spec(name, package)
        except ModuleNotFoundError as e:
            if e.name is not None and e.name.partition(".")[0] in finder.names:
                return None
            raise

    if not getattr(real_find_spec, "_amp_docs_hides", False):
        find_spec._amp_docs_hides = True  # type: ignore[attr-defined]
        importlib.util.find_spec = find_spec
    return finder


def subprocess_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``environ`` (default ``os.environ``) for a kernel or subprocess.

    With packages hidden, ``hide_site/`` goes first on ``PYTHONPATH``, so the new
    interpreter (and the processes it starts) hides them from start-up on.
    """
    env = dict(os.environ if environ is None else environ)
    if hidden_packages(env):
        parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SITE_DIR)]
        env["PYTHONPATH"] = os.pathsep.join([str(SITE_DIR), *parts])
    return env
