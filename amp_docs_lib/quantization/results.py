"""The one results table (accuracy, size, latency with spread, speedups with intervals) and the decision table.

Latency: every runner (PyTorch FP32 and BF16, each torchao variant that runs here, the deprecated
``torch.ao`` dynamic model, ONNX Runtime FP32 / dynamic / static) is timed by the one harness,
:func:`amp_docs_lib.core.timing.interleaved`, on one thread, on one batch (the whole test set):
every round times one block of each runner, in alternating order, so a busy machine slows them
alike. A latency is the median of the block means and its IQR; a speedup is the median over
rounds of the per-round ratio, with a distribution-free interval; "faster" or "slower" is said
only when the interval excludes 1. Each runner's speedup is given against PyTorch FP32 and
against its own runtime's FP32 (ONNX Runtime FP32 for ONNX Runtime rows), so a change of runtime
is not counted as a gain of quantization.

Size: the serialized file (``torch.save(state_dict)`` or the ``.onnx`` file), the weight payload
(bytes of the tensors a forward pass reads, scales and zero points included) and the weight codes
alone (the format's cost per element, biases not counted), which is what a memory decision rests on: files and
payloads also differ by metadata (serialization, per-row scales, zero points).
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.core.timing import NOISE_FLOOR_TOO_HIGH, UNRESOLVED
from amp_docs_lib.quantization.kernels import describe, forward_trace
from amp_docs_lib.quantization.ptq import VARIANTS, model_and_input_for, try_variant
from amp_docs_lib.quantization.speed import TORCH_AO_ACTIVATIONS, torch_ao_dynamic, weight_bytes, weight_code_bytes
from amp_docs_lib.quantization.task import DigitsTask, state_dict_bytes

ONNX_VARIANTS = (("ONNX Runtime FP32", "fp32", "fp32"),
                 ("ONNX Runtime dynamic INT8", "int8 per-tensor", "uint8 (dynamic)"),
                 ("ONNX Runtime static INT8 (QDQ)", "int8 per-tensor", "int8 as saved (calibrated; see the saturation table for what runs)"))
TORCH_FP32 = "FP32"
ORT_FP32 = "ONNX Runtime FP32"


def _torch_runner(model: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    def run():
        with torch.inference_mode():
            return model(x)
    return run


def _computes(model: nn.Module, x: torch.Tensor) -> str:
    """What the forward pass multiplied with, read from a dispatch trace."""
    d = describe(forward_trace(model, x[:8]))
    return d["matmuls that ran (input dtypes)"]


def results_table(task: DigitsTask, timer: Callable[..., Any], *, workdir: str | Path | None = None,
                  onnx_fp32: str | Path | None = None) -> pd.DataFrame:
    """Every variant on the digits test set: accuracy, size, latency (median, IQR) and speedups with intervals.

    Rows: PyTorch FP32 and BF16, each torchao PTQ variant (variants that cannot run on this device
    keep their row, with the error as the note), ``torch.ao.quantization.quantize_dynamic``
    (deprecated), and ONNX Runtime FP32, dynamic INT8 and static QDQ INT8. Without
    ``onnxruntime`` (``gating.requirement_met("pkg:onnxruntime")``) the ONNX Runtime rows keep
    their place with no measurement and a note saying why. ``timer(fns, baseline=name)`` is the
    site's harness, ``functools.partial(amp_docs_lib.core.timing.interleaved, rounds=..., num_threads=1)``.
    """
    from amp_docs_lib.core.gating import requirement_met

    d = task.data
    x, y = d.x_test, d.y_test
    acc = lambda out: float((out.argmax(1) == y).float().mean())  # noqa: E731
    fp32 = task.model
    entries: list[dict] = []  # one per row; "run" is the timed function (None: not measured)

    def add(label, runtime, weights, acts, model=None, inp=None, run=None, out=None, size=None, payload=None,
            codes=None, computes=None, note=None):
        if model is not None:
            run = _torch_runner(model, inp)
            out = run().float()
            size, payload, computes = state_dict_bytes(model), weight_bytes(model), _computes(model, inp)
            codes = weight_code_bytes(model)
        entries.append({"variant": label, "runtime": runtime, "weights": weights, "activations": acts,
                        "computes with (dispatch trace)": computes,
                        "accuracy": None if out is None else acc(out),
                        "size on disk (KiB)": None if size is None else size / 1024,
                        "weight payload (KiB)": None if payload is None else payload / 1024,
                        "weight codes (KiB)": None if codes is None else codes / 1024,
                        "run": run, "note": note})

    add(TORCH_FP32, "PyTorch eager", "fp32", "fp32", fp32, x)
    bf = copy.deepcopy(fp32).to(torch.bfloat16)
    add("BF16", "PyTorch eager", "bf16", "bf16", bf, x.to(torch.bfloat16))
    for name, v in VARIANTS.items():
        m, xi = model_and_input_for(name, fp32, x)  # BF16 configs get the BF16 model, as in variant_status
        q, err = try_variant(m, name, xi)
        if q is None:
            add(v.label, "torchao", v.weights, v.activations, note=f"does not run on this model here (needs: {v.needs}): {err}")
        else:
            add(v.label, "torchao", v.weights, v.activations, q, xi, note=v.note)
    tq = torch_ao_dynamic(fp32)
    add("torch.ao quantize_dynamic (deprecated)", "PyTorch eager (fbgemm/x86)", "int8 per-tensor",
        TORCH_AO_ACTIVATIONS, tq, x)
    if not requirement_met("pkg:onnxruntime"):
        for label, w, a in ONNX_VARIANTS:
            add(label, "ONNX Runtime (CPU)", w, a,
                note="not run: the Python package onnxruntime is not installed in this build")
    else:
        for e in _onnx_entries(task, workdir, onnx_fp32):
            add(**e)
    runs = {e["variant"]: e["run"] for e in entries if e["run"] is not None}
    res = timer(runs, baseline=TORCH_FP32)
    rows = []
    for e in entries:
        row = {k: v for k, v in e.items() if k not in ("run", "note")}
        t = res.timings.get(e["variant"])
        row["latency median (us)"] = None if t is None else t.median_s * 1e6
        row["latency IQR (us)"] = None if t is None else t.iqr_s * 1e6
        row["blocks"] = None if t is None else t.runs
        for col, base in (("vs PyTorch FP32", TORCH_FP32),
                          ("vs same runtime's FP32", ORT_FP32 if e["runtime"].startswith("ONNX") else TORCH_FP32)):
            c = None if t is None or e["variant"] == base or base not in res.timings else res.compare(e["variant"], base)
            row[f"speedup {col} (x)"] = None if c is None else c.ratio
            row[f"interval {col}"] = None if c is None else f"[{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]"
            row[f"verdict {col}"] = None if c is None else c.verdict
        row["A/A control (PyTorch FP32 vs itself)"] = None if res.aa is None else res.aa.interval_text()
        row["note"] = e["note"]
        rows.append(row)
    base_size = entries[0]["size on disk (KiB)"]
    for row in rows:
        row_size = row["size on disk (KiB)"]
        row["size vs FP32 (x)"] = None if row_size is None else row_size / base_size
    df = pd.DataFrame(rows).astype(object)
    df = df[[c for c in df.columns if c != "size vs FP32 (x)"][:7] + ["size vs FP32 (x)"]
            + [c for c in df.columns if c != "size vs FP32 (x)"][7:]]
    df = df.where(df.notna(), None)
    df.attrs["timing"] = res  # pairwise comparisons for the decision table
    return df


def _onnx_entries(task: DigitsTask, workdir: str | Path | None, onnx_fp32: str | Path | None) -> list[dict]:
    from amp_docs_lib.quantization import onnx_runtime as ortq  # imports onnxruntime

    d = task.data
    x = d.x_test
    out = []
    wd_ctx = tempfile.TemporaryDirectory() if workdir is None else None
    wd = Path(wd_ctx.name if wd_ctx is not None else workdir)
    if onnx_fp32 is None or not Path(onnx_fp32).exists():
        pre = ortq.preprocess(ortq.export_onnx(task.model, wd / "fp32_raw.onnx", x[:8]), wd / "fp32.onnx")
    else:
        pre = Path(onnx_fp32)
    paths = [pre, ortq.quantize_onnx_dynamic(pre, wd / "dyn.onnx"),
             ortq.quantize_onnx_static(pre, wd / "static.onnx", d.x_calib)]
    for (label, w, a), path in zip(ONNX_VARIANTS, paths):
        sess = ortq.session(path)
        feed = {sess.get_inputs()[0].name: x.numpy()}
        logits = torch.from_numpy(sess.run(None, feed)[0])
        out.append({"label": label, "runtime": "ONNX Runtime (CPU)", "weights": w, "acts": a,
                    "run": (lambda s=sess, f=feed: s.run(None, f)), "out": logits, "size": ortq.file_size(path),
                    "computes": "after ONNX Runtime's graph optimisation: " + ", ".join(
                        f"{k} x{v}" for k, v in ortq.optimized_op_counts(path).items())})
    out[0]["note"] = None
    return out


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that ran, with the columns a reader compares first (latency with its IQR, speedup with its interval)."""
    ran = df[df["accuracy"].notna()]
    cols = ["variant", "accuracy", "size on disk (KiB)", "latency median (us)", "latency IQR (us)",
            "speedup vs same runtime's FP32 (x)", "interval vs same runtime's FP32"]
    return ran[cols].reset_index(drop=True)


def _shortened(names: list[str], sep: str) -> str:
    """``names`` joined by ``sep``, the words they all start with written once: ``["torchao INT8 a",
    "torchao INT4 b"]`` -> ``"torchao: INT8 a = INT4 b"`` (the names as they are when they share none)."""
    words = [n.split(" ") for n in names]
    k = 0
    while len(names) > 1 and all(len(w) > k + 1 and w[k] == words[0][k] for w in words):
        k += 1
    rest = sep.join(" ".join(w[k:]) for w in words)
    return f"{' '.join(words[0][:k])}: {rest}" if k else rest


def _tied_min(rows: pd.DataFrame, col: str) -> pd.DataFrame:
    """Rows whose ``col`` equals the minimum (exact: payload bytes are integers of a format's definition)."""
    v = rows[col].astype(float)
    return rows[v == v.min()]


def decision_table(df: pd.DataFrame, seed_summary: pd.DataFrame | None = None,
                   device: str = "CPU (this machine)", *, timing_quiet: bool = True) -> pd.DataFrame:
    """Which configuration for which goal, decided only on differences larger than their uncertainty.

    Eligible: rows that ran, not deprecated, and whose accuracy over several seeds is not resolved
    lower than FP32 (``seed_summary`` from :func:`amp_docs_lib.quantization.seeds.seed_summary`; rows
    it does not cover stay eligible on one test split, and the latency cell says so). Memory: the
    fewest bytes of weight payload (codes, scales, zero points and biases), every row with that many
    listed; file metadata is not ranked. Latency: rows resolved faster than their own runtime's FP32, ranked
    by latency (absolute time); the fastest is named only if it is resolved faster than the
    runner-up in the same interleaved rounds. Accuracy: a variant is named only if resolved
    higher than FP32 over the seeds; otherwise every eligible variant is within noise.
    ``timing_quiet=False`` (a load check found the machine busy while ``df`` was timed): no latency decision.
    """
    ran = df[df["accuracy"].notna() & ~df["variant"].str.contains("deprecated") & (df["variant"] != TORCH_FP32)]
    seed_verdict = {} if seed_summary is None else dict(zip(seed_summary["variant"], seed_summary["verdict"]))
    ok = ran[[seed_verdict.get(v) != "lower than FP32" for v in ran["variant"]]]
    res = df.attrs.get("timing")
    rows = []
    # memory: the weight payload (codes with their scales, zero points and biases: what the model stores and a
    # forward reads for its weights). Ranking codes alone tied an unpacked INT4 format (one code a byte) with
    # INT8 although its per-group scales make it the largest (issue 34, second read of the fixes, finding 5).
    sized = ok[ok["weight payload (KiB)"].notna() & ok["weight codes (KiB)"].notna()]
    small = _tied_min(sized, "weight payload (KiB)")
    if small.empty:
        memory = "no eligible variant"
    elif len(small) == 1:
        r = small.iloc[0]
        payload, codes = float(r["weight payload (KiB)"]), float(r["weight codes (KiB)"])
        memory = (f"{r['variant']} ({payload:.1f} KiB of weight payload: {codes:.1f} KiB of weight codes, "
                  f"{payload - codes:.1f} KiB of scales, zero points and biases)")
    else:  # a tie: the names once, the split into codes and scales left to the results table
        payload = float(small["weight payload (KiB)"].iloc[0])
        memory = (_shortened(list(small["variant"]), " = ") + f" (tie: {payload:.1f} KiB of weight payload each; "
                  "codes and scales: table of all variants)")
    uncounted = [v for v in ok["variant"] if v not in set(sized["variant"])]
    if uncounted and not small.empty:  # eligible, but their codes are not separated from the file (ONNX Runtime)
        memory += "; not compared (codes not counted): " + _shortened(uncounted, ", ")
    # latency: among rows resolved faster than their runtime's FP32, the lowest latency (absolute time,
    # so a runtime that is faster in absolute terms is not ranked below a larger relative gain)
    col = "verdict vs same runtime's FP32"
    rank = "latency median (us)" if "latency median (us)" in ok.columns else "speedup vs same runtime's FP32 (x)"
    faster = ok[ok[col] == "faster"].sort_values(rank, ascending=rank == "latency median (us)")

    def named(r) -> str:
        one_split = "" if seed_summary is None or r["variant"] in seed_verdict else \
            "; accuracy from one test split, not in the seed study"
        ratio, interval = r["speedup vs same runtime's FP32 (x)"], r["interval vs same runtime's FP32"]
        return f"{r['variant']} ({ratio:.2f}x {interval} against its runtime's FP32{one_split})"

    if not timing_quiet:
        latency = "not decided: the load check found the machine busy while the results table was timed"
    elif faster.empty:
        latency = "stay with FP32: no quantized variant was resolved faster than its runtime's FP32 here"
    elif len(faster) == 1 or res is None:
        latency = named(faster.iloc[0])
    else:
        top, second = faster.iloc[0], faster.iloc[1]
        c = res.compare(top["variant"], second["variant"])
        if c.verdict == "slower":  # the medians and the per-round ratios disagree: the rounds decide
            top, second, c = second, top, res.compare(second["variant"], top["variant"])
        latency = named(top) + (f"; resolved faster than {second['variant']} ({c.interval_text()})"
                                if c.verdict == "faster" else
                                f"; not resolved from {second['variant']} ({c.interval_text()}): either")
    # accuracy
    higher = [v for v in ok["variant"] if seed_verdict.get(v) == "higher than FP32"]
    accuracy = (", ".join(higher) + " (resolved higher than FP32 over the seeds)" if higher else
                "any eligible variant: none is resolved more or less accurate than FP32 over the seeds"
                if seed_summary is not None else "not decided: no multi-seed accuracy given")
    rows.append({"device": device, "memory": memory, "latency": latency, "accuracy": accuracy})
    cuda = "not measurable here (this build has no CUDA GPU)" if not torch.cuda.is_available() else \
        "see the CUDA cells of this page (measured on this build's GPU)"
    rows.append({"device": "CUDA GPU", "memory": cuda, "latency": cuda, "accuracy": cuda})
    return pd.DataFrame(rows)


VERDICT_OUTCOMES = ("faster", "slower", UNRESOLVED, NOISE_FLOOR_TOO_HIGH)
WITHHELD = "withheld: the load check found the machine busy"
_VERDICT_COLUMNS = ("verdict", "faster than", "slower than", "not resolved at", "crossover", "change on a single batch")


def withhold_verdicts(df: pd.DataFrame, quiet: bool) -> pd.DataFrame:
    """``df`` as timed, or, when the load check found the machine busy (``quiet=False``), with every verdict withheld.

    Latencies and intervals stay (they are what was measured); what goes is the word that concludes from them:
    columns named for a verdict or a crossover read :data:`WITHHELD`, and a cell that ends with its verdict in
    parentheses (``"[0.9, 1.1] (faster)"``) keeps the interval and loses the verdict.
    """
    if quiet:
        return df
    out = df.copy().astype(object)
    for col in out.columns:
        if any(key in str(col) for key in _VERDICT_COLUMNS):
            out[col] = [None if v is None else WITHHELD for v in out[col]]
            continue
        out[col] = [v.rsplit(" (", 1)[0] + f" ({WITHHELD})"
                    if isinstance(v, str) and v.endswith(tuple(f"({o})" for o in VERDICT_OUTCOMES)) else v
                    for v in out[col]]
    return out
