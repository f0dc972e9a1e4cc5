"""The library's layers (pyproject's import-linter contracts) hold, and no module imports itself
back through others. Imports inside functions count: grimp reads every import statement."""

import shutil
import subprocess
import sys

import grimp
import pytest

from conftest import REPO_ROOT


def import_cycles(package: str = "amp_docs_lib") -> list[list[str]]:
    """Every strongly connected group of two or more modules in ``package``'s import graph."""
    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    index, low, on_stack, stack, groups, counter = {}, {}, set(), [], [], [0]

    def visit(m):  # Tarjan's algorithm, iterative enough for a ~100-module graph
        index[m] = low[m] = counter[0]
        counter[0] += 1
        stack.append(m)
        on_stack.add(m)
        for n in sorted(graph.find_modules_directly_imported_by(m)):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on_stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                on_stack.discard(n)
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for m in modules:
        if m not in index:
            visit(m)
    return groups


def test_no_import_cycle():
    # A package __init__ that re-exports its modules imports them; a module importing its own
    # package's __init__ would close a cycle, so this also catches `from pkg import name` misuse.
    assert import_cycles() == []


def test_cycle_finder_finds_a_planted_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "planted"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from planted import b\n")
    (pkg / "b.py").write_text("def f():\n    from planted import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("planted") == [["planted.a", "planted.b"]]


@pytest.mark.slow
def test_layer_contracts_hold():
    exe = shutil.which("lint-imports")
    cmd = [exe] if exe else [sys.executable, "-m", "importlinter.cli"]
    r = subprocess.run([*cmd, "--no-cache"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "BROKEN" not in r.stdout and "KEPT" in r.stdout
