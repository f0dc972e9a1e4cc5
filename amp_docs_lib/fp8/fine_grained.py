"""DeepSeek-V3's FP8 recipe on the CPU: tile/block scaling and promoted accumulation, emulated.

The DeepSeek-V3 technical report (arXiv:2412.19437, §3.3) trains in FP8 with

* **fine-grained scaling**: one scale per 1×128 tile of an activation (per token, per 128
  channels) and per 128×128 block of a weight, E4M3 for all tensors, scale from the tile's own
  amax (``448 / amax``) — :func:`quantize_tiles`;
* **increased accumulation precision**: the report finds FP8 GEMM accumulation on H800 tensor
  cores limited to about 14 bits, and copies the partial sums to FP32 registers every
  ``N_C = 128`` elements of K — :func:`limited_precision_matmul` emulates an accumulator that keeps
  ``bits`` significant bits, with or without that promotion.

Both are emulations of the *numerics*, not of the speed: the quantized values and sums are what a
kernel with those rules computes, up to the accumulator's rounding mode (a parameter here; the
hardware's is not documented).
"""

from __future__ import annotations

import math

import pandas as pd
import torch

from amp_docs_lib.fp8.formats import cast, element_format, max_finite
from amp_docs_lib.fp8.scaling import Quantized, _check_2d, error_metrics, overflow_threshold, quantize_tensorwise

ACTIVATION_TILE = (1, 128)
WEIGHT_BLOCK = (128, 128)
ROUNDINGS = ("nearest", "toward_zero")


def quantize_tiles(x: torch.Tensor, tile: tuple[int, int] = ACTIVATION_TILE, fmt: str = "FP8 E4M3FN") -> Quantized:
    """Scale each ``tile`` (rows × columns) of a 2-D tensor by ``max_finite / amax(tile)`` and cast.

    ``(1, 128)`` is DeepSeek-V3's activation tiling, ``(128, 128)`` its weight blocks.

    Raises:
        ValueError: ``tile`` is not two positive ints dividing ``x``'s shape.
    """
    x = _check_2d(x)
    if x.dim() != 2:
        raise ValueError(f"quantize_tiles takes a 2-D tensor, got shape {tuple(x.shape)}")
    if (not isinstance(tile, tuple) or len(tile) != 2 or not all(isinstance(t, int) and t > 0 for t in tile)):
        raise ValueError(f"tile must be a (rows, cols) tuple of positive ints, got {tile!r}")
    (M, K), (tr, tc) = x.shape, tile
    if M % tr or K % tc:
        raise ValueError(f"tile {tile} does not divide the tensor's shape {tuple(x.shape)}")
    f = element_format(fmt).name
    xt = x.reshape(M // tr, tr, K // tc, tc)
    amax = xt.abs().amax(dim=(1, 3), keepdim=True)
    s = torch.where(amax > 0, max_finite(f) / amax, torch.ones_like(amax))
    scaled = xt * s
    deq = (cast(scaled, f) / s).reshape(M, K)
    sat = (scaled.abs() >= overflow_threshold(f)).reshape(M, K)
    return Quantized(deq, s.expand_as(xt).reshape(M, K), sat, (x != 0) & (deq == 0), f, f"tile {tr}x{tc}")


def tile_vs_tensor(x: torch.Tensor, mask: torch.Tensor | None = None, fmt: str = "FP8 E4M3FN") -> pd.DataFrame:
    """Per-tensor, 1×128-tile and 128×128-block scaling of ``x``: SQNR and flushed fraction (over ``mask``)."""
    rows = []
    for name, q in (("per-tensor", quantize_tensorwise(x, fmt)),
                    ("1x128 tiles", quantize_tiles(x, ACTIVATION_TILE, fmt)),
                    ("128x128 blocks", quantize_tiles(x, WEIGHT_BLOCK, fmt))):
        rows.append({"scaling": name, **error_metrics(x, q, mask)})
    return pd.DataFrame(rows)


def outlier_tensor(rows: int = 128, cols: int = 512, n_outliers: int = 4, factor: float = 1e4,
                   seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian ``rows × cols`` data with ``n_outliers`` elements set to ``factor`` × its amax.

    Returns the tensor and the mask of the non-outlier elements.
    """
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    amax = float(x.abs().max())
    idx = torch.randperm(rows * cols, generator=g)[:n_outliers]
    mask = torch.ones(rows * cols, dtype=torch.bool)
    mask[idx] = False
    x.view(-1)[idx] = factor * amax
    return x, mask.reshape(rows, cols)


def round_significand(x: torch.Tensor, bits: int, rounding: str = "nearest") -> torch.Tensor:
    """``x`` (float64) rounded to ``bits`` significant bits (the leading bit included).

    ``rounding``: ``"nearest"`` (ties to even) or ``"toward_zero"`` (truncation). No exponent limit.
    """
    if not isinstance(bits, int) or bits < 1:
        raise ValueError(f"bits must be a positive int, got {bits!r}")
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}; valid: {list(ROUNDINGS)}")
    x = x.to(torch.float64)
    mant, exp = torch.frexp(x)                     # x = mant * 2^exp, |mant| in [0.5, 1)
    m = torch.ldexp(mant, torch.full_like(exp, bits))
    m = torch.round(m) if rounding == "nearest" else torch.trunc(m)
    return torch.ldexp(m, exp - bits)


def limited_precision_matmul(a: torch.Tensor, b: torch.Tensor, bits: int = 14, promote_every: int | None = None,
                             rounding: str = "nearest") -> torch.Tensor:
    """``a @ b`` summed over K one product at a time into an accumulator of ``bits`` significant bits.

    Products of FP8 values are exact here (their significands have at most 2 × 4 bits in E4M3;
    float64 keeps 53), so pass the FP8 values themselves (:func:`fp8_codes`), not dequantized ones. With ``promote_every = N_C`` the limited
    partial sum is added into an FP32 accumulator every ``N_C`` products and restarted, as
    DeepSeek-V3 does on CUDA cores; without it the whole K-long sum stays limited.
    """
    a, b = a.to(torch.float64), b.to(torch.float64)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need (M, K) @ (K, N) matrices, got {tuple(a.shape)} and {tuple(b.shape)}")
    if promote_every is not None and (not isinstance(promote_every, int) or promote_every < 1):
        raise ValueError(f"promote_every must be None or a positive int, got {promote_every!r}")
    M, K = a.shape
    partial = torch.zeros(M, b.shape[1], dtype=torch.float64)
    total = torch.zeros(M, b.shape[1], dtype=torch.float32)
    for k in range(K):
        partial = round_significand(partial + torch.outer(a[:, k], b[k]), bits, rounding)
        if promote_every is not None and (k + 1) % promote_every == 0:
            total = total + partial.to(torch.float32)
            partial = torch.zeros_like(partial)
    return (total.to(torch.float64) + partial).to(torch.float32) if promote_every else partial.to(torch.float32)


def accumulator_rounding(a: torch.Tensor, b: torch.Tensor, bits: int = 14, promote_every: int | None = None,
                         rounding: str = "nearest") -> dict[str, float]:
    """What each add of :func:`limited_precision_matmul`'s accumulator does, counted over all adds and outputs.

    Returns the fraction of adds that round at all (the rest are exact in ``bits`` bits), and, of
    the adds that round, the fraction whose error is positive and the fraction that shrinks the
    partial sum's magnitude (toward zero).
    """
    a, b = a.to(torch.float64), b.to(torch.float64)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need (M, K) @ (K, N) matrices, got {tuple(a.shape)} and {tuple(b.shape)}")
    partial = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64)
    adds = rounded = positive = shrinking = 0
    for k in range(a.shape[1]):
        s = partial + torch.outer(a[:, k], b[k])
        partial = round_significand(s, bits, rounding)
        err = partial - s
        adds += err.numel()
        rounded += int((err != 0).sum())
        positive += int((err > 0).sum())
        shrinking += int((partial.abs() < s.abs()).sum())
        if promote_every is not None and (k + 1) % promote_every == 0:
            partial = torch.zeros_like(partial)
    return {"adds that round": rounded / adds, "rounding errors > 0": positive / max(rounded, 1),
            "rounding errors toward zero": shrinking / max(rounded, 1)}


def fp8_codes(x: torch.Tensor, fmt: str = "FP8 E4M3FN") -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` scaled per tensor (``max_finite / amax``) and cast: the FP8 values a GEMM multiplies, and the scale.

    Unlike ``quantize_tensorwise(x).dequantized`` (the same values divided by the scale, which is
    not a power of two), every returned value is exactly representable in ``fmt``.
    """
    q = quantize_tensorwise(x, fmt)
    return cast(x * q.scale, q.fmt), q.scale


def gemm_operands(m: int, n: int, k: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Standard-normal ``(m, k)`` and ``(k, n)`` matrices as E4M3 values (:func:`fp8_codes`) with their scales."""
    g = torch.Generator().manual_seed(seed)
    a, scale_a = fp8_codes(torch.randn(m, k, generator=g))
    b, scale_b = fp8_codes(torch.randn(k, n, generator=g))
    return a, b, scale_a, scale_b


def accumulation_study(m: int = 8, n: int = 8, k: int = 4096, bits: int = 14, promote_every: int = 128,
                       rounding: str = "nearest", seed: int = 0) -> pd.DataFrame:
    """Relative error of an FP8 (E4M3, per-tensor scaled) GEMM of random matrices under three accumulators.

    The accumulators sum products of the FP8 values themselves (:func:`fp8_codes`), as a tensor
    core does, and the dequantization scales multiply the result; the reference is the exact
    (float64) product of the *same* FP8 inputs, so only accumulation error is measured. Rows: limited (``bits``) for all of K; limited with promotion to FP32 every
    ``promote_every``; FP32 throughout. Columns: accumulator, K, relative error (Frobenius norm
    ``||ΔC|| / ||C||``), and ``max |ΔC| / max |C|`` (the largest error against the largest output;
    not a per-element maximum relative error, which DeepSeek-V3's "maximum relative error" may be).
    """
    a, b, scale_a, scale_b = gemm_operands(m, n, k, seed)
    # The tensor core sums products of the FP8 values themselves and the dequantization scales
    # (1 / s) multiply the result afterwards (torch._scaled_mm's scale_a, scale_b).
    dequant = 1.0 / (float(scale_a) * float(scale_b))
    exact = (a.double() @ b.double()) * dequant
    fp32 = torch.zeros(m, n, dtype=torch.float32)
    for i in range(k):  # sequential FP32 sum, as a single FP32 accumulator would add
        fp32 = fp32 + torch.outer(a[:, i], b[i]).to(torch.float32)
    rows = []
    for name, c in ((f"{bits}-bit accumulator, whole K", limited_precision_matmul(a, b, bits, None, rounding)),
                    (f"{bits}-bit, promoted to FP32 every {promote_every}",
                     limited_precision_matmul(a, b, bits, promote_every, rounding)),
                    ("FP32 accumulator", fp32)):
        d = c.double() * dequant - exact
        rows.append({"accumulator": name, "K": k, "relative error": float(d.norm() / exact.norm()),
                     "max |ΔC| / max |C|": float(d.abs().max() / exact.abs().max())})
    return pd.DataFrame(rows)


def promotion_gain(study: pd.DataFrame) -> float:
    """How many times smaller the promoted accumulator's relative error is than the unpromoted one's."""
    e = study["relative error"].tolist()
    return e[0] / e[1] if e[1] > 0 else math.inf


def rounding_study(m: int = 8, n: int = 8, k: int = 4096, bits: int = 14, promote_every: int = 128,
                   seed: int = 0) -> pd.DataFrame:
    """:func:`accumulator_rounding` on :func:`accumulation_study`'s operands, per rounding mode, with and without promotion."""
    a, b, _, _ = gemm_operands(m, n, k, seed)
    return pd.DataFrame([{"rounding": r, "accumulator": name, **accumulator_rounding(a, b, bits, every, r)}
                         for r in ROUNDINGS
                         for name, every in ((f"{bits}-bit accumulator, whole K", None),
                                             (f"{bits}-bit, promoted to FP32 every {promote_every}", promote_every))])
