"""FSDP2 with a mixed-precision policy: where each tensor lives and in which dtype, per rank.

:func:`fsdp_worker` is the code that runs in every process: it shards a small MLP with
``fully_shard(..., mp_policy=MixedPrecisionPolicy(param_dtype=..., reduce_dtype=...))``,
runs one training step with Adam, and reports the dtype and shape of

- the sharded parameters (what each rank stores between steps),
- the parameters each ``nn.Linear`` sees during forward (forward pre-hooks),
- the inputs and outputs of each layer,
- the gradients after backward,
- the collectives FSDP issued (all-gather, reduce-scatter) with their dtype and size,
- the optimizer state.

:func:`run_fsdp_probe` launches it with :func:`~amp_docs_lib.distributed.launch.run_workers`
(gloo on CPU, NCCL on CUDA) and returns the rows of all ranks.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.distributed.comm_log import log_collectives
from amp_docs_lib.distributed.launch import run_workers, worker_mesh

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _dtype(name: str | None) -> torch.dtype | None:
    if name is None:
        return None
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; valid dtypes: {list(DTYPES)} or None")
    return DTYPES[name]


def make_mlp(features: int, hidden: int, classes: int, *, seed: int = 0) -> nn.Sequential:
    """The probe's model: Linear-ReLU-Linear-ReLU-Linear, seeded identically on every rank."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, classes))


def _row(stage: str, name: str, t: torch.Tensor) -> dict[str, Any]:
    local = t.to_local() if hasattr(t, "to_local") else t
    return {"stage": stage, "tensor": name, "dtype": short_dtype(local.dtype),
            "local shape": tuple(local.shape), "global shape": tuple(t.shape),
            "type": type(t).__name__, "local bytes": local.numel() * local.element_size()}


def fsdp_worker(rank: int, world_size: int, device: torch.device, *, features: int = 16,
                hidden: int = 32, classes: int = 4, batch: int = 8, param_dtype: str | None = "bfloat16",
                reduce_dtype: str | None = "float32", output_dtype: str | None = None,
                cast_forward_inputs: bool = True) -> list[dict[str, Any]]:
    """One FSDP2 training step on this rank; returns the rows described in the module docstring."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    model = make_mlp(features, hidden, classes).to(device)
    policy = MixedPrecisionPolicy(param_dtype=_dtype(param_dtype), reduce_dtype=_dtype(reduce_dtype),
                                  output_dtype=_dtype(output_dtype),
                                  cast_forward_inputs=cast_forward_inputs)
    mesh = worker_mesh(device, world_size)
    for layer in model:                      # one FSDP unit per Linear ...
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)     # ... and the root
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    rows = [_row("1 sharded parameter (stored)", n, p) for n, p in model.named_parameters()]

    def pre_hook(module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
        name = module_names[module]
        rows.extend(_row("2 parameter seen in forward", f"{name}.{pn}", p)
                    for pn, p in module.named_parameters(recurse=False))
        rows.append(_row("3 layer input in forward", f"{name} input", args[0]))

    def post_hook(module: nn.Module, args: Any, out: torch.Tensor) -> None:
        rows.append(_row("4 layer output in forward", f"{module_names[module]} output", out))

    module_names = {m: n for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    for m in module_names:
        m.register_forward_pre_hook(pre_hook)
        m.register_forward_hook(post_hook)

    g = torch.Generator().manual_seed(1000 + rank)   # each rank its own data
    x = torch.randn(batch, features, generator=g).to(device)
    y = torch.randint(0, classes, (batch,), generator=g).to(device)
    with log_collectives() as comms:
        out = model(x)
        rows.append(_row("5 model output", "model output", out))
        F.cross_entropy(out.float(), y).backward()
    rows += [_row("6 gradient (sharded)", n, p.grad) for n, p in model.named_parameters()]
    optimizer.step()
    return rows + _state_and_collective_rows(model, optimizer, comms)


def accumulation_worker(rank: int, world_size: int, device: torch.device, *, features: int = 16,
                        hidden: int = 32, classes: int = 4, batch: int = 8, microbatches: int = 2,
                        param_dtype: str | None = "bfloat16", reduce_dtype: str | None = "float32"
                        ) -> list[dict[str, Any]]:
    """Gradient accumulation under FSDP2: ``microbatches`` backwards, reduction disabled for all but the last.

    ``model.set_requires_gradient_sync(False)`` before the first backwards and ``True`` before
    the last one. Returns one row per microbatch: the reduce-scatter and all-gather calls it
    issued (with dtypes, and the reduction op of the reduce-scatters), the dtype of the gradients held afterwards, and the dtype in which
    FSDP holds the gradients it accumulates while reduction is off (``reduce_dtype`` when set:
    ``FSDPParam.to_accumulated_grad_if_needed``).
    """
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    if not isinstance(microbatches, int) or microbatches < 2:
        raise ValueError(f"microbatches must be an int >= 2, got {microbatches!r}")
    model = make_mlp(features, hidden, classes).to(device)
    policy = MixedPrecisionPolicy(param_dtype=_dtype(param_dtype), reduce_dtype=_dtype(reduce_dtype))
    mesh = worker_mesh(device, world_size)
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    g = torch.Generator().manual_seed(2000 + rank)
    rows = []
    for i in range(microbatches):
        last = i == microbatches - 1
        model.set_requires_gradient_sync(last)
        x = torch.randn(batch, features, generator=g).to(device)
        y = torch.randint(0, classes, (batch,), generator=g).to(device)
        with log_collectives() as comms:
            F.cross_entropy(model(x).float(), y).backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        rows.append({"microbatch": i, "gradient sync": last,
                     "reduce-scatters": sum(c["collective"] == "reduce_scatter" for c in comms),
                     "reduce dtypes": ", ".join(sorted({c["dtype"] for c in comms
                                                        if c["collective"] == "reduce_scatter"})) or None,
                     "reduce ops": ", ".join(sorted({str(c["op"]) for c in comms
                                                     if c["collective"] == "reduce_scatter"})) or None,
                     "all-gathers": sum(c["collective"] == "all_gather" for c in comms),
                     "gradients held": len(grads),
                     "gradient dtypes": ", ".join(sorted({short_dtype((t.to_local() if hasattr(t, "to_local") else t).dtype) for t in grads})) or None,
                     "gradient type": ", ".join(sorted({type(t).__name__ for t in grads})) or None,
                     "accumulated inside FSDP": _accumulated_grad_dtypes(model)})
    return rows


def _accumulated_grad_dtypes(model: nn.Module) -> str | None:
    """Dtypes of the unsharded gradients FSDP2 holds between microbatches while reduction is off.

    Read from each unit's ``FSDPParam`` (private state of ``torch/distributed/fsdp/_fully_shard``):
    ``unsharded_accumulated_grad``, which ``FSDPParam.to_accumulated_grad_if_needed`` fills with the
    gradient cast to ``reduce_dtype`` (``_fsdp_param.py``), else the unsharded parameter's own
    ``.grad``. None when FSDP holds none (after a synced backward) or the state cannot be read.
    """
    dtypes = set()
    for m in model.modules():
        state = m._get_fsdp_state() if hasattr(m, "_get_fsdp_state") else None
        group = getattr(state, "_fsdp_param_group", None)
        for fp in getattr(group, "fsdp_params", None) or []:
            acc = getattr(fp, "unsharded_accumulated_grad", None)
            if acc is None:
                unsharded = getattr(fp, "_unsharded_param", None)
                acc = getattr(unsharded, "grad", None)
            if acc is not None:
                dtypes.add(short_dtype(acc.dtype))
    return ", ".join(sorted(dtypes)) or None


def norm_softmax_worker(rank: int, world_size: int, device: torch.device, *, features: int = 16,
                        hidden: int = 32, classes: int = 4, batch: int = 8, **_: Any) -> list[dict[str, Any]]:
    """Where a LayerNorm, a softmax and the loss compute: FSDP2 ``param_dtype=bfloat16`` against autocast.

    The same Linear-LayerNorm-Linear model runs once sharded by ``fully_shard`` with
    ``MixedPrecisionPolicy(param_dtype=torch.bfloat16)`` (module-level: every op inside a unit
    sees BF16 parameters and inputs) and once unsharded under ``torch.autocast(dtype=bfloat16)``
    (op-level: the device's autocast policy decides per op). Returns one row per setup with
    the dtype of the LayerNorm's output, of ``log_softmax`` of the logits, and of the loss.
    """
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    rows = []
    for setup in ("FSDP2 param_dtype=bfloat16", "autocast(bfloat16), unsharded"):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(features, hidden), nn.LayerNorm(hidden), nn.Linear(hidden, classes)).to(device)
        seen: dict[str, str] = {}
        model[1].register_forward_hook(lambda m, i, o: seen.__setitem__("LayerNorm output", short_dtype(o.dtype)))
        g = torch.Generator().manual_seed(3000 + rank)
        x = torch.randn(batch, features, generator=g).to(device)
        y = torch.randint(0, classes, (batch,), generator=g).to(device)
        if setup.startswith("FSDP2"):
            fully_shard(model, mesh=worker_mesh(device, world_size),
                        mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))
            logits = model(x)
            logp = F.log_softmax(logits, dim=-1)
            loss = F.cross_entropy(logits, y)
        else:
            with torch.autocast(device.type, dtype=torch.bfloat16):
                logits = model(x)
                logp = F.log_softmax(logits, dim=-1)
                loss = F.cross_entropy(logits, y)
        loss.backward()
        rows.append({"setup": setup, **seen, "logits": short_dtype(logits.dtype), "log_softmax": short_dtype(logp.dtype),
                     "loss": short_dtype(loss.dtype)})
    return rows


def _state_and_collective_rows(model: nn.Module, optimizer: torch.optim.Optimizer,
                               comms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for the optimizer state after a step and for the collectives the step issued."""
    rows = [_row("8 optimizer state", f"{n}.{key}", v) for n, p in model.named_parameters()
            for key, v in optimizer.state[p].items() if torch.is_tensor(v) and v.dim() > 0]
    rows += [{"stage": "7 collective", "tensor": c["collective"], "dtype": c["dtype"],
              "local shape": (c["elements"],), "global shape": None, "type": "buffer",
              "local bytes": c["bytes"]} for c in comms]
    return rows


def run_fsdp_probe(world_size: int | None = None, *, backend: str | None = None,
                   timeout_s: float = 120.0, **kwargs: Any) -> pd.DataFrame:
    """Run :func:`fsdp_worker` in ``world_size`` real processes and return all ranks' rows.

    ``kwargs`` go to :func:`fsdp_worker` (sizes, ``param_dtype``, ``reduce_dtype``,
    ``output_dtype`` as dtype names such as ``"bfloat16"``, ``cast_forward_inputs``).
    Bad dtype names raise ``ValueError`` in the parent before any process starts.
    """
    for key in ("param_dtype", "reduce_dtype", "output_dtype"):
        if key in kwargs:
            _dtype(kwargs[key])
    df = run_workers(fsdp_worker, world_size, backend=backend, timeout_s=timeout_s, **kwargs)
    return df.sort_values(["rank", "stage"], kind="stable").reset_index(drop=True)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per stage: the dtypes seen there (over all ranks and tensors) and the bytes on rank 0."""
    if not isinstance(df, pd.DataFrame) or not {"stage", "dtype", "rank", "local bytes"} <= set(df.columns):
        raise TypeError("summary takes the DataFrame returned by run_fsdp_probe or run_ddp_compare")
    out = []
    for stage, grp in df.groupby("stage", sort=True):
        out.append({"stage": stage, "dtypes": ", ".join(sorted(set(grp["dtype"]))),
                    "tensors per rank": int((grp["rank"] == 0).sum()),
                    "bytes on rank 0": int(grp.loc[grp["rank"] == 0, "local bytes"].sum())})
    return pd.DataFrame(out)
