"""scripts/gpu_build.py: the wheel folder for a GPU machine without a package index, and its checks.

The preparing half resolves against PyPI (network); the running half is tried by hand on a
stand-in for the GPU machine (docs/rebuild.md, "A GPU machine without a package index").
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import socket
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import CHAPTERS, REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "gpu_build.py"
TORCH_HERE = version("torch").split("+")[0]


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_build", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd)


def names(specs: list[str]) -> set[str]:
    gb = load_script()
    return {gb.requirement_name(s) for s in specs}


def test_execution_requirements_are_the_notebook_extra_and_jupytext():
    gb = load_script()
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    # The docs extra is the notebook extra, jupytext and what renders: nothing else is left behind.
    docs = names(extras["docs"]) - {"amp-docs-lib"}
    assert docs == set(gb.RENDER_ONLY) | gb.EXECUTE_FROM_DOCS, docs
    got = names(gb.execution_requirements())
    assert got == names(extras["notebook"]) | gb.EXECUTE_FROM_DOCS
    assert {"jupytext", "nbclient", "nbformat", "ipykernel", "torchao", "pybtex", "torch-optimi", "markdown"} <= got
    assert not any(n.startswith("mkdocs") for n in got)


def test_run_refuses_a_folder_prepare_did_not_fill(tmp_path):
    r = run_script("run", str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert str(tmp_path) in r.stderr and "bundle.json" in r.stderr and "prepare" in r.stderr


def test_run_refuses_an_unknown_chapter_naming_the_valid_ones(tmp_path):
    r = run_script("run", str(tmp_path), "--chapters", "formats,nosuch")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "nosuch" in r.stderr and "formats" in r.stderr and "literature" in r.stderr


@pytest.mark.parametrize(
    "bundle, words",
    [
        ({"python": "3.99"}, ["3.99", f"{sys.version_info.major}.{sys.version_info.minor}", "--python"]),
        ({"machine_has": ["no-such-distribution-xyz"]}, ["no-such-distribution-xyz", "--also"]),
        ({"torch": "1.0.0"}, ["torch 1.0.0", f"--torch {TORCH_HERE}"]),
    ],
)
def test_run_checks_the_folder_against_this_machine_before_installing(tmp_path, bundle, words):
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    (tmp_path / "bundle.json").write_text(
        json.dumps(
            {
                "python": here,
                "torch": TORCH_HERE,
                "wheel": "x.whl",
                "requirements": [],
                "download": [],
                "machine_has": [],
                **bundle,
            }
        )
    )
    r = run_script("run", str(tmp_path), "--archive", str(tmp_path / "out.tar.gz"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr
    assert not (tmp_path / "out.tar.gz").exists()  # stopped before installing anything


def test_prepare_refuses_a_package_it_does_not_assume(tmp_path):
    gb = load_script()
    with pytest.raises(gb.UsageError, match=r"nosuch.*valid: numpy"):
        gb.plan("3.12", "2.11.0", tmp_path / "amp_docs_lib-0.1.0-py3-none-any.whl", ("nosuch",))


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _pypi_reachable(), reason="resolving for Python 3.12 needs PyPI (pypi.org:443 unreachable)")
def test_prepare_resolves_for_python_312_without_torch_or_what_the_machine_has(site_wheel):
    """The resolution `prepare` downloads (pip install --dry-run --report for Python 3.12, manylinux)."""
    gb = load_script()
    plan = gb.plan("3.12", "2.11.0", site_wheel)
    got = {gb.requirement_name(s): s.split("==")[1] for s in plan["download"]}
    assert all("==" in s for s in plan["download"])
    # what executing needs is there: the notebook machinery and the packages the image lacks
    assert {"jupytext", "nbclient", "nbformat", "ipykernel", "pybtex", "torch-optimi"} <= set(got)
    assert re.fullmatch(r"0\.18\.\d+", got["torchao"])
    # not torch, nor what comes with it, nor what the GPU machine has, nor the site's rendering
    assert not {n for n in got if n == "torch" or n.startswith(("nvidia-", "cuda-", "triton"))}
    assert not set(got) & set(gb.MACHINE_HAS)
    assert not {n for n in got if n.startswith("mkdocs") or n in ("nbconvert", "pymdown-extensions")}
    assert "markdown" in got  # core/chapters.py slugifies headings with it; mkdocs brings it on the CPU side
    assert "amp-docs-lib" not in got  # built, not downloaded
    assert plan["machine_has"][0] == "torch"

    # Every package the execution imports (the library, the chapters' cells, the examples they run)
    # is downloaded or on the machine: what mkdocs brings on the CPU side is not there.
    from importlib.metadata import packages_distributions

    from amp_docs_lib.core.packages import OPTIONAL_PACKAGES

    there = {gb.canonical(n) for n in [*got, *plan["brought"]]}
    unmet, imported = {}, imported_modules()
    for module, dists in packages_distributions().items():
        if module in imported and module not in OPTIONAL_PACKAGES:
            dists = {gb.canonical(d) for d in dists}
            if not dists & (there | set(gb.RENDER_ONLY)):
                unmet[module] = sorted(dists)
    assert unmet == {}, f"imported when executing, yet neither downloaded nor on the GPU machine: {unmet}"


def imported_modules() -> set[str]:
    """Top-level modules imported anywhere in the library (its rendering modules too), the chapters'
    code cells and examples/, but the library itself and the standard library."""
    sources = [p.read_text() for p in (REPO_ROOT / "amp_docs_lib").rglob("*.py")]
    sources += [p.read_text() for p in (REPO_ROOT / "examples").rglob("*.py")]
    sources += [m.group(1) for c in CHAPTERS for m in re.finditer(r"```python[^\n]*\n(.*?)```", c.read_text(), re.S)]
    out = set()
    for src in sources:
        try:
            tree = ast.parse(src)
        except SyntaxError:  # a cell with IPython syntax
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                out |= {a.name.partition(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                out.add(n.module.partition(".")[0])
    return out - set(sys.stdlib_module_names) - {"amp_docs_lib"}
