"""Record the collectives a distributed wrapper issues: which one, in which dtype, how many elements.

FSDP2 (``torch.distributed.fsdp.fully_shard``) calls ``torch.distributed.all_gather_single``
and ``torch.distributed.reduce_scatter_single`` (``torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py``); the
DDP communication hooks call ``torch.distributed.all_reduce``. :func:`log_collectives`
wraps those three module attributes for the duration of a ``with`` block and records every
call, then restores them. Nothing else changes: the wrapped function is called as before.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Iterator

import torch
import torch.distributed as dist

from amp_docs_lib.core.tables import short_dtype

LOGGED = {  # function -> (kind, name of the argument holding the buffer that goes over the wire, position)
    "all_gather_single": ("all_gather", "output_tensor", 0),
    "all_gather_into_tensor": ("all_gather", "output_tensor", 0),
    "reduce_scatter_single": ("reduce_scatter", "input", 1),
    "reduce_scatter_tensor": ("reduce_scatter", "input", 1),
    "all_reduce": ("all_reduce", "tensor", 0),
}


def _buffer(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor:
    _, key, pos = LOGGED[name]
    if key in kwargs:
        return kwargs[key]
    return args[pos]


def _op(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The reduction a call asked for (``SUM``, ``AVG``, ``PREMUL_SUM``...), the function's default included;
    None for a collective without one (all-gather)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    if "op" not in sig.parameters:
        return None
    bound = sig.bind_partial(*args, **kwargs)
    op = bound.arguments.get("op", sig.parameters["op"].default)
    name = str(op).split(".")[-1].split(":")[0].strip("<> ")
    return name if name.isidentifier() else type(op).__name__


@contextlib.contextmanager
def log_collectives() -> Iterator[list[dict[str, Any]]]:
    """Within the block, record every all-gather, reduce-scatter and all-reduce.

    Yields a list that fills with one dict per call: ``collective``, ``dtype``,
    ``elements`` (of the full buffer: the all-gather output, the reduce-scatter input,
    the all-reduce tensor), ``bytes`` and ``op`` (the reduction asked for; None for an all-gather).
    """
    records: list[dict[str, Any]] = []
    saved = {name: getattr(dist, name) for name in LOGGED if hasattr(dist, name)}
    depth = [0]  # wrapped calls in progress: one collective may be implemented by another

    def wrap(name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def logged(*args: Any, **kwargs: Any) -> Any:
            if depth[0] == 0:
                t = _buffer(name, args, kwargs)
                records.append({"collective": LOGGED[name][0], "function": name,
                                "dtype": short_dtype(t.dtype),
                                "elements": t.numel(), "bytes": t.numel() * t.element_size(),
                                "op": _op(fn, args, kwargs)})
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
        return logged

    try:
        for name, fn in saved.items():
            setattr(dist, name, wrap(name, fn))
        yield records
    finally:
        for name, fn in saved.items():
            setattr(dist, name, fn)
