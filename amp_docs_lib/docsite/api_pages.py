"""The API reference, generated: one page per package of ``amp_docs_lib``, in layer order.

Each page lists every module found in the package's folder (read from the file tree, nothing is
imported here), rendered by mkdocstrings; so a new module appears without anyone remembering to
add it. The plugin adds the pages to the build and to the navigation, under ``API reference``.
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
    "cli",
)
SKIPPED = {"__main__", "__init__"}


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


def page_markdown(package: str, modules: list[str], root: Path = LIBRARY_ROOT) -> str:
    """A package's API page: its docstring, then every module."""
    lines = [f"# `amp_docs_lib.{package}`", ""]
    if modules:
        lines += [
            f"::: amp_docs_lib.{package}",
            "    options:",
            "      members: false",
            "      show_root_heading: false",
            "",
        ]
    for m in modules:
        lines += [f"::: amp_docs_lib.{m}", ""]
    if not modules:
        lines += [f"::: amp_docs_lib.{package}", "    options:", "      show_root_heading: false", ""]
    return "\n".join(lines)


def index_markdown(root: Path = LIBRARY_ROOT) -> str:
    """The overview page: one line per package, bottom layer first."""
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
    for package, _ in packages(root):
        src = root / package / "__init__.py" if (root / package).is_dir() else root / f"{package}.py"
        # amp-nowrap: a package name never breaks mid-word beside a long description (assets/css/amp-docs.css)
        lines.append(f"| [`{package}`]({package}.md){{ .amp-nowrap }} | {_first_line(src)} |")
    return "\n".join(lines) + "\n"


def pages(root: Path = LIBRARY_ROOT) -> dict[str, str]:
    """``{uri: markdown}`` of every generated page (``api/index.md`` first)."""
    out = {f"{API_DIR}/index.md": index_markdown(root)}
    for package, modules in packages(root):
        out[f"{API_DIR}/{package}.md"] = page_markdown(package, modules, root)
    return out


def nav_entry(root: Path = LIBRARY_ROOT) -> dict[str, list]:
    """The ``API reference`` navigation section for the generated pages."""
    return {
        NAV_TITLE: [
            {"Overview": f"{API_DIR}/index.md"},
            *({package: f"{API_DIR}/{package}.md"} for package, _ in packages(root)),
        ]
    }
