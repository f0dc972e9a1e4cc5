"""Which operators really ran: a dispatch trace (``TorchDispatchMode``), not a name or a config.

:func:`trace_ops` runs a function once under a dispatch mode that records every operator reaching
the dispatcher (``aten.*``, ops registered by libraries such as ``torchao.quantize_affine``,
``quantized.*``), with the dtypes of the tensor inputs of the matrix multiplications.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Operators that multiply matrices (the "kernel" a reader asks about).
MATMUL_OPS = frozenset(
    {
        "aten.mm",
        "aten.addmm",
        "aten.bmm",
        "aten.baddbmm",
        "aten.matmul",
        "aten.linear",
        "aten._int_mm",
        "aten._scaled_mm",
        "aten._weight_int8pack_mm",
        "aten._weight_int4pack_mm",
        "aten._weight_int4pack_mm_for_cpu",
        "quantized.linear_dynamic",
        "quantized.linear",
    }
)


def is_matmul(name: str) -> bool:
    """Whether ``namespace.op`` multiplies matrices: a known aten/quantized op, or a library op (mslk,
    fbgemm, torchao, ...) whose name says mm, gemm or matmul."""
    if name in MATMUL_OPS:
        return True
    namespace, _, op = name.partition(".")
    return namespace not in ("aten", "prims") and any(k in op for k in ("mm", "gemm", "matmul"))


@dataclass
class OpTrace:
    """Operators recorded by :func:`trace_ops`: a count per op and the input dtypes of each matmul call."""

    counts: collections.Counter = field(default_factory=collections.Counter)
    matmuls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def matmul_summary(self) -> str:
        """``op(dtype x dtype)`` for each distinct matmul call signature, in first-seen order ("none" if none)."""
        seen = dict.fromkeys(f"{op}({' x '.join(dt)})" for op, dt in self.matmuls)
        return ", ".join(seen) if seen else "none"


def trace_ops(fn: Callable[[], Any]) -> OpTrace:
    """Run ``fn()`` once under a dispatch mode; return the operators that ran (reached the dispatcher and
    returned: one that raised, which ``fn`` may catch and replace, as torchao's ``safe_int_mm`` does, is not
    counted)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    trace = OpTrace()

    class _Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            import torch

            name = f"{func.namespace}.{func.overloadpacket.__name__}"
            out = func(*args, **(kwargs or {}))  # first: an op that raises (a caller may fall back) did not run
            trace.counts[name] += 1
            if is_matmul(name):
                trace.matmuls.append(
                    (name, tuple(str(a.dtype).replace("torch.", "") for a in args if isinstance(a, torch.Tensor)))
                )
            return out

    with _Recorder():
        fn()
    return trace
