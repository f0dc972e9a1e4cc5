"""The library's layers (pyproject's import-linter contracts) hold, and no module imports itself
back through others. Imports inside functions count: grimp reads every import statement."""

import textwrap
from pathlib import Path

import grimp

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


def lint_imports(config: Path) -> bool:
    """import-linter's check of ``config``'s contracts, in this process (the ``lint-imports``
    command starts a new interpreter and re-imports everything: seconds instead of a quarter of one)."""
    from importlinter import api  # noqa: F401  (configures import-linter's adapters)
    from importlinter.application import use_cases

    return use_cases.lint_imports(config_filename=str(config), cache_dir=None, no_logo=True)


def test_layer_contracts_hold(capsys):
    assert lint_imports(REPO_ROOT / "pyproject.toml"), capsys.readouterr().out[-3000:]


def test_layer_check_reports_a_broken_contract(tmp_path, capsys):
    # docsite imports core: a contract forbidding that must be reported broken, so a pass above means something.
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [tool.importlinter]
        root_package = "amp_docs_lib"

        [[tool.importlinter.contracts]]
        name = "planted: docsite may not import core"
        type = "forbidden"
        source_modules = ["amp_docs_lib.docsite"]
        forbidden_modules = ["amp_docs_lib.core"]
        """)
    )
    assert not lint_imports(tmp_path / "pyproject.toml")
    assert "BROKEN" in capsys.readouterr().out
