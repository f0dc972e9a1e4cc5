"""The API reference, generated: one page per package of ``amp_docs_lib``, in layer order.

A package's page shows its public surface: what its ``__init__`` exports, role by role (read from the
``lazy_exports`` call, nothing is imported here), each name rendered by mkdocstrings from its module;
then a table of every module found in the package's folder, so a new module appears without anyone
remembering to add it, and a chapter's page builders are found in the module that holds them. A
package that exports nothing (``docsite``, ``cli``) gets its docstring and the table; a top-level
module (``gpt.py``) is rendered whole. The plugin adds the pages to the build and to the navigation,
under ``API reference``; the packages that build the site rather than teach (``MACHINERY``) are
listed apart, under ``Site machinery``, in the navigation and on the overview page.
"""

from __future__ import annotations

import ast
from pathlib import Path

from amp_docs_lib.core.paths import LIBRARY_ROOT

API_DIR = "api"
NAV_TITLE = "API reference"
# Layer order, bottom up (ARCHITECTURE.md draws the layers); a package not listed goes last.
LAYER_ORDER = (
    "core",
    "page",
    "gpt",
    "numbers",
    "amp",
    "regimes",
    "bench",
    "fp8",
    "quantization",
    "distributed",
    "debugging",
    "literature",
    "docsite",
    "devtools",
    "cli",
)
SKIPPED = {"__main__", "__init__"}
# What renders pages, builds the site and runs it: a reader's program needs none of it.
MACHINERY = ("page", "docsite", "cli")
MACHINERY_TITLE = "Site machinery"


def _first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def packages(root: Path = LIBRARY_ROOT) -> list[tuple[str, list[str]]]:
    """(package, its modules) for every package of the library, in layer order; a top-level
    module (``gpt.py``) is a package of its own."""
    found: dict[str, list[str]] = {}
    for p in sorted(root.iterdir()):
        if p.is_dir() and (p / "__init__.py").exists():
            found[p.name] = [f"{p.name}.{m.stem}" for m in sorted(p.glob("*.py")) if m.stem not in SKIPPED]
        elif p.suffix == ".py" and p.stem not in SKIPPED:
            found[p.stem] = []
    order = {name: i for i, name in enumerate(LAYER_ORDER)}
    return sorted(found.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def roles(package: str, root: Path = LIBRARY_ROOT) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{role: {module: names}}`` a package exports (the second argument of its ``lazy_exports`` call,
    read from the source); empty for a package that exports nothing."""
    init = root / package / "__init__.py"
    if not init.exists():
        return {}
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports":
            return ast.literal_eval(node.args[1])
    return {}


def _summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def page_markdown(package: str, modules: list[str], root: Path = LIBRARY_ROOT) -> str:
    """A package's API page: what it is, its exports by role, then a table of its modules."""
    if not modules:  # a top-level module: rendered whole
        return "\n".join(
            [
                f"# `amp_docs_lib.{package}`",
                "",
                f"::: amp_docs_lib.{package}",
                "    options:",
                "      show_root_heading: false",
                "",
            ]
        )
    lines = [f"# `amp_docs_lib.{package}`", "", _summary(root / package / "__init__.py"), ""]
    exported = roles(package, root)
    if exported:
        lines += [
            f"What a reader's script uses, imported from the package (`from amp_docs_lib.{package} import ...`); "
            "everything else, the chapters' page builders included, is imported from its module "
            "(listed at the end of this page).",
            "",
        ]
    for role, names_by_module in exported.items():
        lines += [f"## {role[0].upper()}{role[1:]}", ""]
        for module, names in names_by_module.items():
            for name in names:
                lines += [f"::: amp_docs_lib.{package}.{module}.{name}", "    options:", "      heading_level: 3", ""]
    lines += ["## Modules", "", "| module | what it holds |", "| --- | --- |"]
    for m in modules:
        what = _summary(root / (m.replace(".", "/") + ".py")).replace("|", r"\|")  # a pipe would end the cell
        lines.append(f"| `amp_docs_lib.{m}` | {what} |")
    return "\n".join(lines) + "\n"


def _overview_row(package: str, root: Path) -> str:
    src = root / package / "__init__.py" if (root / package).is_dir() else root / f"{package}.py"
    # amp-nowrap: a package name never breaks mid-word beside a long description (assets/css/amp-docs.css)
    return f"| [`{package}`]({package}.md){{ .amp-nowrap }} | {_first_line(src)} |"


def index_markdown(root: Path = LIBRARY_ROOT) -> str:
    """The overview page: one line per package, bottom layer first; the site machinery in a table of
    its own."""
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings of `amp_docs_lib`, the library the chapters, the examples and "
        "the tests call. Its packages are layers, listed bottom up: each imports only the ones listed "
        "above it (import-linter contracts in the project's `pyproject.toml`, checked by its tests).",
        "",
        "| package | what it holds |",
        "| --- | --- |",
    ]
    names = [package for package, _ in packages(root)]
    lines += [_overview_row(p, root) for p in names if p not in MACHINERY]
    lines += [
        "",
        f"## {MACHINERY_TITLE}",
        "",
        "The packages that render the pages, build the site and run its commands: the presentation branch of "
        "the layers (`cli` > `docsite` > `page` > `core`). A reader's program needs none of them.",
        "",
        "| package | what it holds |",
        "| --- | --- |",
    ]
    lines += [_overview_row(p, root) for p in names if p in MACHINERY]
    return "\n".join(lines) + "\n"


def pages(root: Path = LIBRARY_ROOT) -> dict[str, str]:
    """``{uri: markdown}`` of every generated page (``api/index.md`` first)."""
    out = {f"{API_DIR}/index.md": index_markdown(root)}
    for package, modules in packages(root):
        out[f"{API_DIR}/{package}.md"] = page_markdown(package, modules, root)
    return out


def nav_entry(root: Path = LIBRARY_ROOT) -> dict[str, list]:
    """The ``API reference`` navigation section for the generated pages: the teaching packages, then
    the site machinery under a heading of its own."""
    names = [package for package, _ in packages(root)]
    return {
        NAV_TITLE: [
            {"Overview": f"{API_DIR}/index.md"},
            *({p: f"{API_DIR}/{p}.md"} for p in names if p not in MACHINERY),
            {MACHINERY_TITLE: [{p: f"{API_DIR}/{p}.md"} for p in names if p in MACHINERY]},
        ]
    }
