"""Every script in examples/ runs as a plain program (CPU profile) and exits 0."""

import ast
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

from amp_docs_lib.core.packages import OPTIONAL_PACKAGES, subprocess_env
from amp_docs_lib.core.gating import requirement_met

from conftest import REPO_ROOT

SCRIPTS = sorted((REPO_ROOT / "examples").rglob("*.py"))


def optional_imports(script) -> list[str]:
    """The optional packages (``OPTIONAL_PACKAGES``) a script imports unconditionally (module level)."""
    names = set()
    for node in ast.parse(script.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return sorted(names & set(OPTIONAL_PACKAGES))


def test_optional_imports_are_found():
    assert optional_imports(REPO_ROOT / "examples" / "quantization" / "onnxruntime_digits.py") == ["onnxruntime"]


def test_there_are_examples():
    assert SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(s.relative_to(REPO_ROOT / "examples")) for s in SCRIPTS])
def test_example_runs(script):
    """Runs with $AMP_DOCS_HIDE_PACKAGES applied; skipped if it imports an optional package that is missing."""
    missing = [p for p in optional_imports(script) if not requirement_met(f"pkg:{p}")]
    if missing:
        pytest.skip(f"{script.name} needs {', '.join(missing)}, not installed (or hidden by AMP_DOCS_HIDE_PACKAGES)")
    env = dict(subprocess_env(), AMP_DOCS_PROFILE=os.environ.get("AMP_DOCS_PROFILE", "cpu-small"),
               MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    assert r.stdout.strip(), f"{script.name} printed nothing"
