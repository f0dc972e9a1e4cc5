"""Bytes per element of each storage choice, scale overhead included, checked against real tensors.

Predicted: element bits / 8, plus the scales: one FP32 scale per tensor (per-tensor FP8), one
FP32 scale per row of ``K`` elements (rowwise FP8), one E8M0 byte per block of 32 (MX).
Measured: ``nbytes`` of the tensors that actually hold the data (torch dtypes; the library's FP8
quantizer; torchao's ``MXTensor``, whose FP4 data is packed two per byte and whose FP6 data is
*not* packed: one byte per element).
"""

from __future__ import annotations

import pandas as pd
import torch

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.numbers.formats import get_format
from amp_docs_lib.fp8.gemm import quantize_operand

MX_BLOCK = 32


def _mx_measured(x: torch.Tensor, elem) -> int:
    from torchao.prototype.mx_formats.mx_tensor import MXTensor

    t = MXTensor.to_mx(x, elem, MX_BLOCK)
    return t.qdata.nbytes + t.scale.nbytes


def memory_table(rows: int = 1024, cols: int = 1024) -> pd.DataFrame:
    """Predicted and measured bytes per element for a ``rows x cols`` tensor in each storage."""
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3

    if cols % MX_BLOCK or rows < 1:
        raise ValueError(f"cols must be a multiple of {MX_BLOCK} and rows positive, got {rows}x{cols}")
    n = rows * cols
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0))
    bits = {k: get_format(k).total_bits for k in ("FP32", "BF16", "FP8 E4M3FN", "FP6 E2M3", "FP4 E2M1", "E8M0")}
    fp8_t = quantize_operand(x, "tensorwise")
    fp8_r = quantize_operand(x, "rowwise")
    cases = [
        ("FP32", "none", bits["FP32"] / 8, x.nbytes, "torch.float32"),
        ("BF16", "none", bits["BF16"] / 8, x.bfloat16().nbytes, "torch.bfloat16"),
        ("FP8 E4M3, per-tensor scale", "1 FP32 per tensor", bits["FP8 E4M3FN"] / 8 + 4 / n,
         fp8_t[0].nbytes + fp8_t[1].nbytes, "float8_e4m3fn + float32 scalar"),
        ("FP8 E4M3, rowwise scales", f"1 FP32 per row of {cols}", bits["FP8 E4M3FN"] / 8 + 4 / cols,
         fp8_r[0].nbytes + fp8_r[1].nbytes, "float8_e4m3fn + float32 (rows, 1)"),
        ("MXFP8 (E4M3)", f"1 E8M0 per {MX_BLOCK}", bits["FP8 E4M3FN"] / 8 + bits["E8M0"] / 8 / MX_BLOCK,
         _mx_measured(x, torch.float8_e4m3fn), "torchao MXTensor: float8_e4m3fn + float8_e8m0fnu"),
        ("MXFP6 (E2M3)", f"1 E8M0 per {MX_BLOCK}", bits["FP6 E2M3"] / 8 + bits["E8M0"] / 8 / MX_BLOCK,
         _mx_measured(x, DTYPE_FP6_E2M3), "torchao MXTensor: uint8 per element (unpacked) + E8M0"),
        ("MXFP4 (E2M1)", f"1 E8M0 per {MX_BLOCK}", bits["FP4 E2M1"] / 8 + bits["E8M0"] / 8 / MX_BLOCK,
         _mx_measured(x, torch.float4_e2m1fn_x2), "torchao MXTensor: 2 x FP4 per uint8 + E8M0"),
    ]
    out = []
    for name, scales, pred, measured, storage in cases:
        out.append({"storage": name, "scales": scales, "predicted bytes/element": pred,
                    "measured bytes/element": measured / n, "measured / predicted": measured / n / pred,
                    "vs BF16": pred / 2.0, "holds it": storage})
    return pd.DataFrame(out)




def saved_for_backward(recipes=("bf16", "float8 tensorwise", "float8 rowwise"), tokens: int = 384,
                       features: int = 256) -> pd.DataFrame:
    """Activation bytes a linear layer keeps for its backward pass, per recipe, measured with autograd's
    ``saved_tensors_hooks``: every tensor the forward saves is recorded; those shaped like the input
    (``tokens`` rows, unlike the ``features x features`` weight or its copies) are the activation memory.

    ``bf16``: ``nn.Linear`` under BF16 autocast. ``float8 ...``: torchao's ``Float8Linear``
    (``convert_to_float8_training``) under the same autocast (on a CPU with the library's input cast,
    :func:`amp_docs_lib.fp8.float8_training.cast_float8_inputs_for_cpu_autocast`, as torchao does itself for
    CUDA autocast). Columns: recipe, saved activations (dtype and shape), activation bytes saved,
    ratio to the BF16 layer.
    """
    from amp_docs_lib.fp8.float8_training import linear_layer

    if tokens == features:
        raise ValueError(f"tokens and features must differ (the input is told from the weight by its shape), got {tokens}")
    x = torch.randn(tokens, features, generator=torch.Generator().manual_seed(0))
    rows = []
    for recipe in recipes:
        layer = linear_layer(recipe, features)
        saved = []

        def pack(t, saved=saved):
            saved.append(t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                layer(x.clone().requires_grad_())
        acts = [t for t in saved if t.dim() == 2 and t.shape[0] == tokens]
        rows.append({"recipe": recipe,
                     "saved activations": ", ".join(f"{short_dtype(t.dtype)}{tuple(t.shape)}"
                                                    for t in acts),
                     "activation bytes saved": sum(t.numel() * t.element_size() for t in acts)})
    df = pd.DataFrame(rows)
    df["vs bf16"] = df["activation bytes saved"] / df.loc[0, "activation bytes saved"]
    return df
