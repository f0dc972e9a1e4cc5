"""GPT training-step time per model size and precision, with speedups from interleaved rounds and MFU.

The ladder of sizes comes from the active profile (``perf_gpt_ladder``: on a GPU the GPT-2
small/medium/large/xl and 2.7B shapes; on CPU a small ladder). One training step is what a
training loop runs: forward and loss under the precision's autocast, backward through the
precision's ``GradScaler`` (disabled where the precision needs none), ``scaler.step(optimizer)``
(unscale, inf/NaN check, AdamW step), ``scaler.update()`` and zeroed gradients.

Per size, the precisions are timed in interleaved rounds (:func:`core.timing.interleaved`), so
each speedup over FP32 has an interval. The step's FLOPs are counted by
``torch.utils.flop_counter.FlopCounterMode`` on one step (matmuls and attention, the CPU attention kernel included; the optimizer's
elementwise work is not counted), and the achieved rate divided by a peak is the model-FLOPs
utilisation (MFU).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable

import pandas as pd
import torch

from amp_docs_lib.bench.matmul import tf32_matmuls
from amp_docs_lib.bench.memory import count_parameters, memory_plan, plan_bytes
from amp_docs_lib.core.timing import interleaved, measurements
from amp_docs_lib.core.devices import check_device, is_out_of_memory
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch
from amp_docs_lib.amp.precision import precision_setup

TF32 = "tf32"  # the matmul and regime name (bench.matmul, amp.precision): FP32 weights and autocast off, TF32 Tensor Core matmuls allowed (CUDA, sm80+)
SWEEP_PRECISIONS = ("fp32", "amp_bf16", "amp_fp16")
# name: (n_layer, n_embd, n_head); the d_ff = 4·d_model shapes of GPT-2 small ... 2.7B.
GPU_LADDER = {"small": (12, 768, 12), "medium": (24, 1024, 16), "large": (36, 1280, 20),
              "xl": (48, 1600, 25), "2.7B": (32, 2560, 32)}


def ladder_configs(ladder: dict[str, tuple[int, int, int]], vocab: int, seq: int) -> dict[str, GPTConfig]:
    """GPTConfig per named size of ``ladder`` ({name: (n_layer, n_embd, n_head)})."""
    if not isinstance(ladder, dict) or not ladder:
        raise ValueError(f"ladder must be a non-empty dict of name -> (n_layer, n_embd, n_head), got {ladder!r}")
    return {name: GPTConfig(vocab_size=vocab, block_size=seq, n_layer=L, n_embd=d, n_head=h)
            for name, (L, d, h) in ladder.items()}



def sweep_precisions(device: str | torch.device) -> tuple[str, ...]:
    """The precisions the sweep times on ``device``: FP32, AMP BF16/FP16, and TF32 on CUDA sm80+."""
    dev = check_device(device)
    tf32 = dev.type == "cuda" and torch.cuda.get_device_capability(dev) >= (8, 0)
    return SWEEP_PRECISIONS[:1] + ((TF32,) if tf32 else ()) + SWEEP_PRECISIONS[1:]


def step_fn(model: GPT, batch: tuple[torch.Tensor, torch.Tensor], precision: str, device: torch.device,
            optimizer: torch.optim.Optimizer | None = None, *, lr: float = 1e-5):
    """One full training step under ``precision``: forward, loss, scaled backward, scaler.step, update, zero_grad.

    ``precision`` is a precision-switch name (``amp_docs_lib.precision.PRECISIONS``) or
    :data:`TF32`. ``optimizer`` defaults to AdamW over the model's parameters.
    """
    tf32 = precision == TF32
    setup = precision_setup("fp32" if tf32 else precision, device)
    opt = optimizer or torch.optim.AdamW(model.parameters(), lr=lr)
    x, y = batch

    def step():
        with tf32_matmuls(True) if tf32 else contextlib.nullcontext():
            with setup.autocast():
                _, loss = model(x, y)
            setup.scaler.scale(loss).backward()
            setup.scaler.step(opt)  # unscales, skips the step on inf/NaN gradients
            setup.scaler.update()
            opt.zero_grad(set_to_none=True)
    return step


def step_flops(model: GPT, batch: tuple[torch.Tensor, torch.Tensor]) -> int:
    """FLOPs of one forward + backward of ``model`` on ``batch``, counted by ``FlopCounterMode``."""
    from torch.utils import flop_counter

    # Older torch (2.14 and before) registers attention formulas only for the flash, efficient and cuDNN
    # SDPA kernels (torch/utils/flop_counter.py, sdpa_flop / sdpa_backward_flop); torch 2.15 registers the
    # CPU kernel too. Where this torch lacks it, the CPU kernel gets the same formulas: it has the same
    # (query, key, value, ...) and (grad_out, query, key, value, ...) arguments (unwrapped: custom_mapping
    # wraps them in the shape wrapper again).
    aten = torch.ops.aten
    cpu_sdpa = {op: f for op, f in ((aten._scaled_dot_product_flash_attention_for_cpu, flop_counter.sdpa_flop),
                                    (aten._scaled_dot_product_flash_attention_for_cpu_backward,
                                     flop_counter.sdpa_backward_flop))
                if op not in flop_counter.flop_registry}
    cpu_sdpa = {op: f.__wrapped__ for op, f in cpu_sdpa.items()}
    x, y = batch
    with flop_counter.FlopCounterMode(display=False, custom_mapping=cpu_sdpa) as fc:
        _, loss = model(x, y)
        loss.backward()
    model.zero_grad(set_to_none=True)
    return int(fc.get_total_flops())


# The calculator regime (bench.memory.CALCULATOR_REGIMES) whose bytes a sweep precision holds.
_MEMORY_REGIME = {"fp32": "fp32", TF32: "fp32", "amp_bf16": "amp_bf16", "amp_fp16": "amp_bf16"}


def step_plan_bytes(cfg: GPTConfig, batch: int, precisions: Iterable[str] = SWEEP_PRECISIONS) -> int:
    """Bytes a :func:`sweep` of ``cfg`` holds at its peak (``bench.memory.plan_bytes`` of the precisions'
    regimes): all precisions of a size share one model and one AdamW."""
    return plan_bytes(cfg, batch, _regimes(precisions))


def _regimes(precisions: Iterable[str]) -> tuple[str, ...]:
    precisions = tuple(precisions)
    unknown = [p for p in precisions if p not in _MEMORY_REGIME]
    if unknown or not precisions:
        raise ValueError(f"unknown precisions {unknown or precisions!r}; valid: {list(_MEMORY_REGIME)}")
    return tuple(_MEMORY_REGIME[p] for p in precisions)


def sweep(configs: dict[str, GPTConfig], batch: int, precisions: Iterable[str] | None = None,
          device: str | torch.device = "cpu", *, rounds: int = 9, min_block_s: float = 0.02, warmup: int = 2,
          memory_bytes: int | None = None, progress=None) -> pd.DataFrame:
    """Step time per (size, precision), interleaved per size.

    Columns: size, parameters, precision, median_ms, iqr_ms, speedup vs fp32, interval low/high,
    verdict, step GFLOP (counted), achieved TFLOP/s. One model and one optimizer per size, shared by
    its precisions. A size whose :func:`step_plan_bytes` exceeds ``memory_bytes`` (default: the
    CUDA device's free memory; not planned on the CPU), or that runs out of memory all the same, is
    not timed: ``attrs["plan"]`` (a ``bench.memory.MemoryPlan``) says why, per size.
    """
    dev = check_device(device)
    precisions = tuple(precisions or sweep_precisions(dev))
    if "fp32" not in precisions:
        raise ValueError(f"precisions must include 'fp32' (the baseline), got {precisions!r}")
    plan = memory_plan(configs, batch, _regimes(precisions), dev, memory_bytes)
    rows: list[dict[str, Any]] = []
    measured: list = []
    for name, cfg in configs.items():
        if not plan.fits(name):
            continue
        torch.manual_seed(0)
        model = GPT(cfg).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        try:
            data = random_batch(cfg, batch, dev)
            flops = step_flops(model, data)
            res = interleaved({p: step_fn(model, data, p, dev, opt) for p in precisions}, baseline="fp32",
                              device=dev, rounds=rounds, min_block_s=min_block_s, warmup=warmup)
        except RuntimeError as e:  # torch.OutOfMemoryError, or cuBLAS failing to allocate
            if not is_out_of_memory(e):
                raise
            plan.skip(name, f"ran out of device memory (planned {plan.planned[name] / 2**30:.1f} GiB)")
            continue
        finally:
            del model, opt
            if dev.type == "cuda":
                torch.cuda.empty_cache()
        measured += measurements(res, "GPT training step", name)
        for p in precisions:
            t = res.timings[p]
            c = None if p == "fp32" else res.compare(p)
            rows.append({"size": name, "parameters": count_parameters(cfg), "precision": p,
                         "median_ms": t.median_s * 1e3, "iqr_ms": t.iqr_s * 1e3,
                         "speedup vs fp32": None if c is None else c.ratio,
                         "interval low": None if c is None else c.ratio_lo,
                         "interval high": None if c is None else c.ratio_hi,
                         "verdict": None if c is None else c.verdict,
                         "A/A control (fp32 vs itself)": None if res.aa is None else res.aa.interval_text(),
                         "step GFLOP": flops / 1e9, "achieved TFLOP/s": flops / t.median_s / 1e12})
        if progress:
            progress()
    df = pd.DataFrame(rows).astype(object)
    df = df.where(df.notna(), None)
    df.attrs.update(measurements=measured,  # for torch.utils.benchmark.Compare (timing.compare_text)
                    plan=plan)
    return df


def memory_note(df: pd.DataFrame) -> str:
    """What a :func:`sweep`'s memory plan decided, in a sentence per size left out (or that all fit)."""
    if "plan" not in df.attrs:
        raise ValueError("need the frame a sweep() returned (its attrs hold the memory plan)")
    return df.attrs["plan"].note()


def speedup_summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per model size of a :func:`sweep`: FP32 step time with IQR and each precision's speedup with its interval."""
    missing = {"size", "parameters", "precision", "median_ms", "iqr_ms", "speedup vs fp32",
               "interval low", "interval high"} - set(df.columns)
    if missing or df.empty:
        raise ValueError(f"need a non-empty sweep() frame; missing columns {sorted(missing)}, {len(df)} rows")
    rows = []
    for size, g in df.groupby("size", sort=False):
        by = g.set_index("precision")
        row = {"size": size, "parameters": int(g["parameters"].iloc[0]),
               "FP32 step (ms)": float(by.loc["fp32", "median_ms"]) if "fp32" in by.index else None,
               "FP32 step IQR (ms)": float(by.loc["fp32", "iqr_ms"]) if "fp32" in by.index else None}
        for prec in by.index:
            if prec != "fp32":
                v = by.loc[prec]
                row[f"{prec} speedup (x)"] = None if v["speedup vs fp32"] is None else float(v["speedup vs fp32"])
                row[f"{prec} interval"] = (None if v["interval low"] is None else
                                           f"[{float(v['interval low']):.2f}, {float(v['interval high']):.2f}]")
        rows.append(row)
    out = pd.DataFrame(rows).astype(object)
    return out.where(out.notna(), None)


TREND_NOT_MONOTONE = "rises and falls"  # every step resolved, in both directions
TREND_NOT_RESOLVED = "not resolved"


def speedup_trend(df: pd.DataFrame, precision: str = "amp_bf16") -> str:
    """``"rises"`` if each size's speedup interval lies wholly above the previous size's, ``"falls"`` if
    wholly below, :data:`TREND_NOT_MONOTONE` if every neighbour's interval is clear of the last's but in
    both directions, else :data:`TREND_NOT_RESOLVED` (the intervals of some neighbours overlap)."""
    g = df[df["precision"] == precision].sort_values("parameters")
    if len(g) < 2:
        raise ValueError(f"need at least two sizes with precision {precision!r}, got {len(g)}")
    lo, hi = g["interval low"].astype(float).tolist(), g["interval high"].astype(float).tolist()
    up = [lo[i + 1] > hi[i] for i in range(len(lo) - 1)]
    down = [hi[i + 1] < lo[i] for i in range(len(lo) - 1)]
    if all(up):
        return "rises"
    if all(down):
        return "falls"
    if all(u or d for u, d in zip(up, down)):
        return TREND_NOT_MONOTONE
    return TREND_NOT_RESOLVED


def plot_speedup(df: pd.DataFrame):
    """Speedup over FP32 with its interval against parameter count, per precision (this build only)."""
    import matplotlib.pyplot as plt

    from amp_docs_lib.core.palette import color_or_default

    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for i, (prec, g) in enumerate(df[df["precision"] != "fp32"].groupby("precision", sort=False)):
        g = g.sort_values("parameters")
        s = g["speedup vs fp32"].astype(float)
        ax.errorbar(g["parameters"].astype(float), s, yerr=[s - g["interval low"].astype(float),
                                                            g["interval high"].astype(float) - s],
                    fmt="o-", capsize=3, label=prec, color=color_or_default(prec, f"C{i}"))
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("speedup over FP32 (step time), interval")
    ax.legend(fontsize=8)
    return fig


def mfu_table(df: pd.DataFrame, peak_by_dtype: dict, best_fp32_tflops: float | None,
              device: str | torch.device = "cpu") -> pd.DataFrame:
    """Per size and precision of a :func:`sweep`: achieved TFLOP/s and MFU. On a GPU the MFU is against the
    dtype's peak (None where it has none); on a CPU against ``peak_by_dtype["fp32"]``, the one FP32 peak the
    page uses (the estimate, or the best measured rate where that is higher), for every precision, beside
    the fraction of the best FP32 matmul measured. No second, estimated peak is divided by."""
    dev = check_device(device)
    compute = {"fp32": "fp32", TF32: "tf32", "amp_bf16": "bf16", "amp_fp16": "fp16", "bf16": "bf16"}
    rows = []
    for _, r in df.iterrows():
        rate, prec = float(r["achieved TFLOP/s"]), r["precision"]
        if dev.type == "cpu":
            peak = peak_by_dtype.get("fp32")
            row = {"size": r["size"], "precision": prec, "achieved TFLOP/s": rate,
                   "MFU (of the page's FP32 peak)": None if not peak else rate / peak,
                   "of the best FP32 matmul measured": None if not best_fp32_tflops else rate / best_fp32_tflops}
        else:
            peak = peak_by_dtype.get(compute.get(prec, prec))
            row = {"size": r["size"], "precision": prec, "achieved TFLOP/s": rate,
                   "MFU (of the dtype's peak)": None if not peak else rate / peak}
        rows.append(row)
    out = pd.DataFrame(rows).astype(object)
    return out.where(out.notna(), None)
