"""The machine, read without importing torch: CPU model, flags and native 16-bit matmul, GPUs.

These probes make the cheap half of the hardware fingerprint (``env`` adds what torch reports).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path


def nvidia_gpus_light() -> str:
    """GPU names and capabilities from ``nvidia-smi`` without importing torch ('' if none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return ""
    try:
        r = subprocess.run(
            [smi, "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        return r.stdout.strip() if r.returncode == 0 else f"nvidia-smi failed ({r.returncode})"
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi failed ({e})"


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver's version as ``nvidia-smi`` reports it ('580.159.04'), or None without one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        r = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError):
        return None
    first = r.stdout.strip().splitlines()[:1] if r.returncode == 0 else []
    return first[0].strip() if first and first[0].strip() else None


def cpu_model() -> str:
    """The CPU's marketing name, read from /proc/cpuinfo where it exists."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


# /proc/cpuinfo flags that give a CPU native low-precision matrix arithmetic (x86 and Arm names).
NATIVE_MATMUL_FLAGS = {
    "bf16": ("amx_bf16", "avx512_bf16", "bf16"),
    "fp16": ("amx_fp16", "avx512_fp16", "fphp"),
}


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo ('flags' on x86, 'Features' on Arm); empty if unknown."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key = line.split(":", 1)[0].strip().lower()
            if key in ("flags", "features"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


# oneDNN's ISA levels, lowest first (its ONEDNN_MAX_CPU_ISA values), and the lowest that runs
# each 16-bit matmul natively: a cap below it keeps oneDNN off the native instructions, whatever the CPU has.
ONEDNN_ISA_ORDER = (
    "SSE41",
    "AVX",
    "AVX2",
    "AVX2_VNNI",
    "AVX2_VNNI_2",
    "AVX512_CORE",
    "AVX512_CORE_VNNI",
    "AVX512_CORE_BF16",
    "AVX10_1_512",
    "AVX512_CORE_FP16",
    "AVX512_CORE_AMX",
    "AVX512_CORE_AMX_FP16",
    "AVX10_2_512",
    "AVX10_2_512_AMX_2",
    "DEFAULT",
    "ALL",
)
ONEDNN_ISA_NEEDED = {"bf16": "AVX512_CORE_BF16", "fp16": "AVX512_CORE_FP16"}


def cpu_native_matmul(flags: frozenset[str] | None = None, max_isa: str | None = None) -> dict[str, str]:
    """For BF16 and FP16: the CPU flag that gives it native dot products, or 'none'.

    'none' does not mean torch has no fast path: its oneDNN kernels take BF16 on x86 CPUs with
    AVX512BW/VL/DQ and convert to FP32 inside (``torch.ops.mkldnn._is_mkldnn_bf16_supported()``).

    ``max_isa`` (default: the ``ONEDNN_MAX_CPU_ISA`` variable) caps what oneDNN
    may use; a cap below the ISA a dtype needs reports it as not native, naming the cap.
    """
    flags = cpu_flags() if flags is None else flags
    max_isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "") if max_isa is None else max_isa
    cap = max_isa.strip().upper()
    out = {}
    for dtype, names in NATIVE_MATMUL_FLAGS.items():
        flag = next((f for f in names if f in flags), "none")
        if (
            flag != "none"
            and cap in ONEDNN_ISA_ORDER
            and ONEDNN_ISA_ORDER.index(cap) < ONEDNN_ISA_ORDER.index(ONEDNN_ISA_NEEDED[dtype])
        ):
            flag = f"none (ONEDNN_MAX_CPU_ISA={cap})"
        out[dtype] = flag
    return out


# Variables that change which CPU kernels torch, oneDNN and MKL (torch's FP32 GEMMs) dispatch to,
# whatever the CPU has.
DISPATCH_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def cpu_description() -> dict[str, object]:
    """The CPU part of every machine description: architecture, model, logical CPUs, native 16-bit matmul."""
    return {
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_native_matmul": cpu_native_matmul(),
    }


def machine_light() -> dict[str, object]:
    return {
        **cpu_description(),
        "gpus": nvidia_gpus_light(),
        "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


# Every variable that changes what a build computes or reports: our own, the CPU dispatch caps,
# and the TF32 overrides (CUDA_VISIBLE_DEVICES is part of machine_light()). One list for the
# environment memo, the chapter cache key and the up-to-date manifest.
ENVIRONMENT_INPUTS = (
    "AMP_DOCS_PROFILE",
    "AMP_DOCS_HIDE_PACKAGES",
    "AMP_DOCS_SAVE_REFERENCE",
    "AMP_DOCS_LOAD_CHECK",  # sets the timing chapters' branches: a forced result is never served as measured
    *DISPATCH_VARIABLES,
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
)


def environment_inputs() -> dict[str, str | None]:
    """The current values of ``ENVIRONMENT_INPUTS``."""
    return {k: os.environ.get(k) for k in ENVIRONMENT_INPUTS}
