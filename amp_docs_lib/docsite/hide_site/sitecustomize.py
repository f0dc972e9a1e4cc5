"""Start-up hook of a chapter's kernel and of every Python process it starts.

The executor puts this directory first on a kernel's ``PYTHONPATH``; every Python
process the kernel starts inherits it. This file

* hides the packages of ``$AMP_DOCS_HIDE_PACKAGES`` (``core/packages.py``, ``install_blocker``),
* records what the process reads under the site and library folders while
  ``$AMP_DOCS_READS_DIR`` is set (``read_recorder.install``; last, so that this
  machinery's own files are not recorded as the chapter's inputs),
* then runs any other ``sitecustomize`` further along the path (this one shadows it).

Both modules are loaded by path: they import only the standard library.
"""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


_packages = _load(
    "_amp_docs_hide_packages", os.path.join(os.path.dirname(os.path.dirname(_here)), "core", "packages.py")
)
_packages.install_blocker()
if os.environ.get("AMP_DOCS_READS_DIR"):
    # Registered under core.packages.READ_RECORDER_MODULE: library readers find it there.
    _load(_packages.READ_RECORDER_MODULE, str(_packages.READ_RECORDER_FILE)).install()
_other = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
)
if _other is not None and _other.origin:
    _load("_amp_docs_next_sitecustomize", _other.origin)
