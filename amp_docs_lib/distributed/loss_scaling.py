"""FP16 loss scaling under data parallelism: do all ranks agree to skip a step?

A GradScaler skips the optimizer step when a gradient it unscales is inf/NaN. Under data
parallelism every rank must make the same decision, or the replicas (DDP) or the shards of
one model (FSDP) drift apart. :func:`scaler_agreement_worker` plants an inf in the gradient
of one rank only (rank 1, one element of the first layer's output gradient, so that
after reduction only the rows of that layer's first output unit are non-finite) and reports,
per rank and setup, whether the rank found an inf and skipped, and the scale afterwards:

* DDP + ``torch.amp.GradScaler``: the all-reduce sums the inf into every rank's full gradient.
* FSDP2 + ``torch.amp.GradScaler``: the reduce-scatter leaves the inf in the shard that holds
  those rows; the other rank's shard is finite. ``GradScaler`` itself has no distributed code
  (``torch/amp/grad_scaler.py``); whether the ranks agree depends on how DTensor runs its
  unscale-and-check op on the sharded gradients, which is what this measures.
* FSDP2 + ``torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler``: written for FSDP1,
  it all-reduces the found-inf flag across ranks before deciding (its ``unscale_``).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.nn.functional as F

SETUPS = ("DDP + GradScaler", "FSDP2 + GradScaler", "FSDP2 + ShardedGradScaler")


def _plant(rank: int, layer: torch.nn.Module) -> Any:
    def plant(grad: torch.Tensor) -> torch.Tensor:
        g = grad.clone()
        g[0, 0] = float("inf")
        return g

    def fwd(module, inputs, out):
        if rank == 1 and out.requires_grad:
            out.register_hook(plant)
    return layer.register_forward_hook(fwd)


def scaler_agreement_worker(rank: int, world_size: int, device: torch.device, *, features: int = 16,
                            hidden: int = 32, classes: int = 4, batch: int = 8) -> list[dict[str, Any]]:
    """One scaled step per setup in :data:`SETUPS` with an inf planted on rank 1; one row per setup."""
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
    from torch.nn.parallel import DistributedDataParallel as DDP

    from amp_docs_lib.distributed.fsdp_probe import make_mlp
    from amp_docs_lib.distributed.launch import worker_mesh

    rows = []
    for setup in SETUPS:
        model = make_mlp(features, hidden, classes).to(device)
        first = model[0]
        if setup.startswith("DDP"):
            wrapped = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
        else:
            mesh = worker_mesh(device, world_size)
            for layer in model:
                if isinstance(layer, torch.nn.Linear):
                    fully_shard(layer, mesh=mesh)
            wrapped = fully_shard(model, mesh=mesh)
        scaler = (ShardedGradScaler(device.type) if "Sharded" in setup
                  else torch.amp.GradScaler(device.type))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        before = [p.detach().clone() for p in model.parameters()]
        handle = _plant(rank, first)
        g = torch.Generator().manual_seed(1000 + rank)
        x = torch.randn(batch, features, generator=g).to(device)
        y = torch.randint(0, classes, (batch,), generator=g).to(device)
        with warnings.catch_warnings():
            # GradScaler's found-inf flag has shape (1,) by design (torch/amp/grad_scaler.py); DTensor warns
            # that it replicates it, which is what the probe relies on and nothing a reader can change
            warnings.filterwarnings("ignore", message="Found a non-scalar tensor with numel=1", category=UserWarning)
            error, found, local_inf = _scaled_step(scaler, wrapped, model, opt, x, y)
        handle.remove()
        local = [(p.to_local() if hasattr(p, "to_local") else p).detach() for p in model.parameters()]
        changed = any(not torch.equal(a, (b.to_local() if hasattr(b, "to_local") else b)) for a, b in zip(local, before))
        rows.append({"setup": setup, "inf in this rank's gradients": local_inf, "found inf": found, "stepped": changed,
                     "scale after": float(scaler.get_scale()) if error is None else None, "error": error})
    return rows


def _scaled_step(scaler: Any, wrapped: torch.nn.Module, model: torch.nn.Module, opt: torch.optim.Optimizer,
                 x: torch.Tensor, y: torch.Tensor) -> tuple[str | None, bool | None, bool | None]:
    """One scaled step: (error, found inf, inf in this rank's gradients); a setup that cannot run says why."""
    error, found, local_inf = None, None, None
    try:
        scaler.scale(F.cross_entropy(wrapped(x), y)).backward()
        local_inf = any(not torch.isfinite((p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad)).all()
                        for p in model.parameters() if p.grad is not None)
        scaler.unscale_(opt)
        found = bool(sum(float(v) for v in scaler._found_inf_per_device(opt).values()))
        scaler.step(opt)
        scaler.update()
    except (RuntimeError, TypeError, NotImplementedError) as e:
        found, error = None, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    return error, found, local_inf
