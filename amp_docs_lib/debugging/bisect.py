"""Find the layer that cannot run in low precision by lowering modules half at a time.

:func:`lowered` returns a copy of the model in which the chosen modules run in a low dtype
(their parameters cast, floating inputs cast on the way in, outputs cast back to FP32 on
the way out); everything else stays FP32. :func:`bisect_precision` starts from "all
candidate modules lowered", and while more than one candidate remains, lowers each half
alone and keeps the half whose output error exceeds the tolerance. With one sensitive
layer among n candidates that takes about 2 log2(n) forward passes instead of n.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.debugging.locate import call_model, check_input, model_output, resolve_modules

LOW_DTYPES = (torch.float16, torch.bfloat16)


def _cast_in(dtype: torch.dtype):
    def pre(module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    return pre


def _cast_out(module: nn.Module, args: Any, out: Any) -> Any:
    return out.float() if isinstance(out, torch.Tensor) and out.is_floating_point() else out


def lowered(model: nn.Module, names: Iterable[str], dtype: torch.dtype = torch.float16) -> nn.Module:
    """A deep copy of ``model`` with the modules called ``names`` running in ``dtype``."""
    if dtype not in LOW_DTYPES:
        raise ValueError(f"dtype must be one of {list(LOW_DTYPES)}, got {dtype}")
    m = copy.deepcopy(model)
    for name, sub in resolve_modules(m, list(names)).items():
        sub.to(dtype)
        sub.register_forward_pre_hook(_cast_in(dtype))
        sub.register_forward_hook(_cast_out)
    return m


def output_error(model: nn.Module, x: Any, reference: torch.Tensor) -> float:
    """max |model(x) - reference| / max |reference|; inf when the output is not finite."""
    with torch.no_grad():
        out = model_output(call_model(model, x)).float()
    if not torch.isfinite(out).all():
        return float("inf")
    return float((out - reference).abs().max() / reference.abs().max())


def bisect_precision(model: nn.Module, x: Any, *, candidates: Iterable[str] | None = None,
                     dtype: torch.dtype = torch.float16, tolerance: float = 1e-2) -> tuple[list[str], pd.DataFrame]:
    """Find a module that breaks the output when lowered to ``dtype``.

    Args:
        model: an FP32 model.
        x: the input (features or token ids, or a tuple of arguments).
        candidates: module names to consider (default: leaf modules with parameters).
        dtype: ``torch.float16`` or ``torch.bfloat16``.
        tolerance: largest acceptable relative output error (see :func:`output_error`).

    Returns:
        ``(found, trail)``: the remaining candidate names (one module when a single layer is
        responsible; empty when lowering everything stays within tolerance) and one row per
        test (which modules were lowered, the error, the verdict).
    """
    check_input(x, "x")
    if not isinstance(tolerance, (int, float)) or tolerance <= 0:
        raise ValueError(f"tolerance must be a positive number, got {tolerance!r}")
    names = list(resolve_modules(model, candidates)) if candidates is not None else \
        [n for n, m in resolve_modules(model).items() if any(True for _ in m.parameters(recurse=False))]
    if not names:
        raise ValueError("no candidate modules: the model has no leaf modules with parameters")
    with torch.no_grad():
        reference = model_output(call_model(model, x)).float()
    trail: list[dict[str, Any]] = []

    def test(group: list[str]) -> bool:
        err = output_error(lowered(model, group, dtype), x, reference)
        bad = err > tolerance
        trail.append({"test": len(trail) + 1, "lowered": ", ".join(group), "modules lowered": len(group),
                      "relative error": err, "exceeds tolerance": bad})
        return bad

    if not test(names):
        return [], pd.DataFrame(trail)
    while len(names) > 1:
        half = len(names) // 2
        left, right = names[:half], names[half:]
        if test(left):
            names = left
        elif test(right):
            names = right
        else:  # only the combination fails: stop with both halves
            break
    return names, pd.DataFrame(trail)
