"""Per-rank memory and per-step communication for N parameters on K devices.

The accounting follows Rajbhandari et al., *ZeRO: Memory Optimizations Toward Training
Trillion Parameter Models* (SC 2020): model states are parameters, gradients and optimizer
state (for Adam: two moments, plus an FP32 master copy of the weights when the working
weights are 16-bit). Activations and temporary buffers are not included, with one
exception that is not temporary: DDP's gradient buckets. With its default
``gradient_as_bucket_view=False``, ``DistributedDataParallel`` keeps flat bucket buffers as
large as all gradients for the whole run (``torch/nn/parallel/distributed.py``, the
``gradient_as_bucket_view`` argument), next to the ``.grad`` tensors; ``per_rank_bytes(...,
ddp_buckets=True)`` counts them. The ZeRO paper's figures leave them out.

Strategies (what is divided by K):

=========  =============================================================
``DDP``    nothing: every rank holds everything
``ZeRO-1`` optimizer state (moments and FP32 master weights)
``ZeRO-2`` optimizer state and gradients
``ZeRO-3`` optimizer state, gradients and parameters
``FSDP``   as ZeRO-3 (``fully_shard``, FULL_SHARD)
=========  =============================================================

Precisions (bytes per parameter), named as the training regimes are (``amp.precision.REGIMES``: one
vocabulary for the training, bench and distributed memory calculators; a test checks they agree):

======================  =====  =====  ======  =========  ==============================================
name                    param  grad   master  Adam m, v  communicated
======================  =====  =====  ======  =========  ==============================================
``fp32``                4      4      0       4 + 4      FP32 params and grads
``bf16_master``         2      2      4       4 + 4      BF16 params and grads (the ZeRO paper's
                                                         regime, with BF16 in place of its FP16)
``amp_bf16``            4      4      0       4 + 4      FP32 reduced; BF16 gathered for compute
                                                         (ZeRO-3/FSDP), FP32 stored params
                                                         gathered after the step (ZeRO-1/2)
``bf16``                2      2      0       2 + 2      BF16 params and grads
======================  =====  =====  ======  =========  ==============================================

What is all-gathered depends on the strategy: ZeRO-3 and FSDP gather the parameters for
compute, in the compute dtype (``gather dtype``); ZeRO-1 and ZeRO-2 gather the *updated
stored* parameters after each rank's optimizer step (Rajbhandari et al., Section 5), so in
the dtype the parameters are stored in (``param dtype``).

``amp_bf16`` is what ``fully_shard`` with ``MixedPrecisionPolicy(param_dtype=bfloat16,
reduce_dtype=float32)`` stores: FP32 sharded parameters (they are the master weights),
FP32 sharded gradients, FP32 Adam state; the BF16 copy exists only for the unit being
computed (all-gathered, then freed). ``torch.autocast`` under DDP stores the same
(FP32 everything, BF16 only transiently); its all-reduce carries FP32 gradients unless a
compression hook casts them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from amp_docs_lib.numbers.accounting import state_bytes
from amp_docs_lib.numbers.formats import bytes_per_element

STRATEGIES = ("DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3", "FSDP")
# Bytes per parameter of each state, from the one table (numbers.accounting.STATE_BYTES), under this
# module's names (param, grad, master, optimizer), with the dtypes each precision stores and moves.
_DTYPES = {
    "fp32": ("float32", "float32", "float32"),
    "bf16_master": ("bfloat16", "bfloat16", "bfloat16"),
    "amp_bf16": ("float32", "bfloat16", "float32"),
    "bf16": ("bfloat16", "bfloat16", "bfloat16"),
}
PRECISIONS: dict[str, dict[str, Any]] = {
    name: {"param": s["weights"], "grad": s["grads"], "master": s["master"], "optimizer": s["moments"],
           "param dtype": param, "gather dtype": gather, "reduce dtype": reduce}
    for name, (param, gather, reduce) in _DTYPES.items()
    for s in (state_bytes(name),)
}
DTYPE_BYTES = {dtype: bytes_per_element(fmt) for dtype, fmt in
               (("float32", "FP32"), ("bfloat16", "BF16"), ("float16", "FP16"))}
SHARDED = {"DDP": set(), "ZeRO-1": {"master", "optimizer"}, "ZeRO-2": {"master", "optimizer", "grad"},
           "ZeRO-3": {"master", "optimizer", "grad", "param"},
           "FSDP": {"master", "optimizer", "grad", "param"}}


def _check(n_params: Any, k: Any, strategy: Any, precision: Any) -> None:
    for name, v in (("n_params", n_params), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies: {list(STRATEGIES)}")
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; valid precisions: {list(PRECISIONS)}")


def per_rank_bytes(n_params: int, k: int, strategy: str, precision: str, *,
                   ddp_buckets: bool = False) -> dict[str, int]:
    """Bytes of model state one rank holds: ``param``, ``grad``, ``master``, ``optimizer``,
    ``buckets``, ``total``.

    A sharded component holds ``ceil(n_params / k)`` elements per rank (the largest shard).
    ``ddp_buckets=True`` adds DDP's gradient buckets (``gradient_as_bucket_view=False``, the
    default: buffers as large as the gradients); it applies to ``DDP`` only.
    """
    _check(n_params, k, strategy, precision)
    if not isinstance(ddp_buckets, bool):
        raise TypeError(f"ddp_buckets must be a bool, got {type(ddp_buckets).__name__}")
    p = PRECISIONS[precision]
    shard = math.ceil(n_params / k)
    out = {part: p[part] * (shard if part in SHARDED[strategy] else n_params)
           for part in ("param", "grad", "master", "optimizer")}
    out["buckets"] = out["grad"] if (ddp_buckets and strategy == "DDP") else 0
    out["total"] = sum(out.values())
    return out


def fsdp_shard_elements(shapes: list[tuple[int, ...]], k: int) -> int:
    """Elements of FSDP2's largest shard (rank 0's): each parameter is split on its first dimension,
    ``ceil(rows / k)`` rows per rank, rather than the model's ``n_params`` split evenly.

    ``fully_shard`` chunks every parameter on dim 0 and pads the chunks to the first one's size
    (``FSDPParam._init_sharded_param``, ``torch/distributed/fsdp/_fully_shard/_fsdp_param.py``,
    torch 2.14.1 lines 331-349); its all-gather and reduce-scatter buffers hold ``k`` such padded
    shards. ``per_rank_bytes`` uses ``ceil(n_params / k)``, which is smaller when a first dimension
    is not a multiple of ``k``.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return sum(math.ceil(s[0] / k) * math.prod(s[1:]) for s in shapes)


def memory_table(n_params: int, k: int) -> pd.DataFrame:
    """Per-rank bytes for every strategy and precision (one row each), with bytes per parameter."""
    rows = []
    for precision in PRECISIONS:
        for strategy in STRATEGIES:
            b = per_rank_bytes(n_params, k, strategy, precision)
            rows.append({"precision": precision, "strategy": strategy, **b,
                         "bytes per parameter": b["total"] / n_params})
    return pd.DataFrame(rows)


def comm_per_step(n_params: int, k: int, strategy: str, precision: str) -> pd.DataFrame:
    """The collectives of one training step: buffer elements and bytes, and bytes each rank sends.

    DDP all-reduces the gradients; ZeRO-1/2 reduce-scatter the gradients and all-gather the
    updated parameters in their stored dtype; ZeRO-3/FSDP all-gather the parameters in forward and again in backward
    and reduce-scatter the gradients. With ring algorithms a rank sends ``(k-1)/k`` of an
    all-gather or reduce-scatter buffer and ``2(k-1)/k`` of an all-reduce buffer.
    """
    _check(n_params, k, strategy, precision)
    p = PRECISIONS[precision]
    if strategy == "DDP":
        plan = [("all_reduce", p["reduce dtype"], 1, 2)]
    elif strategy in ("ZeRO-1", "ZeRO-2"):
        plan = [("reduce_scatter", p["reduce dtype"], 1, 1), ("all_gather", p["param dtype"], 1, 1)]
    else:
        plan = [("all_gather", p["gather dtype"], 2, 1), ("reduce_scatter", p["reduce dtype"], 1, 1)]
    rows = []
    for collective, dtype, times, factor in plan:
        elems = times * n_params
        nbytes = elems * DTYPE_BYTES[dtype]
        rows.append({"strategy": strategy, "precision": precision, "collective": collective,
                     "dtype": dtype, "buffer elements": elems, "buffer bytes": nbytes,
                     "bytes sent per rank": nbytes * factor * (k - 1) / k})
    return pd.DataFrame(rows)


def comm_table(n_params: int, k: int) -> pd.DataFrame:
    """:func:`comm_per_step` for every strategy and precision, one row per collective."""
    return pd.concat([comm_per_step(n_params, k, s, p) for p in PRECISIONS for s in STRATEGIES],
                     ignore_index=True)


MEMORY_PARTS = ("param", "grad", "master", "optimizer")
# Parts of model state, not formats: colours outside the format palette (ColorBrewer Set2).
_PART_COLORS = {"param": "#8da0cb", "grad": "#fc8d62", "master": "#66c2a5", "optimizer": "#e78ac3"}
_PRECISION_TITLES = {"fp32": "FP32 training", "bf16_master": "BF16 weights + FP32 master copy (the ZeRO paper's mixed precision)",
                     "amp_bf16": "AMP BF16 (FP32 weights)", "bf16": "pure BF16"}


def plot_memory_per_rank(table: pd.DataFrame, precisions: tuple[str, ...] = ("fp32", "bf16_master")):
    """Model-state GB (10^9 bytes) per rank of a :func:`memory_table`, one stacked bar per strategy
    (parameters, gradients, FP32 master copy, optimizer state), one panel per precision, each bar
    labelled with its total."""
    import matplotlib.pyplot as plt

    missing = set(precisions) - set(table["precision"])
    if missing:
        raise ValueError(f"the table has no rows for {sorted(missing)}; it has {sorted(set(table['precision']))}")
    fig, axes = plt.subplots(len(precisions), 1, figsize=(7, 2.1 * len(precisions) + 0.9), sharex=True,
                             layout="constrained", squeeze=False)
    top = float(table.loc[table["precision"].isin(precisions), "total"].max()) / 1e9
    for ax, precision in zip(axes[:, 0], precisions, strict=True):
        t = table[table["precision"] == precision].set_index("strategy").loc[list(STRATEGIES)]
        left = np.zeros(len(t))
        for part in MEMORY_PARTS:
            gb = t[part].to_numpy(dtype=float) / 1e9
            ax.barh(range(len(t)), gb, left=left, color=_PART_COLORS[part], label=part)
            left += gb
        for y, total in enumerate(left):
            ax.text(total + 0.01 * top, y, f"{total:.3g}", va="center", ha="left", fontsize=8)
        ax.set_yticks(range(len(t)), list(t.index))
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.15)
        ax.set_title(_PRECISION_TITLES.get(precision, precision), fontsize=10, loc="left")
        ax.grid(alpha=0.3, axis="x")
    axes[-1, 0].set_xlabel("model state per rank (GB)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=4, frameon=False)
    return fig
