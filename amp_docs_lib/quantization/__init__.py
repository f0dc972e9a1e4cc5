"""Quantization for inference, laid out by workflow (as torchao is).

- ``affine``: scale/zero-point arithmetic, symmetric and asymmetric, per-tensor /
  per-channel / per-group, written out and tested against torchao and torch.
- ``calibration``: min-max, percentile and MSE-optimal ranges for activations.
- ``task``: the digits task and its FP32 MLP (``trained_task()``).
- ``ptq``: torchao ``quantize_`` configs, gated per device; per-layer SQNR; FP32 first/last layers.
- ``qat``: torchao ``QATConfig(base, step="prepare" / "convert")``.
- ``onnx_runtime``: export, ``quantize_dynamic``, ``quantize_static`` (QDQ), saturation check.
- ``results``: the results table and the decision table.
- ``apis``: what the installed torch and torchao say about their quantization APIs.

Entry point: ``run_all()`` computes every table of the chapter; submodules
that import onnxruntime are loaded only when used.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

# torch logs two notices when torchao is imported on a CPU-only machine (an Enum registered
# with pytree, no CUDA runtime for C++ extensions); they say nothing about quantization.
for _name in ("torch.utils._pytree", "torch.utils.cpp_extension"):
    logging.getLogger(_name).setLevel(logging.ERROR)

__all__ = ["affine", "calibration", "task", "ptq", "qat", "onnx_runtime", "results", "apis", "run_all"]


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "run_all":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; submodules: {__all__}")


def run_all() -> dict[str, Any]:
    """Train the task and compute the chapter's main tables (for scripts; the chapter calls the parts)."""
    from amp_docs_lib.core.profiles import active_profile
    from amp_docs_lib.quantization import results, task

    t = task.trained_task()
    df = results.results_table(t, min_run_time=active_profile()["quant_bench_seconds"])
    return {"task": t, "results": df, "decision": results.decision_table(df)}
