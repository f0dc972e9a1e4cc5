"""Cheap, torch-free fingerprints of the build's inputs.

Kept free of heavy imports so that ``amp-docs build`` can tell in a fraction
of a second that nothing changed since the last successful build.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Iterable

# Packages whose versions change what the chapters compute (cache key, report, up-to-date check).
TRACKED_PACKAGES = (
    "torch", "numpy", "pandas", "matplotlib", "ml_dtypes",
    "torchao", "transformers", "nbclient", "ipykernel", "jupytext",
    "onnx", "onnxscript", "onnxruntime", "scikit-learn",
    "transformer_engine",
    "torch-optimi",
    "pybtex",
)

SOURCE_SUFFIXES = (".py", ".json", ".j2", ".css", ".bib")
# Example programs and the config files they read (exercises/precision.toml).
EXAMPLE_SUFFIXES = (".py", ".toml", ".json")


def tree_hash(root: Path, suffixes: Iterable[str] | None = SOURCE_SUFFIXES) -> str:
    """Hash of the files under ``root`` (relative path and content), optionally only some suffixes."""
    suffixes = None if suffixes is None else tuple(suffixes)
    h = hashlib.sha256()
    if not root.exists():
        return h.hexdigest()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                       and (suffixes is None or p.suffix in suffixes)):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def installed_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """Versions from package metadata ('absent' if not installed); imports nothing."""
    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def nvidia_gpus_light() -> str:
    """GPU names and capabilities from ``nvidia-smi`` without importing torch ('' if none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return ""
    try:
        r = subprocess.run([smi, "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        return r.stdout.strip() if r.returncode == 0 else f"nvidia-smi failed ({r.returncode})"
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi failed ({e})"


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
# each 16-bit matmul natively: a cap below it makes torch emulate, whatever the CPU has.
ONEDNN_ISA_ORDER = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
                    "AVX512_CORE_BF16", "AVX10_1_512", "AVX512_CORE_FP16", "AVX512_CORE_AMX",
                    "AVX512_CORE_AMX_FP16", "AVX10_2_512", "AVX10_2_512_AMX_2", "DEFAULT", "ALL")
ONEDNN_ISA_NEEDED = {"bf16": "AVX512_CORE_BF16", "fp16": "AVX512_CORE_FP16"}


def cpu_native_matmul(flags: frozenset[str] | None = None, max_isa: str | None = None) -> dict[str, str]:
    """For BF16 and FP16: the CPU flag that makes its matmul native, or 'none' (emulated, slow).

    ``max_isa`` (default: the ``ONEDNN_MAX_CPU_ISA`` variable) caps what oneDNN
    may use; a cap below the ISA a dtype needs reports it as emulated, naming the cap.
    """
    flags = cpu_flags() if flags is None else flags
    max_isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "") if max_isa is None else max_isa
    cap = max_isa.strip().upper()
    out = {}
    for dtype, names in NATIVE_MATMUL_FLAGS.items():
        flag = next((f for f in names if f in flags), "none")
        if flag != "none" and cap in ONEDNN_ISA_ORDER and \
                ONEDNN_ISA_ORDER.index(cap) < ONEDNN_ISA_ORDER.index(ONEDNN_ISA_NEEDED[dtype]):
            flag = f"none (ONEDNN_MAX_CPU_ISA={cap})"
        out[dtype] = flag
    return out


# Variables that change which CPU kernels torch and oneDNN dispatch to, whatever the CPU has.
DISPATCH_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")


def machine_light() -> dict[str, object]:
    return {"machine": platform.machine(), "cpu": cpu_model(), "cpu_count": os.cpu_count(),
            "cpu_native_matmul": cpu_native_matmul(),
            "gpus": nvidia_gpus_light(), "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
