"""Matmul throughput per dtype against size and alignment.

Each point is an ``n × n @ n × n`` product timed with :func:`timing.measure`
(warm-up in the measured dtype, median of runs) and converted to TFLOP/s as
``2 n³ / median``. ``tf32`` is FP32 inputs with TF32 Tensor Cores allowed
(CUDA only); ``fp8`` is ``torch._scaled_mm`` on ``float8_e4m3fn`` inputs with
unit scales (CUDA with compute capability 8.9 or newer).
"""

from __future__ import annotations

import contextlib
from typing import Iterable

import pandas as pd
import torch

from amp_docs_lib.core.checks import positive_int
from amp_docs_lib.core.timing import Timing, interleaved, measure
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.numbers.accounting import matmul_flops

MATMUL_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
_TORCH_DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
                 "bf16": torch.bfloat16}


def dtype_supported(dtype: str, device: str | torch.device = "cpu") -> bool:
    """Whether ``dtype`` (a :data:`MATMUL_DTYPES` name) has a matmul on ``device`` here."""
    if dtype not in MATMUL_DTYPES:
        raise ValueError(f"unknown matmul dtype {dtype!r}; valid: {list(MATMUL_DTYPES)}")
    dev = check_device(device)
    if dev.type == "cpu":
        return dtype in ("fp32", "fp16", "bf16")
    if dtype == "tf32":
        return torch.cuda.get_device_capability(dev) >= (8, 0)
    if dtype == "bf16":
        return torch.cuda.is_bf16_supported(including_emulation=False)  # native only, as gating.py's requires:cuda-bf16
    if dtype == "fp8":
        return torch.cuda.get_device_capability(dev) >= (8, 9) and hasattr(torch, "_scaled_mm")
    return True


@contextlib.contextmanager
def tf32_matmuls(enabled: bool):
    """Within the block, allow (or forbid) TF32 for FP32 CUDA matmuls; the previous setting is restored."""
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev


FP8_OUT_DTYPE = torch.bfloat16  # what the fp8 matmul writes (torch._scaled_mm's out_dtype)


def matmul_bytes(dtype: str, n: int) -> int:
    """Bytes an n×n @ n×n matmul in ``dtype`` reads and writes once each: two inputs and the output (the fp8
    matmul reads 1-byte inputs and writes :data:`FP8_OUT_DTYPE`)."""
    n = positive_int("n", n)
    if dtype == "fp8":
        return 2 * n * n + n * n * torch.empty((), dtype=FP8_OUT_DTYPE).element_size()
    if dtype not in _TORCH_DTYPES:
        raise ValueError(f"unknown matmul dtype {dtype!r}; valid: {list(MATMUL_DTYPES)}")
    return 3 * n * n * torch.empty((), dtype=_TORCH_DTYPES[dtype]).element_size()


def matmul_fn(dtype: str, m: int, n: int, k: int, device: str | torch.device = "cpu", seed: int = 0):
    """A zero-argument function computing one (m × k) @ (k × n) product in ``dtype``."""
    m, n, k = positive_int("m", m), positive_int("n", n), positive_int("k", k)
    if not dtype_supported(dtype, device):
        raise ValueError(f"matmul dtype {dtype!r} is not supported on {device!r} here")
    dev = check_device(device)
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to(dev)
    b = torch.randn(k, n, generator=g).to(dev)
    if dtype == "fp8":
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major second operand
        one = torch.ones((), device=dev)
        return lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=FP8_OUT_DTYPE)
    a, b = a.to(_TORCH_DTYPES[dtype]), b.to(_TORCH_DTYPES[dtype])
    if dev.type == "cuda":
        tf32 = dtype == "tf32"

        def run():
            with tf32_matmuls(tf32):
                return a @ b
        return run
    return lambda: a @ b


def time_matmul(dtype: str, n: int, device: str | torch.device = "cpu", *, m: int | None = None,
                k: int | None = None, min_run_time: float = 0.1, warmup: int = 2) -> Timing:
    """Timing of one (m × k) @ (k × n) product (square n × n by default)."""
    m, k = (n if m is None else m), (n if k is None else k)
    return measure(matmul_fn(dtype, m, n, k, device), device=device, warmup=warmup,
                   min_run_time=min_run_time, label=f"{dtype} {m}x{k}@{k}x{n}")


_MKL_HEADERS: list[str] = []  # MKL prints its version header once per process: kept when first seen


def _verbose_lines(fn) -> list[str]:
    """What MKL's and oneDNN's verbose logs (``torch.backends.mkl.verbose``, ``torch.backends.mkldnn.verbose``)
    print while ``fn`` runs once, warm (oneDNN creates its primitives on the first call). Both write to the C
    stdout, which is redirected to a file for the call."""
    from amp_docs_lib.core.profiling import c_stdout_lines

    fn()

    def verbose_call():
        with contextlib.ExitStack() as stack:
            if torch.backends.mkl.is_available():
                stack.enter_context(torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_ON))
            stack.enter_context(torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON))
            fn()

    lines = c_stdout_lines(verbose_call)
    _MKL_HEADERS.extend(ln for ln in lines if ln.startswith("MKL_VERBOSE") and " for " in ln and "(" not in ln[:20])
    return lines


def cpu_matmul_library(dtype: str, n: int = 256) -> str:
    """Which library ran one CPU ``n × n`` matmul in ``dtype``, from the libraries' own verbose logs: "MKL
    <routine>" (e.g. ``SGEMM``), "oneDNN <implementation>", or "neither MKL nor oneDNN" where both logs stayed
    empty (torch's own CPU kernel ran)."""
    import re

    lines = _verbose_lines(matmul_fn(dtype, n, n, n, "cpu"))
    found = [f"MKL {m.group(1)}" for ln in lines if (m := re.match(r"MKL_VERBOSE (\w+)\(", ln))]
    found += [f"oneDNN {ln.split(',')[6]}" for ln in lines if ",primitive,exec," in ln]
    return ", ".join(dict.fromkeys(found)) or "neither MKL nor oneDNN"


def mkl_code_path(n: int = 64) -> str | None:
    """The processors MKL's verbose header says its code path is for (the text after "for", e.g. "Intel(R) 64
    architecture Intel(R) Architecture processors"), read while an FP32 ``n × n`` CPU matmul runs; None
    where this torch has no MKL or the header was not printed."""
    import re

    if not torch.backends.mkl.is_available():
        return None
    if not _MKL_HEADERS:
        _verbose_lines(matmul_fn("fp32", n, n, n, "cpu"))
    for ln in _MKL_HEADERS:
        m = re.match(r"MKL_VERBOSE .*? for (.*?), Lnx", ln)
        if m:
            return m.group(1)
    return None


ONEDNN_FP32 = "fp32 oneDNN"  # dtype_comparison's name for FP32 through oneDNN (CPU only)


def onednn_fp32_matmul_fn(n: int, seed: int = 0):
    """A zero-argument function computing one FP32 ``n × n`` product through oneDNN (CPU).

    On the CPU ``a @ b`` in FP32 runs MKL's sgemm while BF16 runs oneDNN (both visible with
    ``MKL_VERBOSE=1`` / ``ONEDNN_VERBOSE=1``); oneDNN's FP32 kernel (``aten::mkldnn_linear`` on
    ``to_mkldnn()`` tensors, which computes ``a @ b.T``) can be much faster on a non-Intel CPU, so a
    CPU peak or a BF16 speedup judged only against MKL's FP32 mixes the dtype with the library.
    """
    n = positive_int("n", n)
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(n, n, generator=g).to_mkldnn()
    b = torch.randn(n, n, generator=g).to_mkldnn()
    return lambda: torch.ops.aten.mkldnn_linear(a, b)


def time_onednn_fp32_matmul(n: int, *, min_run_time: float = 0.1, warmup: int = 2) -> Timing:
    """Timing of one FP32 ``n × n`` product through oneDNN (CPU): see :func:`onednn_fp32_matmul_fn`."""
    return measure(onednn_fp32_matmul_fn(n), device="cpu", warmup=warmup,
                   min_run_time=min_run_time, label=f"fp32 oneDNN {n}x{n}@{n}x{n}")


def throughput_sweep(sizes: Iterable[int], dtypes: Iterable[str] = MATMUL_DTYPES,
                     device: str | torch.device = "cpu", *, min_run_time: float = 0.1,
                     progress=None) -> pd.DataFrame:
    """TFLOP/s per (dtype, n) for square matmuls; dtypes unsupported here are left out.

    Columns: dtype, n, median_s, iqr_s, tflops, bytes (inputs + output), intensity (FLOP/byte).
    ``progress``: optional callable invoked after each point.
    """
    rows = []
    for dt in dtypes:
        if not dtype_supported(dt, device):
            continue
        for n in sizes:
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"sizes must be positive ints, got {n!r}")
            t = time_matmul(dt, n, device, min_run_time=min_run_time)
            flops = matmul_flops(n, n, n)
            nbytes = matmul_bytes(dt, n)
            rows.append({"dtype": dt, "n": n, "median_s": t.median_s, "iqr_s": t.iqr_s,
                         "tflops": flops / t.median_s / 1e12, "bytes": nbytes, "intensity": flops / nbytes})
            if progress:
                progress()
    return pd.DataFrame(rows)


def best_per_dtype(sweep: pd.DataFrame) -> pd.DataFrame:
    """One row per dtype of a :func:`throughput_sweep`: its best TFLOP/s and the size that reached it.

    Columns: dtype, best at n, TFLOP/s, (when ``sweep`` has ``median_s`` and ``iqr_s``) the time's
    median and IQR in ms, and (when ``sweep`` has the columns ``fraction of peak``
    and ``fraction of FP32 peak``) fraction of dtype peak, fraction of FP32 peak. Missing values
    (no peak known for a dtype) are None. Raises ValueError for an empty sweep.
    """
    missing = {"dtype", "n", "tflops"} - set(sweep.columns)
    if missing or sweep.empty:
        raise ValueError(f"need a non-empty throughput_sweep frame (columns dtype, n, tflops); "
                         f"missing columns {sorted(missing)}, {len(sweep)} rows")
    best = sweep.loc[sweep.groupby("dtype", sort=False)["tflops"].idxmax()]
    out = pd.DataFrame({"dtype": best["dtype"], "best at n": best["n"], "TFLOP/s": best["tflops"]})
    if {"median_s", "iqr_s"} <= set(best.columns):  # a published rate keeps its spread
        out["time median (ms)"], out["time IQR (ms)"] = best["median_s"] * 1e3, best["iqr_s"] * 1e3
    for src, dst in (("fraction of peak", "fraction of dtype peak"), ("fraction of FP32 peak", "fraction of FP32 peak")):
        if src in best:
            out[dst] = best[src]
    out = out.reset_index(drop=True).astype(object)
    return out.where(out.notna(), None)


def sweep_for_reading(sweep: pd.DataFrame) -> pd.DataFrame:
    """A :func:`throughput_sweep` frame as a page shows it: units in the headers, times in ms, TFLOP/s,
    FLOP per byte, the peak fractions where present (renamed as in :func:`best_per_dtype`), missing
    values as None; the byte counts are dropped (the intensity carries them)."""
    missing = {"dtype", "n", "median_s", "iqr_s", "tflops"} - set(sweep.columns)
    if missing:
        raise ValueError(f"need a throughput_sweep frame; missing columns {sorted(missing)}")
    out = pd.DataFrame({"dtype": sweep["dtype"], "n": sweep["n"], "time median (ms)": sweep["median_s"] * 1e3,
                        "time IQR (ms)": sweep["iqr_s"] * 1e3, "TFLOP/s": sweep["tflops"]})
    if "intensity" in sweep:
        out["intensity (FLOP/byte)"] = sweep["intensity"]
    for src, dst in (("fraction of peak", "fraction of dtype peak"), ("fraction of FP32 peak", "fraction of FP32 peak")):
        if src in sweep:
            out[dst] = sweep[src]
    out = out.reset_index(drop=True).astype(object)
    return out.where(out.notna(), None)


def alignment_sweep(base: int, dtypes: Iterable[str] = ("fp32", "bf16"), offsets: Iterable[int] = (-1, 0, 1),
                    device: str | torch.device = "cpu", *, min_run_time: float = 0.02, rounds: int = 9
                    ) -> pd.DataFrame:
    """Throughput of n = base + offset for each offset against the aligned size ``base``, in interleaved rounds.

    Per dtype, every size is timed in the same interleaved rounds (:func:`timing.interleaved`,
    blocks of at least ``min_run_time`` seconds), so a change of the machine's speed hits all
    sizes alike. "relative to aligned" is the median over rounds of the per-round ratio of
    rates (size n's FLOP/s over base's), with its interval; "verdict" says whether the interval
    excludes 1. A rate ratio, not a time ratio: n = base + 8 does more work than base.

    Columns: dtype, n, multiple of 8, multiple of 16, TFLOP/s (median), relative to aligned,
    interval, verdict.
    """
    if base % 16:
        raise ValueError(f"base must be a multiple of 16, got {base}")
    ns = [base + off for off in sorted(set(offsets) | {0})]
    rows = []
    for dt in dtypes:
        if not dtype_supported(dt, device):
            continue
        res = interleaved({str(n): matmul_fn(dt, n, n, n, device) for n in ns}, baseline=str(base), device=device,
                          rounds=rounds, min_block_s=min_run_time)
        for n in ns:
            t = res.timings[str(n)]
            row = {"dtype": dt, "n": n, "multiple of 8": n % 8 == 0, "multiple of 16": n % 16 == 0,
                   "TFLOP/s": matmul_flops(n, n, n) / t.median_s / 1e12}
            work = matmul_flops(n, n, n) / matmul_flops(base, base, base)
            row.update(res.rate_columns(str(n), work, "relative to aligned", "the aligned size"))
            rows.append(row)
    return pd.DataFrame(rows).sort_values(["dtype", "n"], kind="stable").reset_index(drop=True)


def dtype_comparison(n: int, dtypes: Iterable[str], device: str | torch.device = "cpu", *, rounds: int = 9,
                     min_block_s: float = 0.02):
    """An n×n matmul in each of ``dtypes`` (the first is the baseline), timed in interleaved rounds.

    ``ONEDNN_FP32`` names FP32 through oneDNN (CPU only). Returns the :class:`timing.Interleaved` result; ``.compare(dtype)`` gives the speed ratio
    over the baseline with its interval and verdict.
    """
    return interleaved({dt: onednn_fp32_matmul_fn(n) if dt == ONEDNN_FP32 else matmul_fn(dt, n, n, n, device)
                        for dt in dtypes}, device=device, rounds=rounds,
                       min_block_s=min_block_s)
