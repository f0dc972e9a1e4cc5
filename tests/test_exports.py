"""Each package's __init__ exports its public API grouped by role: complete, and every name resolves."""

import ast
import importlib

import pytest

from amp_docs_lib.core.paths import LIBRARY_ROOT

PACKAGES = ["core", "page", "numbers", "amp", "regimes", "bench", "fp8", "quantization", "distributed", "debugging"]


def public_names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_") and n.name != "main"]  # a script entry point is not API


@pytest.mark.parametrize("package", PACKAGES)
def test_package_exports_every_public_function_of_its_modules(package):
    pkg = importlib.import_module(f"amp_docs_lib.{package}")
    missing = [f"{m.stem}.{n}" for m in sorted((LIBRARY_ROOT / package).glob("*.py")) if m.stem != "__init__"
               for n in public_names(m) if n not in pkg.__all__]
    assert not missing, f"amp_docs_lib.{package}.__init__ does not export: {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_resolves(package):
    pkg = importlib.import_module(f"amp_docs_lib.{package}")
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pkg.no_such_name


def test_importing_core_imports_neither_torch_nor_pandas():
    import subprocess
    import sys

    code = ("import sys, amp_docs_lib.core, amp_docs_lib.core.paths, amp_docs_lib.page; "
            "print(sorted(m for m in ('torch', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
