"""FSDP1's ``MixedPrecision`` and FSDP2's ``MixedPrecisionPolicy`` as the installed torch defines them.

The two classes are dataclasses, so their fields and defaults are read here rather than
listed by hand; what ``reduce_dtype=None`` means is read from the installed docstring, which
changed in torch 2.15 (a ``versionchanged:: 2.15`` note), so the page quotes the version the
build runs instead of one written into its prose.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import pandas as pd


def _policy_classes() -> dict[str, type]:
    from torch.distributed.fsdp import MixedPrecision, MixedPrecisionPolicy

    return {"FSDP1 MixedPrecision": MixedPrecision, "FSDP2 MixedPrecisionPolicy": MixedPrecisionPolicy}


def policy_fields() -> pd.DataFrame:
    """One row per public field of each policy class: its name and default."""
    rows = [
        {"policy": label, "field": f.name, "default": repr(f.default)}
        for label, cls in _policy_classes().items()
        for f in dataclasses.fields(cls)
        if not f.name.startswith("_")
    ]
    return pd.DataFrame(rows)


def buffer_fields(fields: pd.DataFrame) -> dict[str, list[str]]:
    """Per policy, the fields that configure buffers (any field named ``buffer...``)."""
    return {label: sorted(g.loc[g["field"].str.startswith("buffer"), "field"]) for label, g in fields.groupby("policy")}


def attribute_doc(cls: type, name: str) -> str:
    """The paragraph a Google-style ``Attributes:`` docstring gives ``name`` (with any nested notes).

    It runs from the line ``name (...):`` to the next attribute at the same indentation.
    """
    lines = (inspect.getdoc(cls) or "").splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(rf"\s*{re.escape(name)} \(.*\):", line)), None)
    if start is None:
        raise ValueError(f"{cls.__qualname__}'s docstring documents no attribute {name!r}")
    indent = len(lines[start]) - len(lines[start].lstrip())
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return "\n".join(line[indent:] for line in block).strip()


def version_note(doc: str, version: str) -> str | None:
    """The text of a ``.. versionchanged:: <version>`` note in ``doc``, joined into one line; None without one."""
    match = re.search(rf"\.\. versionchanged:: {re.escape(version)}\n((?:[ \t]+\S.*\n?)+)", doc)
    return " ".join(match.group(1).split()) if match else None
