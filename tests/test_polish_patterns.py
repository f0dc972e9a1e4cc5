"""Reader review 2026-11-24, finding 21: the "Full program" tab of each AMP pattern is what a reader copies,
so each program runs on its own, in a fresh folder, with torch alone (no amp_docs_lib, no site wheel)."""

import ast
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest
import torch

from amp_docs_lib.amp import toy_task
from amp_docs_lib.core.profiles import PROFILES
from conftest import REPO_ROOT, selected_params, side_by_side

PATTERNS = sorted((REPO_ROOT / "examples" / "amp_patterns").glob("*.py"))

# Runs a program as __main__ with every import of amp_docs_lib refused, as on a machine without the wheel.
WITHOUT_THE_LIBRARY = """
import runpy, sys
class NoLibrary:
    def find_spec(self, name, path=None, target=None):
        if name == "amp_docs_lib" or name.startswith("amp_docs_lib."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: a reader's machine has no wheel)")
        return None
sys.meta_path.insert(0, NoLibrary())
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_every_pattern_is_found_and_says_it_needs_torch_alone():
    assert len(PATTERNS) >= 9
    for p in PATTERNS:
        install = next(line for line in p.read_text().splitlines() if line.startswith("# Install:"))
        assert install.startswith("# Install: pip install torch ") and "whl" not in install, p.name


@pytest.fixture(scope="module")
def pattern_runs(request, tmp_path_factory) -> dict[Path, Future]:
    """Every selected pattern, copied alone into a fresh folder and run without the library, side by
    side (``side_by_side``)."""

    def run(program: Path) -> subprocess.CompletedProcess:
        folder = tmp_path_factory.mktemp(f"pattern-{program.stem}")
        copy = folder / program.name
        copy.write_text(program.read_text())  # the program alone: no checkout, no data file beside it
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_THE_LIBRARY, str(copy)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        )

    pool = side_by_side(request)
    wanted = selected_params(request, "test_a_pattern_runs_alone_in_a_fresh_folder_without_the_library", "program")
    return {p: pool.submit(run, p) for p in wanted}


@pytest.mark.slow
@pytest.mark.parametrize("program", PATTERNS, ids=lambda p: p.name)
def test_a_pattern_runs_alone_in_a_fresh_folder_without_the_library(program, pattern_runs):
    run = pattern_runs[program].result()
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip(), "the program printed nothing"


def _inline_task(program) -> dict:
    """The make_data and make_model a pattern defines, and its step count on a CPU and on a GPU."""
    tree = ast.parse(program.read_text())
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("make_data", "make_model")]
    ns: dict = {"torch": torch}
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(program), "exec"), ns)
    steps = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "steps")
    ns["steps"] = {
        d: eval(compile(ast.Expression(steps.value), "steps", "eval"), {"device": d}) for d in ("cpu", "cuda")
    }
    return ns


@pytest.mark.parametrize("program", PATTERNS, ids=lambda p: p.name)
def test_the_inline_task_is_the_libraries_task(program):
    """One task: the inline copy gives the library's data, parameters and the profiles' step counts."""
    ns = _inline_task(program)
    for kw in ({}, {"seed": 3, "n": 64}):
        x, y = ns["make_data"](**kw)
        x0, y0 = toy_task.make_data(**kw)
        assert torch.equal(x, x0) and torch.equal(y, y0)
    for kw in ({}, {"hidden": 16, "seed": 1}):
        got, want = ns["make_model"](**kw).state_dict(), toy_task.make_model(**kw).state_dict()
        assert list(got) == list(want) and all(torch.equal(got[k], want[k]) for k in got)
    assert ns["steps"] == {"cpu": PROFILES["cpu-small"]["pattern_steps"], "cuda": PROFILES["gpu-full"]["pattern_steps"]}
