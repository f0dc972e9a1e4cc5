"""The state of the quantization APIs, read from the installed packages (not quoted).

- ``torch_ao_warnings``: what the installed torch says when the old eager API
  ``torch.ao.quantization.quantize_dynamic`` is used (warnings captured).
- ``torchao_api_table``: which names the installed torchao exports, and which of
  them warn that they are deprecated when used.
"""

from __future__ import annotations

import re
import warnings

import pandas as pd
import torch
from torch import nn


def torch_ao_warnings() -> pd.DataFrame:
    """Warnings raised by ``torch.ao.quantization.quantize_dynamic`` on a tiny model (first line of each)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from torch.ao.quantization import quantize_dynamic

        quantize_dynamic(nn.Sequential(nn.Linear(4, 4)), {nn.Linear}, dtype=torch.qint8)
    rows, seen = [], set()
    for w in caught:
        first = str(w.message).strip().splitlines()[0]
        if first in seen:
            continue
        seen.add(first)
        rows.append({"category": w.category.__name__, "message (first line)": first,
                     "names torchao as the replacement": "torchao" in str(w.message)})
    return pd.DataFrame(rows, columns=["category", "message (first line)", "names torchao as the replacement"])


def announced_removal(table: pd.DataFrame) -> str | None:
    """The torch version a deprecation message says the API will be removed in, if it names one."""
    for msg in table["message (first line)"]:
        m = re.search(r"removed in (\d+\.\d+)", msg)
        if m:
            return m.group(1)
    return None


def _uses(name: str):
    """How to exercise a torchao name (to see whether it warns)."""
    import torchao.quantization as tq
    import torchao.quantization.qat as qat

    def make():
        for mod in (tq, qat):
            if hasattr(mod, name):
                return getattr(mod, name)()
        raise AttributeError(name)
    return make


TORCHAO_NAMES = {
    # name: (module, what it is)
    "quantize_": ("torchao.quantization", "the entry point: quantize_(model, config)"),
    "Int8WeightOnlyConfig": ("torchao.quantization", "INT8 weight-only config"),
    "Int8DynamicActivationInt8WeightConfig": ("torchao.quantization", "INT8 dynamic activation + INT8 weight"),
    "IntxWeightOnlyConfig": ("torchao.quantization", "INT1-INT8 weight-only config (any device)"),
    "Int4WeightOnlyConfig": ("torchao.quantization", "packed INT4 weight-only (CUDA kernels)"),
    "int8_weight_only": ("torchao.quantization", "function-style config of older releases"),
    "int4_weight_only": ("torchao.quantization", "function-style config of older releases"),
    "int8_dynamic_activation_int8_weight": ("torchao.quantization", "function-style config of older releases"),
    "QATConfig": ("torchao.quantization.qat", "QAT: prepare / convert"),
    "IntXQuantizationAwareTrainingConfig": ("torchao.quantization.qat", "QAT prepare config of older releases"),
    "FromIntXQuantizationAwareTrainingConfig": ("torchao.quantization.qat", "QAT convert config of older releases"),
}


def torchao_api_table() -> pd.DataFrame:
    """Per name: exported by the installed torchao? Does constructing it warn (deprecated), and in favour of what?

    The warning column is the message's first line, ``None`` where nothing deprecated was said (or
    the name was not constructed); the replacement is the config the message's example passes to ``quantize_``.
    """
    import importlib

    rows = []
    for name, (module, what) in TORCHAO_NAMES.items():
        present = hasattr(importlib.import_module(module), name)
        warning = replacement = None  # None: not constructed, or no deprecation warning
        if present and name[0].isupper() and name != "QATConfig":
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    _uses(name)()
                except TypeError:
                    pass  # needs arguments; only deprecation warnings matter here
            dep = [str(w.message).strip() for w in caught if "deprecat" in str(w.message).lower()]
            if dep:
                warning = dep[0].splitlines()[0]
                # the config the message's example passes to quantize_ after "instead"
                m = re.search(r"instead.*?quantize_\(\w+,\s*(\w+)\(", dep[0], re.DOTALL)
                replacement = m.group(1) if m else None
        rows.append({"name": f"{module}.{name}", "what": what, "exported": present,
                     "deprecation warning when constructed": warning,
                     "replacement the warning recommends": replacement})
    df = pd.DataFrame(rows).astype(object)
    return df.where(df.notna(), None)  # "no warning" stays None (falsy), not NaN
