"""GPT forward+backward step time per model size and precision.

The ladder of sizes comes from the active profile (``perf_gpt_ladder``: on a
GPU the GPT-2 small/medium/large/xl and 2.7B shapes used in common benchmarking
exercises; on CPU a small ladder). Each point times one training step
(forward, loss, backward, zeroed gradients; no optimizer step) with the
harness, the autocast region inside the timed function, so warm-up runs in
the measured precision.

``SEED_REFERENCE`` holds the figures of the project's seed benchmarking notes
(context 128; FP32 vs BF16 step time in ms), shown as an outside reference.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd
import torch

from amp_docs_lib.core.timing import measure
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch
from amp_docs_lib.amp.precision import precision_setup

SWEEP_PRECISIONS = ("fp32", "amp_bf16", "amp_fp16")
# name: (n_layer, n_embd, n_head); the d_ff = 4·d_model shapes of GPT-2 small ... 2.7B.
GPU_LADDER = {"small": (12, 768, 12), "medium": (24, 1024, 16), "large": (36, 1280, 20),
              "xl": (48, 1600, 25), "2.7B": (32, 2560, 32)}
SEED_SOURCE = "project seed benchmarking notes, session log 2026-02-03 (context 128; GPU not named)"
SEED_REFERENCE = pd.DataFrame({
    "size": ["small", "medium", "large", "xl", "2.7B"],
    "fp32_ms": [51.46, 93.50, 184.01, 325.25, 500.17],
    "bf16_ms": [53.65, 98.61, 145.66, 193.14, 229.67],
    "stated speedup": [0.96, 0.95, 1.26, 1.68, 2.18],
})


def seed_reference() -> pd.DataFrame:
    """The seed notes' figures, with the speedup recomputed from their own milliseconds."""
    df = SEED_REFERENCE.copy()
    df["recomputed speedup"] = df["fp32_ms"] / df["bf16_ms"]
    cfgs = {k: GPTConfig(vocab_size=10_000, block_size=128, n_layer=v[0], n_embd=v[1], n_head=v[2])
            for k, v in GPU_LADDER.items()}
    df["parameters"] = [count_parameters(cfgs[s]) for s in df["size"]]
    return df


def count_parameters(cfg: GPTConfig) -> int:
    """Parameters of :class:`GPT` for ``cfg`` (tied embeddings), computed from the shapes alone."""
    d, L, V, T = cfg.n_embd, cfg.n_layer, cfg.vocab_size, cfg.block_size
    per_block = (2 * 2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    lm_head = 0 if cfg.tie_weights else V * d
    return V * d + T * d + L * per_block + 2 * d + lm_head


def ladder_configs(ladder: dict[str, tuple[int, int, int]], vocab: int, seq: int) -> dict[str, GPTConfig]:
    """GPTConfig per named size of ``ladder`` ({name: (n_layer, n_embd, n_head)})."""
    if not isinstance(ladder, dict) or not ladder:
        raise ValueError(f"ladder must be a non-empty dict of name -> (n_layer, n_embd, n_head), got {ladder!r}")
    return {name: GPTConfig(vocab_size=vocab, block_size=seq, n_layer=L, n_embd=d, n_head=h)
            for name, (L, d, h) in ladder.items()}


def step_fn(model: GPT, batch: tuple[torch.Tensor, torch.Tensor], precision: str, device: torch.device):
    """One training step's compute (forward, loss, backward) under ``precision``; no optimizer step."""
    setup = precision_setup(precision, device)
    x, y = batch

    def step():
        with setup.autocast():
            _, loss = model(x, y)
        setup.scaler.scale(loss).backward()
        model.zero_grad(set_to_none=True)
    return step


def sweep(configs: dict[str, GPTConfig], batch: int, precisions: Iterable[str] = SWEEP_PRECISIONS,
          device: str | torch.device = "cpu", *, min_run_time: float = 0.2, warmup: int = 2,
          progress=None) -> pd.DataFrame:
    """Step time per (size, precision). Columns: size, parameters, precision, median_ms, iqr_ms, speedup vs fp32."""
    dev = check_device(device)
    rows: list[dict[str, Any]] = []
    for name, cfg in configs.items():
        torch.manual_seed(0)
        model = GPT(cfg).to(dev)
        data = random_batch(cfg, batch, dev)
        base = None
        for prec in precisions:
            t = measure(step_fn(model, data, prec, dev), device=dev, warmup=warmup,
                        min_run_time=min_run_time, label=f"{name} {prec}")
            base = t.median_s if prec == "fp32" else base
            rows.append({"size": name, "parameters": count_parameters(cfg), "precision": prec,
                         "median_ms": t.median_s * 1e3, "iqr_ms": t.iqr_s * 1e3,
                         "speedup vs fp32": None if base is None else base / t.median_s})
            if progress:
                progress()
        del model
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def speedup_grows(df: pd.DataFrame, precision: str = "amp_bf16") -> bool:
    """Whether ``precision``'s speedup over FP32 rises with every step up the ladder (strictly)."""
    s = df[df["precision"] == precision].sort_values("parameters")["speedup vs fp32"].astype(float).tolist()
    if len(s) < 2:
        raise ValueError(f"need at least two sizes with precision {precision!r}, got {len(s)}")
    return all(b > a for a, b in zip(s, s[1:]))


def speedup_summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per model size of a :func:`sweep`: FP32 step time and each precision's speedup.

    Columns: size, parameters, FP32 step (ms), then ``<precision> speedup (x)`` for every
    precision other than fp32 (None where FP32 was not measured). Raises ValueError for a
    frame that is not a sweep.
    """
    missing = {"size", "parameters", "precision", "median_ms", "speedup vs fp32"} - set(df.columns)
    if missing or df.empty:
        raise ValueError(f"need a non-empty sweep() frame; missing columns {sorted(missing)}, {len(df)} rows")
    rows = []
    for size, g in df.groupby("size", sort=False):
        by = g.set_index("precision")
        row = {"size": size, "parameters": int(g["parameters"].iloc[0]),
               "FP32 step (ms)": float(by.loc["fp32", "median_ms"]) if "fp32" in by.index else None}
        for prec in by.index:
            if prec != "fp32":
                v = by.loc[prec, "speedup vs fp32"]
                row[f"{prec} speedup (x)"] = None if v is None or v != v else float(v)
        rows.append(row)
    out = pd.DataFrame(rows).astype(object)
    return out.where(out.notna(), None)


def plot_step_times(df: pd.DataFrame, reference: pd.DataFrame | None = None):
    """Speedup over FP32 against parameter count, per precision; the seed reference as a dashed line."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for prec, g in df[df["precision"] != "fp32"].groupby("precision", sort=False):
        g = g.sort_values("parameters")
        ax.plot(g["parameters"], g["speedup vs fp32"].astype(float), "o-", label=f"{prec} (this build)")
    if reference is not None:
        ax.plot(reference["parameters"], reference["recomputed speedup"], "s--",
                label="BF16, seed notes (outside reference, GPU)")
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("speedup over FP32 (step time)")
    ax.legend(fontsize=8)
    return fig
