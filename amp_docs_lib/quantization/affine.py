"""Affine (scale and zero-point) integer quantization, written out for teaching.

A real value ``x`` is stored as an integer code ``q = clamp(round(x / s) + z, qmin, qmax)``
and read back as ``x' = (q - z) * s``. ``s`` (the scale) is the step between two
neighbouring codes; ``z`` (the zero point) is the code that represents 0.0.

The formulas follow torchao's ``choose_qparams_affine`` / ``quantize_affine`` /
``dequantize_affine`` exactly (signed codes, ``[-2^(b-1), 2^(b-1)-1]``; symmetric
scale ``max|x| / ((qmax - qmin) / 2)``; asymmetric scale ``(max - min) / (qmax - qmin)``
with the range stretched to include 0), and the tests check them code for code
against torchao and torch's ``fake_quantize_per_*_affine``.

Granularity says which elements share one scale: the whole tensor
(``"per_tensor"``), one row of a weight matrix (``"per_channel"``, one scale per
output channel) or ``group_size`` consecutive elements of a row (``"per_group"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from amp_docs_lib.core.checks import finite_tensor, nonempty_tensor

VALID_BITS = (2, 3, 4, 5, 6, 7, 8)
GRANULARITIES = ("per_tensor", "per_channel", "per_group")
SCHEMES = ("symmetric", "asymmetric")


def check_bits(bits: int) -> int:
    """Validate a bit width; raise ``ValueError`` naming the valid ones."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"bits must be an int, got {type(bits).__name__}; valid bit widths: {list(VALID_BITS)}")
    if int(bits) not in VALID_BITS:
        raise ValueError(f"invalid bit width {bits!r}; valid bit widths: {list(VALID_BITS)}")
    return int(bits)


def check_granularity(granularity: str) -> str:
    """Validate a granularity name; raise ``ValueError`` naming the valid ones."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"invalid granularity {granularity!r}; valid granularities: {list(GRANULARITIES)}")
    return granularity


def check_scheme(scheme: str) -> str:
    """Validate a scheme name (``"symmetric"`` or ``"asymmetric"``)."""
    if scheme not in SCHEMES:
        raise ValueError(f"invalid scheme {scheme!r}; valid schemes: {list(SCHEMES)}")
    return scheme


def quant_range(bits: int) -> tuple[int, int]:
    """Signed integer code range ``(qmin, qmax)`` of a ``bits``-bit integer, e.g. (-128, 127) for 8."""
    bits = check_bits(bits)
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def block_size(shape: tuple[int, ...], granularity: str, group_size: int = 32) -> tuple[int, ...]:
    """torchao's ``block_size`` for a granularity: the shape of the block that shares one scale.

    Args:
        shape: the tensor's shape (1-D or 2-D; rows are output channels).
        granularity: one of ``GRANULARITIES``.
        group_size: elements per group along the last dimension (``"per_group"`` only).
    """
    check_granularity(granularity)
    shape = tuple(int(s) for s in shape)
    if granularity == "per_tensor":
        return shape
    if len(shape) != 2:
        raise ValueError(f"{granularity} needs a 2-D weight (rows = output channels), got shape {shape}")
    if granularity == "per_channel":
        return (1, shape[1])
    if not isinstance(group_size, int) or group_size <= 0 or shape[1] % group_size:
        raise ValueError(f"group_size must be a positive int dividing the row length {shape[1]}, got {group_size!r}")
    return (1, group_size)


@dataclass(frozen=True)
class QParams:
    """Scale and zero point of one quantized tensor, one entry per block (see ``block_size``)."""

    scale: torch.Tensor
    zero_point: torch.Tensor
    bits: int
    scheme: str
    granularity: str
    block: tuple[int, ...]

    @property
    def qmin(self) -> int:
        return quant_range(self.bits)[0]

    @property
    def qmax(self) -> int:
        return quant_range(self.bits)[1]


def _blocks(x: torch.Tensor, block: tuple[int, ...]) -> torch.Tensor:
    """View ``x`` as (number of blocks, elements per block)."""
    if x.dim() == 1 or block == tuple(x.shape):
        return x.reshape(1, -1)
    rows, cols = x.shape
    return x.reshape(rows, cols // block[1], block[1]).reshape(-1, block[1])


def choose_qparams(x: torch.Tensor, bits: int = 8, *, scheme: str = "symmetric",
                   granularity: str = "per_tensor", group_size: int = 32) -> QParams:
    """Scale and zero point from the min/max of each block (torchao's formulas).

    Args:
        x: the float tensor (a weight: rows are output channels).
        bits: bit width, one of ``VALID_BITS``.
        scheme: ``"symmetric"`` (zero point 0, range +-max|x|) or ``"asymmetric"``
            (range [min(x, 0), max(x, 0)], zero point chosen so 0.0 is exact).
        granularity: ``"per_tensor"``, ``"per_channel"`` or ``"per_group"``.
        group_size: elements per group for ``"per_group"``.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor, got {type(x).__name__}")
    # A NaN or inf would become the block's scale (torchao's min/max propagate it): refuse it here.
    finite_tensor("x", nonempty_tensor("x", x))
    bits, scheme = check_bits(bits), check_scheme(scheme)
    block = block_size(tuple(x.shape), granularity, group_size)
    qmin, qmax = quant_range(bits)
    xb = _blocks(x.float(), block)
    lo = torch.clamp(xb.amin(dim=1), max=0.0)
    hi = torch.clamp(xb.amax(dim=1), min=0.0)
    eps = torch.finfo(torch.float32).smallest_normal
    if scheme == "symmetric":
        scale = torch.clamp(torch.maximum(-lo, hi) / ((qmax - qmin) / 2), min=eps)
        zp = torch.zeros_like(scale, dtype=torch.int32)
    else:
        scale = torch.clamp((hi - lo) / float(qmax - qmin), min=eps)
        zp = torch.clamp(qmin - torch.round(lo / scale), qmin, qmax).to(torch.int32)
    return QParams(scale, zp, bits, scheme, granularity, block)


def quantize(x: torch.Tensor, qp: QParams) -> torch.Tensor:
    """Integer codes ``clamp(round(x / scale) + zero_point, qmin, qmax)`` (int8 storage)."""
    xb = _blocks(x.float(), qp.block)
    q = torch.clamp(torch.round(xb * (1.0 / qp.scale[:, None])) + qp.zero_point[:, None], qp.qmin, qp.qmax)
    return q.to(torch.int8).reshape(x.shape)


def dequantize(q: torch.Tensor, qp: QParams) -> torch.Tensor:
    """Float values ``(q - zero_point) * scale``."""
    qb = _blocks(q.to(torch.int32), qp.block)
    return ((qb - qp.zero_point[:, None]).float() * qp.scale[:, None]).reshape(q.shape)


def fake_quantize(x: torch.Tensor, bits: int = 8, *, scheme: str = "symmetric",
                  granularity: str = "per_tensor", group_size: int = 32) -> torch.Tensor:
    """Quantize and dequantize ``x`` (what the quantized model computes with)."""
    qp = choose_qparams(x, bits, scheme=scheme, granularity=granularity, group_size=group_size)
    return dequantize(quantize(x, qp), qp)


def sqnr_db(reference: torch.Tensor, approx: torch.Tensor) -> float:
    """Signal-to-quantization-noise ratio in dB: ``10 log10(sum x^2 / sum (x - x')^2)``.

    ``inf`` when ``approx`` equals ``reference``; ``ValueError`` for empty tensors (no signal, no
    noise: the ratio is undefined) or shapes that differ (broadcasting would compare other elements).
    """
    nonempty_tensor("reference", reference)
    if tuple(reference.shape) != tuple(approx.shape):
        raise ValueError(f"reference and approx must have the same shape, got {tuple(reference.shape)} "
                         f"and {tuple(approx.shape)}")
    ref, app = reference.double(), approx.double()
    noise = float(((ref - app) ** 2).sum())
    signal = float((ref ** 2).sum())
    return float("inf") if noise == 0 else 10.0 * float(np.log10(signal / noise))


def scale_overhead_bits(shape: tuple[int, ...], qp: QParams, scale_bits: int = 32,
                        zero_point_bits: int = 8) -> float:
    """Extra bits per weight spent on scales (and zero points for asymmetric).

    A zero point is a code in ``[qmin, qmax]``; ``zero_point_bits=8`` is the int8 torchao stores
    (:func:`amp_docs_lib.quantization.ptq.metadata_bits_per_weight` reads it from its tensors).
    """
    n = int(np.prod(shape))
    per_block = scale_bits + (zero_point_bits if qp.scheme == "asymmetric" else 0)
    return qp.scale.numel() * per_block / n


def roundtrip_table(w: torch.Tensor, bits_list: tuple[int, ...] = (8, 4), group_size: int = 32) -> pd.DataFrame:
    """Round-trip error of ``w`` for each bit width, scheme and granularity.

    Columns: max error in units of the block's step (at most 0.5 for values
    inside the range), SQNR in dB and the bits per weight including the scales.
    """
    rows = []
    for bits in bits_list:
        for scheme in SCHEMES:
            for gran in GRANULARITIES:
                qp = choose_qparams(w, bits, scheme=scheme, granularity=gran, group_size=group_size)
                deq = dequantize(quantize(w, qp), qp)
                err = _blocks((w - deq).abs(), qp.block)
                rows.append({"bits": bits, "scheme": scheme, "granularity": gran,
                             "scales": qp.scale.numel(),
                             "max error / step": float((err / qp.scale[:, None]).max()),
                             "SQNR (dB)": sqnr_db(w, deq),
                             "bits per weight": bits + scale_overhead_bits(tuple(w.shape), qp)})
    return pd.DataFrame(rows)


def sqnr_per_bit(w: torch.Tensor, bits: tuple[int, int] = (8, 4), *, scheme: str = "symmetric",
                 granularity: str = "per_channel", group_size: int = 32) -> dict:
    """SQNR lost per bit from ``bits[0]`` to ``bits[1]``, against the uniform-noise model's prediction.

    The model says the rounding error is uniform over one step, noise power ``s^2 / 12`` per element
    with that element's block scale ``s``; its prediction uses the scales this convention chose (so
    the step ratio of ``(2^b - 1)`` levels, not an exact halving per bit), and it fails where values
    do not spread over many steps (most rounding to zero, or clipping). ``tolerance (dB per bit)`` is
    two standard errors of the measured drop: each SQNR's noise power is a mean of squared errors,
    whose standard error is taken from the errors themselves.
    """
    out = {}
    for b in bits:
        qp = choose_qparams(w, b, scheme=scheme, granularity=granularity, group_size=group_size)
        err2 = ((w - dequantize(quantize(w, qp), qp)).double() ** 2).flatten()
        step2 = (_blocks(torch.ones_like(w), qp.block) * qp.scale[:, None]).double().flatten() ** 2
        out[b] = {"sqnr": sqnr_db(w, dequantize(quantize(w, qp), qp)),
                  "model noise": float((step2 / 12).mean()), "noise": float(err2.mean()),
                  "se dB": 10 / np.log(10) * float(err2.std() / err2.mean()) / np.sqrt(err2.numel())}
    hi, lo = bits
    signal = float((w.double() ** 2).mean())
    model = {b: 10 * np.log10(signal / out[b]["model noise"]) for b in bits}
    return {"measured (dB per bit)": (out[hi]["sqnr"] - out[lo]["sqnr"]) / (hi - lo),
            "uniform-noise model (dB per bit)": float(model[hi] - model[lo]) / (hi - lo),
            "halving the step per bit (dB per bit)": float(20 * np.log10(2)),
            "tolerance (dB per bit)": 2 * float(np.hypot(out[hi]["se dB"], out[lo]["se dB"])) / (hi - lo)}


def inject_outlier_channel(w: torch.Tensor, channel: int = 0, factor: float = 20.0) -> torch.Tensor:
    """A copy of ``w`` with one output channel (row) multiplied by ``factor``."""
    if w.dim() != 2 or not 0 <= channel < w.shape[0]:
        raise ValueError(f"need a 2-D weight and a channel in [0, {w.shape[0] if w.dim() == 2 else 0}), "
                         f"got shape {tuple(w.shape)} and channel {channel!r}")
    out = w.clone()
    out[channel] *= factor
    return out


def granularity_table(w: torch.Tensor, outlier_channel: int = 0, factor: float = 20.0,
                      bits_list: tuple[int, ...] = (8, 4), group_size: int = 32) -> pd.DataFrame:
    """SQNR of the *other* channels per granularity, on ``w`` and with one outlier channel.

    One channel multiplied by ``factor`` stretches a per-tensor scale for every
    row; per-channel and per-group scales keep the other rows' resolution.
    """
    w_out = inject_outlier_channel(w, outlier_channel, factor)
    keep = torch.ones(w.shape[0], dtype=torch.bool)
    keep[outlier_channel] = False
    rows = []
    for bits in bits_list:
        for gran in GRANULARITIES:
            row = {"bits": bits, "granularity": gran}
            for label, t in (("as trained", w), (f"channel {outlier_channel} x{factor:g}", w_out)):
                deq = fake_quantize(t, bits, scheme="symmetric", granularity=gran, group_size=group_size)
                row[f"SQNR other channels, {label} (dB)"] = sqnr_db(t[keep], deq[keep])
            rows.append(row)
    return pd.DataFrame(rows)


def plot_grid(w: torch.Tensor, bits: int = 4, scheme: str = "symmetric"):
    """Histogram of ``w`` with the per-tensor quantization grid of ``bits`` bits drawn over it."""
    import matplotlib.pyplot as plt

    qp = choose_qparams(w, bits, scheme=scheme, granularity="per_tensor")
    codes = torch.arange(qp.qmin, qp.qmax + 1)
    grid = ((codes - qp.zero_point[0]).float() * qp.scale[0]).numpy()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(w.flatten().numpy(), bins=120, color="C0", alpha=0.8, label="weights")
    for i, g in enumerate(grid):
        ax.axvline(g, color="C3", lw=0.8, alpha=0.7, label=f"INT{bits} {scheme} grid" if i == 0 else None)
    ax.set_xlabel("weight value")
    ax.set_ylabel("count")
    ax.set_title(f"{2 ** bits} levels, step {float(qp.scale[0]):.3g}")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def compare_with_torchao(w: torch.Tensor, bits_list: tuple[int, ...] = (8, 4), group_size: int = 32) -> pd.DataFrame:
    """Codes and scales of this module against torchao's ``choose_qparams_affine`` / ``quantize_affine``.

    One row per bit width, scheme and granularity: how many integer codes
    differ and the largest relative scale difference (both 0 when the
    formulas agree).
    """
    from torchao.quantization.quant_primitives import MappingType, choose_qparams_affine, quantize_affine

    rows = []
    for bits in bits_list:
        qmin, qmax = quant_range(bits)
        for scheme in SCHEMES:
            mapping = MappingType.SYMMETRIC if scheme == "symmetric" else MappingType.ASYMMETRIC
            for gran in GRANULARITIES:
                qp = choose_qparams(w, bits, scheme=scheme, granularity=gran, group_size=group_size)
                s, z = choose_qparams_affine(w, mapping, qp.block, torch.int8, qmin, qmax)
                q_ao = quantize_affine(w, qp.block, s, z, torch.int8, qmin, qmax)
                rows.append({"bits": bits, "scheme": scheme, "granularity": gran,
                             "codes that differ": int((quantize(w, qp) != q_ao).sum()),
                             "max relative scale difference": float(((qp.scale - s.flatten()).abs()
                                                                     / s.flatten()).max())})
    return pd.DataFrame(rows)
