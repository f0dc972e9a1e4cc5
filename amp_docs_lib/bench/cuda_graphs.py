"""CUDA graphs: one training step captured once and replayed, against the same step run eagerly.

An eager step launches every kernel from Python, one at a time; for a small model the GPU
waits on those launches more than it computes. A CUDA graph records the step's kernels once
and replays them with one launch. The capture follows the "whole network capture" recipe of
PyTorch's CUDA semantics notes (https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs):
warm-up iterations on a side stream, gradients set to ``None`` before capture, static inputs,
and an optimizer built with ``capturable=True``.

Autocast runs inside the graph with ``cache_enabled=False``, as those notes require. A
GradScaler step cannot be captured (it reads ``found_inf`` on the host to decide whether to
skip the step), so FP16 with loss scaling is refused here.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Callable, Iterable

import pandas as pd
import torch

from amp_docs_lib.bench.matmul import tf32_matmuls
from amp_docs_lib.bench.model_sweep import TF32
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.timing import interleaved
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

#: Precisions whose whole step can be captured (no host-side GradScaler decision).
GRAPHABLE = ("fp32", TF32, "amp_bf16")


def _step_body(model: GPT, batch, precision: str, opt: torch.optim.Optimizer) -> Callable[[], torch.Tensor]:
    x, y = batch
    dev_type = x.device.type

    def body() -> torch.Tensor:
        with tf32_matmuls(True) if precision == TF32 else contextlib.nullcontext():
            with (torch.autocast(dev_type, dtype=torch.bfloat16, cache_enabled=False)
                  if precision == "amp_bf16" else contextlib.nullcontext()):
                _, loss = model(x, y)
            loss.backward()
            opt.step()
        return loss
    return body


def eager_and_graphed(model: GPT, batch, precision: str, *, lr: float = 1e-5,
                      warmup: int = 3) -> tuple[Callable[[], None], Callable[[], None]]:
    """Two step functions over two copies of ``model``: the step run eagerly, and the same step replayed
    from a CUDA graph. Both use AdamW with ``capturable=True`` so they run the same kernels.

    Raises:
        ValueError: ``precision`` not in :data:`GRAPHABLE`, or the model is not on a CUDA device.
    """
    if precision not in GRAPHABLE:
        raise ValueError(f"precision {precision!r} cannot be captured whole; choose one of {GRAPHABLE} "
                         "(a GradScaler step decides on the host whether to skip)")
    dev = next(model.parameters()).device
    if dev.type != "cuda":
        raise ValueError(f"CUDA graphs need the model on a CUDA device, got {str(dev)!r}")
    graphed_model = copy.deepcopy(model)
    eager_opt = torch.optim.AdamW(model.parameters(), lr=lr, capturable=True)
    graph_opt = torch.optim.AdamW(graphed_model.parameters(), lr=lr, capturable=True)
    eager_body = _step_body(model, batch, precision, eager_opt)
    graph_body = _step_body(graphed_model, batch, precision, graph_opt)

    def eager() -> None:
        eager_body()
        eager_opt.zero_grad(set_to_none=True)

    side = torch.cuda.Stream(dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(warmup):
            graph_opt.zero_grad(set_to_none=True)
            graph_body()
    torch.cuda.current_stream(dev).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    graph_opt.zero_grad(set_to_none=True)  # the gradients are then allocated in the graph's own pool
    with torch.cuda.graph(graph):
        graph_body()
    return eager, graph.replay


def graph_comparison(cfg: GPTConfig, batch: int, precisions: Iterable[str] = ("fp32", "amp_bf16"),
                     device: str | torch.device = "cuda", *, rounds: int = 9) -> pd.DataFrame:
    """Step time eager against CUDA-graph replay per precision, interleaved, with the speedup's interval.

    A capture that fails on this device is a row saying why, not an exception.

    Raises:
        ValueError: not a CUDA device, or a precision not in :data:`GRAPHABLE`.
    """
    dev = check_device(device)
    if dev.type != "cuda":
        raise ValueError(f"CUDA graphs need a CUDA device, got {str(dev)!r}")
    bad = [p for p in precisions if p not in GRAPHABLE]
    if bad:
        raise ValueError(f"precisions {bad} cannot be captured whole; choose from {GRAPHABLE}")
    rows = []
    for prec in precisions:
        torch.manual_seed(0)
        model = GPT(cfg).to(dev)
        data = random_batch(cfg, batch, dev)
        try:
            eager, replay = eager_and_graphed(model, data, prec)
            res = interleaved({"eager": eager, "CUDA graph": replay}, baseline="eager", device=dev, rounds=rounds)
        except RuntimeError as e:
            rows.append({"precision": prec, "note": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
            continue
        c = res.compare("CUDA graph")
        rows.append({"precision": prec, "eager (ms)": c.baseline.median_s * 1e3, "eager IQR (ms)": c.baseline.iqr_s * 1e3,
                     "graph (ms)": c.candidate.median_s * 1e3, "graph IQR (ms)": c.candidate.iqr_s * 1e3,
                     "speedup": c.interval_text(), "verdict": c.verdict, "note": None})
    return pd.DataFrame(rows)
