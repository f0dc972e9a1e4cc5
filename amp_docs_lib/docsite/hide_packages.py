"""Build as if optional packages were not installed: ``AMP_DOCS_HIDE_PACKAGES``.

``AMP_DOCS_HIDE_PACKAGES=onnxruntime,transformers`` (or ``optional`` for every
package in ``OPTIONAL_PACKAGES``) makes a build behave as on a machine without
those packages, to check that every chapter still builds there:

* ``gating.requirement_met("pkg:onnxruntime")`` is False, so cells tagged
  ``requires:pkg:onnxruntime`` are skipped with a note;
* each chapter's kernel (and every Python process it starts, e.g. an example
  run by ``run_snippet``) starts with ``hide_site/`` first on ``PYTHONPATH``;
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
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping

HIDE_ENV_VAR = "AMP_DOCS_HIDE_PACKAGES"
# The packages some chapter or example uses when present; the site must build without each.
OPTIONAL_PACKAGES = ("transformers", "onnxruntime", "transformer_engine", "jax", "tensorflow")
ALL_OPTIONAL = "optional"
SITE_DIR = Path(__file__).resolve().parent / "hide_site"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def hidden_packages(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The top-level package names hidden by ``$AMP_DOCS_HIDE_PACKAGES``, sorted (empty if unset).

    The value is a comma-separated list of import names; ``optional`` stands for
    ``OPTIONAL_PACKAGES``. Raises ``ValueError`` naming an entry that is not an import name.
    """
    raw = (os.environ if environ is None else environ).get(HIDE_ENV_VAR, "")
    names: set[str] = set()
    for item in (s.strip() for s in raw.split(",")):
        if not item:
            continue
        if item == ALL_OPTIONAL:
            names.update(OPTIONAL_PACKAGES)
        elif _NAME.match(item):
            names.add(item)
        else:
            raise ValueError(f"{HIDE_ENV_VAR}: {item!r} is not a top-level import name; give a "
                             f"comma-separated list such as 'onnxruntime,jax', or {ALL_OPTIONAL!r} "
                             f"for {', '.join(OPTIONAL_PACKAGES)}")
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
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by {HIDE_ENV_VAR})",
                                      name=fullname)
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
