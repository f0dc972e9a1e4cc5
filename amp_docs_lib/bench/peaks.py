"""Peak throughput: datasheet dense peaks of common GPUs, and a CPU peak estimate.

GPU figures are NVIDIA's published *dense* Tensor Core peaks (datasheet
figures marked "with sparsity" are twice these and are not peaks for dense
matmuls). A CPU has no datasheet figure here: its FP32 peak is estimated as
cores × clock × FP32 lanes per vector × 2 (a fused multiply-add is two
operations) × FMA units per core, or, where the clock is unknown, replaced by
the best FP32 rate measured in this build; :func:`cpu_peak` says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
import torch

from amp_docs_lib.core.tables import table_from_rows

# Dense peaks in TFLOP/s and memory bandwidth in TB/s. None: the GPU has no such Tensor Core mode.
DATASHEET_SOURCE = ("NVIDIA H100 Tensor Core GPU datasheet (2023; dense = the 'with sparsity' figure / 2) and "
                    "NVIDIA A100 Tensor Core GPU datasheet (r4, 2021)")
GPU_PEAKS: dict[str, dict[str, float | None]] = {
    "H100 SXM": {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "bandwidth_tbs": 3.35},
    "H100 PCIe": {"fp32": 51.0, "tf32": 378.0, "bf16": 756.0, "fp16": 756.0, "fp8": 1513.0, "bandwidth_tbs": 2.0},
    "A100 SXM 80GB": {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "fp8": None,
                      "bandwidth_tbs": 2.039},
}
# How torch.cuda.get_device_name() spells them (H100 SXM reports its memory type, "HBM3").
_NAME_PATTERNS = (("H100 PCIe", r"H100.*PCIe"), ("H100 SXM", r"H100.*(SXM|HBM3)"),
                  ("A100 SXM 80GB", r"A100.*(SXM|80GB)"))
DTYPE_KEYS = ("fp32", "tf32", "bf16", "fp16", "fp8")


def datasheet_table() -> pd.DataFrame:
    """The datasheet peaks as a table (show it with ``show_table(..., source=DATASHEET_SOURCE)``)."""
    rows = [{"GPU": gpu, **{f"{k.upper()} dense (TFLOP/s)": v[k] for k in DTYPE_KEYS},
             "memory bandwidth (TB/s)": v["bandwidth_tbs"]} for gpu, v in GPU_PEAKS.items()]
    return table_from_rows(rows)


def match_gpu(name: str) -> str | None:
    """The row of :data:`GPU_PEAKS` for a CUDA device name, or None for an unknown GPU."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    for row, pat in _NAME_PATTERNS:
        if re.search(pat, name, re.I):
            return row
    return None


@dataclass(frozen=True)
class CpuPeak:
    """An FP32 peak for this CPU and how it was obtained."""

    tflops: float
    kind: str  # "estimate" or "best measured"
    detail: str


def cpu_lanes_fp32(capability: str | None = None) -> int:
    """FP32 lanes per vector register for torch's CPU capability (AVX512: 16, AVX2: 8, else 4)."""
    cap = (capability or torch.backends.cpu.get_cpu_capability()).upper()
    return 16 if "AVX512" in cap else 8 if "AVX2" in cap else 4


def cpu_clock_ghz() -> float | None:
    """The CPU clock in GHz from ``/proc/cpuinfo`` (None where it is not reported)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return None
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)]
    return max(mhz) / 1e3 if mhz else None


def cpu_peak(best_measured_tflops: float | None = None, *, cores: int | None = None,
             fma_units: int = 2) -> CpuPeak:
    """FP32 peak of this CPU: cores × clock × lanes × 2 × ``fma_units``, else the best measured rate.

    Args:
        best_measured_tflops: the best FP32 matmul rate measured here; used when
            the clock is unknown or when it exceeds the estimate (turbo clocks).
        cores: cores computing (default: ``torch.get_num_threads()``).
        fma_units: FMA units per core (2 on most server cores; an assumption).
    """
    cores = cores or torch.get_num_threads()
    lanes = cpu_lanes_fp32()
    ghz = cpu_clock_ghz()
    if ghz is not None:
        est = cores * ghz * 1e9 * lanes * 2 * fma_units / 1e12
        detail = (f"{cores} cores × {ghz:.2f} GHz × {lanes} FP32 lanes ({torch.backends.cpu.get_cpu_capability()}) "
                  f"× 2 (FMA) × {fma_units} FMA units")
        if best_measured_tflops is None or best_measured_tflops <= est:
            return CpuPeak(est, "estimate", detail)
    if best_measured_tflops is None:
        raise ValueError("the CPU clock is unknown here: pass best_measured_tflops")
    return CpuPeak(best_measured_tflops, "best measured", "best FP32 matmul rate measured in this build")


def device_peaks(device: str = "cpu", best_measured_fp32_tflops: float | None = None
                 ) -> tuple[dict[str, float | None], str]:
    """Peak TFLOP/s per dtype key for ``device`` and a sentence saying where they come from.

    On a GPU in :data:`GPU_PEAKS`: its datasheet row. On an unknown GPU or the
    CPU: FP32 from :func:`cpu_peak` (CPU) or the best measured rate, other dtypes None.
    """
    if torch.device(device).type == "cuda":
        name = torch.cuda.get_device_name(torch.device(device))
        row = match_gpu(name)
        if row is not None:
            return dict(GPU_PEAKS[row]), f"{name}: dense datasheet peaks ({row} row)"
        if best_measured_fp32_tflops is None:
            raise ValueError(f"{name} has no datasheet row; pass best_measured_fp32_tflops")
        return ({"fp32": best_measured_fp32_tflops},
                f"{name}: no datasheet row, peak = best measured FP32 rate")
    p = cpu_peak(best_measured_fp32_tflops)
    return {"fp32": p.tflops}, f"CPU FP32 peak, {p.kind}: {p.detail}"
