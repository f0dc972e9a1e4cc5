"""Start-up hook of processes built with ``AMP_DOCS_HIDE_PACKAGES`` (see ``hide_packages.py``).

The executor puts this directory first on a kernel's ``PYTHONPATH`` when packages
are hidden; this file installs the blocker, then runs any other ``sitecustomize``
further along the path (this one shadows it).
"""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_load("_amp_docs_hide_packages", os.path.join(os.path.dirname(os.path.dirname(_here)), "core", "packages.py")).install_blocker()
_other = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or os.curdir) != _here])
if _other is not None and _other.origin:
    _load("_amp_docs_next_sitecustomize", _other.origin)
