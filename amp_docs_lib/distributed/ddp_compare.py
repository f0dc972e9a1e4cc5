"""DDP with autocast, with and without the BF16 gradient-compression hook, measured like FSDP2.

:func:`ddp_worker` wraps the same MLP as :mod:`~amp_docs_lib.distributed.fsdp_probe` in
``DistributedDataParallel``, runs one step under ``torch.autocast(dtype=torch.bfloat16)``
for each communication hook (``allreduce_hook``, the reference that behaves like DDP's
built-in all-reduce, and ``bf16_compress_hook``), and reports the same stages: stored
parameters, parameters seen in forward, layer inputs and outputs, gradients, the
collectives (with their dtype) and the optimizer state.

:func:`run_distributed_probes` runs the FSDP2 probe and this one in the same processes
(one launch, so the chapter pays for one set of process start-ups).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from amp_docs_lib.distributed.comm_log import log_collectives
from amp_docs_lib.distributed.fsdp_probe import _row, _state_and_collective_rows, fsdp_worker, make_mlp
from amp_docs_lib.distributed.launch import run_workers

HOOKS = ("allreduce_hook", "bf16_compress_hook")
OUTPUT_VARIANT = "FSDP2, output_dtype=float32"
REDUCE_NONE_VARIANT = "FSDP2, reduce_dtype=None"
MEMORY = "DDP memory"
REDUCTION_ERROR = "BF16 reduction error"
LOSS_SCALING = "FP16 loss scaling"
ACCUMULATION = "FSDP2 gradient accumulation"
NORM_SOFTMAX = "norm and softmax dtypes"
# reduce_dtype of the accumulation runs (param_dtype is bfloat16): both differ from param_dtype
ACCUMULATION_REDUCE_DTYPES = ("float32", "float16")


def _hook(name: str) -> Any:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    if name not in HOOKS:
        raise ValueError(f"unknown comm hook {name!r}; valid hooks: {list(HOOKS)}")
    return getattr(default_hooks, name)


def _recording(hook: Any, buffers: dict[int, int], exact_in_bf16: list[bool] | None = None) -> Any:
    """``hook`` that also records each bucket's flat buffer (storage address -> bytes) as DDP hands it over,
    and in ``exact_in_bf16`` whether every value of this rank's buffer is a BF16 value (so a cast to BF16 is exact)."""
    def recorded(state, bucket):  # no annotations: DDP checks them against dist.GradBucket
        buf = bucket.buffer()
        buffers[buf.untyped_storage().data_ptr()] = buf.untyped_storage().nbytes()
        if exact_in_bf16 is not None:
            exact_in_bf16.append(bool(torch.equal(buf, buf.to(torch.bfloat16).to(buf.dtype))))
        return hook(state, bucket)
    return recorded


def distinct_storage_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes of the distinct storages behind ``tensors`` (a view into a buffer counts once, with the buffer)."""
    seen: dict[int, int] = {}
    for t in tensors:
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())


def ddp_worker(rank: int, world_size: int, device: torch.device, *, features: int = 16,
               hidden: int = 32, classes: int = 4, batch: int = 8,
               hooks: tuple[str, ...] = HOOKS) -> list[dict[str, Any]]:
    """One autocast (BF16) DDP step per communication hook; rows tagged with ``hook``.

    Also returns, tagged ``hook="memory"``, what a rank holds after the step with DDP's default
    ``gradient_as_bucket_view=False`` and with ``True``: parameters, gradients, the bucket
    buffers DDP passed to the communication hook, optimizer state, and the bytes of their
    distinct storages; and, tagged ``hook="reduction error"``, how far the BF16-compressed
    averaged gradients are from the FP32-reduced ones, per parameter, once for the autocast step
    (whose gradients are BF16 values widened to FP32) and once for the same step in plain FP32
    (gradients that BF16 cannot hold exactly), with whether each rank's gradients were BF16 values
    and the share of elements equal to the FP32-reduced result rounded once to BF16.
    """
    from torch.nn.parallel import DistributedDataParallel as DDP

    rows: list[dict[str, Any]] = []
    reduced: dict[tuple[str, bool], dict[str, torch.Tensor]] = {}
    exact: dict[tuple[str, bool], list[bool]] = {}
    runs = [(h, False, True) for h in hooks] + [("allreduce_hook", True, True)]
    if {"allreduce_hook", "bf16_compress_hook"} <= set(hooks):
        runs += [("allreduce_hook", False, False), ("bf16_compress_hook", False, False)]
    for hook_name, as_view, use_autocast in runs:
        model = make_mlp(features, hidden, classes).to(device)
        ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None,
                  gradient_as_bucket_view=as_view)
        buffers: dict[int, int] = {}
        exact[(hook_name, use_autocast)] = []
        ddp.register_comm_hook(None, _recording(_hook(hook_name), buffers, exact[(hook_name, use_autocast)]))
        optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-3)
        these = [_row("1 parameter (stored, replicated)", n, p) for n, p in model.named_parameters()]
        names = {m: n for n, m in model.named_modules() if isinstance(m, nn.Linear)}

        def pre_hook(module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
            these.extend(_row("2 parameter seen in forward", f"{names[module]}.{pn}", p)
                         for pn, p in module.named_parameters(recurse=False))
            these.append(_row("3 layer input in forward", f"{names[module]} input", args[0]))

        def post_hook(module: nn.Module, args: Any, out: torch.Tensor) -> None:
            these.append(_row("4 layer output in forward", f"{names[module]} output", out))

        handles = [h for m in names for h in (m.register_forward_pre_hook(pre_hook),
                                               m.register_forward_hook(post_hook))]
        g = torch.Generator().manual_seed(1000 + rank)
        x = torch.randn(batch, features, generator=g).to(device)
        y = torch.randint(0, classes, (batch,), generator=g).to(device)
        with log_collectives() as comms:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_autocast):
                out = ddp(x)
                these.append(_row("5 model output", "model output", out))
                loss = F.cross_entropy(out, y)
            loss.backward()
        these += [_row("6 gradient (replicated)", n, p.grad) for n, p in model.named_parameters()]
        optimizer.step()
        these += _state_and_collective_rows(model, optimizer, comms)
        for h in handles:
            h.remove()
        if not use_autocast:  # the FP32 step serves the reduction error only
            reduced[(hook_name, False)] = {n: p.grad.detach().float().clone() for n, p in model.named_parameters()}
            continue
        params = list(model.parameters())
        state = [v for p in params for v in optimizer.state[p].values() if torch.is_tensor(v) and v.dim() > 0]
        grads = [p.grad for p in params]
        rows.append({"hook": "memory", "gradient_as_bucket_view": as_view, "comm hook": hook_name,
                     "parameters": distinct_storage_bytes(params), "gradients": distinct_storage_bytes(grads),
                     "bucket buffers": sum(buffers.values()),
                     "gradients inside the buckets": all(g.untyped_storage().data_ptr() in buffers for g in grads),
                     "optimizer state": distinct_storage_bytes(state),
                     "distinct storages": distinct_storage_bytes(params + grads + state)
                     + sum(b for ptr, b in buffers.items() if ptr not in {g.untyped_storage().data_ptr() for g in grads})})
        if as_view:
            continue
        reduced[(hook_name, True)] = {n: p.grad.detach().float().clone() for n, p in model.named_parameters()}
        rows += [{"hook": hook_name, **r} for r in these]
    for use_autocast in (True, False):
        ref_run, bf16_run = reduced.get(("allreduce_hook", use_autocast)), reduced.get(("bf16_compress_hook", use_autocast))
        if ref_run is None or bf16_run is None:
            continue
        for n, ref in ref_run.items():
            err = (bf16_run[n] - ref).abs()
            rows.append({"hook": "reduction error", "step": "autocast(bfloat16)" if use_autocast else "FP32, no autocast",
                         "local gradients are BF16 values": all(exact[("bf16_compress_hook", use_autocast)]),
                         "tensor": n, "elements": ref.numel(),
                         # one rounding of the exact average, or more (inputs rounded before the sum)?
                         "share equal to the FP32 result rounded once to BF16":
                             float((bf16_run[n] == ref.to(torch.bfloat16).float()).float().mean()),
                         "max abs error": float(err.max()),
                         "max relative error": float((err / ref.abs().clamp_min(torch.finfo(torch.float32).tiny)).max()),
                         "relative error of the norm": float(err.norm() / ref.norm())})
    return rows


def _both_worker(rank: int, world_size: int, device: torch.device, *, fsdp_kwargs: dict[str, Any],
                 ddp_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    fsdp = [{"setup": "FSDP2", **r} for r in fsdp_worker(rank, world_size, device, **fsdp_kwargs)]
    fsdp += [{"setup": OUTPUT_VARIANT, **r} for r in fsdp_worker(
        rank, world_size, device, output_dtype="float32", **fsdp_kwargs)]
    fsdp += [{"setup": REDUCE_NONE_VARIANT, **r} for r in fsdp_worker(
        rank, world_size, device, reduce_dtype=None, **fsdp_kwargs)]
    from amp_docs_lib.distributed.fsdp_probe import accumulation_worker, norm_softmax_worker
    from amp_docs_lib.distributed.loss_scaling import scaler_agreement_worker

    fsdp += [{**r, "setup": LOSS_SCALING, "variant": r["setup"]}
             for r in scaler_agreement_worker(rank, world_size, device, **fsdp_kwargs)]
    # float16, not bfloat16: with reduce_dtype == param_dtype there is no cast to observe
    # (to_accumulated_grad_if_needed returns early), so only a third dtype can tell the two apart
    for reduce_dtype in ACCUMULATION_REDUCE_DTYPES:
        fsdp += [{"setup": ACCUMULATION, "reduce_dtype": reduce_dtype, **r}
                 for r in accumulation_worker(rank, world_size, device, reduce_dtype=reduce_dtype, **fsdp_kwargs)]
    fsdp += [{**r, "setup": NORM_SOFTMAX, "variant": r["setup"]}
             for r in norm_softmax_worker(rank, world_size, device, **fsdp_kwargs)]
    special = {"memory": MEMORY, "reduction error": REDUCTION_ERROR}
    ddp = [{"setup": special.get(r["hook"], f"DDP + {r['hook']}"), **{k: v for k, v in r.items() if k != "hook"}}
           for r in ddp_worker(rank, world_size, device, **ddp_kwargs)]
    return fsdp + ddp


def run_ddp_compare(world_size: int | None = None, *, backend: str | None = None,
                    timeout_s: float = 120.0, **kwargs: Any) -> pd.DataFrame:
    """Run :func:`ddp_worker` in ``world_size`` real processes; rows of all ranks, one ``hook`` column."""
    for h in kwargs.get("hooks", HOOKS):
        _hook(h)
    df = run_workers(ddp_worker, world_size, backend=backend, timeout_s=timeout_s, **kwargs)
    return df.sort_values(["hook", "rank", "stage"], kind="stable").reset_index(drop=True)


def run_distributed_probes(world_size: int | None = None, *, backend: str | None = None,
                           timeout_s: float = 120.0, features: int = 16, hidden: int = 32,
                           classes: int = 4, batch: int = 8) -> dict[str, pd.DataFrame]:
    """FSDP2 (BF16 params, FP32 reduce) and both DDP variants in one launch.

    Returns ``{"FSDP2": df, OUTPUT_VARIANT: df, REDUCE_NONE_VARIANT: df, "DDP + allreduce_hook": df,
    "DDP + bf16_compress_hook": df, MEMORY: df, REDUCTION_ERROR: df, LOSS_SCALING: df,
    ACCUMULATION: df, NORM_SOFTMAX: df}`` (``LOSS_SCALING``: :mod:`~amp_docs_lib.distributed.loss_scaling`;
    ``ACCUMULATION``: :func:`~amp_docs_lib.distributed.fsdp_probe.accumulation_worker`;
    ``NORM_SOFTMAX``: :func:`~amp_docs_lib.distributed.fsdp_probe.norm_softmax_worker`): ``OUTPUT_VARIANT`` is the
    same FSDP2 policy with ``output_dtype=float32``, ``REDUCE_NONE_VARIANT`` with
    ``reduce_dtype=None``; the FSDP2 and DDP frames are shaped like
    :func:`~amp_docs_lib.distributed.fsdp_probe.run_fsdp_probe`'s result, ``MEMORY`` and
    ``REDUCTION_ERROR`` as described in :func:`ddp_worker`.
    """
    sizes = dict(features=features, hidden=hidden, classes=classes, batch=batch)
    df = run_workers(_both_worker, world_size, backend=backend, timeout_s=timeout_s,
                     fsdp_kwargs=sizes, ddp_kwargs=sizes)
    out = {}
    for name, grp in df.groupby("setup", sort=False):
        grp = grp.drop(columns="setup").dropna(axis=1, how="all")
        if "stage" in grp:
            grp = grp.sort_values(["rank", "stage"], kind="stable")
        out[name] = grp.reset_index(drop=True)
    return out
