"""``torch.compile`` with and without AMP, and which kernels ran in which dtype.

:func:`compile_comparison` times a GPT training step eager and compiled per
precision; where compilation fails on this device the row says why instead
of a time. :func:`top_ops` runs a function under ``torch.profiler`` and under
a dispatch mode that records the dtypes of every aten operator's tensor
inputs, and joins them: the operators with the most self time, with the
dtypes they ran in.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

import pandas as pd
import torch

from amp_docs_lib.bench.model_sweep import step_fn
from amp_docs_lib.core.timing import interleaved, measure
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.dispatch import trace_ops
from amp_docs_lib.core.profiling import quiet_stderr
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

_SHORT = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
          torch.int64: "int64", torch.bool: "bool", torch.int32: "int32"}


def _floating_input_dtypes(fn: Callable[[], Any]) -> dict[str, set[str]]:
    """Per aten operator (``aten::mm``, as the profiler names it), the dtypes of its floating-point tensor inputs."""
    dtypes: dict[str, set[str]] = defaultdict(set)
    for c in trace_ops(fn).calls:
        if c.name.startswith("aten."):
            dtypes[f"aten::{c.op}"].update(_SHORT.get(d, str(d)) for d in c.all_dtypes if d.is_floating_point)
    return dtypes


def top_ops(fn: Callable[[], Any], k: int = 10, device: str | torch.device = "cpu", *, steps: int = 1
            ) -> pd.DataFrame:
    """The ``k`` aten operators with the most self time per call of ``fn``, with input dtypes.

    ``steps`` calls are profiled one at a time and each operator's calls and self time are the
    medians over them, so one call that a busy machine or the allocator slowed does not reorder
    the table (an operator absent from a call counts 0 there).
    """
    from statistics import median

    from torch.profiler import ProfilerActivity, profile

    dev = check_device(device)
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    fn()  # warm-up
    input_dtypes = _floating_input_dtypes(fn)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    attr = "self_device_time_total" if dev.type == "cuda" else "self_cpu_time_total"
    per_step: list[dict[str, tuple[int, float]]] = []
    for _ in range(steps):
        with quiet_stderr(), profile(activities=acts) as prof:
            fn()
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
        per_step.append({e.key: (e.count, getattr(e, attr)) for e in prof.key_averages() if e.key.startswith("aten::")})
    keys = set().union(*per_step)
    stats = {key: (median(s.get(key, (0, 0.0))[0] for s in per_step), median(s.get(key, (0, 0.0))[1] for s in per_step))
             for key in keys}
    top = sorted(stats, key=lambda key: stats[key][1], reverse=True)[:k]
    time_col = f"self {'device' if dev.type == 'cuda' else 'CPU'} time (µs)"
    if steps > 1:
        # per profiled call of fn: the operator's total self time in it (all its calls), median over the calls
        time_col = f"self {'device' if dev.type == 'cuda' else 'CPU'} time per step, median of {steps} steps (µs)"
    rows = [{"operator": key, "calls per step": stats[key][0], time_col: stats[key][1],
             "input dtypes": ", ".join(sorted(input_dtypes.get(key, []))) or None} for key in top]
    return pd.DataFrame(rows)


def compile_comparison(cfg: GPTConfig, batch: int, precisions=("fp32", "amp_bf16"),
                       device: str | torch.device = "cpu", *, min_run_time: float = 0.02, rounds: int = 9
                       ) -> pd.DataFrame:
    """Step time eager vs ``torch.compile`` per precision, in interleaved rounds (``min_run_time``: the
    shortest block), so the compile speedup has an interval; a failed compilation is reported, not raised."""
    dev = check_device(device)
    rows = []
    for prec in precisions:
        torch.manual_seed(0)
        model = GPT(cfg).to(dev)
        data = random_batch(cfg, batch, dev)
        eager_fn = step_fn(model, data, prec, dev)
        compiled_fn, error = None, None
        try:
            compiled_fn = step_fn(torch.compile(model), data, prec, dev)
            compiled_fn()  # compiles here, so a failure is caught before timing
        except Exception as e:  # noqa: BLE001 - the page reports why compilation failed here
            compiled_fn, error = None, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        if compiled_fn is None:
            eager = measure(eager_fn, device=dev, min_run_time=max(min_run_time, 0.1))
            rows.append({"precision": prec, "eager (ms)": eager.median_s * 1e3, "compiled (ms)": None,
                         "compile speedup": None, "interval": None, "verdict": None, "A/A control": None,
                         "note": error})
            continue
        res = interleaved({"eager": eager_fn, "compiled": compiled_fn}, device=dev, rounds=rounds,
                          min_block_s=min_run_time)
        c = res.compare("compiled")
        rows.append({"precision": prec, "eager (ms)": res.timings["eager"].median_s * 1e3,
                     "compiled (ms)": res.timings["compiled"].median_s * 1e3, "compile speedup": c.ratio,
                     "interval": f"[{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]", "verdict": c.verdict,
                     "A/A control": c.aa_text(), "note": None})
    return pd.DataFrame(rows).astype(object).where(lambda d: d.notna(), None)
