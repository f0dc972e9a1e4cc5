"""Scaling strategies for FP8 and MX formats, and the error they leave.

A low-precision format has a fixed range; a *scale* moves a tensor into it. With the
quantization scale ``s``, a value is stored as ``q = cast(x * s)`` and read back as ``q / s``.

* **per-tensor, current** (:func:`quantize_tensorwise`): ``s = max_finite / amax(x)`` from the
  tensor itself (torchao's "tensorwise" recipe, Transformer Engine's ``Float8CurrentScaling``).
* **per-tensor, delayed** (:class:`DelayedScaler`): ``s = max_finite / max(amax history) / 2^margin``
  from *previous* steps, as Transformer Engine's ``DelayedScaling`` (history rolled after each
  step, ``amax_compute_algo`` "max" or "most_recent"); a tensor larger than the history saturates.
* **per-row** (:func:`quantize_rowwise`): one scale per row (torchao's "rowwise" recipe).
* **MX block scaling** (:func:`mx_quantize`): one power-of-two scale per block of 32 consecutive
  elements, stored as E8M0 (OCP MX v1.0), elements ``cast(x / X)`` saturating. How ``X`` is rounded
  is a choice: the specification's ``X = 2^(floor(log2(amax_block)) - emax_elem)`` ("floor", which can
  saturate a block's largest values), or torchao's ``ScaleCalculationMode`` alternatives "ceil",
  "even" and "rceil" (``X = 2^ceil(log2(amax_block / max_finite))``, what
  Transformer Engine computes and torchao's MXFP8 training recipes use). Bit-for-bit equal to
  torchao's ``to_mx`` in every mode (tested).

Metrics (:func:`error_metrics`): SQNR in dB, fraction saturated (clamped at the format's
largest value), fraction flushed to zero (non-zero inputs that read back as 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from amp_docs_lib.fp8.formats import FP8_FORMATS, MX_ELEMENT_FORMATS, cast, element_format, encode_tensor, max_finite
from amp_docs_lib.core.checks import nonempty_tensor
from amp_docs_lib.numbers.formats import get_format

MX_BLOCK_SIZES = (32,)
MX_MODES = ("floor", "ceil", "even", "rceil")
# The rounding rule of the MX scale that production MXFP8 training uses (torchao's
# prototype.moe_training MXFP8 recipes and Transformer Engine both round the scale up: RCEIL).
MX_TRAINING_MODE = "rceil"
MX_NAMES = {"MXFP8 E4M3": "FP8 E4M3FN", "MXFP8 E5M2": "FP8 E5M2", "MXFP6 E2M3": "FP6 E2M3",
            "MXFP6 E3M2": "FP6 E3M2", "MXFP4 E2M1": "FP4 E2M1"}
E8M0_BIAS = 127


@dataclass
class Quantized:
    """A quantized tensor read back: dequantized values and the bookkeeping of the cast.

    ``scale`` is the quantization scale (multiply to quantize); for MX it is ``1 / X`` per block.
    ``saturated`` and ``flushed`` are boolean masks shaped like the input.
    """

    dequantized: torch.Tensor
    scale: torch.Tensor
    saturated: torch.Tensor
    flushed: torch.Tensor
    fmt: str
    strategy: str


def _check_2d(x: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor, got {x.dtype}")
    nonempty_tensor("x", x)  # an empty tensor has no amax to scale by
    return x.detach().to(torch.float32)


def overflow_threshold(fmt: str) -> float:
    """Smallest magnitude that round-to-nearest would carry past the largest finite value:
    max_finite plus half the spacing of the top binade (464 for E4M3FN, 61440 for E5M2, 7 for FP4).
    Values at or above it are *saturated* (clamped); values below it round to max_finite anyway."""
    f = element_format(fmt)
    m = max_finite(f)
    return m + 2.0 ** (math.floor(math.log2(m)) - f.mantissa_bits - 1)


def _finish(x: torch.Tensor, scale: torch.Tensor, fmt: str, strategy: str) -> Quantized:
    xs = x * scale
    q = cast(xs, fmt)
    deq = q / scale
    return Quantized(deq, scale, xs.abs() >= overflow_threshold(fmt), (x != 0) & (deq == 0), fmt, strategy)


def scale_from_amax(amax: torch.Tensor, fmt: str, margin: int = 0) -> torch.Tensor:
    """Quantization scale ``max_finite / amax / 2^margin`` (1 where amax is 0 or not finite)."""
    m = max_finite(element_format(fmt))
    amax = amax.to(torch.float32)
    s = (m / amax) / (2.0 ** margin)
    ok = (amax > 0) & torch.isfinite(amax)
    return torch.where(ok, s, torch.ones_like(s))


def quantize_unscaled(x: torch.Tensor, fmt: str = "FP8 E4M3FN") -> Quantized:
    """Cast with scale 1: what a format does to a tensor without any scaling."""
    x = _check_2d(x)
    return _finish(x, torch.ones((), dtype=torch.float32), element_format(fmt).name, "none (scale 1)")


def quantize_tensorwise(x: torch.Tensor, fmt: str = "FP8 E4M3FN", *, amax: float | torch.Tensor | None = None,
                        margin: int = 0) -> Quantized:
    """Per-tensor scaling; current scaling (amax of ``x``) unless ``amax`` is given (delayed)."""
    x = _check_2d(x)
    f = element_format(fmt).name
    a = x.abs().amax() if amax is None else torch.as_tensor(amax, dtype=torch.float32)
    return _finish(x, scale_from_amax(a, f, margin), f, "per-tensor")


def quantize_rowwise(x: torch.Tensor, fmt: str = "FP8 E4M3FN", *, power_of_two: bool = False) -> Quantized:
    """Per-row scaling: one scale per row of a 2-D tensor (amax over the last dimension). ``power_of_two``
    rounds each scale down to a power of two, as torchao's rowwise recipes do
    (``round_scales_to_power_of_2=True``; ``torchao/float8/float8_utils.py``, ``_round_scale_down_to_power_of_2``)."""
    x = _check_2d(x)
    if x.dim() != 2:
        raise ValueError(f"rowwise scaling takes a 2-D tensor, got shape {tuple(x.shape)}")
    f = element_format(fmt).name
    scale = scale_from_amax(x.abs().amax(dim=1, keepdim=True), f)
    if power_of_two:
        scale = torch.exp2(torch.floor(torch.log2(scale)))
    return _finish(x, scale, f, "per-row, power-of-two scales" if power_of_two else "per-row")


def emax_elem(fmt: str) -> int:
    """Exponent of the largest power of two the element format holds: floor(log2(max_finite))."""
    return math.floor(math.log2(max_finite(element_format(fmt))))


@dataclass
class MXQuantized(Quantized):
    """An MX-quantized tensor: E8M0 block scales and element codes, plus the read-back values.

    ``scale_e8m0``: ``torch.float8_e8m0fnu``, one per block, shape ``(*x.shape[:-1], K // block)``.
    ``codes``: uint8 element codes, one per element (FP4/FP6 unpacked, in the low bits).
    """

    scale_e8m0: torch.Tensor = None
    codes: torch.Tensor = None
    block_size: int = 32


def mx_scale_exponent(amax: torch.Tensor, fmt: str, mode: str = "floor") -> torch.Tensor:
    """The unbiased E8M0 exponent of each block's scale ``X = 2^e`` from the block's amax (int32).

    ``floor``: ``floor(log2(amax)) - emax_elem`` (OCP MX v1.0). ``ceil``: the same with the exponent
    rounded up when amax is not a power of two (never saturates, may waste the top binade).
    ``even``: amax rounded to the element format's mantissa width (half up) first, then floor.
    ``rceil``: ``ceil(log2(amax / max_finite))`` (the smallest power of two that maps amax inside the
    range; cuBLAS's and Transformer Engine's rule, torchao's RCEIL). Clamped to E8M0's range.
    """
    f = element_format(fmt)
    if mode not in MX_MODES:
        raise ValueError(f"unknown MX scale mode {mode!r}; valid: {list(MX_MODES)}")
    if mode == "rceil":
        e = torch.ceil(torch.log2(amax / max_finite(f))).clamp(-E8M0_BIAS, E8M0_BIAS)
        return torch.where(torch.isnan(amax), torch.full_like(e, E8M0_BIAS + 1), e).to(torch.int32)
    a = amax
    if mode == "even":
        _, exp = torch.frexp(amax)
        half_ulp = torch.ldexp(torch.full_like(amax, 0.5), (exp - 1 - f.mantissa_bits).to(torch.int32))
        a = torch.where(amax > 0, amax + half_ulp, amax)
    mant, exp = torch.frexp(a)             # a = mant * 2^exp, mant in [0.5, 1)
    e = (exp - 1).to(torch.int32)          # floor(log2(a)) for a > 0
    if mode == "ceil":
        e = e + (mant != 0.5).to(torch.int32)
    e = torch.where(amax > 0, e, torch.full_like(e, -E8M0_BIAS))
    return (e - emax_elem(f)).clamp(-E8M0_BIAS, E8M0_BIAS + 1)


def mx_quantize(x: torch.Tensor, fmt: str = "FP8 E4M3FN", block_size: int = 32, mode: str = "floor", *,
                any_block_size: bool = False) -> MXQuantized:
    """MX block quantization along the last dimension (OCP MX v1.0, section 6.3).

    Each block of ``block_size`` consecutive elements shares ``X = 2^e`` with ``e`` from
    :func:`mx_scale_exponent` (``mode``: "floor", the specification's rule and torchao's default;
    "ceil", "even" or "rceil"); the unbiased exponent is clamped to E8M0's range [-127, 127]
    (+128 encodes NaN for a NaN block). Elements are ``cast(x / X)``, saturating. ``any_block_size``
    allows blocks other than the specification's 32 (not MX then: an ablation's power-of-two scales).
    """
    x = _check_2d(x)
    f = element_format(fmt).name
    if not any_block_size and block_size not in MX_BLOCK_SIZES:
        raise ValueError(f"unsupported MX block size {block_size!r}; valid: {list(MX_BLOCK_SIZES)} "
                         "(OCP MX v1.0 defines k = 32)")
    if mode not in MX_MODES:
        raise ValueError(f"unknown MX scale mode {mode!r}; valid: {list(MX_MODES)}")
    if x.shape[-1] % block_size:
        raise ValueError(f"last dimension {x.shape[-1]} is not a multiple of the block size {block_size}")
    shape = x.shape
    xb = x.reshape(*shape[:-1], shape[-1] // block_size, block_size)
    amax = xb.abs().amax(dim=-1, keepdim=True)
    unbiased = mx_scale_exponent(amax, f, mode)
    biased = torch.where(torch.isnan(amax), torch.full_like(unbiased, 255), unbiased + E8M0_BIAS)
    X = torch.exp2(unbiased.to(torch.float64)).to(torch.float32).clamp(min=torch.finfo(torch.float32).tiny)
    scaled = xb / X
    q = cast(scaled, f)
    deq = (q.to(torch.float64) * X.to(torch.float64)).to(torch.float32)
    codes = encode_tensor(scaled, f).reshape(shape)
    scale_e8m0 = biased.to(torch.uint8).squeeze(-1).view(torch.float8_e8m0fnu)
    return MXQuantized(deq.reshape(shape), (1.0 / X).expand_as(xb).reshape(shape),
                       (scaled.abs() >= overflow_threshold(f)).reshape(shape), ((xb != 0) & (deq == 0)).reshape(shape),
                       f, f"MX block {block_size}, {mode}", scale_e8m0=scale_e8m0, codes=codes, block_size=block_size)


def torchao_to_mx(x: torch.Tensor, fmt: str = "FP8 E4M3FN", block_size: int = 32, mode: str = "floor"):
    """torchao's reference ``MXTensor.to_mx`` on the same tensor: (E8M0 scales, uint8 element codes).

    FP4 codes come packed two per byte from torchao and are unpacked here (low nibble first).
    """
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.mx_tensor import MXTensor

    f = element_format(fmt).name
    elem = {"FP8 E4M3FN": torch.float8_e4m3fn, "FP8 E5M2": torch.float8_e5m2, "FP6 E2M3": DTYPE_FP6_E2M3,
            "FP6 E3M2": DTYPE_FP6_E3M2, "FP4 E2M1": torch.float4_e2m1fn_x2}[f]
    if mode not in MX_MODES:
        raise ValueError(f"unknown MX scale mode {mode!r}; valid: {list(MX_MODES)}")
    smode = ScaleCalculationMode(mode)
    t = MXTensor.to_mx(x.detach().to(torch.float32).contiguous(), elem, block_size=block_size, scaling_mode=smode)
    scale, data = t.scale, t.qdata
    if f == "FP4 E2M1":
        codes = unpack_uint4(data.view(torch.uint8)).reshape(x.shape)
    else:
        codes = data.view(torch.uint8).reshape(x.shape)
    return scale.reshape(*x.shape[:-1], x.shape[-1] // block_size), codes


def compare_with_torchao(tensors: dict[str, torch.Tensor], fmts=MX_ELEMENT_FORMATS, modes=MX_MODES) -> pd.DataFrame:
    """Bit-compare :func:`mx_quantize` with torchao's ``to_mx``: mismatching scales and elements."""
    rows = []
    for fmt in fmts:
        for mode in modes:
            n_el = n_sc = bad_el = bad_sc = 0
            for x in tensors.values():
                ours = mx_quantize(x, fmt, 32, mode)
                ts, tc = torchao_to_mx(x, fmt, 32, mode)
                bad_sc += int((ours.scale_e8m0.view(torch.uint8) != ts.view(torch.uint8)).sum())
                bad_el += int((ours.codes != tc).sum())
                n_sc += ts.numel()
                n_el += tc.numel()
            rows.append({"element format": fmt, "scale mode": mode, "tensors": len(tensors),
                         "scales compared": n_sc, "scale mismatches": bad_sc,
                         "elements compared": n_el, "element mismatches": bad_el,
                         "torchao scale dtype": str(ts.dtype)})
    return pd.DataFrame(rows)


def error_metrics(x: torch.Tensor, q: Quantized, mask: torch.Tensor | None = None) -> dict:
    """SQNR (dB), fraction saturated, fraction flushed to zero; over ``mask`` if given."""
    x = x.detach().to(torch.float64)
    d = q.dequantized.to(torch.float64)
    sat, fl = q.saturated, q.flushed
    if mask is not None:
        x, d, sat, fl = x[mask], d[mask], sat[mask], fl[mask]
    noise = float(((x - d) ** 2).sum())
    signal = float((x ** 2).sum())
    sqnr = math.inf if noise == 0 else 10 * math.log10(signal / noise)
    return {"SQNR (dB)": sqnr, "saturated": float(sat.double().mean()), "flushed to zero": float(fl.double().mean())}


MX_STRATEGY = f"MX block 32, {MX_TRAINING_MODE}"
STRATEGIES = ("none (scale 1)", "per-tensor", "per-row", MX_STRATEGY)


def quantize(x: torch.Tensor, fmt: str, strategy: str) -> Quantized:
    """Dispatch to a strategy by name (one of :data:`STRATEGIES`, or ``"MX block 32, <mode>"`` for any
    of :data:`MX_MODES`)."""
    fn = {"none (scale 1)": quantize_unscaled, "per-tensor": quantize_tensorwise, "per-row": quantize_rowwise}
    fn.update({f"MX block 32, {m}": (lambda y, f, m=m: mx_quantize(y, f, 32, m)) for m in MX_MODES})
    if strategy not in fn:
        raise ValueError(f"unknown scaling strategy {strategy!r}; valid: {list(fn)}")
    return fn[strategy](x, fmt)


def strategy_table(tensors: dict[str, torch.Tensor], fmts=FP8_FORMATS + ("FP6 E2M3", "FP6 E3M2", "FP4 E2M1"),
                   strategies=STRATEGIES) -> pd.DataFrame:
    """Every tensor x format x strategy: SQNR, saturated, flushed. FP6/FP4 only with MX scaling
    (they have no sensible use unscaled); block scaling needs the last dimension to divide by 32."""
    rows = []
    for name, x in tensors.items():
        kind = name.split(":")[0]
        for fmt in fmts:
            for strat in strategies:
                is_mx = strat.startswith("MX block")
                if fmt not in FP8_FORMATS and not is_mx:
                    continue
                if is_mx and x.shape[-1] % 32:
                    continue
                q = quantize(x, fmt, strat)
                rows.append({"tensor": name, "kind": kind, "format": fmt, "strategy": strat, **error_metrics(x, q)})
    return pd.DataFrame(rows)


def mx_mode_table(tensors: dict[str, torch.Tensor], fmts=MX_ELEMENT_FORMATS, modes=MX_MODES) -> pd.DataFrame:
    """MX block scaling of the same tensors under every scale rounding rule, side by side.

    Per tensor kind, element format and mode: median SQNR, mean saturated and mean flushed fraction
    (a power-of-two scale changes only which elements saturate or fall into the subnormals, so the
    three together say what a rule does; the median SQNR alone hides the flushed ones).
    """
    table = strategy_table(tensors, fmts, tuple(f"MX block 32, {m}" for m in modes))
    table["mode"] = table["strategy"].str.rsplit(", ", n=1).str[-1]
    g = table.groupby(["kind", "format", "mode"], sort=False)
    return g.agg(**{"median SQNR (dB)": ("SQNR (dB)", "median"), "mean saturated": ("saturated", "mean"),
                    "mean flushed": ("flushed to zero", "mean"), "tensors": ("tensor", "count")}).reset_index()


def strategy_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Median SQNR and mean saturated / flushed fractions per kind, format and strategy."""
    g = table.groupby(["kind", "format", "strategy"], sort=False)
    return g.agg(**{"median SQNR (dB)": ("SQNR (dB)", "median"), "mean saturated": ("saturated", "mean"),
                    "mean flushed": ("flushed to zero", "mean"), "tensors": ("tensor", "count")}).reset_index()


def sqnr_by_strategy(summary: pd.DataFrame, fmts=FP8_FORMATS) -> pd.DataFrame:
    """One row per format and scaling strategy of a :func:`strategy_summary`: median SQNR per kind.

    Columns: format, strategy, ``<kind> median SQNR (dB)`` for each tensor kind (activation,
    weight, gradient, in that order when present), and ``gradient flushed (fraction)``, the mean
    fraction of gradient elements flushed to zero. Only the formats in ``fmts`` are kept.
    """
    need = {"kind", "format", "strategy", "median SQNR (dB)", "mean flushed"}
    if need - set(summary.columns):
        raise ValueError(f"need a strategy_summary() frame; missing columns {sorted(need - set(summary.columns))}")
    s = summary[summary["format"].isin(fmts)]
    if s.empty:
        raise ValueError(f"no rows with a format in {list(fmts)}; formats present: {sorted(set(summary['format']))}")
    kinds = [k for k in ("activation", "weight", "gradient") if k in set(s["kind"])] + \
        sorted(set(s["kind"]) - {"activation", "weight", "gradient"})
    keys = list(dict.fromkeys(zip(s["format"], s["strategy"])))
    t = s.set_index(["format", "strategy", "kind"])
    rows = []
    for fmt, strat in keys:
        row = {"format": fmt, "strategy": strat}
        for k in kinds:
            row[f"{k} median SQNR (dB)"] = float(t.loc[(fmt, strat, k), "median SQNR (dB)"]) \
                if (fmt, strat, k) in t.index else None
        if "gradient" in kinds:
            row["gradient flushed (fraction)"] = float(t.loc[(fmt, strat, "gradient"), "mean flushed"]) \
                if (fmt, strat, "gradient") in t.index else None
        rows.append(row)
    return pd.DataFrame(rows).astype(object)


def inject_outlier(x: torch.Tensor, factor: float = 1000.0, index: tuple[int, int] = (0, 0)) -> tuple[torch.Tensor, torch.Tensor]:
    """A copy of 2-D ``x`` with ``x[index] = factor * amax(x)``, and the mask of all other elements."""
    y = _check_2d(x).clone()
    y[index] = factor * float(y.abs().max())
    mask = torch.ones_like(y, dtype=torch.bool)
    mask[index] = False
    return y, mask


def outlier_sensitivity(x: torch.Tensor, fmt: str = "FP8 E4M3FN", factors=(1.0, 1e2, 1e3, 1e4, 1e5)) -> pd.DataFrame:
    """SQNR and flushed fraction of the *other* elements when one element is an outlier.

    ``factor`` is the outlier's size relative to the tensor's own amax (1 = no outlier effect).
    Per-tensor scaling lets one outlier coarsen the whole tensor, per-row only its row, MX only its block.
    """
    rows = []
    for factor in factors:
        y, mask = inject_outlier(x, factor)
        for strat in STRATEGIES[1:]:
            rows.append({"outlier / amax": factor, "strategy": strat, **error_metrics(y, quantize(y, fmt, strat), mask)})
    return pd.DataFrame(rows)


def outlier_channels(x: torch.Tensor, channels: int = 4, factor: float = 100.0, *, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A copy of 2-D activation ``x`` (tokens x channels) with ``channels`` feature columns scaled by ``factor``.

    Large language models' activations carry a few channels much larger than the rest, across most
    tokens (Dettmers et al., LLM.int8(), 2022: magnitude 6 and more, in about 75% of sequence
    positions at 6.7B parameters; Fishman et al. 2025 trace FP8 instabilities to such outliers). Returns the tensor and the mask of the elements *outside* the
    outlier channels.
    """
    y = _check_2d(x).clone()
    if y.dim() != 2 or not 0 < channels < y.shape[1]:
        raise ValueError(f"need a 2-D tensor with more than {channels!r} columns and channels > 0, got shape "
                         f"{tuple(y.shape)}")
    cols = torch.randperm(y.shape[1], generator=torch.Generator().manual_seed(seed))[:channels]
    y[:, cols] *= factor
    mask = torch.ones_like(y, dtype=torch.bool)
    mask[:, cols] = False
    return y, mask


def tiled_columns(x: torch.Tensor, width: int) -> torch.Tensor:
    """``x`` (2-D) repeated along its columns and cut to ``width`` columns: a wider tensor with the same
    statistics, so that each row holds enough MX blocks for a channel outlier to miss most of them."""
    x = _check_2d(x)
    if x.dim() != 2 or not isinstance(width, int) or width < 1:
        raise ValueError(f"need a 2-D tensor and a positive int width, got shape {tuple(x.shape)}, width {width!r}")
    return x.repeat(1, math.ceil(width / x.shape[1]))[:, :width].contiguous()


def outlier_channel_blocks(x: torch.Tensor, channels: int = 4, block: int = 32) -> int:
    """How many of a row's MX blocks hold one of the outlier channels that :func:`outlier_channels` plants."""
    _, mask = outlier_channels(x, channels)
    if mask.shape[1] % block:
        raise ValueError(f"the tensor's {mask.shape[1]} columns are not a multiple of the block size {block}")
    return int((~mask[0]).reshape(-1, block).any(-1).sum())


def outlier_channel_table(x: torch.Tensor, fmts=FP8_FORMATS, channels: int = 4,
                          factors=(1.0, 10.0, 100.0, 1000.0)) -> pd.DataFrame:
    """Per-tensor, per-row (per token) and MX (RCEIL) scaling of ``x`` with planted outlier channels.

    SQNR and flushed fraction over the elements outside the outlier channels. Every row contains
    the outlier channels, so per-row scaling does no better than per-tensor; a block of 32 only
    suffers when it holds one of them.
    """
    rows = []
    for factor in factors:
        y, mask = outlier_channels(x, channels, factor)
        for fmt in fmts:
            for strat in STRATEGIES[1:]:
                rows.append({"channel factor": factor, "format": fmt, "strategy": strat,
                             **error_metrics(y, quantize(y, fmt, strat), mask)})
    return pd.DataFrame(rows)


class DelayedScaler:
    """Per-tensor delayed scaling as Transformer Engine's ``DelayedScaling`` recipe computes it.

    The scale used at a step comes from the amax history of *previous* steps:
    ``scale = max_finite / amax / 2^margin`` with ``amax = max(history)`` (``algo="max"``) or the
    most recent entry (``"most_recent"``); the initial scale is 1. After each step the tensor's
    own amax enters the history and the oldest entry leaves.
    """

    ALGOS = ("max", "most_recent")

    def __init__(self, fmt: str = "FP8 E4M3FN", history_len: int = 16, margin: int = 0, algo: str = "max"):
        if not isinstance(history_len, int) or history_len < 1:
            raise ValueError(f"history_len must be a positive int, got {history_len!r}")
        if not isinstance(margin, int) or margin < 0:
            raise ValueError(f"margin must be a non-negative int, got {margin!r}")
        if algo not in self.ALGOS:
            raise ValueError(f"unknown amax_compute_algo {algo!r}; valid: {list(self.ALGOS)}")
        self.fmt = element_format(fmt).name
        self.history_len, self.margin, self.algo = history_len, margin, algo
        self.history: list[float] = []
        self.scale = torch.tensor(1.0)

    def quantize(self, x: torch.Tensor) -> Quantized:
        """Quantize with the current (delayed) scale, then record amax and update the scale."""
        x = _check_2d(x)
        q = _finish(x, self.scale.clone(), self.fmt, f"delayed (history {self.history_len}, margin {self.margin})")
        self.history = (self.history + [float(x.abs().max())])[-self.history_len:]
        amax = max(self.history) if self.algo == "max" else self.history[-1]
        self.scale = scale_from_amax(torch.tensor(amax), self.fmt, self.margin)
        return q


def spike_stream(x: torch.Tensor, steps: int, *, spike_at: int, spike: float = 50.0,
                 ramp_at: int | None = None, ramp_steps: int = 8, growth: float = 1.5, seed: int = 0) -> list[torch.Tensor]:
    """A stream of tensors shaped like ``x``: steady noise around ``x``; one step multiplied by
    ``spike``; from ``ramp_at`` the magnitude grows by ``growth`` per step for ``ramp_steps`` steps."""
    g = torch.Generator().manual_seed(seed)
    x = _check_2d(x)
    out, level = [], 1.0
    for t in range(steps):
        if ramp_at is not None and ramp_at <= t < ramp_at + ramp_steps:
            level *= growth
        noise = 1 + 0.05 * torch.randn(x.shape, generator=g)
        out.append(x * noise * level * (spike if t == spike_at else 1.0))
    return out


def delayed_scaling_run(stream: list[torch.Tensor], fmt: str = "FP8 E4M3FN", history_len: int = 16,
                        margins=(0, 1), algo: str = "max") -> pd.DataFrame:
    """Quantize a stream with current scaling and with delayed scaling (one run per margin).

    One row per step and method: the tensor's amax, the scale used, fraction saturated, SQNR.
    """
    rows = []
    scalers = {f"delayed, margin {m}": DelayedScaler(fmt, history_len, m, algo) for m in margins}
    for t, x in enumerate(stream):
        amax = float(x.abs().max())
        q = quantize_tensorwise(x, fmt)
        rows.append({"step": t, "method": "current", "amax": amax, "scale": float(q.scale), **error_metrics(x, q)})
        for name, s in scalers.items():
            q = s.quantize(x)
            rows.append({"step": t, "method": name, "amax": amax, "scale": float(q.scale), **error_metrics(x, q)})
    return pd.DataFrame(rows)


def overflow_windows(run: pd.DataFrame) -> pd.DataFrame:
    """Per method: steps with any saturated element, and the longest run of consecutive such steps."""
    rows = []
    for method, g in run.groupby("method", sort=False):
        sat = (g["saturated"] > 0).to_numpy()
        longest = cur = 0
        for s in sat:
            cur = cur + 1 if s else 0
            longest = max(longest, cur)
        steps = g.loc[g["saturated"] > 0, "step"].tolist()
        rows.append({"method": method, "steps with saturation": len(steps), "longest window (steps)": longest,
                     "saturating steps": ", ".join(map(str, steps)) if steps else None,
                     "median SQNR (dB)": float(g["SQNR (dB)"].median()),
                     "min SQNR (dB)": float(g["SQNR (dB)"].min())})
    return pd.DataFrame(rows)


def plot_delayed_scaling(run: pd.DataFrame, spike_at: int | None = None, ramp_at: int | None = None):
    """Two panels over steps: fraction saturated and SQNR, one line per method."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5.4), sharex=True, layout="constrained")
    for method, g in run.groupby("method", sort=False):
        a1.plot(g["step"], g["saturated"], label=method, lw=1.2, drawstyle="steps-mid")
        a2.plot(g["step"], g["SQNR (dB)"], label=method, lw=1.2)
    for ax in (a1, a2):
        for s, lab in ((spike_at, "spike"), (ramp_at, "ramp starts")):
            if s is not None:
                ax.axvline(s, ls=":", color="0.5")
    a1.set_ylabel("fraction saturated")
    a2.set_ylabel("SQNR (dB)")
    a2.set_xlabel("step")
    a1.legend(fontsize=8)
    a1.set_title("Delayed vs current per-tensor scaling:\na one-step spike, then a growing tensor")
    return fig


def plot_sqnr(table: pd.DataFrame):
    """Median SQNR per format and strategy, one panel per tensor kind (bars in each element format's
    colour of ``core.palette``, each labelled with its value so that a bar near 0 dB is still read),
    with the normal-range bounds of E4M3 and E5M2 (:func:`sqnr_prediction_db`) drawn as lines and
    named in a legend above the panels."""
    import matplotlib.pyplot as plt

    from amp_docs_lib.core.palette import color_or_default

    summary = strategy_summary(table)
    kinds = list(dict.fromkeys(summary["kind"]))
    fmts = list(dict.fromkeys(summary["format"]))
    colour = {f: color_or_default(f, f"C{i}") for i, f in enumerate(fmts)}
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 5.4), sharey=True, layout="constrained")
    axes = np.atleast_1d(axes)
    top = float(summary["median SQNR (dB)"].max())
    for ax, kind in zip(axes, kinds):
        s = summary[summary["kind"] == kind]
        values = s["median SQNR (dB)"].astype(float)
        ax.barh(range(len(s)), values.clip(lower=0), color=[colour[f] for f in s["format"]])
        for y, v in enumerate(values):
            ax.text(max(v, 0.0) + 0.01 * top, y, f"{v:.1f}", va="center", ha="left", fontsize=8)
        ax.set_yticks(range(len(s)), [f"{f.replace('FP8 ', '')}, {st}" for f, st in zip(s["format"], s["strategy"])],
                      fontsize=8)
        for fmt, ls in (("FP8 E4M3FN", "--"), ("FP8 E5M2", ":")):
            ax.axvline(sqnr_prediction_db(fmt), color="0.4", ls=ls, lw=1,
                       label=f"{fmt.replace('FP8 ', '')} bound {sqnr_prediction_db(fmt):.1f} dB")
        ax.set_xlim(0, top * 1.25)  # room for the value labels
        ax.set_title(kind)
        ax.set_xlabel("median SQNR (dB)")
        ax.invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2, frameon=False)
    return fig


def sqnr_prediction_db(fmt: str) -> float:
    """Lower bound on the SQNR of round-to-nearest into ``fmt`` for values in its normal range.

    With M mantissa bits the relative error of every normal value is at most 2^-(M+1), so the
    noise power is at most 2^-2(M+1) times the signal power: SQNR >= 20 * log10(2^(M+1)) dB
    (24.1 dB for E4M3, 18.1 dB for E5M2). Subnormals and saturation can break the bound.
    """
    return 20 * math.log10(2 ** (get_format(fmt).mantissa_bits + 1))


def rounding_noise_sqnr_db(x: torch.Tensor, fmt: str = "FP8 E4M3FN") -> float:
    """SQNR that round-to-nearest into ``fmt`` should give ``x`` under per-tensor scaling (amax -> largest value).

    The rounding-noise model: each non-zero element's error is uniform over ± half the spacing of
    ``fmt`` at that element (the spacing of its binade, or the subnormal spacing below the normal
    range), so its expected square is spacing² / 12. Unlike :func:`sqnr_prediction_db`, a bound, this
    predicts the typical value; a truncating cast (error uniform over a whole spacing, four times the
    power) measures about 6 dB below it.
    """
    f = get_format(fmt)
    y = _check_2d(x).double().flatten()
    y = y[y != 0]
    if y.numel() == 0:
        raise ValueError("x has no non-zero element")
    y = y * (max_finite(fmt) / y.abs().max())
    emin = 1 - f.bias
    spacing = torch.exp2(torch.clamp(torch.floor(torch.log2(y.abs())), min=emin) - f.mantissa_bits)
    return float(10 * torch.log10((y ** 2).sum() / (spacing ** 2 / 12).sum()))


DOUBLE_QUANTIZATION_DB = 10 * math.log10(2)  # a second, independent rounding of the same size doubles the noise


def rowwise_scale_rule_table(tensors: dict[str, torch.Tensor], fmts=FP8_FORMATS) -> pd.DataFrame:
    """Median SQNR per tensor kind and format: per-tensor scaling, and per-row scaling with exact amax scales
    (the strategy table's "per-row") and with scales rounded down to powers of two (torchao's rowwise
    recipes); each per-row rule's edge over per-tensor in dB."""
    rows = []
    for name, x in tensors.items():
        x = _check_2d(x)
        if x.dim() != 2:
            continue
        for fmt in fmts:
            rows.append({"kind": name.split(":")[0], "format": fmt,
                         "per-tensor (dB)": error_metrics(x, quantize_tensorwise(x, fmt))["SQNR (dB)"],
                         "per-row, amax scales (dB)": error_metrics(x, quantize_rowwise(x, fmt))["SQNR (dB)"],
                         "per-row, power-of-two scales (dB)":
                             error_metrics(x, quantize_rowwise(x, fmt, power_of_two=True))["SQNR (dB)"]})
    med = pd.DataFrame(rows).groupby(["kind", "format"], sort=False).median().reset_index()
    med["edge, amax scales (dB)"] = med["per-row, amax scales (dB)"] - med["per-tensor (dB)"]
    med["edge, power-of-two scales (dB)"] = med["per-row, power-of-two scales (dB)"] - med["per-tensor (dB)"]
    return med


DOUBLE_QUANTIZATION_SCALES = ("amax", "power of two")


def double_quantization_table(tensors: dict[str, torch.Tensor], fmts=FP8_FORMATS,
                              scales=DOUBLE_QUANTIZATION_SCALES) -> pd.DataFrame:
    """Columnwise scaling of each 2-D tensor (one scale per column: what ``grad_weight = grad_output^T @ input``
    needs of both operands), quantized from high precision, against quantizing it rowwise first (what the
    forward GEMM used), reading it back and requantizing columnwise: the *double quantization* that Transformer
    Engine avoids. Scales are either exact (``"amax"``: max_finite / amax) or rounded down to a power of two
    (``"power of two"``, torchao's rowwise recipes; MX's E8M0 scales are powers of two too). SQNR against the
    high-precision tensor, the drop, the fraction of elements the second quantization changed, and of those, the
    shares that were subnormal after the row scale (the first rounding), after the column scale, and in neither
    pass, per tensor, format and scale rule (NaN where nothing changed)."""
    bad = [s for s in scales if s not in DOUBLE_QUANTIZATION_SCALES]
    if bad:
        raise ValueError(f"unknown scale rule(s) {bad}; valid: {list(DOUBLE_QUANTIZATION_SCALES)}")
    rows = []
    for name, x in tensors.items():
        x = _check_2d(x)
        if x.dim() != 2:
            continue
        xt = x.t().contiguous()  # columns of x as rows: quantize_rowwise then scales per column of x
        for fmt in fmts:
            for rule in scales:
                p2 = rule == "power of two"
                once = quantize_rowwise(xt, fmt, power_of_two=p2)
                again = quantize_rowwise(quantize_rowwise(x, fmt, power_of_two=p2).dequantized.t().contiguous(), fmt,
                                         power_of_two=p2)
                direct = error_metrics(xt, once)["SQNR (dB)"]
                twice = error_metrics(xt, again)["SQNR (dB)"]
                changed = once.dequantized != again.dequantized
                # Where a changed element sat in each pass: below the format's smallest normal after the row
                # scale (first rounding) or after the column scale (second rounding).
                tiny = element_format(fmt).min_normal_from_definition()
                row_scale = quantize_rowwise(x, fmt, power_of_two=p2).scale.t()
                sub_row = (xt * row_scale).abs() < tiny
                sub_col = (xt * once.scale).abs() < tiny
                n_changed = int(changed.sum())
                row_share, col_share, neither_share = (
                    (float((changed & m).sum()) / n_changed if n_changed else float("nan"))
                    for m in (sub_row, sub_col, ~sub_row & ~sub_col))
                rows.append({"tensor": name, "kind": name.split(":")[0], "format": fmt, "scales": rule,
                             "columnwise from high precision (dB)": direct, "rowwise, then columnwise (dB)": twice,
                             "drop (dB)": direct - twice,
                             "elements changed": float(changed.float().mean()),
                             "changed: subnormal in the row pass": row_share,
                             "changed: subnormal in the column pass": col_share,
                             "changed: normal in both passes": neither_share})
    return pd.DataFrame(rows)


def plot_scale_granularity(x: torch.Tensor, fmt: str = "FP8 E4M3FN", block_size: int = 32,
                           mask: torch.Tensor | None = None):
    """How per-tensor, per-row and MX block scaling hand out scales, on the 2-D tensor ``x``: one panel
    per strategy, each element coloured by the log2 of the scale it is quantized with (one colour for
    the whole tensor, one per row, one per block of ``block_size`` along a row), the elements the
    cast flushes to zero marked, and each strategy's SQNR (:func:`error_metrics`, over ``mask`` if
    given: the elements other than an injected outlier) in its title."""
    import matplotlib.pyplot as plt

    x = _check_2d(x)
    if x.dim() != 2 or x.shape[-1] % block_size:
        raise ValueError(f"x must be 2-D with a last dimension divisible by {block_size}, got {tuple(x.shape)}")
    f = element_format(fmt).name
    results = [("per-tensor: one scale", quantize_tensorwise(x, f)),
               ("per-row: one scale per row", quantize_rowwise(x, f)),
               (f"MX: one power-of-two scale per {block_size} elements of a row",
                mx_quantize(x, f, block_size, MX_TRAINING_MODE))]
    logs = [torch.log2(q.scale.expand_as(x)).numpy() for _, q in results]
    lo, hi = min(float(v.min()) for v in logs), max(float(v.max()) for v in logs)
    fig, axes = plt.subplots(len(results), 1, figsize=(7, 1.05 * len(results) * (1 + x.shape[0] / 16) + 1.0),
                             sharex=True, layout="constrained")
    for ax, (title, q), log in zip(axes, results, logs, strict=True):
        image = ax.imshow(log, aspect="auto", cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
        rows, cols = np.nonzero(q.flushed.numpy())
        ax.scatter(cols, rows, marker="x", s=12, lw=1.0, color="#ff00ff")  # kept in both palettes
        ax.set_title(f"{title}\nSQNR {error_metrics(x, q, mask)['SQNR (dB)']:.1f} dB, "
                     f"{int(q.flushed.sum())} of {x.numel()} flushed to zero (×)", fontsize=9, loc="left")
        ax.set_ylabel("row")
    axes[-1].set_xlabel("column")
    fig.colorbar(image, ax=list(axes), label="log2 scale", shrink=0.9)
    return fig
