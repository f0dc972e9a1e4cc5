"""The one results table (accuracy, size on disk, latency, speed vs FP32) and the decision table.

Latency is measured with ``torch.utils.benchmark.Timer.blocked_autorange`` on one
thread (its default, and ONNX Runtime sessions are given one intra-op thread
too), on one batch: the whole test set. ``median`` and ``IQR`` are over the
timed blocks. Size on disk is the serialized file: ``torch.save(state_dict)``
for PyTorch models, the ``.onnx`` file for ONNX Runtime.
"""

from __future__ import annotations

import copy
import tempfile
import warnings
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.quantization.ptq import VARIANTS, try_variant
from amp_docs_lib.quantization.task import DigitsTask, state_dict_bytes
from amp_docs_lib.core.tables import table_from_rows

ONNX_VARIANTS = (("ONNX Runtime FP32", "fp32", "fp32"),
                 ("ONNX Runtime dynamic INT8", "int8 per-tensor", "uint8 (dynamic)"),
                 ("ONNX Runtime static INT8 (QDQ)", "int8 per-tensor", "int8 (calibrated)"))


def time_call(fn: Callable[[], object], min_run_time: float = 0.2) -> tuple[float, float]:
    """``(median, IQR)`` in seconds of ``fn()`` from ``torch.utils.benchmark`` (one thread)."""
    from torch.utils import benchmark

    if min_run_time <= 0:
        raise ValueError(f"min_run_time must be positive, got {min_run_time!r}")
    fn()  # warm-up (lazy initialisation, first-call packing)
    m = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=1).blocked_autorange(min_run_time=min_run_time)
    return float(m.median), float(m.iqr)


def _torch_runner(model: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    def run():
        with torch.inference_mode():
            return model(x)
    return run


def _row(variant, runtime, weights, acts, acc, size, timing, note=None):
    return {"variant": variant, "runtime": runtime, "weights": weights, "activations": acts,
            "accuracy": acc, "size (KiB)": None if size is None else size / 1024,
            "latency median (us)": None if timing is None else timing[0] * 1e6,
            "latency IQR (us)": None if timing is None else timing[1] * 1e6, "note": note}


def results_table(task: DigitsTask, min_run_time: float = 0.2, workdir: str | Path | None = None,
                  onnx_fp32: str | Path | None = None) -> pd.DataFrame:
    """Every variant on the digits test set: accuracy, size on disk, latency, speed relative to FP32.

    Rows: PyTorch FP32 and BF16, each torchao PTQ variant (variants that
    cannot run on this device keep their row, with the error as the note),
    ``torch.ao.quantization.quantize_dynamic`` (deprecated), and ONNX Runtime
    FP32, dynamic INT8 and static QDQ INT8. ``onnx_fp32``: an already exported
    and pre-processed FP32 ONNX file of ``task.model`` (exported here if None or
    missing). Without ``onnxruntime`` (``gating.requirement_met("pkg:onnxruntime")``,
    which honours ``$AMP_DOCS_HIDE_PACKAGES``) the ONNX Runtime rows keep their
    place with no measurement and a note saying why.
    """
    from amp_docs_lib.core.gating import requirement_met

    d = task.data
    x, y = d.x_test, d.y_test
    acc = lambda out: float((out.argmax(1) == y).float().mean())  # noqa: E731
    rows = []
    fp32 = task.model
    rows.append(_row("FP32", "PyTorch eager", "fp32", "fp32", acc(_torch_runner(fp32, x)()),
                     state_dict_bytes(fp32), time_call(_torch_runner(fp32, x), min_run_time)))
    bf = copy.deepcopy(fp32).to(torch.bfloat16)
    xb = x.to(torch.bfloat16)
    rows.append(_row("BF16", "PyTorch eager", "bf16", "bf16", acc(_torch_runner(bf, xb)().float()),
                     state_dict_bytes(bf), time_call(_torch_runner(bf, xb), min_run_time)))
    for name, v in VARIANTS.items():
        q, err = try_variant(fp32, name, x)
        if q is None:
            rows.append(_row(v.label, "torchao", v.weights, v.activations, None, None, None,
                             f"does not run on this device ({v.needs}): {err}"))
            continue
        rows.append(_row(v.label, "torchao", v.weights, v.activations, acc(_torch_runner(q, x)()),
                         state_dict_bytes(q), time_call(_torch_runner(q, x), min_run_time)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.ao.quantization import quantize_dynamic

        tq = quantize_dynamic(copy.deepcopy(fp32), {nn.Linear}, dtype=torch.qint8)
        rows.append(_row("torch.ao quantize_dynamic (deprecated)", "PyTorch eager (fbgemm/x86)",
                         "int8 per-tensor", "uint8 (dynamic)", acc(_torch_runner(tq, x)()), state_dict_bytes(tq),
                         time_call(_torch_runner(tq, x), min_run_time)))
    if not requirement_met("pkg:onnxruntime"):
        for label, w, a in ONNX_VARIANTS:
            rows.append(_row(label, "ONNX Runtime (CPU)", w, a, None, None, None,
                             "not run: the Python package onnxruntime is not installed in this build"))
    else:
        rows += _onnx_rows(task, min_run_time, workdir, onnx_fp32)
    df = table_from_rows(rows)  # None (not applicable) stays None: shown as n/a
    base = df.loc[0, "latency median (us)"]
    df.insert(df.columns.get_loc("note"), "speed vs FP32 (x)",
              pd.Series([None if t is None or pd.isna(t) else base / t for t in df["latency median (us)"]],
                        dtype=object))
    ort_base = df.loc[df["variant"] == "ONNX Runtime FP32", "latency median (us)"].iloc[0]  # None without it
    df.insert(df.columns.get_loc("note"), "speed vs same runtime's FP32 (x)",
              pd.Series([None if t is None or pd.isna(t) else (ort_base if rt.startswith("ONNX") else base) / t
                         for t, rt in zip(df["latency median (us)"], df["runtime"])], dtype=object))
    df.insert(df.columns.get_loc("size (KiB)") + 1, "size vs FP32 (x)",
              pd.Series([None if s is None or pd.isna(s) else s / df.loc[0, "size (KiB)"] for s in df["size (KiB)"]],
                        dtype=object))
    return df


def _onnx_rows(task: DigitsTask, min_run_time: float, workdir: str | Path | None,
               onnx_fp32: str | Path | None) -> list[dict]:
    from amp_docs_lib.quantization import onnx_runtime as ortq  # imports onnxruntime

    d = task.data
    x, y = d.x_test, d.y_test
    acc = lambda out: float((out.argmax(1) == y).float().mean())  # noqa: E731
    fp32, rows = task.model, []
    with tempfile.TemporaryDirectory() if workdir is None else _nullcontext(workdir) as wd:
        wd = Path(wd)
        if onnx_fp32 is None or not Path(onnx_fp32).exists():
            pre = ortq.preprocess(ortq.export_onnx(fp32, wd / "fp32_raw.onnx", x[:8]), wd / "fp32.onnx")
        else:
            pre = Path(onnx_fp32)
        paths = [pre, ortq.quantize_onnx_dynamic(pre, wd / "dyn.onnx"),
                 ortq.quantize_onnx_static(pre, wd / "static.onnx", d.x_calib)]
        for (label, w, a), path in zip(ONNX_VARIANTS, paths):
            sess = ortq.session(path)
            feed = {sess.get_inputs()[0].name: x.numpy()}
            out = torch.from_numpy(sess.run(None, feed)[0])
            rows.append(_row(label, "ONNX Runtime (CPU)", w, a, acc(out), ortq.file_size(path),
                             time_call(lambda s=sess, f=feed: s.run(None, f), min_run_time)))
    return rows


class _nullcontext:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that ran, with the columns a reader compares first."""
    ran = df[df["accuracy"].notna()]
    return ran[["variant", "accuracy", "size (KiB)", "latency median (us)", "speed vs FP32 (x)"]].reset_index(drop=True)


def decision_table(df: pd.DataFrame, accuracy_tolerance: float = 0.01, device: str = "CPU (this machine)"
                   ) -> pd.DataFrame:
    """Which configuration for which goal, each cell backed by a measured row of ``df``.

    Among the rows within ``accuracy_tolerance`` of FP32 (deprecated APIs excluded): the
    smallest on disk (memory), the fastest (latency; FP32 if none is faster
    than FP32 here) and the most accurate. A CUDA row is only backed by a
    measurement when this build has a GPU; otherwise it says so.
    """
    ran = df[df["accuracy"].notna()].copy()
    fp32 = ran.iloc[0]
    ok = ran[(ran["accuracy"] >= fp32["accuracy"] - accuracy_tolerance) & (ran["variant"] != "FP32")
             & ~ran["variant"].str.contains("deprecated")]
    ok = ok.sort_values("latency median (us)")  # ties on size or accuracy go to the faster row

    def cite(r):
        return (f"{r['variant']} (accuracy {r['accuracy']:.3f}, {r['size (KiB)']:.0f} KiB, "
                f"{r['speed vs FP32 (x)']:.2f}x FP32 speed)")

    rows = []
    if len(ok):
        small = ok.loc[ok["size (KiB)"].astype(float).idxmin()]
        fast = ok.iloc[0]
        best = ok.loc[ok["accuracy"].astype(float).idxmax()]
        fast_txt = cite(fast) if fast["latency median (us)"] < fp32["latency median (us)"] else \
            f"stay in FP32: no quantized variant was faster here (fastest: {cite(fast)})"
        rows.append({"device": device, "memory": cite(small), "latency": fast_txt, "accuracy": cite(best)})
    else:
        rows.append({"device": device, "memory": "no variant within tolerance", "latency": None, "accuracy": None})
    cuda = "not measurable here (this build has no CUDA GPU)" if not torch.cuda.is_available() else \
        "see the CUDA cell of this page (measured on this build's GPU)"
    rows.append({"device": "CUDA GPU", "memory": cuda, "latency": cuda, "accuracy": cuda})
    return pd.DataFrame(rows)
