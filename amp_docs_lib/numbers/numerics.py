"""The number-format chapter's experiments: each returns a DataFrame (plots return a Figure).

Low-precision arithmetic is simulated honestly: every intermediate result is
a tensor of the dtype under test, so it is rounded to that dtype after every
operation (torch computes FP16/BF16 elementwise ops in FP32 and rounds the
result once, which is exact rounding for a single add or multiply). Sizes come
from the active profile.
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from amp_docs_lib.core.checks import positive_int, positive_number
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.palette import color_of, color_or_default
from amp_docs_lib.numbers.formats import bits_to_value, encode, get_format, next_up
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.core.tables import table_from_rows

FLOAT_DTYPES = {"FP16": torch.float16, "BF16": torch.bfloat16, "FP32": torch.float32}
def _dtypes(names: Iterable[str]) -> dict[str, torch.dtype]:
    if isinstance(names, str):  # iterating "FP16" would look up 'F', 'P', '1', '6'
        raise TypeError(f"dtypes must be a list of dtype names, got the str {names!r}; for one dtype pass [{names!r}]; "
                        f"valid: {list(FLOAT_DTYPES)}")
    out = {}
    for n in names:
        if n not in FLOAT_DTYPES:
            raise ValueError(f"unknown dtype name {n!r}; valid: {list(FLOAT_DTYPES)}")
        out[n] = FLOAT_DTYPES[n]
    return out


def _size(name: str, value: int | None, profile_key: str) -> int:
    """``value`` if given (a positive int; 0 is refused, not read as "use the default"), else the profile's."""
    return active_profile()[profile_key] if value is None else positive_int(name, value)


# ---- spacing (ULP) -------------------------------------------------------------------------
def spacing_vs_magnitude(formats: Sequence[str] = ("FP32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2"),
                         points: int | None = None) -> pd.DataFrame:
    """Gap to the next representable value, measured from bit neighbours, vs the definition.

    For each format, magnitudes are spread log-uniformly over its positive finite
    range (below the max). Definition: 2^(max(floor(log2 x), 1 - bias) - M).
    """
    n = _size("points", points, "ulp_points")
    rows = []
    for name in formats:
        f = get_format(name)
        lo, hi = f.min_subnormal_from_definition(), f.max_finite_from_definition()
        for x in np.geomspace(lo, hi / 2, n):
            b = encode(float(x), f)
            v = bits_to_value(b, f)
            gap = bits_to_value(b + 1, f) - v
            e = max(math.floor(math.log2(v)), 1 - f.bias)
            rows.append({"format": f.name, "magnitude": v, "measured spacing": gap,
                         "definition spacing": math.ldexp(1.0, e - f.mantissa_bits),
                         "relative spacing": gap / v})
    return pd.DataFrame(rows)


def plot_spacing(df: pd.DataFrame):
    """Log-log plot of spacing against magnitude, one line per format."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8.2), layout="constrained")
    # The bottom row zooms into the range of FP16 and the FP8 formats, a sliver of FP32's 1e-45..1e38.
    zoom = df[df["format"].isin(["FP16", "FP8 E4M3FN", "FP8 E5M2"])]["magnitude"]
    lo, hi = (zoom.min() / 2, zoom.max() * 4) if len(zoom) else (None, None)
    for i, (name, g) in enumerate(df.groupby("format", sort=False)):
        c = color_or_default(name, f"C{i}")
        for row in (0, 1):
            axes[row, 0].loglog(g["magnitude"], g["measured spacing"], drawstyle="steps-post", label=name, color=c)
            axes[row, 1].loglog(g["magnitude"], g["relative spacing"], drawstyle="steps-post", label=name, color=c)
    for row, what in ((0, "full range"), (1, "FP16/FP8 zoom")):
        axes[row, 0].set(xlabel="magnitude |x|", ylabel="gap to next value", title=f"Absolute, {what}")
        axes[row, 1].set(xlabel="magnitude |x|", ylabel="gap / |x|", title=f"Relative, {what}")
    if lo is not None:
        for a in axes[1]:
            a.set_xlim(lo, hi)
        sel = df[(df["magnitude"] >= lo) & (df["magnitude"] <= hi)]
        axes[1, 0].set_ylim(sel["measured spacing"].min() / 2, sel["measured spacing"].max() * 2)
        axes[1, 1].set_ylim(sel["relative spacing"].min() / 2, sel["relative spacing"].max() * 2)
    for a in axes.flat:
        a.grid(True, which="major", alpha=0.3)
    # One legend above the panels: inside the first one it lay on the FP16, BF16 and FP8 lines.
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncol=5, frameon=False)
    return fig


# ---- subnormals / flush-to-zero --------------------------------------------------------------
def _cpu_ftz_active() -> bool:
    """Probe whether the CPU currently flushes FP32 subnormals (torch has no getter)."""
    tiny = torch.tensor([2.0 ** -140], dtype=torch.float64).to(torch.float32)
    return bool((tiny * torch.ones(1)).item() == 0.0)


def _subnormal_rows(device: torch.device, setting: str) -> list[dict]:
    rows = []
    for name, dt in FLOAT_DTYPES.items():
        f = get_format(name)
        smin = f.min_subnormal_from_definition()
        t = torch.tensor([smin], dtype=torch.float64).to(device=device, dtype=dt)
        one = torch.ones(1, dtype=dt, device=device)
        raw = torch.tensor([1], dtype={16: torch.int16, 32: torch.int32}[f.total_bits]).view(dt).to(device)
        rows.append({
            "setting": setting, "dtype": name, "min subnormal": smin,
            "cast from float64 keeps it": t.item() == smin,
            "bit pattern 0x..01 reads as": raw.to(torch.float64).item(),
            "x * 1": (raw * one).to(torch.float64).item(),
            "x + x": (raw + raw).to(torch.float64).item(),
            "(x * 4) / 4": (raw * 4 / 4).to(torch.float64).item(),
            "survives arithmetic": bool((raw * one).item() != 0.0),
        })
    return rows


def subnormal_survival(device: str | torch.device = "cpu") -> pd.DataFrame:
    """Does each dtype's smallest subnormal survive a cast and simple arithmetic on ``device``?

    On CPU this is measured twice, with ``torch.set_flush_denormal(False)`` and
    ``(True)``; the previous setting (probed, since torch has no getter) is restored.
    """
    dev = check_device(device)
    if dev.type != "cpu":
        return pd.DataFrame(_subnormal_rows(dev, "default"))
    before = _cpu_ftz_active()
    rows = []
    try:
        for ftz in (False, True):
            if not torch.set_flush_denormal(ftz) and ftz:
                break  # CPU without FTZ support: only the default row set
            rows += _subnormal_rows(dev, f"set_flush_denormal({ftz})")
    finally:
        torch.set_flush_denormal(before)
    return pd.DataFrame(rows)


# ---- decimal digits, measured -------------------------------------------------------------
def measured_decimal_digits(dtypes: Iterable[str] = ("FP32", "FP16", "BF16"), n: int = 1 << 16,
                            seed: int = 0) -> pd.DataFrame:
    """Decimal digits each dtype keeps, measured: -log10 of the largest relative error of its cast
    on ``n`` random float64 values spread over [1, 2) (one binade: the relative spacing repeats).

    A measurement of the cast, independent of the registry's ``decimal_digits()`` definition,
    (M + 1) log10 2, which it approaches from above as ``n`` grows.
    """
    n = positive_int("n", n)
    g = torch.Generator().manual_seed(seed)
    x = 1 + torch.rand(n, generator=g, dtype=torch.float64)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        worst = ((x.to(dt).double() - x).abs() / x).max().item()
        rows.append({"dtype": name, "largest relative rounding error": worst,
                     "decimal digits (measured)": -math.log10(worst)})
    return pd.DataFrame(rows)


# ---- exp overflow ------------------------------------------------------------------------
def exp_overflow(dtypes: Iterable[str] = ("FP16", "BF16", "FP32"),
                 device: str | torch.device = "cpu") -> pd.DataFrame:
    """Largest x (representable in the dtype) with finite exp(x), by bisection over bit patterns."""
    dev = check_device(device)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        f = get_format(name)
        lo, hi = encode(1.0, f), encode(1000.0, f)  # exp(1) finite; exp(1000) overflows all three

        def finite(b: int) -> bool:
            x = torch.tensor([bits_to_value(b, f)], dtype=torch.float64).to(device=dev, dtype=dt)
            return bool(torch.isfinite(torch.exp(x)).item())

        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if finite(mid) else (lo, mid)
        xmax = bits_to_value(lo, f)
        rows.append({"dtype": name, "largest x with finite exp(x)": xmax,
                     "next x (overflows)": bits_to_value(hi, f),
                     "log(max finite)": math.log(f.max_finite_from_definition()),
                     "exp(x) there": float(torch.exp(torch.tensor([xmax], dtype=dt, device=dev)).item())})
    return pd.DataFrame(rows)


# ---- softplus and softmax -----------------------------------------------------------------
def softplus_naive(x: torch.Tensor) -> torch.Tensor:
    """log(1 + exp(x)) as written: overflows once exp(x) does."""
    return torch.log(1 + torch.exp(x))


def softplus_stable(x: torch.Tensor) -> torch.Tensor:
    """max(x, 0) + log1p(exp(-|x|)): exp only ever sees non-positive arguments."""
    return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))


def softmax_naive(x: torch.Tensor) -> torch.Tensor:
    """exp(x) / sum(exp(x)) as written."""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_stable(x: torch.Tensor) -> torch.Tensor:
    """Subtract the row max first: the largest exponent is exp(0) = 1."""
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def softplus_errors(dtypes: Iterable[str] = ("FP16", "BF16", "FP32"), x_max: float = 100.0,
                    points: int = 801, device: str | torch.device = "cpu") -> pd.DataFrame:
    """Per x and dtype: naive and stable softplus, relative error vs a float64 reference (long format).

    The reference is float64 softplus of the inputs *as rounded to the dtype*.
    """
    dev = check_device(device)
    x64 = torch.linspace(-x_max, x_max, points, dtype=torch.float64)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        x = x64.to(device=dev, dtype=dt)
        ref = torch.nn.functional.softplus(x.double()).cpu()  # reference on the rounded inputs
        for method, fn in (("naive", softplus_naive), ("stable", softplus_stable),
                           ("torch.nn.functional.softplus", torch.nn.functional.softplus)):
            y = fn(x).double().cpu()
            err = (y - ref).abs() / ref.abs()
            rows.append(pd.DataFrame({"dtype": name, "method": method, "x": x.double().cpu().numpy(),
                                      "rel error": err.numpy(), "finite": torch.isfinite(y).numpy(),
                                      "true value normal": (ref >= torch.finfo(dt).smallest_normal).numpy()}))
    return pd.concat(rows, ignore_index=True)


def summarize_softplus(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dtype, method): max relative error where the output is finite and the true value is a
    normal number of the dtype (below that the output underflows whatever the formula), and the
    count of non-finite outputs."""
    rows = []
    for (dtype, method), d in df.groupby(["dtype", "method"], sort=False):
        bad = d.loc[~d["finite"], "x"]
        rows.append({"dtype": dtype, "method": method,
                     "max relative error": d.loc[d["finite"] & d["true value normal"], "rel error"].max(),
                     "non-finite outputs": int(len(bad)),
                     "first x giving non-finite": bad.min() if len(bad) else None})  # None: n/a
    return table_from_rows(rows)


def plot_softplus(df: pd.DataFrame):
    """Relative error against x for naive vs stable softplus; non-finite outputs marked at the top."""
    import matplotlib.pyplot as plt

    dts = list(dict.fromkeys(df["dtype"]))
    fig, axes = plt.subplots(1, len(dts), figsize=(4 * len(dts), 3.8), sharey=True, layout="constrained")
    for ax, name in zip(np.atleast_1d(axes), dts):
        for method, style in (("naive", "-"), ("stable", "--")):
            d = df[(df["dtype"] == name) & (df["method"] == method)]
            fin = d[d["finite"]]
            ax.semilogy(fin["x"], fin["rel error"].clip(lower=1e-12), style, label=method, lw=1)
            below = d.loc[~d["true value normal"], "x"]
            if len(below) and method == "naive":
                ax.axvspan(d["x"].min(), below.max(), color="0.9", zorder=0,
                           label="true value below min normal")
            bad = d[~d["finite"]]
            if len(bad):
                ax.scatter(bad["x"], np.full(len(bad), 1e2), s=4, color="red",
                           label=f"{method}: inf/NaN")
        ax.set(title=name, xlabel="x", ylim=(1e-12, 1e3))
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("relative error vs FP64")  # floored at 1e-12 (the axis's bottom)
    # One legend for all panels, below them: inside a panel it covered the neighbouring one.
    entries = {}
    for ax in np.atleast_1d(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    fig.legend(list(entries.values()), list(entries), loc="outside lower center", ncol=2, frameon=False)
    return fig


def softmax_errors(dtypes: Iterable[str] = ("FP16", "BF16", "FP32"),
                   scales: Sequence[float] = (1.0, 10.0, 100.0, 1000.0), width: int = 64,
                   rows: int = 32, device: str | torch.device = "cpu", seed: int = 0) -> pd.DataFrame:
    """Naive vs max-subtracted vs torch.softmax on random logits times ``scale``, per dtype."""
    dev = check_device(device)
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, width, generator=g, dtype=torch.float64)
    out = []
    for scale in scales:
        for name, dt in _dtypes(dtypes).items():
            x = (base * scale).to(device=dev, dtype=dt)
            ref = torch.softmax(x.double(), dim=-1).cpu()
            for method, fn in (("naive", softmax_naive), ("stable (subtract max)", softmax_stable),
                               ("torch.softmax", lambda t: torch.softmax(t, dim=-1))):
                y = fn(x).double().cpu()
                ok = torch.isfinite(y).all(dim=-1)
                err = (y - ref).abs()[ok]
                out.append({"logit scale": scale, "dtype": name, "method": method,
                            "rows with inf/NaN": f"{int((~ok).sum())} of {rows}",
                            "max abs error (finite rows)": err.max().item() if ok.any() else None})
    return table_from_rows(out)


def first_failing_scale(df: pd.DataFrame, method: str = "naive") -> dict[str, float | None]:
    """Per dtype, the smallest logit scale of ``softmax_errors``' table at which ``method`` gave inf/NaN rows."""
    broken = df[(df["method"] == method) & ~df["rows with inf/NaN"].str.startswith("0 ")]
    return {d: (float(broken.loc[broken["dtype"] == d, "logit scale"].min())
                if (broken["dtype"] == d).any() else None) for d in df["dtype"].unique()}


def predicted_exp_overflow_scale(dtypes: Iterable[str] = ("FP16", "BF16", "FP32"),
                                 scales: Sequence[float] = (1.0, 10.0, 100.0, 1000.0), width: int = 64,
                                 rows: int = 32, seed: int = 0) -> dict[str, float | None]:
    """Per dtype, the smallest scale at which some logit of ``softmax_errors``' inputs (same seed and
    shape) exceeds the largest x with finite exp(x) (``exp_overflow``): where e^x itself overflows."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, width, generator=g, dtype=torch.float64)
    limit = exp_overflow(dtypes).set_index("dtype")["largest x with finite exp(x)"]
    out = {}
    for name, dt in _dtypes(dtypes).items():
        out[name] = next((float(sc) for sc in scales
                          if float((base * sc).to(dt).double().max()) > limit[name]), None)
    return out


def predicted_row_sum_overflow_scale(dtypes: Iterable[str] = ("FP16", "BF16", "FP32"),
                                     scales: Sequence[float] = (1.0, 10.0, 100.0, 1000.0), width: int = 64,
                                     rows: int = 32, seed: int = 0) -> dict[str, float | None]:
    """Per dtype, the smallest scale at which some row's sum of e^x (exact, over the stored logits
    of ``softmax_errors``' inputs) reaches the dtype's overflow threshold, its largest value plus
    half its spacing there: where the naive softmax's row sum overflows even if no e^x does."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, width, generator=g, dtype=torch.float64)
    out = {}
    for name, dt in _dtypes(dtypes).items():
        f = get_format(name)
        top = f.max_finite_from_definition()
        threshold = top + (top - bits_to_value(encode(top, f) - 1, f)) / 2
        out[name] = next((float(sc) for sc in scales
                          if float(torch.exp((base * sc).to(dt).double()).sum(dim=-1).max()) >= threshold), None)
    return out


def summarize_softmax(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, dtype), one column per logit scale: the max error, or how many rows broke."""
    def cell(r: pd.Series) -> str:
        if not r["rows with inf/NaN"].startswith("0 "):
            return f"inf/NaN in {r['rows with inf/NaN']} rows"
        return f"{r['max abs error (finite rows)']:.1e}"

    d = df.assign(result=df.apply(cell, axis=1))
    wide = d.pivot_table(index=["method", "dtype"], columns="logit scale", values="result", aggfunc="first",
                         sort=False)
    wide.columns = [f"scale {c:g}" for c in wide.columns]
    return wide.reset_index()


def softmax_one_hot_rows(scale: float = 1000.0, dtype: str = "FP16", width: int = 64, rows: int = 32,
                         seed: int = 0) -> dict[str, float]:
    """Why softmax errors at large logit scales are ~1e-21 in FP32 rather than 0.

    At that scale the gap between the two largest logits is so wide that every
    probability but the largest underflows to zero in ``dtype``: the output is
    exactly one-hot. The float64 reference keeps tiny non-zero probabilities
    off the argmax, and their mass is the whole error. Same inputs as ``softmax_errors``.
    """
    width, rows = positive_int("width", width), positive_int("rows", rows)
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, width, generator=g, dtype=torch.float64) * scale).to(_dtypes([dtype])[dtype])
    y = torch.softmax(x, dim=-1).double()
    ref = torch.softmax(x.double(), dim=-1)
    one_hot = ((y == 1).sum(-1) == 1) & ((y == 0).sum(-1) == width - 1)
    off_argmax = ref.sort(dim=-1, descending=True).values[:, 1:].sum(-1)  # the reference's mass off the argmax
    return {"one-hot rows": int(one_hot.sum()), "rows": rows,
            "max error": float((y - ref).abs().max()), "largest off-argmax mass in float64": float(off_argmax.max())}


# ---- accumulation --------------------------------------------------------------------------
def _sequential(x: torch.Tensor) -> tuple[torch.Tensor, np.ndarray]:
    acc = torch.zeros((), dtype=x.dtype, device=x.device)
    trace = np.empty(len(x))
    for i, v in enumerate(x):
        acc = acc + v  # a 0-d tensor of x.dtype: rounded after every add
        trace[i] = acc.item()
    return acc, trace


def _kahan(x: torch.Tensor) -> torch.Tensor:
    s = torch.zeros((), dtype=x.dtype, device=x.device)
    c = torch.zeros_like(s)
    for v in x:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


def _pairwise(x: torch.Tensor) -> torch.Tensor:
    while x.numel() > 1:
        if x.numel() % 2:
            x = torch.cat([x, x.new_zeros(1)])
        x = x[0::2] + x[1::2]  # each level rounds to x.dtype
    return x[0]


def accumulation_error(n_terms: int | None = None, value: float = 1e-4, jitter: float = 0.5,
                       dtypes: Iterable[str] = ("FP16", "BF16", "FP32"),
                       device: str | torch.device = "cpu", seed: int = 0,
                       return_traces: bool = False):
    """Sum ``n_terms`` small positive values (``value`` * U[1-jitter, 1+jitter]) with several methods.

    Methods per dtype: sequential (accumulator of that dtype, rounded after every add),
    pairwise (tree, rounded per level), Kahan (compensated, in that dtype) and
    ``torch.sum`` (returns that dtype but accumulates internally in higher precision).
    The reference is the float64 sum of the terms *as stored in the dtype*, so
    the error measures accumulation only. With ``return_traces`` also returns
    the running sequential sums (for the plot).
    """
    dev = check_device(device)
    n = _size("n_terms", n_terms, "accumulation_terms")
    g = torch.Generator().manual_seed(seed)
    terms = value * (1 + jitter * (2 * torch.rand(n, generator=g, dtype=torch.float64) - 1))
    rows, traces = [], {}
    for name, dt in _dtypes(dtypes).items():
        x = terms.to(device=dev, dtype=dt)
        exact = x.double().sum().item()
        seq, traces[name] = _sequential(x)
        for method, r in (("sequential", seq), ("pairwise", _pairwise(x)), ("Kahan", _kahan(x)),
                          ("torch.sum", torch.sum(x))):
            r = float(r.item())
            rows.append({"dtype": name, "method": method, "result": r, "exact": exact,
                         "relative error": abs(r - exact) / exact})
    traces["exact (float64)"] = np.cumsum(terms.numpy())
    df = pd.DataFrame(rows)
    return (df, traces) if return_traces else df


def sum_rounding(dtype: str = "FP16", n_terms: int = 1000, seeds: Sequence[int] = tuple(range(8)),
                 value: float = 1e-4, jitter: float = 0.5) -> pd.DataFrame:
    """Does ``torch.sum`` round once? One row per seed: the exact (float64) sum of the stored terms,
    that sum rounded once to ``dtype``, ``torch.sum``, and pairwise summation in ``dtype``.

    A reduction that accumulates in FP32 and rounds at the end returns the exact sum rounded once
    (up to an FP32 error far below the dtype's spacing); a tree of ``dtype`` additions differs from
    it on some inputs. The seeds are chosen so that the pairwise column does differ somewhere,
    which is what lets the comparison tell the two apart (see :func:`rounds_once`).
    """
    dt = _dtypes([dtype])[dtype]
    if n_terms < 2:
        raise ValueError(f"n_terms must be >= 2, got {n_terms}")
    rows = []
    for seed in seeds:
        g = torch.Generator().manual_seed(seed)
        x = (value * (1 + jitter * (2 * torch.rand(n_terms, generator=g, dtype=torch.float64) - 1))).to(dt)
        exact = x.double().sum().item()
        rows.append({"seed": seed, "exact": exact,
                     "exact rounded once": torch.tensor(exact, dtype=torch.float64).to(dt).item(),
                     "torch.sum": torch.sum(x).item(), f"{dtype} pairwise": _pairwise(x).item()})
    return pd.DataFrame(rows)


def rounds_once(df: pd.DataFrame, column: str) -> bool:
    """True when ``column`` equals the exact sum rounded once on every row of :func:`sum_rounding`."""
    return bool((df[column] == df["exact rounded once"]).all())


def split_k_reduction_error(m: int = 64, n: int = 64, k: int = 4096, splits: Sequence[int] = (1, 2, 8, 32),
                            dtypes: Iterable[str] = ("FP16", "BF16"), seed: int = 0) -> pd.DataFrame:
    """A 16-bit GEMM whose K-partial sums are rounded to 16 bits, emulated on the CPU.

    ``A @ B`` with ``A`` (m x k) and ``B`` (k x n) stored in the dtype: the k products are split
    into ``splits`` interleaved chunks, each chunk's dot products are summed in FP32 and rounded
    to the dtype, and the chunk results are added in the dtype (rounded after every add). One
    split is FP32 accumulation with a single rounding at the end. This is what
    ``torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction`` permit cuBLAS to
    do; the error is the relative Frobenius error against the float64 product of the stored values.
    Only FP32 matmuls run, so an AVX2 CPU pays no 16-bit emulation.
    """
    if any((not isinstance(s, int)) or s < 1 or s > k for s in splits):
        raise ValueError(f"splits must be ints in [1, k={k}], got {list(splits)}")
    g = torch.Generator().manual_seed(seed)
    a64, b64 = torch.randn(m, k, generator=g, dtype=torch.float64), torch.randn(k, n, generator=g, dtype=torch.float64)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        a, b = a64.to(dt), b64.to(dt)
        exact = a.double() @ b.double()
        for s in splits:
            acc = None
            for i in range(s):
                part = (a[:, i::s].float() @ b[i::s, :].float()).to(dt)
                acc = part if acc is None else (acc.float() + part.float()).to(dt)
            rows.append({"dtype": name, "partial sums rounded to the dtype": s,
                         "relative error": ((acc.double() - exact).norm() / exact.norm()).item(),
                         "unit roundoff": 2.0 ** -(get_format(name).mantissa_bits + 1)})
    return pd.DataFrame(rows)


REDUCTION_FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")


def _reduction_flag_state(m) -> dict[str, object]:
    """Each reduced-precision-reduction flag as it can be written back: the (reduced precision,
    split-K) pair where this torch has the ``_split_k`` attribute, the bool otherwise."""
    state = {}
    for flag in REDUCTION_FLAGS:
        try:
            state[flag] = (getattr(m, flag), getattr(m, flag + "_split_k"))
        except AttributeError:  # an older torch: one bool per flag
            state[flag] = getattr(m, flag)
    return state


@contextlib.contextmanager
def reduction_flags_restored():
    """Restore both reduced-precision-reduction flags, split-K half included, on exit.

    Writing back the bool alone would turn a caller's ``(False, False)`` into ``(False, True)``:
    a bare bool sets split-K to True (``torch/backends/cuda/__init__.py``, ``_parse_reduction_setting``).
    """
    m = torch.backends.cuda.matmul
    before = _reduction_flag_state(m)
    try:
        yield m
    finally:
        for flag, value in before.items():
            setattr(m, flag, value)


FP32_PRECISION_ATTRIBUTES = (  # parent first: restoring writes them back in this order
    "torch.backends.fp32_precision",
    "torch.backends.cuda.matmul.fp32_precision",
    "torch.backends.cudnn.fp32_precision", "torch.backends.cudnn.conv.fp32_precision",
    "torch.backends.cudnn.rnn.fp32_precision",
    "torch.backends.mkldnn.fp32_precision", "torch.backends.mkldnn.matmul.fp32_precision",
    "torch.backends.mkldnn.conv.fp32_precision", "torch.backends.mkldnn.rnn.fp32_precision")


def _attribute_owner(path: str):
    owner, attr = path.rsplit(".", 1)
    obj = torch
    for part in owner.split(".")[1:]:
        obj = getattr(obj, part)
    return obj, attr


def fp32_precision_state() -> dict[str, str]:
    """Every ``fp32_precision`` attribute this torch has, by its path (the state the old API reads)."""
    state = {}
    for path in FP32_PRECISION_ATTRIBUTES:
        try:
            obj, attr = _attribute_owner(path)
            state[path] = getattr(obj, attr)
        except AttributeError:
            continue
    return state


@contextlib.contextmanager
def fp32_precision_restored():
    """Restore every ``fp32_precision`` attribute on exit.

    Writing back an old-API value is not a restore: ``set_float32_matmul_precision("highest")`` or
    ``matmul.allow_tf32 = False`` turns a ``matmul.fp32_precision`` of "none" (defer to the parent)
    into "ieee", and ``get_float32_matmul_precision()`` reads "highest" for both.
    """
    before = fp32_precision_state()
    try:
        legacy = torch.get_float32_matmul_precision()
    except RuntimeError:  # the new API already set backends apart: the old one has no single value to restore
        legacy = None
    try:
        yield
    finally:
        # the legacy global first: left changed, it contradicts the restored new-API values, and reading
        # ``matmul.allow_tf32`` then raises ("mix of the legacy and new APIs"); the writes below override it
        if legacy is not None:
            torch.set_float32_matmul_precision(legacy)
        for path, value in before.items():
            obj, attr = _attribute_owner(path)
            setattr(obj, attr, value)


def fp32_precision_values(candidates: Sequence[str] = ("ieee", "tf32", "none", "bf16x9", "bfx9")) -> pd.DataFrame:
    """Which values this torch accepts for ``torch.backends.cuda.matmul.fp32_precision`` (set, then restored).

    Setting it needs no GPU; a value this torch does not know raises (``Unknown precision``), and
    that error is the table's answer, whatever a note of another version lists.
    """
    m = torch.backends.cuda.matmul
    if not hasattr(m, "fp32_precision"):
        return table_from_rows([{"value": v, "accepted": None, "error": "this torch has no fp32_precision"}
                                for v in candidates])
    rows = []
    with fp32_precision_restored():
        for v in candidates:
            try:
                m.fp32_precision = v
                rows.append({"value": v, "accepted": True, "error": None})
            except (RuntimeError, ValueError) as exc:
                rows.append({"value": v, "accepted": False, "error": str(exc).split("\n")[0]})
    return table_from_rows(rows)


def reduced_precision_reduction_gpu(k: int | None = None, device: str | torch.device = "cuda",
                                    seed: int = 0) -> pd.DataFrame:
    """Error of FP16 and BF16 GEMMs on CUDA with the reduced-precision-reduction flags on and off.

    Needs a CUDA GPU (the flags are cuBLAS settings); the flags are restored afterwards.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("reduced_precision_reduction_gpu needs a CUDA GPU: the flags configure cuBLAS")
    dev = check_device(device)
    size = active_profile()["matmul_size"]
    kk = k or 16 * size
    g = torch.Generator().manual_seed(seed)
    a64 = torch.randn(64, kk, generator=g, dtype=torch.float64)
    b64 = torch.randn(kk, 64, generator=g, dtype=torch.float64)
    rows = []
    with reduction_flags_restored() as m:
        for name, dt, flag in (("FP16", torch.float16, "allow_fp16_reduced_precision_reduction"),
                               ("BF16", torch.bfloat16, "allow_bf16_reduced_precision_reduction")):
            a, b = a64.to(dt), b64.to(dt)
            exact = a.double() @ b.double()
            for allowed in (True, False):
                setattr(m, flag, allowed)
                c = (a.to(dev) @ b.to(dev)).double().cpu()
                rows.append({"dtype": name, flag.replace("_" + name.lower(), ""): allowed, "k": kk,
                             "relative error": ((c - exact).norm() / exact.norm()).item()})
    return pd.DataFrame(rows)


def gpu_subnormal_matmul(device: str | torch.device = "cuda") -> pd.DataFrame:
    """Do FP16/BF16 matmuls on this GPU keep subnormal inputs and results, or flush them to zero?

    ``(x * I) @ I`` with x the dtype's smallest subnormal times 3 (a subnormal input), and
    ``(a * I) @ (b * I)`` whose exact result is that subnormal (normal inputs, subnormal output).
    Tensor-core paths may flush either (PyTorch's numerical-accuracy note documents it for the
    FP16/BF16 MFMA instructions of AMD MI200).
    """
    dev = check_device(device)
    rows = []
    for name, dt in _dtypes(("FP16", "BF16")).items():
        f = get_format(name)
        sub = 3 * f.min_subnormal_from_definition()
        eye = torch.eye(16, dtype=dt, device=dev)
        a = math.ldexp(1.0, -(1 + f.bias) // 2 - 1)  # normal, and a * b = sub * 2^k stays exact
        b = sub / a
        for case, out in (("subnormal input", (sub * eye) @ eye),
                          ("normal inputs, subnormal result", (a * eye) @ (b * eye))):
            got = float(out[0, 0].float().item())
            rows.append({"dtype": name, "case": case, "exact": sub, "result": got,
                         "subnormal kept": got == sub})
    return pd.DataFrame(rows)


def fp32_precision_settings() -> pd.DataFrame:
    """The FP32 precision switches this torch has, old API and new, and any warning reading them gives.

    New API (torch 2.9+): ``torch.backends.{fp32_precision, cuda.matmul, cudnn, cudnn.conv,
    cudnn.rnn, mkldnn, ...}.fp32_precision``; old API: ``torch.get_float32_matmul_precision()``,
    ``torch.backends.cuda.matmul.allow_tf32``, ``torch.backends.cudnn.allow_tf32``. A setting this
    torch does not have is "n/a". Each value is also assigned back (for the warning) and every
    ``fp32_precision`` attribute restored afterwards (``fp32_precision_restored``): no change of state.
    """
    import warnings

    settings = [("new", "torch.backends.fp32_precision"),
                ("new", "torch.backends.cuda.matmul.fp32_precision"),
                ("new", "torch.backends.cudnn.fp32_precision"),
                ("new", "torch.backends.cudnn.conv.fp32_precision"),
                ("new", "torch.backends.cudnn.rnn.fp32_precision"),
                ("new", "torch.backends.mkldnn.fp32_precision"),
                ("old", "torch.get_float32_matmul_precision()"),
                ("old", "torch.backends.cuda.matmul.allow_tf32"),
                ("old", "torch.backends.cudnn.allow_tf32")]
    rows = []
    for api, path in settings:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if path.endswith("()"):
                    value = torch.get_float32_matmul_precision()
                else:
                    obj = torch
                    for part in path.split(".")[1:]:
                        obj = getattr(obj, part)
                    value = obj
            except AttributeError:
                value = None
        set_warning = None
        if value is not None and not path.endswith("()"):
            # assigning the value read is not neutral for the old flags (allow_tf32 rewrites
            # fp32_precision "none" as "ieee" or "tf32"), hence the restore of every attribute
            obj, attr = _attribute_owner(path)
            with warnings.catch_warnings(record=True) as caught_set, fp32_precision_restored():
                warnings.simplefilter("always")
                setattr(obj, attr, value)
            set_warning = "; ".join(str(w.message).split("\n")[0] for w in caught_set) or None
        rows.append({"API": api, "setting": path, "value": None if value is None else str(value),
                     "warning when read": "; ".join(str(w.message).split("\n")[0] for w in caught) or None,
                     "warning when set": set_warning})
    return table_from_rows(rows)


def plot_accumulation(traces: dict):
    """Running sum of the sequential accumulators against the number of terms added."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for i, (name, tr) in enumerate(traces.items()):
        if "exact" in name:  # the reference: thin, dashed and on top, so a format lying on it stays visible
            style = dict(lw=1.5, ls=(0, (4, 3)), color=color_of("FP64"), zorder=3)
        else:
            style = dict(lw=5 if name == "FP32" else 1.8, alpha=0.3 if name == "FP32" else 1.0,
                         color=color_or_default(name, f"C{i}"), zorder=2)
        ax.plot(np.arange(1, len(tr) + 1), tr, label=name, **style)
    ax.set(xlabel="terms added", ylabel="running sum", title="Sequential accumulation, one rounding per add")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# ---- cancellation ---------------------------------------------------------------------------
def cancellation(deltas: Sequence[float] | None = None,
                 dtypes: Iterable[str] = ("FP16", "BF16", "FP32")) -> pd.DataFrame:
    """(1 + d) - 1 in each dtype: relative error of the recovered d (1 = all information lost)."""
    ds = np.geomspace(1e-9, 1.0, 37) if deltas is None else np.asarray(deltas, dtype=np.float64)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        d = torch.tensor(ds, dtype=torch.float64).to(dt)
        got = ((1 + d) - 1).double()
        dd = d.double()
        rel = ((got - dd).abs() / dd.abs()).numpy()
        for a, b, r in zip(dd.numpy(), got.numpy(), rel):
            rows.append({"dtype": name, "d (as stored)": a, "(1 + d) - 1": b, "relative error": r})
    return pd.DataFrame(rows)


def variance_cancellation(mean: float = 100.0, std: float = 1.0, n: int = 4096,
                          dtypes: Iterable[str] = ("FP16", "BF16", "FP32"), seed: int = 0,
                          device: str | torch.device = "cpu") -> pd.DataFrame:
    """Variance as E[x^2] - E[x]^2 (cancels) vs two-pass E[(x - mean)^2], elementwise in each dtype.

    The means use torch.mean (higher-precision accumulation inside), so the
    error shown is the cancellation, not the summation.
    """
    dev = check_device(device)
    # One value has no spread and zero spread has no relative error: the reference variance is 0.
    n = positive_int("n", n, minimum=2)
    std = positive_number("std", std)
    g = torch.Generator().manual_seed(seed)
    x64 = mean + std * torch.randn(n, generator=g, dtype=torch.float64)
    rows = []
    for name, dt in _dtypes(dtypes).items():
        x = x64.to(device=dev, dtype=dt)
        ref = x.double().var(unbiased=False).item()
        one_pass = (torch.mean(x * x) - torch.mean(x) ** 2).double().item()
        two_pass = torch.mean((x - torch.mean(x)) ** 2).double().item()
        for method, v in (("E[x²] − E[x]²", one_pass), ("two-pass E[(x − μ)²]", two_pass)):
            rows.append({"dtype": name, "method": method, "variance": v, "reference": ref,
                         "relative error": abs(v - ref) / ref})
    return pd.DataFrame(rows)


# ---- stagnation ------------------------------------------------------------------------------
def update_stagnation(w: float = 1.0, updates: Sequence[float] = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5),
                      formats: Iterable[str] = ("FP32", "FP16", "BF16")) -> pd.DataFrame:
    """Is ``w + u`` (and ``w - u``) different from ``w`` when both are held in each format?

    One row per update size, one column per format and direction. The two
    directions differ at a power of two such as 1.0: the spacing below it is
    half the spacing above, so a smaller update still moves ``w`` down.
    """
    rows = []
    for u in updates:
        row = {"update u": u}
        for name, dt in _dtypes(formats).items():
            wt, ut = torch.tensor(w, dtype=dt), torch.tensor(u, dtype=dt)
            row[f"{name}: w + u moves"] = bool((wt + ut) != wt)
            row[f"{name}: w − u moves"] = bool((wt - ut) != wt)
        rows.append(row)
    return pd.DataFrame(rows)


def _largest_lost_power_of_two(w: torch.Tensor, direction: int) -> float:
    """Largest u = 2^-k (k = 0..64) for which ``w + direction * u`` rounds back to ``w``."""
    for k in range(0, 65):
        u = torch.tensor(math.ldexp(1.0, -k), dtype=w.dtype)
        if (w + direction * u) == w:
            return math.ldexp(1.0, -k)
    raise ValueError(f"no lost update found for w = {float(w)} in {w.dtype}")


def stagnation_thresholds(w: float = 1.0, formats: Iterable[str] = ("FP32", "FP16", "BF16")) -> pd.DataFrame:
    """Where updates start to be lost at ``w`` (a power of two), measured and from the definition.

    Measured: the largest power-of-two update that torch's rounded arithmetic
    loses, adding and subtracting. Definition: half the spacing on each side,
    2^(e - M - 1) above ``w = 2^e`` and 2^(e - M - 2) below it (an exact tie
    rounds to even, which is ``w`` itself, so half the spacing is lost too).
    """
    e = math.frexp(w)[1] - 1
    if math.ldexp(1.0, e) != w:
        raise ValueError(f"w must be a power of two (the two sides' spacings differ there), got {w!r}")
    rows = []
    for name, dt in _dtypes(formats).items():
        m = get_format(name).mantissa_bits
        wt = torch.tensor(w, dtype=dt)
        rows.append({"format": name,
                     "spacing above w": next_up(w, name) - w,
                     "spacing below w": w - torch.nextafter(wt, torch.zeros((), dtype=dt)).item(),
                     "largest lost u, w + u": _largest_lost_power_of_two(wt, +1),
                     "largest lost u, w − u": _largest_lost_power_of_two(wt, -1),
                     "definition, w + u": math.ldexp(1.0, e - m - 1),
                     "definition, w − u": math.ldexp(1.0, e - m - 2)})
    return pd.DataFrame(rows)


def sgd_stagnation(steps: int | None = None, lr: float = 1e-4, n_weights: int = 256,
                   seed: int = 0, device: str | torch.device = "cpu") -> pd.DataFrame:
    """Gradient descent on 0.5 * ||w - t||^2 with weights near 1 and targets near 2.

    Variants: weights (and update) in FP32, FP16, BF16; and BF16/FP16 compute with an
    FP32 master copy (gradient from the low-precision copy, update applied in FP32).
    Returns the loss (float64, from the weights actually held) at log-spaced steps.
    """
    dev = check_device(device)
    n_steps = _size("steps", steps, "stagnation_steps")
    g = torch.Generator().manual_seed(seed)
    w0 = 1 + 0.1 * torch.rand(n_weights, generator=g, dtype=torch.float64)
    t = 2 + 0.1 * torch.rand(n_weights, generator=g, dtype=torch.float64)
    record = sorted(set(np.unique(np.geomspace(1, n_steps, 40).astype(int)).tolist()) | {0})
    rows = []
    variants = [("FP32 weights", torch.float32, None), ("FP16 weights", torch.float16, None),
                ("BF16 weights", torch.bfloat16, None),
                ("FP16 compute + FP32 master", torch.float16, torch.float32),
                ("BF16 compute + FP32 master", torch.bfloat16, torch.float32)]
    for label, dt, master_dt in variants:
        tt = t.to(device=dev, dtype=dt)
        master = w0.to(device=dev, dtype=master_dt) if master_dt else None
        w = w0.to(device=dev, dtype=dt)
        for step in range(n_steps + 1):
            if step in record:
                held = master if master is not None else w
                loss = 0.5 * ((held.double() - t.to(dev)) ** 2).sum().item()
                rows.append({"variant": label, "step": step, "loss": loss})
            grad = w - tt  # computed in the low-precision dtype
            if master is not None:
                master = master - lr * grad.to(master_dt)
                w = master.to(dt)
            else:
                w = w - lr * grad  # update rounded to dt
    return pd.DataFrame(rows)


def plot_sgd_stagnation(df: pd.DataFrame):
    """Loss against step for each precision variant."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.6), layout="constrained")
    # Runs that lie on each other at this scale: the first of a pair wide and pale underneath, the
    # second thin and patterned on top, each in its format's colour (the first word of its label).
    styles = {"FP32 weights": dict(lw=5, alpha=0.35, zorder=1), "FP16 weights": dict(lw=5, alpha=0.45, zorder=1),
              "BF16 weights": dict(ls=":", lw=2, zorder=3)}
    for i, (label, d) in enumerate(df.groupby("variant", sort=False)):
        style = styles.get(label, dict(ls="--" if "FP16" in label else "-.", lw=1.5, zorder=2))
        ax.plot(d["step"], d["loss"], label=label, color=color_or_default(label.split()[0], f"C{i}"), **style)
    ax.set(xlabel="step", ylabel="loss 0.5·‖w − t‖²", title="Small updates: stored weights vs FP32 master copy")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, frameon=False)
    return fig


# ---- TF32 ------------------------------------------------------------------------------------
def tf32_matmul_error(n: int | None = None, device: str | torch.device = "cuda",
                      seed: int = 0) -> pd.DataFrame:
    """Relative error of an FP32 matmul with TF32 off ("highest") and on ("high") vs float64.

    Needs a CUDA GPU (TF32 is a tensor-core mode); raises RuntimeError otherwise.
    Every ``fp32_precision`` attribute is restored afterwards (``fp32_precision_restored``).
    """
    size = _size("n", n, "matmul_size")
    if not torch.cuda.is_available():
        raise RuntimeError("tf32_matmul_error needs a CUDA GPU: TF32 is an NVIDIA tensor-core "
                           "mode and this machine has no CUDA device")
    dev = check_device(device)
    if dev.type != "cuda":
        raise ValueError(f"tf32_matmul_error runs on CUDA only, got device {device!r}; valid: ['cuda']")
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(size, size, generator=g, dtype=torch.float64)
    b = torch.randn(size, size, generator=g, dtype=torch.float64)
    ref = a @ b
    rows = []
    with fp32_precision_restored():
        for setting in ("highest", "high"):
            torch.set_float32_matmul_precision(setting)
            c = (a.float().to(dev) @ b.float().to(dev)).double().cpu()
            rows.append({"float32_matmul_precision": setting,
                         "mode": "strict FP32" if setting == "highest" else "TF32 allowed",
                         "max relative error": ((c - ref).abs().max() / ref.abs().max()).item(),
                         "mean abs error": (c - ref).abs().mean().item()})
    return pd.DataFrame(rows)


TF32_PROBES = {  # FP32 inputs whose 13 dropped bits tell the conversion modes apart
    "above half an ulp (1 + 2^-11 + 2^-13)": 1 + 2.0 ** -11 + 2.0 ** -13,
    "tie, even neighbour below (1 + 2^-11)": 1 + 2.0 ** -11,
    "tie, odd neighbour below (1 + 2^-10 + 2^-11)": 1 + 2.0 ** -10 + 2.0 ** -11,
}
TF32_MODES = {  # what each conversion reads for the probes, in TF32_PROBES' order
    "truncation": (1.0, 1.0, 1 + 2.0 ** -10),
    "round to nearest, ties to even": (1 + 2.0 ** -10, 1.0, 1 + 2.0 ** -9),
    "round to nearest, ties away from zero": (1 + 2.0 ** -10, 1 + 2.0 ** -10, 1 + 2.0 ** -9),
}


def tf32_input_rounding(device: str | torch.device = "cuda", n: int = 256,
                        precision: str = "high") -> pd.DataFrame:
    """How this device's FP32 matmul reads its inputs under ``torch.set_float32_matmul_precision(precision)``.

    Each probe value fills the diagonal of an ``n`` x ``n`` matrix multiplied by the identity, so
    the product is the value as the kernel read it (the product by 1 and the FP32 accumulation
    are exact). The "mode" column names the conversion that matches every probe (see
    ``TF32_MODES``), "full FP32" when nothing was dropped, or "other". Every ``fp32_precision``
    attribute is restored afterwards.
    """
    dev = check_device(device)
    n = positive_int("n", n)
    read = []
    with fp32_precision_restored():
        torch.set_float32_matmul_precision(precision)
        eye = torch.eye(n, device=dev)
        for value in TF32_PROBES.values():
            a = torch.eye(n, device=dev) * value
            read.append(float((a @ eye)[0, 0].item()))
    probes = tuple(TF32_PROBES.values())
    mode = ("full FP32" if tuple(read) == probes else
            next((name for name, expect in TF32_MODES.items() if tuple(read) == expect), "other"))
    return pd.DataFrame([{"input": label, "value": v, "read by the matmul": r, "mode": mode}
                         for (label, v), r in zip(TF32_PROBES.items(), read)])


# ---- casting out of range ---------------------------------------------------------------------
def overflow_casts(values: Sequence[float] = (1e6, math.inf, math.nan),
                   formats: Sequence[str] = ("FP16", "FP8 E4M3FN", "FP8 E5M2", "FP8 E4M3FNUZ",
                                             "FP8 E5M2FNUZ")) -> pd.DataFrame:
    """What a cast does to out-of-range values: torch's cast vs ml_dtypes' cast of the same format.

    The default formats are those whose range 1e6 exceeds (BF16's does not; it can be asked for)."""
    import ml_dtypes

    mld = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP8 E4M3FN": ml_dtypes.float8_e4m3fn,
           "FP8 E5M2": ml_dtypes.float8_e5m2, "FP8 E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
           "FP8 E5M2FNUZ": ml_dtypes.float8_e5m2fnuz}
    rows = []
    for name in formats:
        f = get_format(name)
        if name not in mld:
            raise ValueError(f"overflow_casts supports {list(mld)}, got {name!r}")
        for v in values:
            tv = torch.tensor([v], dtype=torch.float32).to(f.storage).float().item()
            with np.errstate(over="ignore", invalid="ignore"):
                nv = float(np.array([v], dtype=np.float32).astype(mld[name]).astype(np.float64)[0])
            rows.append({"format": name, "input": v, "torch cast": tv, "ml_dtypes cast": nv})
    return pd.DataFrame(rows)


def mx_floor_scale_overshoot(block_max: float = 1.9, block_size: int = 32) -> dict:
    """Quantize one MX block to FP8 E4M3FN with torchao's default scale (``ScaleCalculationMode.FLOOR``).

    FLOOR sets the E8M0 scale to 2^(floor(log2 amax) - emax of the element type), so the block's
    largest element divided by the scale can exceed the element type's largest value; torchao then
    clamps it (``torchao/prototype/mx_formats/mx_tensor.py``). The block holds ``block_max`` once and
    1/4 of it elsewhere. Returns the scale, the largest element divided by it (before the clamp),
    the value stored for it, E4M3FN's largest value and the name of ``to_mx``'s default scaling mode.
    """
    import inspect

    from torchao.prototype.mx_formats.mx_tensor import ScaleCalculationMode, to_mx

    block_max = positive_number("block_max", block_max)
    block = torch.full((positive_int("block_size", block_size),), block_max / 4, dtype=torch.float32)
    block[0] = block_max
    scale, data = to_mx(block, torch.float8_e4m3fn, block.numel(), scaling_mode=ScaleCalculationMode.FLOOR)
    scale_value = bits_to_value(int(scale.view(torch.uint8).reshape(-1)[0]), "E8M0")
    default = inspect.signature(to_mx).parameters["scaling_mode"].default
    return {"scale": scale_value, "largest / scale": block_max / scale_value,
            "stored": float(data.float()[0]), "format max": float(torch.finfo(torch.float8_e4m3fn).max),
            "default mode": getattr(default, "name", str(default))}


def agrees_at_stated_precision(stated: str, measured: float) -> bool:
    """Whether ``measured``, rounded to the significant digits ``stated`` is written with, equals it.

    A figure is as precise as it is written: "3.4e38" (2 digits) holds for any value that rounds
    to 3.4e38, "~2" (1 digit) for any value in [1.5, 2.5), "65504" only for 65504. ``stated`` is the
    figure as text (a float would lose trailing zeros, which count).
    """
    from decimal import Decimal

    if not isinstance(stated, str):
        raise TypeError(f"stated must be the figure as text, got {stated!r} ({type(stated).__name__})")
    digits = len(Decimal(stated.replace(",", "")).as_tuple().digits)
    return float(f"{float(measured):.{digits - 1}e}") == float(stated.replace(",", ""))


def stochastic_rounding_update(weight: float = 1.0, update: float = 2.0 ** -10, n: int = 1 << 16,
                               seed: int = 0) -> dict:
    """Add ``update`` to a BF16 ``weight`` ``n`` times independently, rounding the FP32 sum to BF16
    by round-to-nearest-even and by torchao's stochastic rounding (the BF16 rounding of its
    optimizers' ``bf16_stochastic_round=True``, ``torchao/optim/quant_utils.py``).

    Stochastic rounding goes up with probability (distance to the lower neighbour) / spacing, so
    the update survives on average where round-to-nearest loses it. Returns the round-to-nearest
    result, the mean of the stochastic results, the fraction rounded up, the fraction expected and
    its binomial standard deviation.
    """
    from torchao.optim.quant_utils import _fp32_to_bf16_sr

    n = positive_int("n", n)
    exact = torch.tensor(float(weight), dtype=torch.bfloat16).float() + float(update)
    if float(exact) <= 0:
        raise ValueError(f"weight + update must be positive, got {float(exact)!r}")
    lower = float((exact.view(torch.int32) & ~0xFFFF).view(torch.float32))  # FP32 truncated to BF16's bits
    spacing = next_up(lower, "BF16") - lower
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        sr = _fp32_to_bf16_sr(exact.expand(n).contiguous()).double()
    p = (float(exact) - lower) / spacing
    return {"round to nearest": float(exact.to(torch.bfloat16)), "stochastic mean": float(sr.mean()),
            "fraction rounded up": float((sr > lower).double().mean()), "expected fraction": p,
            "binomial std": math.sqrt(p * (1 - p) / n)}
