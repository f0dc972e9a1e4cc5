"""Package exports grouped by role, imported on first use (PEP 562).

A package ``__init__`` lists its public API module by module (the module names the role);
``from amp_docs_lib.fp8 import scaling`` still imports only that module, and
``amp_docs_lib.fp8.mx_quantize`` imports ``fp8.scaling`` when first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, modules: dict[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package`` exporting ``modules``' names."""
    where = {}
    for module, names in modules.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by both {where[name]} and {module}")
            where[name] = module
    exported = list(where)

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(exported) | set(modules))

    return exported, __getattr__, __dir__
