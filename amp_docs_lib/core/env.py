"""The environment report: what machine and software produced this build's numbers.

``environment_report()`` is the single source for the provenance stamp, the
home page's report, ``amp-docs env`` and the hardware part of the cache key.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import os
import platform
import subprocess
import warnings
from typing import Any

import amp_docs_lib
from amp_docs_lib.core.machine import cpu_description, cpu_model, cpu_native_matmul
from amp_docs_lib.core.packages import installed_versions
from amp_docs_lib.core.paths import REPO_ROOT, REVISION_FILE
from amp_docs_lib.core.profiles import active_profile

# torch is imported inside the functions that need it: `amp-docs build` with nothing changed
# reads the memoised report (docsite/env_memo.py) and never pays for importing torch.


@functools.cache
def _nvidia_driver() -> str | None:
    """``machine.nvidia_driver_version()``, read once: every stamp asks, and the driver does not change."""
    from amp_docs_lib.core.machine import nvidia_driver_version

    return nvidia_driver_version()


def gpus() -> list[dict[str, Any]]:
    """One entry per visible CUDA device: name, compute capability, memory, BF16 support, driver."""
    import torch

    if not torch.cuda.is_available():
        return []
    out, driver = [], _nvidia_driver()
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append(
            {
                "index": i,
                "name": p.name,
                "compute_capability": f"{p.major}.{p.minor}",
                "memory_gib": round(p.total_memory / 2**30, 1),
                "bf16_supported": bool(torch.cuda.is_bf16_supported()),
                "driver": driver,  # a reference result names the driver it ran on (None: nvidia-smi absent)
            }
        )
    return out


def cpu_capability() -> str:
    """The vector ISA torch's CPU kernels dispatch to here: 'AVX2', 'AVX512', 'DEFAULT', ..."""
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def cpu_matmul_support() -> str:
    """Whether BF16 / FP16 matmul is native on this CPU, e.g. 'BF16 native (amx_bf16), FP16 emulated'.

    On a CPU without such flags (an AVX2-only x86, say) torch emulates 16-bit
    matmuls, and they run far slower than FP32: chapters size and interpret
    their CPU measurements by this.
    """
    return ", ".join(
        f"{dtype.upper()} " + ("emulated" + flag[4:] if flag.startswith("none") else f"native ({flag})")
        for dtype, flag in cpu_native_matmul().items()
    )


def device_summary() -> str:
    """Device string for stamps: 'NVIDIA H100 (sm 9.0, driver 580.159.04)' or the CPU with its vector ISA and 16-bit matmul support."""
    g = gpus()
    if g:
        driver = f", driver {g[0]['driver']}" if g[0].get("driver") else ""
        return f"{g[0]['name']} (sm {g[0]['compute_capability']}{driver})"
    return f"CPU: {cpu_model()} ({os.cpu_count()} cores, {cpu_capability()}; {cpu_matmul_support()})"


def short_device_name() -> str:
    """A few words naming the device, for sentences: 'NVIDIA H100 80GB HBM3' or 'CPU, AVX2'."""
    g = gpus()
    return g[0]["name"] if g else f"CPU, {cpu_capability()}"


def tf32_settings() -> dict[str, Any]:
    """The TF32 switches as this process sees them (they change FP32 matmul and conv results on GPUs).

    Both APIs: the older ``float32_matmul_precision`` / ``allow_tf32`` flags and, where this torch
    has them, the ``fp32_precision`` attributes PyTorch's numerical-accuracy note now recommends
    (``numbers.numerics.fp32_precision_settings`` lists them all, with any warning they give).
    """
    import torch

    with warnings.catch_warnings():
        # The note says the allow_tf32 flags are going to be deprecated; a warning on reading them
        # would repeat on every stamp, and the Formats chapter shows any warning they give.
        warnings.simplefilter("ignore")
        settings = {
            "float32_matmul_precision": _legacy_flag(torch.get_float32_matmul_precision),
            "cuda.matmul.allow_tf32": _legacy_flag(lambda: bool(torch.backends.cuda.matmul.allow_tf32)),
            "cudnn.allow_tf32": _legacy_flag(lambda: bool(torch.backends.cudnn.allow_tf32)),
        }
        for key, owner in (
            ("cuda.matmul.fp32_precision", torch.backends.cuda.matmul),
            ("cudnn.conv.fp32_precision", getattr(torch.backends.cudnn, "conv", None)),
        ):
            if owner is not None and hasattr(owner, "fp32_precision"):
                settings[key] = str(owner.fp32_precision)
        return settings


# What a legacy TF32 flag reads as when torch refuses to read it: after the new ``fp32_precision`` API set a
# backend apart from the old flags, torch (2.9+) raises "mix of the legacy and new APIs" on reading them.
LEGACY_UNREADABLE = "unreadable: the legacy and new TF32 APIs were mixed"


def _legacy_flag(read: Any) -> Any:
    try:
        return read()
    except RuntimeError:
        return LEGACY_UNREADABLE


def tf32_summary(settings: dict[str, Any] | None = None) -> str:
    """'TF32 matmul off, cuDNN on', from ``settings`` (default: ``tf32_settings()``); a legacy flag torch
    refused to read is answered by its new-API ``fp32_precision``."""
    s = tf32_settings() if settings is None else settings

    def on(legacy: str, new: str) -> bool:
        return s.get(new) == "tf32" if s[legacy] == LEGACY_UNREADABLE else bool(s[legacy])

    onoff = lambda b: "on" if b else "off"  # noqa: E731
    return (
        f"TF32 matmul {onoff(on('cuda.matmul.allow_tf32', 'cuda.matmul.fp32_precision'))}, "
        f"cuDNN {onoff(on('cudnn.allow_tf32', 'cudnn.conv.fp32_precision'))}"
    )


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that execute the chapters ('absent' if not installed)."""
    import torch

    out = installed_versions()
    out["torch.version.cuda"] = str(torch.version.cuda)
    return out


@functools.lru_cache(maxsize=1)
def git_revision() -> str:
    """Short git revision of the checkout the library runs from, '+dirty' if modified (a wheel's:
    the one it was built from)."""
    if REVISION_FILE.is_file():
        return REVISION_FILE.read_text(encoding="utf-8").strip() or "unknown"
    try:
        root = REPO_ROOT
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        if rev.returncode != 0:
            return "unknown"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "amp_docs_lib"], cwd=root, capture_output=True, text=True, timeout=10
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def hardware_description() -> dict[str, Any]:
    """What the hardware part of the cache key covers."""
    return {
        **cpu_description(),
        "cpu_capability": cpu_capability(),
        "gpus": [{k: g[k] for k in ("name", "compute_capability", "memory_gib")} for g in gpus()],
    }


def hardware_fingerprint(description: dict[str, Any] | None = None) -> str:
    """A short hash of ``hardware_description()``: equal on equal machines."""
    desc = hardware_description() if description is None else description
    blob = json.dumps(desc, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


NO_CUDA = "none (CPU build)"  # the report's "cuda" for a torch built without CUDA


def stamp_fields() -> dict[str, Any]:
    """The part of the report every stamp names (cheap: no package metadata, no fingerprint)."""
    import torch

    return {
        "device": device_summary(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda or NO_CUDA,
        "git_revision": git_revision(),
        "tf32": tf32_settings(),
        "profile": active_profile().name,
        "build_date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d"),
    }


def environment_report() -> dict[str, Any]:
    """Everything the stamp and the home page show, as one flat-ish dict."""
    import torch

    return {
        **stamp_fields(),
        "gpus": gpus(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_capability": cpu_capability(),
        "cpu_matmul": cpu_matmul_support(),
        "platform": platform.platform(),
        "cuda_available": torch.cuda.is_available(),
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "amp_docs_lib": amp_docs_lib.__version__,
        "packages": package_versions(),
        "hardware_fingerprint": hardware_fingerprint(),
    }


def report_rows(report: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """The report as (label, value) rows: the one row builder of ``amp-docs env`` and the home page."""
    r = environment_report() if report is None else report
    rows = [
        ("device", r["device"]),
        ("platform", r["platform"]),
        ("CPU capability (torch)", r["cpu_capability"]),
        ("CPU 16-bit matmul", r["cpu_matmul"]),
        ("torch", r["torch"]),
        ("CUDA (build)", r["cuda"]),
        ("CUDA available", r["cuda_available"]),
        ("cuDNN", r["cudnn"]),
        ("amp_docs_lib", f"{r['amp_docs_lib']} @ {r['git_revision']}"),
        *((f"TF32: {k}", v) for k, v in r["tf32"].items()),
        ("profile", r["profile"]),
        ("hardware fingerprint", r["hardware_fingerprint"]),
        ("build date", r["build_date"]),
    ]
    for g in r["gpus"]:
        rows.append(
            (
                f"GPU {g['index']}",
                f"{g['name']}, sm {g['compute_capability']}, "
                f"{g['memory_gib']} GiB, bf16 {'yes' if g['bf16_supported'] else 'no'}",
            )
        )
    rows += [(f"package: {k}", v) for k, v in r["packages"].items()]
    return [(k, str(v)) for k, v in rows]


def format_report(report: dict[str, Any] | None = None) -> str:
    """The report as aligned text lines (what ``amp-docs env`` prints)."""
    lines = report_rows(report)
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines)
