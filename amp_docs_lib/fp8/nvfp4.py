"""NVFP4: FP4 E2M1 elements in 16-element blocks with E4M3 block scales and an FP32 tensor scale.

NVIDIA's NVFP4 (NVIDIA et al., "Pretraining Large Language Models with NVFP4", arXiv:2509.25149)
changes three things against MXFP4 (OCP MX v1.0: 32-element blocks, power-of-two E8M0 scales):

* blocks of **16** elements instead of 32;
* block scales stored in **E4M3** (a fraction, not only a power of two), so a block's amax maps
  onto FP4's largest value 6 up to E4M3's rounding (relative error at most 2^-4);
* a second, **FP32 per-tensor** scale, ``amax(x) / (448 * 6)``, which brings the block scales
  into E4M3's range.

Quantization (:func:`nvfp4_quantize`), two-level::

    s_tensor = amax(x) / (448 * 6)                  # FP32
    s_block  = e4m3(amax(block) / 6 / s_tensor)     # stored, one per 16 elements
    q        = fp4(clamp(x / (s_block * s_tensor), -6, 6))
    x_hat    = q * s_block * s_tensor

The arithmetic follows torchao's ``nvfp4_quantize`` (the element scaling multiplies by the
reciprocal ``(1 / s_tensor) / s_block``, as its kernels do), so the two agree bit for bit
(tested); :func:`torchao_nvfp4` runs torchao's ``NVFP4Tensor.to_nvfp4`` on the same tensor.
:func:`fp4_block_comparison` sets NVFP4 beside MXFP4 (the library's :func:`~amp_docs_lib.fp8.scaling.mx_quantize`,
itself bit-equal to torchao's ``MXTensor.to_mx``) on the same tensors.
"""

from __future__ import annotations

import math

import pandas as pd
import torch

from amp_docs_lib.core.tables import na_to_none

from amp_docs_lib.fp8.formats import cast, encode_tensor, max_finite
from amp_docs_lib.fp8.scaling import Quantized, _check_2d, error_metrics, mx_quantize, overflow_threshold

NVFP4_BLOCK = 16
FP4 = "FP4 E2M1"
E4M3 = "FP8 E4M3FN"
# The smallest positive normal of E4M3 (2^-6). torchao clamps every block scale up to it
# (nvfp4_tensor.py: torch.clamp(block_scale, min=E4M3_EPS, ...)); that is torchao's choice, not part
# of the format: Transformer Engine (compute_decoding_scaling_factor, common/cast/nvfp4/core_nvfp4.cuh)
# has no lower clamp, so such blocks get subnormal E4M3 scales (or 0).
E4M3_TINY = float(torch.finfo(torch.float8_e4m3fn).tiny)
SCALE_FLOORS = ("torchao", "none")


def nvfp4_tensor_scale(x: torch.Tensor) -> torch.Tensor:
    """The FP32 per-tensor scale ``amax(x) / (448 * 6)`` (torchao's ``per_tensor_amax_to_scale``)."""
    return x.detach().abs().amax().to(torch.float32) / (max_finite(E4M3) * max_finite(FP4))


class NVFP4Quantized(Quantized):
    """An NVFP4-quantized tensor: read-back values, E4M3 block scales, the FP32 tensor scale, FP4 codes."""

    def __init__(self, dequantized, scale, saturated, flushed, block_scale_e4m3, tensor_scale, codes, scale_clamped):
        super().__init__(dequantized, scale, saturated, flushed, FP4, f"NVFP4 (block {NVFP4_BLOCK}, E4M3 + FP32)")
        self.block_scale_e4m3 = block_scale_e4m3
        self.tensor_scale = tensor_scale
        self.codes = codes
        self.scale_clamped = scale_clamped  # per block: its wanted scale is below E4M3's smallest normal


def nvfp4_quantize(x: torch.Tensor, tensor_scale: torch.Tensor | float | None = None, *,
                   scale_floor: str = "torchao", block: int = NVFP4_BLOCK) -> NVFP4Quantized:
    """Quantize a 2-D tensor to NVFP4 along its last dimension (blocks of 16).

    Args:
        x: floating-point tensor, 2-D, last dimension a multiple of 16.
        tensor_scale: the FP32 per-tensor scale; default :func:`nvfp4_tensor_scale` of ``x``.
        scale_floor: ``"torchao"`` clamps a block scale below E4M3's smallest normal up to it (what
            torchao does); ``"none"`` casts it as it is, to a subnormal E4M3 scale or 0 (what
            Transformer Engine does). A zero block scale reads back its block as zeros.
        block: elements per E4M3 block scale; NVFP4 is 16 (another size separates the effect of the
            fractional scale from that of the block size, :func:`fp4_ablation`).

    Returns:
        :class:`NVFP4Quantized` with ``block_scale_e4m3`` (``torch.float8_e4m3fn``, shape
        ``(M, K // 16)``), ``tensor_scale`` and unpacked FP4 ``codes`` (uint8, one per element).

    Raises:
        TypeError: ``x`` is not a floating-point tensor.
        ValueError: ``x`` is not 2-D or its last dimension is not a multiple of 16.
    """
    x = _check_2d(x)
    if x.dim() != 2:
        raise ValueError(f"nvfp4_quantize takes a 2-D tensor, got shape {tuple(x.shape)}")
    if not isinstance(block, int) or block < 1 or x.shape[-1] % block:
        raise ValueError(f"last dimension {x.shape[-1]} is not a multiple of the NVFP4 block size {block!r}")
    s_t = nvfp4_tensor_scale(x) if tensor_scale is None else torch.as_tensor(tensor_scale, dtype=torch.float32)
    if scale_floor not in SCALE_FLOORS:
        raise ValueError(f"unknown scale_floor {scale_floor!r}; valid: {list(SCALE_FLOORS)}")
    if not (float(s_t) > 0 and math.isfinite(float(s_t))):
        raise ValueError(f"tensor_scale must be positive and finite, got {float(s_t)!r}")
    M, K = x.shape
    xb = x.reshape(M, K // block, block)
    block_decode = xb.abs().amax(dim=-1) / max_finite(FP4)  # amax(block) / 6, FP32
    wanted = block_decode / s_t
    lo = E4M3_TINY if scale_floor == "torchao" else 0.0
    s_b = torch.clamp(wanted, min=lo, max=max_finite(E4M3)).to(torch.float8_e4m3fn)
    s_b32 = s_b.to(torch.float32)
    inv = torch.where(s_b32 > 0, (1.0 / s_t) / s_b32, torch.zeros_like(s_b32))  # a zero scale reads back zeros
    scaled = xb * inv.unsqueeze(-1)
    sat = scaled.abs() >= overflow_threshold(FP4)
    clamped = torch.clamp(scaled, -max_finite(FP4), max_finite(FP4))
    q = cast(clamped, FP4)
    deq = q * (s_t * s_b32).unsqueeze(-1)  # torchao's dequantize: q * (tensor scale * block scale)
    codes = encode_tensor(clamped, FP4).reshape(M, K)
    return NVFP4Quantized(deq.reshape(M, K), torch.where(s_b32 > 0, 1.0 / (s_b32 * s_t), torch.full_like(s_b32, math.inf)).unsqueeze(-1).expand_as(xb).reshape(M, K),
                          sat.reshape(M, K), ((xb != 0) & (deq == 0)).reshape(M, K), s_b, s_t, codes,
                          wanted < E4M3_TINY)


def torchao_nvfp4(x: torch.Tensor, two_level: bool = True):
    """torchao's ``NVFP4Tensor.to_nvfp4`` on ``x``: (E4M3 block scales, unpacked FP4 codes, dequantized).

    With ``two_level`` the per-tensor scale is torchao's ``per_tensor_amax_to_scale(amax(x))``.
    """
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale

    x = x.detach().to(torch.float32).contiguous()
    pts = per_tensor_amax_to_scale(x.abs().amax()) if two_level else None
    t = NVFP4Tensor.to_nvfp4(x, block_size=NVFP4_BLOCK, per_tensor_scale=pts)
    codes = unpack_uint4(t.qdata.contiguous().view(torch.uint8)).reshape(x.shape)
    return t.scale.reshape(x.shape[0], x.shape[1] // NVFP4_BLOCK), codes, t.dequantize(torch.float32)


def compare_with_torchao(tensors: dict[str, torch.Tensor]) -> pd.DataFrame:
    """Per tensor: how many E4M3 block scales, FP4 element codes and read-back values of
    :func:`nvfp4_quantize` differ from torchao's ``NVFP4Tensor.to_nvfp4`` (bytes and values compared exactly)."""
    rows = []
    for name, x in tensors.items():
        q = nvfp4_quantize(x)
        scales, codes, deq = torchao_nvfp4(x)
        rows.append({"tensor": name, "blocks": scales.numel(),
                     "scale mismatches": int((q.block_scale_e4m3.view(torch.uint8) != scales.view(torch.uint8)).sum()),
                     "code mismatches": int((q.codes != codes).sum()),
                     "value mismatches": int((q.dequantized != deq).sum())})
    return pd.DataFrame(rows)


def block_amax_error(x: torch.Tensor, q: Quantized, block: int, blocks: torch.Tensor | None = None) -> torch.Tensor:
    """Relative error of each block's largest-magnitude element after quantization (one value per block).

    ``blocks``: optional boolean mask of shape ``(M, K // block)`` selecting the blocks to report.
    """
    x = _check_2d(x)
    M, K = x.shape
    xb, db = x.reshape(M, K // block, block), q.dequantized.reshape(M, K // block, block)
    idx = xb.abs().argmax(dim=-1, keepdim=True)
    a, d = xb.gather(-1, idx).squeeze(-1), db.gather(-1, idx).squeeze(-1)
    keep = a != 0 if blocks is None else (a != 0) & blocks
    return (d[keep] - a[keep]).abs() / a[keep].abs()


def fp4_block_comparison(tensors: dict[str, torch.Tensor]) -> pd.DataFrame:
    """NVFP4 against MXFP4 (floor scale, the OCP rule) on each tensor: SQNR, flushed, block-amax error.

    Columns: tensor, scheme, block, scale type, bits per element (4 + scale bits / block, tensor
    scale ignored), SQNR (dB), flushed to zero, blocks below E4M3's range (NVFP4 blocks whose
    scale fell below E4M3's smallest normal, ``amax(block) < amax(x) * 2^-6 / 448``; None for
    MXFP4), and the largest relative error of a block's amax (for NVFP4 over the blocks whose
    scale is in range).
    """
    rows = []
    for name, x in tensors.items():
        nv, mx = nvfp4_quantize(x), mx_quantize(x, FP4)
        for scheme, q, block, scale_type, in_range in (
                ("NVFP4", nv, NVFP4_BLOCK, "E4M3 (+ FP32 per tensor)", ~nv.scale_clamped),
                ("MXFP4", mx, 32, "E8M0 (power of two)", None)):
            m = error_metrics(x, q)
            err = block_amax_error(x, q, block, in_range)
            rows.append({"tensor": name, "scheme": scheme, "block": block, "scale type": scale_type,
                         "bits per element": 4 + 8 / block, "SQNR (dB)": m["SQNR (dB)"],
                         "flushed to zero": m["flushed to zero"],
                         "blocks below E4M3's range": None if in_range is None else int((~in_range).sum()),
                         "max block-amax relative error": float(err.max()) if err.numel() else None})
    df = pd.DataFrame(rows)
    df = na_to_none(df)  # n/a cells are None, never NaN
    col = "blocks below E4M3's range"
    df[col] = pd.Series([r[col] for r in rows], dtype=object)  # ints stay ints beside None
    return df


def fp4_ablation(x: torch.Tensor) -> pd.DataFrame:
    """NVFP4's two changes to MXFP4 taken one at a time on ``x``: the block scale's type (power-of-two E8M0,
    under the specification's FLOOR rule and under RCEIL, or fractional E4M3 with the FP32 tensor scale) and
    the block size (32 or 16). SQNR and flushed fraction per combination; E4M3 at 16 is NVFP4, E8M0 at 32 MXFP4."""
    rows = []
    for block in (32, 16):
        for scale, q in (("E8M0, FLOOR", mx_quantize(x, FP4, block, "floor", any_block_size=True)),
                         ("E8M0, RCEIL", mx_quantize(x, FP4, block, "rceil", any_block_size=True)),
                         ("E4M3 + FP32 per tensor", nvfp4_quantize(x, block=block))):
            m = error_metrics(x, q)
            rows.append({"block": block, "block scale": scale, "SQNR (dB)": m["SQNR (dB)"],
                         "flushed to zero": m["flushed to zero"]})
    return pd.DataFrame(rows)


def fp4_values() -> torch.Tensor:
    """Every finite FP4 E2M1 value, sorted (float32), read back from its 16 codes."""
    from amp_docs_lib.fp8.formats import all_codes

    v = torch.tensor(all_codes(FP4)["value"].to_numpy(), dtype=torch.float32)
    return torch.unique(v[torch.isfinite(v)])


def stochastic_round_fp4(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """``x`` (within E2M1's range, ±6) rounded stochastically onto the FP4 grid: to the upper neighbour with
    probability (x - lower) / (upper - lower), else to the lower one, so that the expected result is ``x``.
    The NVFP4 recipe rounds gradients this way (Transformer Engine's ``NVFP4BlockScaling``)."""
    x = x.to(torch.float32)
    if bool((x.abs() > max_finite(FP4)).any()):
        raise ValueError(f"values beyond E2M1's largest value {max_finite(FP4)} cannot be rounded onto its grid")
    grid = fp4_values()
    hi_i = torch.searchsorted(grid, x, right=False).clamp(max=grid.numel() - 1)
    lo_i = torch.where(grid[hi_i] == x, hi_i, (hi_i - 1).clamp(min=0))
    lo, hi = grid[lo_i], grid[hi_i]
    p_up = torch.where(hi > lo, (x - lo) / (hi - lo), torch.zeros_like(x))
    return torch.where(torch.rand(x.shape, generator=generator) < p_up, hi, lo)


def rounding_bias_study(value: float = 2.4, draws: int = 4096, seed: int = 0) -> pd.DataFrame:
    """The same value rounded ``draws`` times onto the FP4 grid, to nearest and stochastically: the mean
    result, its error and the standard error of the mean. Round-to-nearest repeats one error every time (a
    bias that a sum of many small gradients accumulates); stochastic rounding's mean converges on the value."""
    x = torch.full((draws,), float(value))
    rows = []
    for name, y in (("to nearest", cast(x, FP4)),
                    ("stochastic", stochastic_round_fp4(x, torch.Generator().manual_seed(seed)))):
        y = y.double()
        rows.append({"rounding": name, "value": float(value), "mean of the rounded values": float(y.mean()),
                     "mean error": float(y.mean() - value),
                     "standard error of the mean": float(y.std() / math.sqrt(draws))})
    return pd.DataFrame(rows)


def gaussian_blocks(rows: int = 64, cols: int = 512, seed: int = 0) -> torch.Tensor:
    """A standard normal ``rows x cols`` tensor (the data of the NVFP4 vs MXFP4 comparison)."""
    return torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed))


def scale_floor_comparison(tensors: dict[str, torch.Tensor]) -> pd.DataFrame:
    """NVFP4 with torchao's clamped block scales against unclamped ones (Transformer Engine's rule).

    Per tensor: blocks whose wanted scale is below E4M3's smallest normal, and for the two rules the
    SQNR and flushed fraction over the elements of those blocks (None when there are none).
    """
    rows = []
    for name, x in tensors.items():
        x = _check_2d(x)
        for floor in SCALE_FLOORS:
            q = nvfp4_quantize(x, scale_floor=floor)
            low = q.scale_clamped.unsqueeze(-1).expand(x.shape[0], x.shape[1] // NVFP4_BLOCK, NVFP4_BLOCK)
            low = low.reshape(x.shape) & (x != 0)
            m = error_metrics(x, q, low) if bool(low.any()) else None
            rows.append({"tensor": name, "block scale floor": "clamped to 2^-6 (torchao)" if floor == "torchao"
                         else "none: subnormal E4M3 scales (Transformer Engine)",
                         "blocks below E4M3's normal range": int(q.scale_clamped.sum()),
                         "SQNR in those blocks (dB)": None if m is None else m["SQNR (dB)"],
                         "flushed in those blocks": None if m is None else m["flushed to zero"]})
    return pd.DataFrame(rows, dtype=object)


def wide_range_blocks(rows: int = 16, cols: int = 256, binades: float = 24.0, seed: int = 0) -> torch.Tensor:
    """Gaussian rows whose magnitudes spread over ``binades`` binades (2^0 down to 2^-binades), so that
    some 16-element blocks sit far below the tensor's amax, as gradients of different tokens do."""
    g = torch.Generator().manual_seed(seed)
    level = torch.exp2(-torch.linspace(0, binades, rows)).unsqueeze(1)
    return torch.randn(rows, cols, generator=g) * level
