"""Which operators really ran: a dispatch trace (``TorchDispatchMode``), not a name or a config.

:func:`trace_ops` runs a function once under a dispatch mode that records every operator reaching
the dispatcher (``aten.*``, ops registered by libraries such as ``torchao.quantize_affine``,
``quantized.*``), with the dtypes of its tensor inputs. It is the library's one dispatch recorder: the
autocast chapter's traces (``amp.autocast_policy.dispatch_trace``), the profiler's operator dtypes
(``bench.compiled.top_ops``) and the quantization kernels all read it.
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


@dataclass(frozen=True)
class OpCall:
    """One operator call that returned: ``name`` as ``namespace.op`` (``aten.mm``), the dtypes of its
    positional tensor inputs (``dtypes``), of every tensor it was given (``all_dtypes``: keyword arguments
    and tensors in lists too) and, if asked for, its positional arguments (``args``)."""

    name: str
    dtypes: tuple = ()
    all_dtypes: tuple = ()
    args: tuple = ()

    @property
    def op(self) -> str:
        """The operator without its namespace: ``mm``, ``_to_copy``."""
        return self.name.partition(".")[2]


@dataclass
class OpTrace:
    """Operators recorded by :func:`trace_ops`: every call in order, a count per op and the input dtypes of
    each matmul call."""

    calls: list[OpCall] = field(default_factory=list)
    counts: collections.Counter = field(default_factory=collections.Counter)
    matmuls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def matmul_summary(self) -> str:
        """``op(dtype x dtype)`` for each distinct matmul call signature, in first-seen order ("none" if none)."""
        seen = dict.fromkeys(f"{op}({' x '.join(dt)})" for op, dt in self.matmuls)
        return ", ".join(seen) if seen else "none"


def _tensor_dtypes(values, torch) -> tuple:
    out = []
    for v in values:
        for t in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(t, torch.Tensor):
                out.append(t.dtype)
    return tuple(out)


def trace_ops(
    fn: Callable[[], Any], *, keep_args: bool = False, on_op: Callable[[Any, tuple, dict, Any], None] | None = None
) -> OpTrace:
    """Run ``fn()`` once under a dispatch mode; return the operators that ran (reached the dispatcher and
    returned: one that raised, which ``fn`` may catch and replace, as torchao's ``safe_int_mm`` does, is not
    counted).

    The mode sits after the Autocast keys in dispatch order, so it sees the dtypes autocast handed on,
    also for the ops a composite calls inside. ``keep_args`` keeps each call's positional arguments (and
    so the tensors in them alive until the trace is dropped). ``on_op(func, args, kwargs, out)`` is called
    after each op that ran, for inspections other than recording (the debugging chapter's non-finite tracer).
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from amp_docs_lib.core.tables import short_dtype

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    trace = OpTrace()

    class _Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = f"{func.namespace}.{func.overloadpacket.__name__}"
            out = func(*args, **kwargs)  # first: an op that raises (a caller may fall back) did not run
            dtypes = tuple(a.dtype for a in args if isinstance(a, torch.Tensor))
            trace.calls.append(
                OpCall(name, dtypes, _tensor_dtypes([*args, *kwargs.values()], torch), args if keep_args else ())
            )
            trace.counts[name] += 1
            if is_matmul(name):
                trace.matmuls.append((name, tuple(short_dtype(d) for d in dtypes)))
            if on_op is not None:
                on_op(func, args, kwargs, out)
            return out

    with _Recorder():
        fn()
    return trace
