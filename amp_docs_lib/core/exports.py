"""A package's public surface, grouped by role, imported on first use (PEP 562).

A package ``__init__`` names what a reader uses (the names an example program, a copied cell or a
reader's own script calls), role by role and module by module, as torchao does
(``torchao.float8`` exports twelve names). Everything else stays in its module: a chapter's page
builders are imported from the module (``from amp_docs_lib.fp8.scaling import strategy_table``).
``from amp_docs_lib.fp8 import scaling`` still imports only that module; ``amp_docs_lib.fp8.scaling``
and ``amp_docs_lib.fp8.mx_quantize`` import ``fp8.scaling`` when first read.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

Roles = dict[str, dict[str, tuple[str, ...]]]  # role -> module -> the names it exports


def lazy_exports(package: str, roles: Roles) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package`` exporting ``roles``' names.

    ``roles`` maps a role (a few words: "the format registry") to the modules that fill it and the
    names each exports; a name is exported once, and never one that names a module. A submodule read as an attribute
    (``amp_docs_lib.fp8.scaling`` after ``import amp_docs_lib.fp8``) is imported then.
    """
    where: dict[str, str] = {}
    modules: set[str] = set()
    for modules_of_role in roles.values():
        for module, names in modules_of_role.items():
            modules.add(module)
            for name in names:
                if name in where:
                    raise ValueError(f"{package}: {name!r} is exported by both {where[name]} and {module}")
                where[name] = module
    if clashes := sorted(set(where) & modules):
        # once the module is imported, the import system binds its name in the package: the export would be lost
        raise ValueError(f"{package}: {clashes} name both a module and an export; import them from the module")
    exported = list(where)

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(exported) | modules)

    return exported, __getattr__, __dir__
