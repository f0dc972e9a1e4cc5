"""Peak throughput: datasheet dense peaks of common GPUs, and a CPU peak estimate with its inputs named.

GPU figures are NVIDIA's published *dense* peaks: the datasheets print Tensor Core figures "with
sparsity" (2:4 structured sparsity), twice the dense ones, so each dense figure here is the
datasheet's halved (FP32 has no sparsity figure and is copied; a datasheet that prints dense figures is
used as printed). Each row names its datasheet and its revision or year.
A GPU that is not listed gets no row (never the row of another model). A CPU has no datasheet figure
here: :func:`cpu_peak` estimates one from named inputs, two of them assumed, as a range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
import torch

from amp_docs_lib.core.tables import table_from_rows
from amp_docs_lib.bench.load import WITHHELD

A100_SOURCE = "NVIDIA A100 Tensor Core GPU datasheet (r4)"
H100_SOURCE = "NVIDIA H100 Tensor Core GPU datasheet (2022 revision, listing H100 SXM and H100 PCIe)"
H200_SOURCE = "NVIDIA H200 Tensor Core GPU datasheet"
_A100 = {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "fp8": None, "int8": 624.0}
_H100_SXM = {"fp32": 67.0, "tf32": 989 / 2, "bf16": 1979 / 2, "fp16": 1979 / 2, "fp8": 3958 / 2, "int8": 3958 / 2}
PEAK_DTYPES = tuple(_H100_SXM)  # the dtype keys of a GPU_PEAKS row (the rest: bandwidth and source)
# Dense peaks (TFLOP/s; INT8: TOPS), memory bandwidth (TB/s) and the datasheet each row comes from.
# Only figures read in NVIDIA's own documents; the GPUs of UNSOURCED_GPUS have no row (their devices fall back
# to the best measured FP32 rate), since a figure that cannot be sourced to NVIDIA is left out, not guessed.
GPU_PEAKS: dict[str, dict[str, float | str | None]] = {
    "H100 SXM": {**_H100_SXM, "bandwidth_tbs": 3.35, "source": H100_SOURCE},
    "H100 PCIe": {
        "fp32": 51.0,
        "tf32": 756 / 2,
        "bf16": 1513 / 2,
        "fp16": 1513 / 2,
        "fp8": 3026 / 2,
        "int8": 3026 / 2,
        "bandwidth_tbs": 2.0,
        "source": H100_SOURCE,
    },
    "H200 SXM": {**_H100_SXM, "bandwidth_tbs": 4.8, "source": H200_SOURCE},
    "A100 SXM 80GB": {**_A100, "bandwidth_tbs": 2.039, "source": A100_SOURCE},
    "A100 SXM 40GB": {**_A100, "bandwidth_tbs": 1.555, "source": A100_SOURCE},
    "A100 PCIe 80GB": {**_A100, "bandwidth_tbs": 1.935, "source": A100_SOURCE},
    "A100 PCIe 40GB": {**_A100, "bandwidth_tbs": 1.555, "source": A100_SOURCE},
}
# GPUs readers often rebuild on that have no row, and why. Searched for (2026-11-25, this project's document
# search over public pages and documentation): only third-party copies or restatements turned up (resellers'
# spec tables, document-sharing mirrors, blogs), never NVIDIA's own address, and the copies disagree in places
# (the HGX B200 FP32 figure reads 75 in one, 80 in another), so none of their figures is used.
_NO_PRIMARY = "no NVIDIA-hosted copy of its datasheet could be read here (only third-party copies)"
UNSOURCED_GPUS: dict[str, str] = {
    "A10": f"NVIDIA A10 Tensor Core GPU datasheet: {_NO_PRIMARY}",
    "H100 NVL": f"NVIDIA H100 Tensor Core GPU datasheet (the revision listing H100 NVL): {_NO_PRIMARY}",
    "L4": f"NVIDIA L4 Tensor Core GPU datasheet: {_NO_PRIMARY}",
    "L40S": f"NVIDIA L40S datasheet: {_NO_PRIMARY}",
    "GeForce RTX 4090": f"NVIDIA Ada GPU Architecture whitepaper v2.01, appendix table: {_NO_PRIMARY}",
    "B200": f"NVIDIA HGX platform page, Blackwell GPU specifications: {_NO_PRIMARY}; copies disagree on FP32",
}
DATASHEET_SOURCE = (
    "; ".join(dict.fromkeys(v["source"] for v in GPU_PEAKS.values())) + " (dense = the 'with sparsity' figure / 2)"
)
# How torch.cuda.get_device_name() spells each (anchored: an unlisted variant such as H100 NVL or H200 NVL,
# or a GPU of UNSOURCED_GPUS, matches nothing).
_NAME_PATTERNS = (
    ("H100 PCIe", r"H100 PCIe$"),
    ("H100 SXM", r"H100 (80GB HBM3|SXM5?( 80GB)?)$"),
    ("H200 SXM", r"H200$"),
    ("A100 SXM 80GB", r"A100-SXM4?-80GB$"),
    ("A100 SXM 40GB", r"A100-SXM4?-40GB$"),
    ("A100 PCIe 80GB", r"A100 80GB PCIe$"),
    ("A100 PCIe 40GB", r"A100-PCIE-40GB$"),
)
DTYPE_KEYS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")


def datasheet_table() -> pd.DataFrame:
    """The datasheet peaks as a table (show it with ``show_table(..., source=DATASHEET_SOURCE)``)."""
    rows = [
        {
            "GPU": gpu,
            **{
                (f"{k.upper()} dense (TOPS)" if k == "int8" else f"{k.upper()} dense (TFLOP/s)"): v[k]
                for k in DTYPE_KEYS
            },
            "memory bandwidth (TB/s)": v["bandwidth_tbs"],
            "datasheet": v["source"],
        }
        for gpu, v in GPU_PEAKS.items()
    ]
    return table_from_rows(rows)


ABOVE_PEAK = "above the peak"  # peak_fraction's mark, distinct from "n/a" (no peak known)


def peak_fraction(rate: float | None, peak: float | None) -> float | str | None:
    """``rate / peak``; None (shown as "n/a") where either is unknown, and :data:`ABOVE_PEAK` where it exceeds 1:
    then ``peak`` is not a ceiling of that rate (a BF16 rate against the FP32 peak, or a peak that is the best
    FP32 rate measured)."""
    if rate is None or not peak:
        return None
    fraction = rate / peak
    return ABOVE_PEAK if fraction > 1 else fraction


def match_gpu(name: str) -> str | None:
    """The row of :data:`GPU_PEAKS` for a CUDA device name, or None for an unknown GPU."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    for row, pat in _NAME_PATTERNS:
        if re.search(pat, name.strip(), re.I):
            return row
    return None


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


INTEL_FMA_SOURCE = (
    "Intel ARK processor specifications, field '# of AVX-512 FMA Units' (1 on most Xeon "
    "Silver/Gold 5xxx, 2 on Gold 6xxx/Platinum)"
)


def cpu_vendor() -> str | None:
    """``vendor_id`` from ``/proc/cpuinfo`` (``GenuineIntel``, ``AuthenticAMD``), None where absent."""
    try:
        m = re.search(r"^vendor_id\s*:\s*(\S+)", open("/proc/cpuinfo").read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def cpu_max_clock_ghz() -> float | None:
    """The highest clock the kernel's cpufreq driver reports (``cpuinfo_max_freq``), None where there is none
    (a virtual machine usually has none): the only bound on a turbo clock this machine gives."""
    try:
        return int(open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read()) / 1e6
    except (OSError, ValueError):
        return None


def physical_cores_reported() -> int | None:
    """Physical cores as ``/proc/cpuinfo`` reports them (``cpu cores`` × distinct ``physical id``), None where absent."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return None
    cores = re.findall(r"^cpu cores\s*:\s*(\d+)", text, re.M)
    sockets = set(re.findall(r"^physical id\s*:\s*(\d+)", text, re.M))
    return int(cores[0]) * max(1, len(sockets)) if cores else None


@dataclass(frozen=True)
class CpuPeak:
    """An FP32 peak estimate for this CPU: a range over the assumed FMA units, with every input named."""

    low_tflops: float  # 1 FMA unit per core
    high_tflops: float  # 2 FMA units per core
    inputs: tuple[tuple[str, str, str], ...]  # (input, value, how it was obtained)

    @property
    def tflops(self) -> float:
        """The upper estimate (what a roofline's roof uses: nothing measured may exceed a peak)."""
        return self.high_tflops


def cpu_peak(threads: int | None = None) -> CpuPeak:
    """FP32 peak of this CPU: cores × clock × lanes × 2 (FMA) × FMA units, for 1 and 2 FMA units.

    Cores: the threads torch computes with, capped at the physical cores ``/proc/cpuinfo`` reports.
    Clock: ``/proc/cpuinfo``'s MHz, an assumption (AVX-512 code can run at a lower licence clock,
    turbo at a higher one). Raises ValueError where the clock is not reported.
    """
    threads = threads or torch.get_num_threads()
    phys = physical_cores_reported()
    cores = min(threads, phys) if phys else threads
    lanes = cpu_lanes_fp32()
    ghz = cpu_clock_ghz()
    if ghz is None:
        raise ValueError("the CPU clock is not reported in /proc/cpuinfo here: no estimate; use the best measured rate")
    one = cores * ghz * 1e9 * lanes * 2 / 1e12
    cap = torch.backends.cpu.get_cpu_capability()
    inputs = (
        (
            "cores computing",
            str(cores),
            f"read: torch threads {threads}"
            + (f", physical cores reported {phys}" if phys else ", physical cores not reported"),
        ),
        (
            "clock",
            f"{ghz:.2f} GHz",
            "assumed: /proc/cpuinfo's reported clock; AVX-512 code may run slower, turbo faster",
        ),
        (
            "FP32 lanes per vector",
            str(lanes),
            f"read: the widest vector ISA torch reports ({cap}); assumed: the "
            "BLAS library that runs the FP32 matmul (MKL or oneDNN) uses it too",
        ),
        ("operations per lane per FMA", "2", "definition: a fused multiply-add is two operations"),
        (
            "FMA units per core",
            "1 or 2",
            "assumed: not readable here; "
            + (
                INTEL_FMA_SOURCE
                if cpu_vendor() == "GenuineIntel"
                else f"the CPU vendor's documentation for the model ({cpu_vendor() or 'vendor not reported'})"
            ),
        ),
    )
    return CpuPeak(one, 2 * one, inputs)


def _estimate_clock_ghz(p: CpuPeak) -> float:
    """The clock (GHz) an estimate was computed with, read back from its inputs."""
    return float(dict((i, v) for i, v, _ in p.inputs)["clock"].split()[0])


def cpu_peak_table(best_measured_fp32_tflops: float | None = None, quiet: bool = True) -> pd.DataFrame:
    """The CPU estimate's inputs and results, with the best measured FP32 rate beside it. ``quiet``: the
    load check around that rate (``LoadCheck.quiet``); where False, the FMA units inferred from the rate
    are withheld (:data:`~amp_docs_lib.bench.load.WITHHELD`), since a busy machine lowers the rate."""
    p = cpu_peak()
    rows = [{"quantity": i, "value": v, "how obtained": h} for i, v, h in p.inputs]
    rows += [
        {
            "quantity": "FP32 peak estimate, 1 FMA unit",
            "value": f"{p.low_tflops * 1e3:.1f} GFLOP/s",
            "how obtained": "product of the inputs",
        },
        {
            "quantity": "FP32 peak estimate, 2 FMA units",
            "value": f"{p.high_tflops * 1e3:.1f} GFLOP/s",
            "how obtained": "product of the inputs",
        },
    ]
    if best_measured_fp32_tflops is not None:
        b = best_measured_fp32_tflops
        rows.append(
            {
                "quantity": "best FP32 matmul measured in this build",
                "value": f"{b * 1e3:.1f} GFLOP/s",
                "how obtained": f"measured: {b / p.high_tflops:.0%} of the 2-unit estimate, "
                f"{b / p.low_tflops:.0%} of the 1-unit estimate",
            }
        )
        # The rate fixes clock × units, not either alone: 2 units follow only where one unit would need a
        # clock above the highest the machine reports (a turbo clock above /proc/cpuinfo's is common).
        need_1 = b / p.low_tflops * _estimate_clock_ghz(p)
        top = cpu_max_clock_ghz()
        rows.append(
            {
                "quantity": "clock the best rate needs",
                "value": f"{need_1:.2f} GHz with 1 FMA unit, {need_1 / 2:.2f} GHz with 2",
                "how obtained": "measured rate / (cores × lanes × 2 × units)",
            }
        )
        rows.append(
            {
                "quantity": "FMA units per core, from the measurement",
                "value": WITHHELD if not quiet else "2" if top is not None and need_1 > top else "not resolved",
                "how obtained": (
                    f"measured: one unit would need {need_1:.2f} GHz, above the highest clock "
                    f"cpufreq reports ({top:.2f} GHz)"
                    if top is not None and need_1 > top
                    else "the core's real clock is not bounded here ("
                    + ("no cpufreq maximum reported" if top is None else f"cpufreq maximum {top:.2f} GHz")
                    + "), so the rate cannot tell 1 unit "
                    "at a high clock from 2 at a low one"
                ),
            }
        )
    return pd.DataFrame(rows)


def device_peaks(
    device: str = "cpu", best_measured_fp32_tflops: float | None = None
) -> tuple[dict[str, float | None], str]:
    """Peak TFLOP/s per dtype key for ``device`` and a sentence saying where they come from.

    On a GPU in :data:`GPU_PEAKS`: its datasheet row. On an unknown GPU: the best measured FP32
    rate, other dtypes None. On the CPU: the upper end of :func:`cpu_peak`'s range (2 FMA units), or
    the best measured rate where that is higher (a turbo clock above the reported one) or the clock
    is not reported.
    """
    if torch.device(device).type == "cuda":
        name = torch.cuda.get_device_name(torch.device(device))
        row = match_gpu(name)
        if row is not None:
            # the dtypes' peaks only: the row's bandwidth and source are not FLOP rates (a roofline drew them as roofs)
            peaks = {k: v for k, v in GPU_PEAKS[row].items() if k in PEAK_DTYPES}
            return peaks, f"{name}: dense datasheet peaks ({row} row)"
        if best_measured_fp32_tflops is None:
            raise ValueError(f"{name} has no datasheet row; pass best_measured_fp32_tflops")
        return ({"fp32": best_measured_fp32_tflops}, f"{name}: no datasheet row, peak = best measured FP32 rate")
    try:
        p = cpu_peak()
    except ValueError:
        if best_measured_fp32_tflops is None:
            raise
        return {"fp32": best_measured_fp32_tflops}, "CPU: clock not reported, peak = best measured FP32 rate"
    if best_measured_fp32_tflops is not None and best_measured_fp32_tflops > p.high_tflops:
        return (
            {"fp32": best_measured_fp32_tflops},
            "CPU: the best measured FP32 rate exceeds the estimate (clock above the reported one); peak = best measured",
        )
    return {"fp32": p.high_tflops}, (
        "CPU FP32 peak: upper estimate (2 FMA units per core at the reported clock; the inputs are in the table below)"
    )


def gpu_clock_state(index: int = 0) -> pd.DataFrame:
    """Clocks, power, temperature and throttle reasons of GPU ``index`` from ``nvidia-smi`` (one row).

    Drivers since R535 name the throttle field ``clocks_event_reasons``; older ones only
    ``clocks_throttle_reasons``: the new name is asked first, the old one where it is refused. Where
    ``nvidia-smi`` is missing or answers neither, the row says so (the page shows it; nothing fails).
    """
    import shutil
    import subprocess

    fields = (
        "name",
        "clocks.sm",
        "clocks.max.sm",
        "clocks.mem",
        "power.draw",
        "power.limit",
        "temperature.gpu",
        "{reasons}.active",
        "persistence_mode",
    )
    if shutil.which("nvidia-smi") is None:
        return pd.DataFrame([{"nvidia-smi": "not on PATH: no clock state read"}])
    errors = []
    for reasons in ("clocks_event_reasons", "clocks_throttle_reasons"):
        query = ",".join(f.format(reasons=reasons) for f in fields)
        r = subprocess.run(
            ["nvidia-smi", f"--id={index}", f"--query-gpu={query}", "--format=csv"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        out = r.stdout.strip().splitlines()
        if r.returncode == 0 and len(out) >= 2:
            header = [h.strip() for h in out[0].split(",")]
            values = [v.strip() for v in out[1].split(",")]
            return pd.DataFrame([dict(zip(header, values))])
        errors.append(f"{reasons}: {(r.stderr or r.stdout).strip()[:200]}")
    return pd.DataFrame([{"nvidia-smi": "query refused: " + "; ".join(errors)}])
