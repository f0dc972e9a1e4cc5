"""Each package exports what a reader uses, grouped by role: a small surface that resolves and covers
what the examples and the chapters import from a package (everything else is imported from its module)."""

import ast
import importlib
import re
import subprocess
import sys

import pytest

from amp_docs_lib.core.chapters import read_chapter
from amp_docs_lib.core.exports import lazy_exports
from amp_docs_lib.core.paths import LIBRARY_ROOT, REPO_ROOT
from amp_docs_lib.docsite.api_pages import LAYER_ORDER

# The packages chapters and readers import, in layer order (the API reference's order); the build
# machinery (docsite, devtools, cli) and the one-module gpt have no exported surface to count.
PACKAGES = [p for p in LAYER_ORDER if p not in {"gpt", "docsite", "devtools", "cli"}]
MAX_EXPORTS = 150  # issue 35: a public surface a reader can hold (torchao.float8 exports 12 names)


def exports(package):
    return importlib.import_module(f"amp_docs_lib.{package}").__all__


def submodules(package):
    folder = LIBRARY_ROOT / package
    return {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def top_level_names(path):
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def package_level_names(tree):
    """``(package, name)`` for every name ``tree`` takes from a package of amp_docs_lib rather than from
    one of its modules: ``from amp_docs_lib.P import name``, ``P.name`` after ``from amp_docs_lib import P``
    or ``import amp_docs_lib.P as P``, and ``amp_docs_lib.P.name``. Submodules (``P.scaling``) are not names."""
    found, alias = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] == "amp_docs_lib" and len(parts) == 2 and parts[1] in PACKAGES:
                found += [(parts[1], a.name) for a in node.names if a.name not in submodules(parts[1])]
            elif node.module == "amp_docs_lib":
                alias.update({a.asname or a.name: a.name for a in node.names if a.name in PACKAGES})
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if a.asname and len(parts) == 2 and parts[0] == "amp_docs_lib" and parts[1] in PACKAGES:
                    alias[a.asname] = parts[1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in alias:
            package = alias[value.id]
        elif (
            isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "amp_docs_lib"
        ):
            package = value.attr
        else:
            continue
        if package in PACKAGES and node.attr not in submodules(package):
            found.append((package, node.attr))
    return found


def reader_sources():
    """(label, source) of every example program and every chapter's code cells (magics dropped)."""
    for path in sorted((REPO_ROOT / "examples").rglob("*.py")):
        yield str(path.relative_to(REPO_ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((REPO_ROOT / "docs" / "chapters").glob("*.md")):
        for i, cell in enumerate(read_chapter(path).cells):
            if cell.cell_type == "code":
                code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
                yield f"{path.relative_to(REPO_ROOT)} cell {i}", code


def test_the_packages_listed_are_those_that_export():
    declared = {p.parent.name for p in LIBRARY_ROOT.glob("*/__init__.py") if "lazy_exports(" in p.read_text()}
    assert declared == set(PACKAGES)


def test_at_most_150_names_are_exported_in_all():
    counts = {package: len(exports(package)) for package in PACKAGES}
    assert sum(counts.values()) <= MAX_EXPORTS, f"{sum(counts.values())} exported names: {counts}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_is_defined_at_the_top_of_its_module(package):
    """Read without importing: the name the ``__init__`` promises is where it says."""
    pkg = importlib.import_module(f"amp_docs_lib.{package}")
    tree = ast.parse((LIBRARY_ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "lazy_exports")
    roles = ast.literal_eval(call.args[1])
    missing = [
        f"{module}.{name}"
        for modules in roles.values()
        for module, names in modules.items()
        for name in names
        if name not in top_level_names(LIBRARY_ROOT / package / f"{module}.py")
    ]
    assert not missing, f"amp_docs_lib.{package} exports names its modules do not define: {missing}"
    assert [n for modules in roles.values() for names in modules.values() for n in names] == pkg.__all__


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_resolves(package):
    pkg = importlib.import_module(f"amp_docs_lib.{package}")
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pkg.no_such_name


@pytest.mark.parametrize("package", PACKAGES)
def test_no_export_names_a_module(package):
    """``literature.bibliography`` is a module once anything imports it, whatever the ``__init__`` says."""
    assert not set(exports(package)) & submodules(package)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_docstring_lists_exactly_the_exports(package):
    pkg = importlib.import_module(f"amp_docs_lib.{package}")
    bullets = [line for line in pkg.__doc__.splitlines() if line.startswith("* ")]
    named = {n for line in bullets for n in re.findall(r"``(\w+)``", line)} - submodules(package)
    assert named == set(pkg.__all__)


def test_every_name_examples_and_chapters_take_from_a_package_is_exported():
    uses = {}
    for label, source in reader_sources():
        for package, name in package_level_names(ast.parse(source)):
            uses.setdefault((package, name), label)
    assert ("literature", "reading_map") in uses  # the scan sees the literature chapter's `literature.reading_map()`
    missing = [f"amp_docs_lib.{p}.{n} ({where})" for (p, n), where in uses.items() if n not in exports(p)]
    assert not missing, f"imported from a package that does not export them: {missing}"


def test_the_scan_sees_every_spelling_of_a_package_level_name():
    source = (
        "from amp_docs_lib.fp8 import scaling, mx_quantize\n"
        "from amp_docs_lib import literature as L\n"
        "import amp_docs_lib.amp as A\n"
        "import amp_docs_lib.numbers\n"
        "L.get_claim; L.registry; A.train; amp_docs_lib.numbers.get_format; scaling.strategy_table\n"
    )
    assert sorted(package_level_names(ast.parse(source))) == [
        ("amp", "train"),
        ("fp8", "mx_quantize"),
        ("literature", "get_claim"),
        ("numbers", "get_format"),
    ]


def test_lazy_exports_rejects_a_name_exported_twice_or_naming_a_module():
    with pytest.raises(ValueError, match="exported by both"):
        lazy_exports("pkg", {"one": {"a": ("f",)}, "two": {"b": ("f",)}})
    with pytest.raises(ValueError, match="both a module and an export"):
        lazy_exports("pkg", {"one": {"a": ("b",)}, "two": {"b": ("g",)}})


def test_importing_core_imports_neither_torch_nor_pandas():
    code = (
        "import sys, amp_docs_lib.core, amp_docs_lib.core.paths, amp_docs_lib.page; "
        "print(sorted(m for m in ('torch', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_submodule_reads_as_an_attribute_and_an_export_as_its_module_defines_it():
    """In a fresh process, before anything imported them: ``core.palette`` (a module read as an
    attribute) and ``core.color_of`` (the function of ``core.palette``)."""
    code = "import amp_docs_lib.core as C; print(C.palette.__name__, C.color_of is C.palette.color_of)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["amp_docs_lib.core.palette", "True"]


def test_the_api_reference_shows_the_exports_by_role_and_every_identifier_resolves():
    """The generated pages render each export under its role, from its module, and no whole module; griffe
    (what mkdocstrings reads) finds every identifier, as ``mkdocs build --strict`` would require."""
    import griffe

    from amp_docs_lib.docsite import api_pages

    pages = api_pages.pages()
    identifiers = [i for text in pages.values() for i in re.findall(r"^::: (\S+)", text, re.M)]
    for package in PACKAGES:
        shown = re.findall(r"^::: amp_docs_lib\.(\S+)", pages[f"{api_pages.API_DIR}/{package}.md"], re.M)
        promised = [
            f"{package}.{module}.{name}"
            for names_by_module in api_pages.roles(package).values()
            for module, names in names_by_module.items()
            for name in names
        ]
        assert shown == promised and len(promised) == len(exports(package))
        for role in api_pages.roles(package):
            assert f"\n## {role[0].upper()}{role[1:]}\n" in pages[f"{api_pages.API_DIR}/{package}.md"]
    library = griffe.load("amp_docs_lib", resolve_aliases=False)
    unresolved = []
    for identifier in identifiers:
        try:
            library[identifier.removeprefix("amp_docs_lib.")]
        except KeyError:
            unresolved.append(identifier)
    assert not unresolved
