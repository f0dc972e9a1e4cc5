"""Every program in examples/ runs as a reader runs it: downloaded, after its one install line.

Each is copied out of the repository and run as a plain script (CPU profile) by a fresh venv that
holds the library only as its wheel, with every package its ``# Install:`` line does not name hidden.
"""

import ast
import fnmatch
import shutil
import subprocess
from concurrent.futures import Future
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

from amp_docs_lib.core.gating import requirement_met
from amp_docs_lib.core.packages import KNOWN_MODULES, OPTIONAL_PACKAGES
from amp_docs_lib.docsite.downloads import companion_files
from amp_docs_lib.docsite.wheel import WHEEL_PATTERN, install_line

from conftest import REPO_ROOT, allowed_modules, reader_env, selected_params, side_by_side

SCRIPTS = sorted((REPO_ROOT / "examples").rglob("*.py"))


def imported_modules(script, module_level_only: bool = False) -> set[str]:
    """Top-level names of the modules a script imports (anywhere, or only at module level)."""
    tree = ast.parse(script.read_text())
    names = set()
    for node in (tree.body if module_level_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            names.update(a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def optional_imports(script) -> list[str]:
    """The optional packages (``OPTIONAL_PACKAGES``) a script imports unconditionally (module level)."""
    return sorted(imported_modules(script, module_level_only=True) & set(OPTIONAL_PACKAGES))


def test_optional_imports_are_found():
    assert optional_imports(REPO_ROOT / "examples" / "quantization" / "onnxruntime_digits.py") == ["onnxruntime"]


def test_there_are_examples():
    assert SCRIPTS


def test_every_example_says_how_to_install_it():
    missing = [str(s.relative_to(REPO_ROOT)) for s in SCRIPTS if not install_line(s)]
    assert not missing, f"no '# Install: pip install ...' line after the docstring in {missing}"
    for s in SCRIPTS:
        uses_library = "amp_docs_lib" in imported_modules(s)
        names_wheel = any(fnmatch.fnmatch(a, WHEEL_PATTERN) for a in install_line(s))
        assert uses_library == names_wheel, f"{s.name}: imports amp_docs_lib but does not install the wheel, or vice versa"


def test_allowed_modules_follow_the_install_line():
    assert {"torch", "sklearn", "numpy"} <= allowed_modules(["torch", "scikit-learn"])  # numpy: sklearn's
    assert "numpy" not in allowed_modules(["torch"]) and "torchao" not in allowed_modules(["torch"])
    assert {"torch", "numpy", "pandas", "matplotlib", "ml_dtypes"} <= allowed_modules(["amp_docs_lib-*.whl"])
    assert "torchao" not in allowed_modules(["amp_docs_lib-*.whl"])


def missing_packages(script) -> list[str]:
    """Optional packages the script imports that this machine lacks (or hides): it is skipped."""
    return [p for p in optional_imports(script) if not requirement_met(f"pkg:{p}")]


def hidden_for(script) -> tuple[str, ...]:
    """Every listed package the script's install line does not name."""
    return tuple(sorted(set(KNOWN_MODULES) - allowed_modules(install_line(script))))


@pytest.fixture(scope="module")
def example_runs(request, reader_python, tmp_path_factory) -> dict[Path, Future]:
    """Every selected example that can run here, run as below, side by side (``side_by_side``)."""

    def run(script: Path) -> subprocess.CompletedProcess:
        folder = tmp_path_factory.mktemp(f"example-{script.stem}")
        rel = str(script.relative_to(REPO_ROOT / "examples"))
        for f in (rel, *companion_files(rel)):  # what the chapter page's download bar offers
            shutil.copy(REPO_ROOT / "examples" / f, folder / Path(f).name)
        return subprocess.run([str(reader_python), script.name], cwd=folder, env=reader_env(hidden_for(script)),
                              capture_output=True, text=True, timeout=300)

    pool = side_by_side(request)
    wanted = selected_params(request, "test_example_runs_from_its_download_with_only_its_install_line", "script")
    return {s: pool.submit(run, s) for s in wanted if not missing_packages(s)}


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(s.relative_to(REPO_ROOT / "examples")) for s in SCRIPTS])
def test_example_runs_from_its_download_with_only_its_install_line(script, example_runs):
    """Copied out of the repository (with its data files), run by a venv holding the wheel; every
    listed package its install line does not name is hidden, so a missing requirement fails here."""
    missing = missing_packages(script)
    if missing:
        pytest.skip(f"{script.name} needs {', '.join(missing)}, not installed (or hidden by AMP_DOCS_HIDE_PACKAGES)")
    hidden = hidden_for(script)
    r = example_runs[script].result()
    assert r.returncode == 0, (f"{script.name} failed with only {install_line(script)} "
                               f"(hidden: {', '.join(hidden)}):\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
    assert r.stdout.strip(), f"{script.name} printed nothing"
