"""Which way each FP8 / MX / NVFP4 implementation stores its scale: quantization or dequantization.

A *quantization* scale ``s`` multiplies the high-precision tensor before the cast (``q = cast(x * s)``,
read back as ``q / s``); a *dequantization* scale ``d = 1 / s`` multiplies the stored codes
(``x ≈ q * d``). Implementations differ, and passing one where the other is expected is the
classic silent bug (the FP8 chapter shows it for ``scaled_mm``). :func:`classify` decides the
convention from data: it reads the codes back both ways and keeps the one that reproduces ``x``.
"""

from __future__ import annotations

import pandas as pd
import torch

TE_SOURCE = ("Transformer Engine source: Float8Quantizer.scale, \"multiply when quantizing\", and Float8Tensor._scale_inv, "
             "transformer_engine/pytorch/tensor/float8_tensor.py; NVFP4 global scale computed in encode form "
             "448 * 6 / amax (compute_global_encode_scaling_factor_FP4, common/cast/nvfp4/core_nvfp4.cuh)")


def classify(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> str:
    """``"dequantization"`` if ``q * scale`` reproduces ``x`` better than ``q / scale``, else ``"quantization"``."""
    x, q, scale = x.double(), q.double(), scale.double()
    mul = float(((q * scale) - x).norm())
    div = float(((q / scale) - x).norm())
    return "dequantization" if mul < div else "quantization"


def scale_convention_table(seed: int = 0) -> pd.DataFrame:
    """Each implementation's scale, its convention classified from data where the library runs here.

    Rows checked by code: torchao's float8 training tensor (``_scale``), ``torch._scaled_mm``'s
    ``scale_a``/``scale_b`` (the GEMM output with the stored scales, against float64), torchao's
    ``MXTensor`` (E8M0 block scale), torchao's ``NVFP4Tensor`` (E4M3 block scale and its FP32
    per-tensor scale). Transformer Engine's are in :func:`te_scale_conventions`.
    """
    from torchao.float8.float8_training_tensor import hp_tensor_and_scale_to_float8
    from torchao.float8.float8_utils import tensor_to_scale
    from torchao.prototype.mx_formats.mx_tensor import MXTensor
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale
    from torchao.prototype.mx_formats.kernels import f4_unpacked_to_f32, unpack_uint4

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 128, generator=g) * 3.0
    rows = []

    t = hp_tensor_and_scale_to_float8(x, tensor_to_scale(x, torch.float8_e4m3fn), torch.float8_e4m3fn)
    rows.append({"implementation": "torchao float8 training tensor", "scale": "_scale (FP32 per tensor)",
                 "convention": classify(x, t._data.float(), t._scale), "checked": "by code, here"})

    from amp_docs_lib.fp8.gemm import check_scale_convention, quantize_operand

    a8, _, qa = quantize_operand(x)
    b = torch.randn(32, 128, generator=g)
    b8, _, qb = quantize_operand(b)
    # Pass the scales that make the product right; the convention is what they are relative to s.
    deq = torch._scaled_mm(a8, b8.t(), scale_a=1 / qa, scale_b=1 / qb, out_dtype=torch.float32)
    ok = check_scale_convention(x, b, deq)["ok"]
    rows.append({"implementation": "torch._scaled_mm / F.scaled_mm", "scale": "scale_a, scale_b",
                 "convention": "dequantization" if ok else "quantization", "checked": "by code, here"})

    mx = MXTensor.to_mx(x, torch.float8_e4m3fn, block_size=32)
    mx_scale = mx.scale.float().reshape(64, 4, 1).expand(64, 4, 32).reshape(64, 128)
    rows.append({"implementation": "torchao MXTensor (MXFP8)", "scale": "E8M0 per 32 elements",
                 "convention": classify(x, mx.qdata.float(), mx_scale), "checked": "by code, here"})

    pts = per_tensor_amax_to_scale(x.abs().amax())
    nv = NVFP4Tensor.to_nvfp4(x, block_size=16, per_tensor_scale=pts)
    q4 = f4_unpacked_to_f32(unpack_uint4(nv.qdata.contiguous().view(torch.uint8))).reshape(64, 128)
    blk = nv.scale.float().reshape(64, 8, 1).expand(64, 8, 16).reshape(64, 128)
    rows.append({"implementation": "torchao NVFP4Tensor", "scale": "E4M3 per 16 elements x FP32 per tensor",
                 "convention": classify(x, q4, blk * pts), "checked": "by code, here"})
    decode_form = abs(float(pts) - float(x.abs().amax()) / (448 * 6)) <= 1e-6 * float(pts)
    rows.append({"implementation": "torchao NVFP4Tensor", "scale": "per-tensor scale alone",
                 "convention": "dequantization (amax / (448 * 6))" if decode_form else "other",
                 "checked": "by code, here"})
    return pd.DataFrame(rows)


def te_scale_conventions() -> pd.DataFrame:
    """Transformer Engine's scales, as its source (:data:`TE_SOURCE`) defines them (not installable here)."""
    return pd.DataFrame([
        {"implementation": "Transformer Engine Float8Quantizer / Float8Tensor", "scale": "scale / _scale_inv",
         "convention": "scale: quantization; _scale_inv: dequantization (what the GEMM takes)"},
        {"implementation": "Transformer Engine NVFP4", "scale": "global (per-tensor) scale",
         "convention": "quantization (encode form, 448 * 6 / amax)"},
    ])
