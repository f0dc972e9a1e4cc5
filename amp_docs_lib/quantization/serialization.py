"""Saving and reloading a torchao-quantized model, and checking it computes the same outputs.

torchao's quantized weights are tensor subclasses; ``torch.save(model.state_dict())`` stores them
with their scales, and ``load_state_dict(sd, assign=True)`` puts them back into a model built the
same way. :func:`save_reload_check` does it through a file and compares the outputs bit for bit.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import torch
from torch import nn


def save_reload(quantized: nn.Module, skeleton: nn.Module, path: str | Path | None = None) -> nn.Module:
    """Save ``quantized``'s state_dict to a file and load it into a deep copy of ``skeleton`` (assign=True)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(path) if path is not None else Path(tmp) / "quantized.pt"
        torch.save(quantized.state_dict(), p)
        sd = torch.load(p, weights_only=True)  # torchao registers its tensor subclasses as safe to load
    fresh = copy.deepcopy(skeleton).eval()
    fresh.load_state_dict(sd, assign=True)
    return fresh


def compare_outputs(a: nn.Module, b: nn.Module, x: torch.Tensor) -> dict:
    """Weight classes of two models and how their outputs on ``x`` differ (max |difference|, bit equality)."""
    with torch.inference_mode():
        ya, yb = a(x), b(x)
    classes = lambda m: ", ".join(sorted({type(p).__name__ for p in m.parameters()}))  # noqa: E731
    return {"weight classes before": classes(a), "weight classes after": classes(b),
            "max |difference| of outputs": float((ya - yb).abs().max()), "bitwise equal": bool(torch.equal(ya, yb))}


def save_reload_check(quantized: nn.Module, skeleton: nn.Module, x: torch.Tensor) -> dict:
    """:func:`compare_outputs` of ``quantized`` and its copy saved to a file and reloaded into ``skeleton``."""
    return compare_outputs(quantized, save_reload(quantized, skeleton), x)


def load_without_assign(quantized: nn.Module, skeleton: nn.Module) -> str:
    """What ``load_state_dict(sd)`` *without* ``assign=True`` does with ``quantized``'s state_dict in a float copy.

    "loaded" if it returns, else the exception's class and the message's last line (torchao's
    subclasses cannot be copied into a float ``Parameter``, so the default copy raises).
    """
    fresh = copy.deepcopy(skeleton).eval()
    try:
        fresh.load_state_dict(quantized.state_dict())
    except Exception as e:  # noqa: BLE001 - the error is the measurement
        last = str(e).strip().splitlines()[-1].strip()
        return f"{type(e).__name__}: {_copy_error_message(last.split('an exception occurred : ')[-1])}"
    return "loaded"


def _copy_error_message(tail: str) -> str:
    """The copy's own message: torch formats it as the exception's ``args`` tuple (``torch/nn/modules/module.py:2507``
    in torch 2.14, ``f"an exception occurred : {ex.args}."``), which a reader should see as plain text."""
    import ast

    try:
        args = ast.literal_eval(tail.removesuffix("."))
    except (ValueError, SyntaxError):
        return tail
    return "; ".join(map(str, args)) if isinstance(args, tuple) else tail
