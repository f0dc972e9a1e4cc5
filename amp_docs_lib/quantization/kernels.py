"""Which kernels a quantized model really runs: a dispatch trace, not the config's name.

:func:`trace_ops` runs a function under a ``TorchDispatchMode`` that records every
operator reaching the dispatcher (``aten.*``, torchao's registered ops such as
``torchao.quantize_affine``, ``quantized.*``) with the dtypes of its tensor inputs.
:func:`kernel_table` reduces the trace of one forward pass per torchao variant to what a
reader asks: which matmul ran, on which dtypes, and whether an integer matmul
(``aten._int_mm``) ran at all.

:func:`int8_path_probe` runs torchao's own INT8 matmul entry point
(``torchao.kernel.intmm.int_scaled_matmul``, what ``Int8DynamicActivationInt8WeightConfig``
calls on CPU) on inputs whose exact result is known, and reports the path torchao chose
(u8s8 on CPUs with VNNI and without AMX, s8s8 otherwise: read from the trace) and whether the
result saturated.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.core.dispatch import MATMUL_OPS, OpTrace, trace_ops

INT_MATMUL = "aten._int_mm"
INTEGER_KERNELS = (INT_MATMUL, "quantized.linear_dynamic", "quantized.linear")  # int8 arithmetic inside


def forward_trace(model: nn.Module, x: torch.Tensor) -> OpTrace:
    """The trace of one inference-mode forward pass of ``model`` on ``x`` (after one untraced warm-up)."""
    with torch.inference_mode():
        model(x)
        return trace_ops(lambda: model(x))


QUANT_OPS = ("torchao.choose_qparams_affine", "torchao.quantize_affine", "torchao.dequantize_affine")


def describe(trace: OpTrace) -> dict[str, Any]:
    """The columns :func:`kernel_table` shows for one trace."""
    int_mm = [dt for op, dt in trace.matmuls if op == INT_MATMUL]
    float_mm = [dt for op, dt in trace.matmuls if op not in INTEGER_KERNELS]
    return {
        "matmuls that ran (input dtypes)": trace.matmul_summary(),
        "integer matmul (aten._int_mm)": bool(int_mm),
        "integer kernel (_int_mm or quantized.*)": any(op in INTEGER_KERNELS for op, _ in trace.matmuls),
        "float matmul": bool(float_mm),
        "activations quantized at run time": trace.counts.get("torchao.quantize_affine", 0) > 0
        or any(dt and dt[0] in ("int8", "uint8") for dt in int_mm),
        "torchao quantize/dequantize ops": ", ".join(f"{o.split('.')[-1]} x{trace.counts[o]}"
                                                     for o in QUANT_OPS if trace.counts.get(o)) or "none",
    }


def kernel_table(models: dict[str, nn.Module], x: torch.Tensor) -> pd.DataFrame:
    """One row per model: the matmuls its forward pass ran (from a dispatch trace) and what they were."""
    return pd.DataFrame([{"variant": name, **describe(forward_trace(m, x))} for name, m in models.items()])


def cpu_int8_path() -> dict[str, Any]:
    """What torchao reads to choose its CPU INT8 matmul path, read with torchao's own helpers."""
    from torchao.utils import _cpu_is_amx_tile_supported, _cpu_is_vnni_supported

    vnni, amx = bool(_cpu_is_vnni_supported()), bool(_cpu_is_amx_tile_supported())
    return {"VNNI (torchao._cpu_is_vnni_supported)": vnni, "AMX tiles (torchao._cpu_is_amx_tile_supported)": amx}


def int8_path_probe(k: int = 64) -> dict[str, Any]:
    """torchao's CPU INT8 matmul on two ``k``-long rows of int8 127s: the path it took and the result.

    The exact dot product is ``127 * 127 * k``. The probe calls
    ``torchao.kernel.intmm.int_scaled_matmul`` (unit scales), the function
    ``Int8DynamicActivationInt8WeightConfig``'s linear calls, under a dispatch trace, so the
    ``aten._int_mm`` input dtypes say which path torchao took: ``uint8 x int8`` (u8s8: activations
    shifted by +128, the shift subtracted afterwards) or ``int8 x int8`` (s8s8). A kernel that sums
    pairs of u8·s8 products in 16 bits with saturation (``vpmaddubsw``, no VNNI) returns
    ``32767 * k/2 - 128 * 127 * k`` on the u8s8 path instead of the exact value.
    """
    if not isinstance(k, int) or k <= 0 or k % 8:
        raise ValueError(f"k must be a positive multiple of 8, got {k!r}")
    from torchao.kernel.intmm import int_scaled_matmul

    a = torch.full((k, k), 127, dtype=torch.int8)
    one = torch.ones(k, 1, dtype=torch.float32)
    out: list[torch.Tensor] = []
    trace = trace_ops(lambda: out.append(int_scaled_matmul(a, a, one)))
    got = int(out[0][0, 0])
    paths = [dt for op, dt in trace.matmuls if op == INT_MATMUL]
    exact = 127 * 127 * k
    return {"k": k, "torchao path (aten._int_mm inputs)": " x ".join(paths[0]) if paths else "no _int_mm",
            "exact": exact, "returned": got,
            "saturated prediction (u8s8, 16-bit pair sums)": 32767 * (k // 2) - 128 * 127 * k,
            "saturates": got != exact,
            "torch._int_mm s8s8 returned": int(torch._int_mm(a, a)[0, 0])}


def int8_path_probe_capped(max_isa: str = "AVX2", k: int = 64) -> dict[str, Any]:
    """:func:`int8_path_probe` in a fresh Python with ``ONEDNN_MAX_CPU_ISA=max_isa`` (oneDNN reads it once,
    at its first use, so it cannot be changed in this process). The CPU's own feature flags, which
    torchao and PyTorch's ``_int_mm`` guard read, are not changed by the variable."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json; from amp_docs_lib.quantization.kernels import int8_path_probe; "
            f"print(json.dumps(int8_path_probe({int(k)})))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ONEDNN_MAX_CPU_ISA": max_isa},
                         capture_output=True, text=True, check=True)
    return {"ONEDNN_MAX_CPU_ISA": max_isa, **json.loads(out.stdout.strip().splitlines()[-1])}


DA8W4_OP = "torchao::da8w4_linear_cpu"


def da8w4_cpu_kernel(op: str = DA8W4_OP) -> dict[str, Any]:
    """Whether torchao's DA8W4 CPU kernel (``Int8DynamicActivationInt4WeightConfig``'s linear) is built here.

    torchao 0.18 refuses to quantize with that config unless ``torchao::da8w4_linear_cpu`` has a CPU kernel
    (the same test, ``torchao/prototype/quantization/int4/inference_workflow.py:135``). The kernel is
    compiled C++ in torchao's CPU extension; without it only the operator's schema and its fake (Meta)
    kernel from ``torchao/ops.py`` are registered. Returns the op, whether a CPU kernel is registered, and
    the dispatch keys that have one (``op``: another operator to ask the same of).
    """
    import torchao  # noqa: F401  (registers the torchao:: operators)

    try:
        dump = torch._C._dispatch_dump(op)
    except RuntimeError:  # an older torchao without the operator
        dump = ""
    keys = [
        line.split(":", 1)[0].strip()
        for line in dump.splitlines()
        if ": registered at" in line and not line.startswith(("debug", "name", "schema"))
    ]
    return {"op": op, "CPU kernel": "CPU" in keys, "kernels registered for": ", ".join(keys) or "none"}
