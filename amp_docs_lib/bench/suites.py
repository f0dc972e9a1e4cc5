"""The performance chapter's measurements as suites, for ``amp-docs bench``.

``run_suite`` runs one suite with the active profile's sizes; ``amp-docs bench`` (``cli/bench.py``)
shows a progress bar, writes ``results.json`` (every suite's rows, the environment report and the
hardware fingerprint) and one CSV per suite (each row stamped with the
fingerprint, device, torch version and profile) into ``--out``, and prints a
summary table.
"""

from __future__ import annotations

import json
from typing import Any

SUITES = ("matmul", "alignment", "mistakes", "model", "memory", "fidelity", "compile")
DEFAULT_SUITES = ("matmul", "alignment", "mistakes", "model", "memory", "fidelity")

HELP = f"""\
Measure precision-related performance on this machine (the performance chapter's suites).

\b
suites:
  matmul     matmul TFLOP/s per dtype (fp32, tf32, fp16, bf16, fp8 where supported) and size,
             as a fraction of this device's peak (datasheet on known GPUs, estimate on CPU)
  alignment  sizes that are multiples of 8/16 against their neighbours
  mistakes   the classic timing mistakes measured against the harness
  model      GPT forward+backward step time per size in fp32, amp_bf16, amp_fp16
  memory     training-memory calculator against measured bytes (and peaks on CUDA)
  fidelity   the harness against a direct Timer.blocked_autorange (2048x2048 FP32 matmul)
  compile    torch.compile with and without AMP (slow to compile; not in the default set)

\b
default suites: {", ".join(DEFAULT_SUITES)}; 'all' runs every suite.
Sizes come from the profile: AMP_DOCS_PROFILE=cpu-small or gpu-full (default: from the hardware).
"""


def parse_suites(values: list[str] | None) -> list[str]:
    if not values:
        return list(DEFAULT_SUITES)
    out: list[str] = []
    for v in values:
        for name in (s.strip() for s in v.split(",")):
            if name == "all":
                out += [s for s in SUITES if s not in out]
            elif name in SUITES:
                if name not in out:
                    out.append(name)
            else:
                raise ValueError(f"unknown suite {name!r}; valid suites: {', '.join(SUITES)}, all")
    return out


def records(df) -> list[dict[str, Any]]:
    """A DataFrame's rows as JSON-ready dicts."""
    return json.loads(df.to_json(orient="records"))


def run_suite(name: str, device: str):
    """Run one suite; return its rows (a DataFrame) and a one-line summary."""
    import pandas as pd

    from amp_docs_lib.bench import matmul, memory, mistakes, model_sweep, peaks
    from amp_docs_lib.core.profiles import active_profile

    P = active_profile()
    mrt = P["perf_min_run_time"]
    if name == "matmul":
        df = matmul.throughput_sweep(P["perf_matmul_sizes"], matmul.MATMUL_DTYPES, device, min_run_time=mrt)
        best = float(df.loc[df["dtype"] == "fp32", "tflops"].max())
        pk, note = peaks.device_peaks(device, best)
        # The note is written for the chapter's page, where the CPU estimate's inputs follow as a table.
        note = note.replace("the inputs are in the table below", "its inputs: bench.peaks.cpu_peak_table()")
        df["fraction of peak"] = [peaks.peak_fraction(r.tflops, pk.get(r.dtype)) for r in df.itertuples()]
        b = df.loc[df.groupby("dtype")["tflops"].idxmax()]
        return df, "; ".join(f"{r.dtype} {r.tflops:.3g} TFLOP/s at n={r.n}" for r in b.itertuples()) + f" ({note})"
    if name == "alignment":
        df = matmul.alignment_sweep(P["perf_alignment_base"], ("fp32", "bf16"), (-1, 0, 1, 8), device,
                                    min_run_time=mrt)
        odd = df[~df["multiple of 8"]]
        return df, f"unaligned sizes at {odd['relative to aligned'].mean():.0%} of the aligned rate on average"
    if name == "mistakes":
        tc = mistakes.thread_count(P["perf_alignment_base"] * 2, min_run_time=mrt)
        first, steady = mistakes.first_call(device=device)
        wrong, right, _ = mistakes.fp32_warmup(device=device)
        tiny = mistakes.tiny_op_autocast((8, P["perf_alignment_base"] * 2), device, rounds=P["perf_rounds"])
        rows = [{"mistake": k, "seconds": v.median_s} for k, v in tc.items()]
        rows += [{"mistake": "first call", "seconds": first}, {"mistake": "steady state", "seconds": steady.median_s},
                 {"mistake": "BF16 after FP32 warm-up", "seconds": wrong},
                 {"mistake": "BF16 after BF16 warm-up", "seconds": right.median_s}]
        rows += [{"mistake": f"autocast vs FP32, Linear({r['n']})", "seconds": None, "ratio": r["_total"].ratio,
                  "interval": f"[{r['_total'].ratio_lo:.2f}, {r['_total'].ratio_hi:.2f}]"} for r in tiny]
        return pd.DataFrame(rows), (f"first call {first / steady.median_s:.1f}x steady; FP32 warm-up "
                                    f"{wrong / right.median_s:.1f}x; tiny-op autocast {tiny[0]['_total'].interval_text()}")
    if name == "model":
        cfgs = model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])
        df = model_sweep.sweep(cfgs, P["perf_gpt_batch"], device=device, rounds=P["perf_rounds"])
        sp = df[df["precision"] == "amp_bf16"]
        return df, "amp_bf16 speedup " + ", ".join(
            f"{r['size']} {float(r['speedup vs fp32']):.2f}x [{float(r['interval low']):.2f}, {float(r['interval high']):.2f}]"
            for _, r in sp.iterrows())
    if name == "memory":
        cfgs = model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])
        parts = []
        for size in P["perf_memory_sizes"]:
            t = memory.comparison_table(cfgs[size], P["perf_gpt_batch"], device=device)
            t.insert(0, "size", size)
            parts.append(t)
        df = pd.concat(parts, ignore_index=True)
        r = df.iloc[-1]
        return df, (f"{r['size']} {r['precision']}: saved for backward {r['saved for backward, measured (MiB)']:.1f} MiB "
                    f"measured vs {r['saved for backward, calculated (MiB)']:.1f} calculated")
    if name == "fidelity":
        from amp_docs_lib.bench.fidelity import TOLERANCE, fidelity
        r = fidelity(2048)
        return pd.DataFrame([r]), (f"harness {r['harness_s'] * 1e3:.1f} ms vs Timer {r['direct_timer_s'] * 1e3:.1f} ms: "
                                   f"{r['relative_difference']:.1%} (tolerance {TOLERANCE:.0%})")
    if name == "compile":
        from amp_docs_lib.bench.compiled import compile_comparison
        cfgs = model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])
        df = compile_comparison(cfgs[P["perf_memory_sizes"][0]], P["perf_gpt_batch"], ("fp32", "amp_bf16"), device)
        return df, "; ".join(f"{r.precision}: {'failed' if r._3 is None else f'{r._4:.2f}x'}" for r in df.itertuples())
    raise ValueError(f"unknown suite {name!r}; valid suites: {', '.join(SUITES)}")
