"""``amp-docs bench``: the performance chapter's measurements from the command line.

Runs the chosen suites with the active profile's sizes, shows a progress bar,
writes ``results.json`` (every suite's rows, the environment report and the
hardware fingerprint) and one CSV per suite (each row stamped with the
fingerprint, device, torch version and profile) into ``--out``, and prints a
summary table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

SUITES = ("matmul", "alignment", "mistakes", "model", "memory", "fidelity", "compile")
DEFAULT_SUITES = ("matmul", "alignment", "mistakes", "model", "memory", "fidelity")

HELP = f"""\
Measure precision-related performance on this machine (the performance chapter's suites).

suites:
  matmul     matmul TFLOP/s per dtype (fp32, tf32, fp16, bf16, fp8 where supported) and size,
             as a fraction of this device's peak (datasheet on known GPUs, estimate on CPU)
  alignment  sizes that are multiples of 8/16 against their neighbours
  mistakes   the classic timing mistakes measured against the harness
  model      GPT forward+backward step time per size in fp32, amp_bf16, amp_fp16
  memory     training-memory calculator against measured bytes (and peaks on CUDA)
  fidelity   the harness against a direct Timer.blocked_autorange (2048x2048 FP32 matmul)
  compile    torch.compile with and without AMP (slow to compile; not in the default set)

default suites: {", ".join(DEFAULT_SUITES)}; 'all' runs every suite.
Sizes come from the profile (AMP_DOCS_PROFILE=cpu-small|gpu-full, default from the hardware).
"""


def _parse_suites(values: list[str] | None) -> list[str]:
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


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(df.to_json(orient="records"))


def run_suite(name: str, device: str) -> tuple[pd.DataFrame, str]:
    """Run one suite; return its rows and a one-line summary."""
    from amp_docs_lib.bench import matmul, memory, mistakes, model_sweep, peaks
    from amp_docs_lib.profiles import active_profile

    P = active_profile()
    mrt = P["perf_min_run_time"]
    if name == "matmul":
        df = matmul.throughput_sweep(P["perf_matmul_sizes"], matmul.MATMUL_DTYPES, device, min_run_time=mrt)
        best = float(df.loc[df["dtype"] == "fp32", "tflops"].max())
        pk, note = peaks.device_peaks(device, best)
        df["fraction of peak"] = [r.tflops / pk[r.dtype] if pk.get(r.dtype) else None for r in df.itertuples()]
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
        wrong, right = mistakes.fp32_warmup(device=device)
        tiny = mistakes.tiny_op_autocast((8, P["perf_alignment_base"] * 2), device)
        rows = [{"mistake": k, "seconds": v.median_s} for k, v in tc.items()]
        rows += [{"mistake": "first call", "seconds": first}, {"mistake": "steady state", "seconds": steady.median_s},
                 {"mistake": "BF16 after FP32 warm-up", "seconds": wrong},
                 {"mistake": "BF16 after BF16 warm-up", "seconds": right.median_s}]
        rows += [{"mistake": f"autocast speedup, Linear({r['n']})", "seconds": None, "ratio": r["autocast speedup"]}
                 for r in tiny]
        return pd.DataFrame(rows), (f"first call {first / steady.median_s:.1f}x steady; FP32 warm-up "
                                    f"{wrong / right.median_s:.1f}x; tiny-op autocast {tiny[0]['autocast speedup']:.2f}x")
    if name == "model":
        cfgs = model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])
        df = model_sweep.sweep(cfgs, P["perf_gpt_batch"], device=device, min_run_time=mrt)
        sp = df[df["precision"] == "amp_bf16"]
        return df, "amp_bf16 speedup " + ", ".join(f"{r.size} {r._6:.2f}x" for r in sp.itertuples())
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
        from amp_docs_lib.bench.compile import compile_comparison
        cfgs = model_sweep.ladder_configs(P["perf_gpt_ladder"], P["perf_gpt_vocab"], P["perf_gpt_seq"])
        df = compile_comparison(cfgs[P["perf_memory_sizes"][0]], P["perf_gpt_batch"], ("fp32", "amp_bf16"), device)
        return df, "; ".join(f"{r.precision}: {'failed' if r._3 is None else f'{r._4:.2f}x'}" for r in df.itertuples())
    raise ValueError(f"unknown suite {name!r}; valid suites: {', '.join(SUITES)}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``amp-docs bench`` (its ``--help`` lists the suites)."""
    ap = argparse.ArgumentParser(prog="amp-docs bench", description=HELP,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", action="append", metavar="NAME",
                    help="suite to run (repeatable or comma-separated; 'all' for every suite; "
                         f"default: {','.join(DEFAULT_SUITES)})")
    ap.add_argument("--out", default="bench-results", metavar="DIR",
                    help="directory for results.json and <suite>.csv (created; default: bench-results)")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available, else cpu)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (for logs)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``amp-docs bench``; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        suites = _parse_suites(args.suite)
    except ValueError as e:
        ap.error(str(e))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        ap.error(f"--out {str(out)!r} exists and is not a directory")
    from amp_docs_lib.devices import check_device, default_device
    try:
        device = str(check_device(args.device or default_device()))
    except (TypeError, ValueError) as e:
        ap.error(str(e))
    from amp_docs_lib.env import environment_report, hardware_fingerprint

    env = environment_report()
    fp = hardware_fingerprint()
    stamp = {"hardware_fingerprint": fp, "device": env["device"], "torch": env["torch"], "profile": env["profile"]}
    bar = _progress(len(suites), args.no_progress)
    results: dict[str, Any] = {}
    summary = []
    for name in suites:
        bar.set_description(f"bench: {name}")
        t0 = time.perf_counter()
        try:
            df, line = run_suite(name, device)
        except Exception as e:  # noqa: BLE001 - one failing suite is reported, the others still run
            df, line = pd.DataFrame(), f"FAILED: {type(e).__name__}: {e}"
        secs = time.perf_counter() - t0
        results[name] = {"seconds": round(secs, 2), "summary": line, "rows": _records(df)}
        summary.append((name, secs, line))
        if not df.empty:
            out.mkdir(parents=True, exist_ok=True)
            df.assign(**stamp).to_csv(out / f"{name}.csv", index=False)
        bar.update(1)
    bar.close()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"environment": env, "hardware_fingerprint": fp,
                                                  "suites": results}, indent=1, default=str))
    width = max(len(n) for n, _, _ in summary)
    print(f"\n{'suite':<{width}}  {'seconds':>7}  summary")
    for name, secs, line in summary:
        print(f"{name:<{width}}  {secs:7.1f}  {line}")
    print(f"\nresults: {out / 'results.json'} and {len([s for s in results if results[s]['rows']])} CSV file(s) in {out}/")
    return 1 if any(line.startswith("FAILED") for _, _, line in summary) else 0


class _NoBar:
    def set_description(self, _): pass
    def update(self, _): pass
    def close(self): pass


def _progress(total: int, disabled: bool):
    if disabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is in the docs extra; without it there is no bar
        return _NoBar()
    return tqdm(total=total, unit="suite", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
