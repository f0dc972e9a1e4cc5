"""CUDA graphs: one training step captured once and replayed, against the same step run eagerly.

An eager step launches every kernel from Python, one at a time; for a small model the GPU
waits on those launches more than it computes. A CUDA graph records the step's kernels once
and replays them with one launch. The capture follows the "whole network capture" recipe of
PyTorch's CUDA semantics notes (https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs):
warm-up iterations on a side stream, gradients set to ``None`` before capture, static inputs,
and an optimizer built with ``capturable=True``. The replay is timed in the same interleaved rounds
as three eager steps (:data:`EAGER_STEPS`): the default AdamW step a training loop runs, the fused
one, and one with the graph's own settings, so a reader sees what switching gains over each.

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
from amp_docs_lib.core.timing import Interleaved, interleaved
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

#: Precisions whose whole step can be captured (no host-side GradScaler decision).
GRAPHABLE = ("fp32", TF32, "amp_bf16")


#: The eager steps the graph is timed against, in the same interleaved rounds: AdamW's options and
#: whether autocast keeps its cast cache. The default step and the fused one are what an eager loop
#: uses; the third runs the kernels the graph captured (capturable AdamW keeps its step counter on the
#: GPU; the graph needs autocast's cache off), so graph against it isolates the launch overhead.
EAGER_STEPS: dict[str, dict] = {
    "eager, default AdamW": {"optimizer": {}, "cast_cache": True},
    "eager, fused AdamW": {"optimizer": {"fused": True}, "cast_cache": True},
    "eager, as captured (capturable AdamW, no cast cache)": {"optimizer": {"capturable": True}, "cast_cache": False},
}
BASELINE = "eager, default AdamW"
GRAPH = "CUDA graph (capturable AdamW, no cast cache)"


def _step_body(model: GPT, batch, precision: str, opt: torch.optim.Optimizer,
               cast_cache: bool = False) -> Callable[[], torch.Tensor]:
    x, y = batch
    dev_type = x.device.type

    def body() -> torch.Tensor:
        with tf32_matmuls(True) if precision == TF32 else contextlib.nullcontext():
            with (torch.autocast(dev_type, dtype=torch.bfloat16, cache_enabled=cast_cache)
                  if precision == "amp_bf16" else contextlib.nullcontext()):
                _, loss = model(x, y)
            loss.backward()
            opt.step()
        return loss
    return body


def _check_graphable(precision: str) -> None:
    if precision not in GRAPHABLE:
        raise ValueError(f"precision {precision!r} cannot be captured whole; choose one of {GRAPHABLE} "
                         "(a GradScaler step decides on the host whether to skip)")


def eager_steps(model: GPT, batch, precision: str, *, lr: float = 1e-5) -> dict[str, Callable[[], None]]:
    """One step function per :data:`EAGER_STEPS` entry, each over its own copy of ``model`` (runs on any
    device; the capturable optimizer steps only on a GPU)."""
    _check_graphable(precision)
    steps = {}
    for name, how in EAGER_STEPS.items():
        m = copy.deepcopy(model)
        opt = torch.optim.AdamW(m.parameters(), lr=lr, **how["optimizer"])
        body = _step_body(m, batch, precision, opt, cast_cache=how["cast_cache"])

        def step(body=body, opt=opt) -> None:
            body()
            opt.zero_grad(set_to_none=True)
        steps[name] = step
    return steps


def graphed_step(model: GPT, batch, precision: str, *, lr: float = 1e-5, warmup: int = 3) -> Callable[[], None]:
    """The step on a copy of ``model`` captured once in a CUDA graph; returns its replay.

    Raises:
        ValueError: ``precision`` not in :data:`GRAPHABLE`, or the model is not on a CUDA device.
    """
    _check_graphable(precision)
    dev = next(model.parameters()).device
    if dev.type != "cuda":
        raise ValueError(f"CUDA graphs need the model on a CUDA device, got {str(dev)!r}")
    graphed_model = copy.deepcopy(model)
    graph_opt = torch.optim.AdamW(graphed_model.parameters(), lr=lr, capturable=True)
    graph_body = _step_body(graphed_model, batch, precision, graph_opt)
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
    return graph.replay


def eager_and_graphed(model: GPT, batch, precision: str, *, lr: float = 1e-5,
                      warmup: int = 3) -> tuple[Callable[[], None], Callable[[], None]]:
    """The eager step that runs the graph's kernels (capturable AdamW, no cast cache) and the graph's replay.

    Raises:
        ValueError: ``precision`` not in :data:`GRAPHABLE`, or the model is not on a CUDA device.
    """
    replay = graphed_step(model, batch, precision, lr=lr, warmup=warmup)
    as_captured = [n for n, how in EAGER_STEPS.items() if not how["cast_cache"]][0]
    return eager_steps(model, batch, precision, lr=lr)[as_captured], replay


def _comparison_rows(res: Interleaved, precision: str) -> list[dict]:
    """One row per step timed in ``res``: its median and IQR, and its speedup over :data:`BASELINE`
    (median ratio of the same rounds, with its interval and verdict)."""
    rows = []
    for name, t in res.timings.items():
        row = {"precision": precision, "step": name, "median (ms)": t.median_s * 1e3, "IQR (ms)": t.iqr_s * 1e3,
               "speedup over the default eager step": "1 (baseline)", "verdict": None,
               "A/A control (default eager step vs itself)": None if res.aa is None else res.aa.interval_text(),
               "note": None}
        if name != res.baseline:
            c = res.compare(name)
            row["speedup over the default eager step"], row["verdict"] = c.interval_text(), c.verdict
        rows.append(row)
    return rows


def graph_comparison(cfg: GPTConfig, batch: int, precisions: Iterable[str] = ("fp32", "amp_bf16"),
                     device: str | torch.device = "cuda", *, rounds: int = 9) -> pd.DataFrame:
    """Step time of the CUDA-graph replay and of the eager steps (:data:`EAGER_STEPS`) per precision, all in
    the same interleaved rounds, each compared with the default eager step (:data:`BASELINE`).

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
            fns = {**eager_steps(model, data, prec), GRAPH: graphed_step(model, data, prec)}
            res = interleaved(fns, baseline=BASELINE, device=dev, rounds=rounds)
        except RuntimeError as e:
            rows.append({"precision": prec, "note": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
            continue
        rows += _comparison_rows(res, prec)
    return pd.DataFrame(rows)
