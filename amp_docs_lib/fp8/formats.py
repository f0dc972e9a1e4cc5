"""Every code of the FP8 and MX element formats, and the library's saturating cast.

All format facts (layout, bias, limits, storage type) come from the registry in
:mod:`amp_docs_lib.numbers.formats`; this module enumerates codes, casts tensors and measures
rounding error.

The cast (:func:`cast`) saturates: a finite value beyond a format's largest finite value
becomes that value (with its sign), as the OCP specifications allow ("saturating" conversion)
and as the float8 training recipes of torchao and Transformer Engine do by clamping. What torch's
and ml_dtypes' own casts do beyond the range differs by format and version
(:func:`cast_comparison` measures it; E5M2, which has infinities, overflows to inf in torch).
The library clamps *before* casting, so its result does not depend on which library casts.

Independence: the library's FP8 cast *is* torch's (after the clamp) and its FP6/FP4 cast *is*
ml_dtypes', so only the FP8 comparison with ml_dtypes checks anything (:func:`casts_agree_in_range`
says which column is independent); FP6/FP4 are checked independently against torchao's MX
quantizer (``scaling.compare_with_torchao``).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pandas as pd
import torch

from amp_docs_lib.core.palette import color_or_default
from amp_docs_lib.numbers.formats import NumberFormat, bits_to_value, classify_fields, get_format

FP8_FORMATS = ("FP8 E4M3FN", "FP8 E5M2")
MX_ELEMENT_FORMATS = ("FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP6 E3M2", "FP4 E2M1")
# the code-count table: the OCP formats, AMD MI300's FNUZ pair and the MX scale
CODE_TABLE_FORMATS = ("FP8 E4M3FN", "FP8 E5M2", "FP8 E4M3FNUZ", "FP8 E5M2FNUZ", "FP6 E2M3", "FP6 E3M2", "FP4 E2M1",
                      "E8M0")
SCALE_FORMAT = "E8M0"


def element_format(name: str | NumberFormat) -> NumberFormat:
    """Look up an FP8 / MX element format; raise ``ValueError`` naming the valid ones otherwise."""
    f = get_format(name)
    if f.name not in MX_ELEMENT_FORMATS:
        raise ValueError(f"{f.name!r} is not an FP8 or MX element format; valid: {list(MX_ELEMENT_FORMATS)}")
    return f


def max_finite(name: str | NumberFormat) -> float:
    """Largest finite value of a format, from the registry's library limits."""
    return float(get_format(name).finfo()["max"])


def all_codes(name: str | NumberFormat) -> pd.DataFrame:
    """One row per bit pattern of ``name`` (256 for FP8): code, sign, fields, class and value.

    The value is what the storage library (torch or ml_dtypes) reads from the bits.
    """
    f = get_format(name)
    if not f.is_float or f.total_bits > 8:
        raise ValueError(f"all_codes enumerates 8-bit-or-narrower float formats, not {f.name!r}; "
                         f"valid: {list(MX_ELEMENT_FORMATS) + [SCALE_FORMAT]}")
    M, E = f.mantissa_bits, f.exponent_bits
    rows = []
    for code in range(2 ** f.total_bits):
        sign = (code >> (E + M)) & 1 if f.signed else 0
        e_field = (code >> M) & (2 ** E - 1)
        m_field = code & (2 ** M - 1)
        rows.append({"code": code, "hex": f"0x{code:02X}", "sign": sign, "exponent field": e_field,
                     "mantissa field": m_field, "class": classify_fields(e_field, m_field, f),
                     "value": bits_to_value(code, f)})
    return pd.DataFrame(rows)


def code_summary(names=("FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP6 E3M2", "FP4 E2M1", "E8M0")) -> pd.DataFrame:
    """Per format, counted over all its codes: finite, zero, subnormal, inf, NaN, distinct positives."""
    rows = []
    for n in names:
        c = all_codes(n)
        v = c["value"]
        rows.append({"format": get_format(n).name, "codes": len(c),
                     "finite values": int(np.isfinite(v).sum()),
                     # zeros, infinities and NaNs from the values read back (FNUZ's -0 pattern reads as NaN)
                     "zeros": int((v == 0).sum()),
                     "subnormals": int((c["class"] == "subnormal").sum()),
                     "infinities": int(np.isinf(v).sum()),
                     "NaNs": int(np.isnan(v).sum()),
                     "distinct positive values": int(np.unique(v[(v > 0) & np.isfinite(v)]).size),
                     "smallest positive": float(v[(v > 0) & np.isfinite(v)].min()),
                     "largest finite": float(v[np.isfinite(v)].max()),
                     "dynamic range (binades)": float(np.log2(v[np.isfinite(v)].max()
                                                              / v[(v > 0) & np.isfinite(v)].min()))})
    return pd.DataFrame(rows)


def counts_from_definition(name: str | NumberFormat) -> dict:
    """What the layout and encoding family define, in closed form, for the columns of :func:`code_summary`
    that a specification states: finite values, infinities, NaNs, distinct positive values, largest finite."""
    f = get_format(name)
    M = f.mantissa_bits
    signs = 2 if f.signed else 1
    per_sign_nan = {"ieee": 2 ** M - 1, "fn": 1, "fnuz": 0, "finite": 0, "e8m0": 0}[f.special]
    nans = signs * per_sign_nan + (1 if f.special in ("fnuz", "e8m0") else 0)  # fnuz: -0's pattern; e8m0: 0xFF
    infs = signs if f.special == "ieee" else 0
    finite = 2 ** f.total_bits - nans - infs
    zero_codes = 0 if f.special == "e8m0" else 1  # the positive zero, not a positive value
    positive = 2 ** (f.total_bits - (1 if f.signed else 0)) - zero_codes - per_sign_nan - (infs // signs)
    if f.special == "e8m0":
        positive -= 1  # 0xFF is NaN
    return {"finite values": finite, "infinities": infs, "NaNs": nans, "distinct positive values": positive,
            "largest finite": f.max_finite_from_definition()}


def positive_values(name: str | NumberFormat) -> list[float]:
    """The distinct positive finite values of ``name``, ascending, read back code by code (:func:`all_codes`)."""
    v = all_codes(name)["value"].to_numpy()
    return [float(x) for x in np.unique(v[(v > 0) & np.isfinite(v)])]


def positive_values_from_definition(name: str | NumberFormat) -> list[float]:
    """The distinct positive finite values that the layout defines, ascending: subnormals
    ``2^(1 - bias) * m / 2^M`` and normals ``2^(e - bias) * (1 + m / 2^M)``, up to the largest finite value."""
    f = get_format(name)
    M, top = f.mantissa_bits, f.max_finite_from_definition()
    vals = {math.ldexp(m / 2 ** M, 1 - f.bias) if e == 0 else math.ldexp(1 + m / 2 ** M, e - f.bias)
            for e in range(2 ** f.exponent_bits) for m in range(2 ** M)}
    return sorted(v for v in vals if 0 < v <= top)


def code_summary_disagreements(summary: pd.DataFrame, names=("FP8 E4M3FN", "FP8 E5M2", "FP4 E2M1")) -> pd.DataFrame:
    """Rows of ``summary`` (:func:`code_summary`, read back through torch / ml_dtypes) whose counts or
    largest value differ from :func:`counts_from_definition`: format, column, read back, definition."""
    s = summary.set_index("format")
    rows = [{"format": get_format(n).name, "column": col, "read back": s.loc[get_format(n).name, col], "definition": want}
            for n in names for col, want in counts_from_definition(n).items()
            if s.loc[get_format(n).name, col] != want]
    return pd.DataFrame(rows, columns=["format", "column", "read back", "definition"])


def plot_codes(names=("FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP6 E3M2", "FP4 E2M1")):
    """Every positive finite value of each format as a tick on a log axis (a matplotlib Figure)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.5 * len(names) + 1.2))
    for i, n in enumerate(names):
        v = all_codes(n)["value"]
        v = np.unique(v[(v > 0) & np.isfinite(v)])
        ax.scatter(v, np.full(v.size, len(names) - 1 - i), marker="|", s=120,
                   color=color_or_default(get_format(n).name, f"C{i}"))
    ax.set_yticks(range(len(names)), list(reversed([get_format(n).name for n in names])))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("positive finite values (log2 axis)")
    ax.set_title("Every representable positive value")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def _torch_storage(f: NumberFormat) -> torch.dtype | None:
    return f.torch_dtype if f.total_bits == 8 else None


def cast(x: torch.Tensor, name: str | NumberFormat, *, saturate: bool = True) -> torch.Tensor:
    """Round ``x`` to format ``name`` and return the rounded values as float32.

    Round to nearest, ties to even. With ``saturate`` (the default) finite values beyond the
    format's largest finite value are clamped to it first; NaN stays NaN. FP8 goes through
    torch's cast, FP6/FP4 through ml_dtypes' (torch has no FP6 dtype, and its FP4 dtype is
    packed two to a byte).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    f = element_format(name)
    x32 = x.detach().to(torch.float32)
    if saturate:
        m = max_finite(f)
        x32 = torch.where(torch.isnan(x32), x32, x32.clamp(-m, m))
    td = _torch_storage(f)
    if td is not None:
        return x32.to(td).to(torch.float32)
    a = x32.cpu().numpy().astype(f.storage).astype(np.float32)
    return torch.from_numpy(a).to(x.device)


def encode_tensor(x: torch.Tensor, name: str | NumberFormat, *, saturate: bool = True) -> torch.Tensor:
    """The bit patterns (uint8, one code per element, unpacked) of ``cast(x, name)``."""
    f = element_format(name)
    v = cast(x, f, saturate=saturate)
    td = _torch_storage(f)
    if td is not None:
        return v.to(td).view(torch.uint8)
    return torch.from_numpy(v.cpu().numpy().astype(f.storage).view(np.uint8).copy())


OUT_OF_RANGE_PROBES = (300.0, 464.0, 1000.0, 1e6, math.inf, -1000.0, math.nan)
E5M2_PROBES = (57344.0, 61439.0, 61440.0, 1e5, 1e6, math.inf, -1e5)


def cast_comparison(name: str = "FP8 E4M3FN", probes=OUT_OF_RANGE_PROBES) -> pd.DataFrame:
    """What torch, ml_dtypes and the library make of values near and beyond a format's range."""
    f = element_format(name)
    x = torch.tensor(probes, dtype=torch.float32)
    td = _torch_storage(f)
    torch_v = x.to(td).to(torch.float32).tolist() if td is not None else [None] * len(probes)
    ml_v = x.numpy().astype(ml_dtypes_type(f)).astype(np.float64).tolist()
    lib_v = cast(x, f).tolist()
    rows = []
    for p, t, m, lv in zip(probes, torch_v, ml_v, lib_v):
        rows.append({"input": p, "torch": t, "ml_dtypes": m, "amp_docs_lib": lv,
                     "torch == ml_dtypes": None if t is None else bool(t == m or (math.isnan(t) and math.isnan(m)))})
    return pd.DataFrame(rows)


FNUZ_FORMATS = {"FP8 E4M3FNUZ": "float8_e4m3fnuz", "FP8 E5M2FNUZ": "float8_e5m2fnuz"}
FNUZ_PROBES = (-0.0, 1.0, 240.0, 247.0, 248.0, 57344.0, 61440.0, 1e6, math.inf, math.nan)


def fnuz_cast_table(probes=FNUZ_PROBES) -> pd.DataFrame:
    """AMD MI300's FNUZ formats: what torch's and ml_dtypes' casts make of each probe (value and code), per
    format. The library has no FNUZ cast of its own; the two are independent implementations."""
    import ml_dtypes

    rows = []
    x = torch.tensor(probes, dtype=torch.float32)
    for name, attr in FNUZ_FORMATS.items():
        t = x.to(getattr(torch, attr))
        m = x.numpy().astype(getattr(ml_dtypes, attr))
        for p, tv, tc, mv, mc in zip(probes, t.float().tolist(), t.view(torch.uint8).tolist(),
                                     m.astype(np.float64).tolist(), m.view(np.uint8).tolist()):
            rows.append({"format": name, "input": p, "torch": tv, "torch code": f"0x{tc:02X}",
                         "ml_dtypes": mv, "ml_dtypes code": f"0x{mc:02X}", "same code": tc == mc})
    return pd.DataFrame(rows)


def fnuz_casts_agree(n: int = 100_000, seed: int = 0) -> dict:
    """Codes that torch's and ml_dtypes' FNUZ casts give random in-range values (log-uniform magnitudes over
    each format's range, random signs), compared: the number of mismatches per format."""
    import ml_dtypes

    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, attr in FNUZ_FORMATS.items():
        fi = torch.finfo(getattr(torch, attr))
        lo, hi = math.log2(fi.smallest_normal) - 3, math.log2(fi.max)
        x = torch.exp2(lo + (hi - lo) * torch.rand(n, generator=g)) * torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
        tc = x.to(getattr(torch, attr)).view(torch.uint8).numpy()
        mc = x.numpy().astype(getattr(ml_dtypes, attr)).view(np.uint8)
        out[name] = int((tc != mc).sum())
    return out


def casts_agree_in_range(name: str, n: int = 100_000, seed: int = 0) -> dict:
    """Bit-compare the library's, torch's and ml_dtypes' casts on random in-range values.

    Values are log-uniform over the format's whole range (subnormals included) with random signs,
    plus every exact code and every midpoint between neighbouring codes (the ties).
    Returns the counts of mismatching elements.
    """
    f = element_format(name)
    g = torch.Generator().manual_seed(seed)
    m = max_finite(f)
    codes = all_codes(f)["value"].to_numpy()
    vals = np.unique(codes[np.isfinite(codes)])
    mids = (vals[1:] + vals[:-1]) / 2
    lo = math.log2(vals[vals > 0].min()) - 1
    logs = torch.rand(n, generator=g, dtype=torch.float64) * (math.log2(m) - lo) + lo
    sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).to(torch.float64)
    x = torch.cat([sign * torch.exp2(logs), torch.from_numpy(vals), torch.from_numpy(mids)]).to(torch.float32)
    ours = encode_tensor(x, f)
    ml_bits = torch.from_numpy(x.numpy().astype(ml_dtypes_type(f)).view(np.uint8).copy())
    td = _torch_storage(f)
    out = {"format": f.name, "elements": x.numel(),
           "library casts with": "torch" if td is not None else "ml_dtypes",
           "independent peer": "ml_dtypes" if td is not None else "torchao MX (see the MX section)",
           "library vs ml_dtypes mismatches": int((ours != ml_bits).sum()),
           "library vs torch mismatches": int((ours != x.to(td).view(torch.uint8)).sum()) if td is not None else None}
    out["independent mismatches"] = out["library vs ml_dtypes mismatches"] if td is not None else None
    return out


def binades(name: str | NumberFormat) -> dict:
    """Binades (log2 of the ratio) a format spans, from its codes: normal range and with subnormals."""
    c = all_codes(name)
    v = c["value"]
    fin = v[np.isfinite(v) & (v > 0)]
    normal = v[(c["class"] == "normal") & (v > 0)]
    return {"format": get_format(name).name, "normal": float(np.log2(fin.max() / normal.min())),
            "with subnormals": float(np.log2(fin.max() / fin.min()))}


def relative_error_curve(names=("FP8 E4M3FN", "FP8 E5M2", "BF16", "FP16"), points: int = 4000,
                         lo: float = 2.0 ** -24, hi: float = 2.0 ** 17) -> pd.DataFrame:
    """Relative rounding error |round(x) - x| / |x| on a log grid of magnitudes, per format.

    FP8 formats use the saturating :func:`cast`; BF16 and FP16 torch's cast (FP16 overflows to inf,
    shown as relative error inf). Columns: magnitude, format, relative error.
    """
    x = torch.logspace(math.log10(lo), math.log10(hi), points, dtype=torch.float64)
    frames = []
    for n in names:
        f = get_format(n)
        if f.name in MX_ELEMENT_FORMATS:
            r = cast(x, f).to(torch.float64)
        else:
            r = x.to(torch.float32).to(f.torch_dtype).to(torch.float64)
        rel = ((r - x).abs() / x).numpy()
        frames.append(pd.DataFrame({"magnitude": x.numpy(), "format": f.name, "relative error": rel}))
    return pd.concat(frames, ignore_index=True)


def relative_error_envelope(curve: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per format and binade of :func:`relative_error_curve`: the largest relative error in it."""
    curve = relative_error_curve() if curve is None else curve
    c = curve.assign(binade=np.floor(np.log2(curve["magnitude"])).astype(int))
    c = c[c["binade"] < c["binade"].max()]  # the grid's last point starts a binade it does not cover
    return c.groupby(["format", "binade"], sort=False)["relative error"].max().reset_index()


def plot_relative_error(curve: pd.DataFrame | None = None):
    """The largest relative rounding error per binade (a step line per format, log axes)."""
    import matplotlib.pyplot as plt

    env = relative_error_envelope(curve)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, (name, g) in enumerate(env.groupby("format", sort=False)):
        y = g["relative error"].clip(upper=1.0)
        ax.step(np.exp2(g["binade"].to_numpy(dtype=float)), y.where(y > 0, 1e-9), where="post", label=name, lw=1.4,
                color=color_or_default(name, f"C{i}"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 1.5)
    ax.set_xlabel("|x| (binade start)")
    ax.set_ylabel("largest relative error in the binade")
    ax.set_title("Largest relative rounding error per binade")
    ax.legend(fontsize=8, loc="upper center", ncol=4, bbox_to_anchor=(0.5, -0.18), frameon=False)
    fig.tight_layout()
    return fig


def dynamic_range_table(tensors: dict[str, torch.Tensor]) -> pd.DataFrame:
    """Per captured tensor: smallest and largest non-zero magnitude, their ratio in binades (log2),
    and how many binades of each FP8 format's range the tensor needs beyond it when unscaled."""
    rows = []
    for name, t in tensors.items():
        a = t.detach().abs().to(torch.float64).flatten()
        nz = a[a > 0]
        lo, hi = float(nz.quantile(0.001)) if nz.numel() else 0.0, float(a.max())
        row = {"tensor": name, "elements": t.numel(), "amax": hi, "0.1% quantile of |x|>0": lo,
               "span (binades)": math.log2(hi / lo) if lo > 0 else None}
        for fmt in FP8_FORMATS:
            f = get_format(fmt)
            sub = f.min_subnormal_from_definition()
            row[f"{f.name}: flushed to zero unscaled (share of non-zero elements)"] = float((nz < sub / 2).double().mean()) if nz.numel() else 0.0
        rows.append(row)
    return pd.DataFrame(rows)


def plot_range(tensors: dict[str, torch.Tensor]):
    """Histogram of log2|x| per tensor kind (activation, weight, gradient) against the span of
    E4M3FN and E5M2 (smallest subnormal to largest finite), unscaled."""
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(k.split(":")[0] for k in tensors))
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for kind in kinds:
        v = torch.cat([t.flatten() for k, t in tensors.items() if k.startswith(kind + ":")]).abs()
        v = v[v > 0].double().log2().numpy()
        ax.hist(v, bins=120, histtype="step", density=True, label=kind)
    for i, name in enumerate(FP8_FORMATS):
        f = get_format(name)
        lo, hi = math.log2(f.min_subnormal_from_definition()), math.log2(max_finite(f))
        ax.axvspan(lo, hi, ymin=0.92 - 0.06 * i, ymax=0.97 - 0.06 * i, color=color_or_default(f.name, f"C{3 + i}"),
                   alpha=0.6,
                   label=f"{f.name} range (unscaled)")
    ax.set_xlabel("log2 |x|")
    ax.set_ylabel("density")
    ax.set_title("Captured GPT tensors against the FP8 ranges, before any scaling")
    ax.legend(fontsize=8, loc="center left")
    fig.tight_layout()
    return fig


def ml_dtypes_type(name: str | NumberFormat):
    """The ml_dtypes scalar type for an element format (for FP8: ml_dtypes' own float8 types)."""
    f = element_format(name)
    return {"FP8 E4M3FN": ml_dtypes.float8_e4m3fn, "FP8 E5M2": ml_dtypes.float8_e5m2}.get(f.name, f.storage)
