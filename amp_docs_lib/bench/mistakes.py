"""The classic mistakes of timing precision speedups, each one measured.

Every function returns the wrong measurement beside the right one (the
harness, :func:`amp_docs_lib.core.timing.measure`), so a chapter can show
how far apart they are on the machine that builds it:

* :func:`thread_count`: ``torch.utils.benchmark.Timer`` defaults to one thread (a choice to make explicitly);
* :func:`first_call`: timing the first call (lazy initialisation, kernel selection);
* :func:`fp32_warmup`: warming up in FP32, then timing a few BF16 calls;
* :func:`tiny_op_autocast`: autocast's own cost (entry, casts) separated from the 16-bit kernel's;
* :func:`autocast_cast_counts`: autocast's cast cache lives only while a region is open;
* :func:`cache_flush`: warm caches against a flushed last-level cache;
* :func:`no_sync` (CUDA): a host clock around asynchronous kernel launches.
"""

from __future__ import annotations

import copy
import glob
import re
import statistics
import time
from typing import Any, Callable

import torch
import torch.utils.benchmark as benchmark

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.bench.load import machine_cores
from amp_docs_lib.core.timing import Timing, interleaved, measure, quartiles
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.dispatch import trace_ops
from amp_docs_lib.core.stats import median_ci


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def naive_seconds(fn: Callable[[], Any], calls: int = 1, *, sync: bool = False,
                  device: str | torch.device = "cpu") -> float:
    """Mean seconds per call from ``time.perf_counter`` around ``calls`` calls: the naive way.

    With ``sync=False`` on CUDA this measures launches, not work.
    """
    dev = check_device(device)
    if not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a positive int, got {calls!r}")
    if sync:
        _sync(dev)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    if sync:
        _sync(dev)
    return (time.perf_counter() - t0) / calls


def thread_count(n: int = 512, *, min_run_time: float = 0.1) -> dict[str, Timing]:
    """An n×n FP32 CPU matmul timed by ``Timer`` with its default (1 thread) and with every core this process may use."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    fn = lambda: a @ b  # noqa: E731
    fn()
    out = {}
    for name, threads in (("Timer default (num_threads=1)", None),
                          (f"num_threads={machine_cores()} (all cores)", machine_cores())):
        timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, **({} if threads is None else
                                                                   {"num_threads": threads}))
        prev = torch.get_num_threads()
        try:
            m = timer.blocked_autorange(min_run_time=min_run_time)
            per_run, times = m.number_per_run, list(m.times)
            while len(times) < 5:  # more blocks of the same size, so every time averages per_run calls
                times += list(timer.timeit(per_run).times)
        finally:
            torch.set_num_threads(prev)
        q1, med, q3 = quartiles(times)
        out[name] = Timing(name, med, q3 - q1, len(times), per_run, threads or 1, "cpu", "blocked")
    return out


def _mlp(width: int, device: torch.device, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                               torch.nn.Linear(4 * width, width)).to(device)


def first_call(width: int = 192, batch: int = 64, device: str | torch.device = "cpu",
               dtype: torch.dtype = torch.bfloat16) -> tuple[float, Timing]:
    """Seconds of the very first autocast forward of a fresh MLP (odd width: no cached kernels), and the harness."""
    dev = check_device(device)
    model, x = _mlp(width, dev, 1), torch.randn(batch, width, device=dev)

    def fwd():
        with torch.no_grad(), torch.autocast(dev.type, dtype=dtype):
            return model(x)
    first = naive_seconds(fwd, 1, sync=True, device=dev)
    return first, measure(fwd, device=dev, label="after warm-up (harness)")


def fp32_warmup(width: int = 320, batch: int = 64, calls: int = 3, device: str | torch.device = "cpu",
                dtype: torch.dtype = torch.bfloat16, *, controls: int = 5) -> tuple[float, Timing, list[float]]:
    """Warm up in FP32, then time ``calls`` autocast calls naively; beside the harness warmed in ``dtype``
    and, as the control, the same naive timing repeated ``controls`` times after those calls warmed ``dtype``
    (so what separates the first figure from the controls is the warm-up, not the host clock or the call count)."""
    dev = check_device(device)
    model, x = _mlp(width, dev, 2), torch.randn(batch, width, device=dev)

    def fp32():
        with torch.no_grad():
            return model(x)

    def low():
        with torch.no_grad(), torch.autocast(dev.type, dtype=dtype):
            return model(x)
    for _ in range(3):
        fp32()
    wrong = naive_seconds(low, calls, sync=True, device=dev)
    control = [naive_seconds(low, calls, sync=True, device=dev) for _ in range(controls)]
    return wrong, measure(low, device=dev, label=f"warm-up in {dtype} (harness)"), control


def tiny_op_autocast(sizes: tuple[int, ...] = (8, 512), device: str | torch.device = "cpu",
                     dtype: torch.dtype = torch.bfloat16, *, rounds: int = 9, min_block_s: float = 0.01
                     ) -> list[dict[str, Any]]:
    """Per size: Linear(n, n) on an (n, n) input in FP32, in ``dtype`` with weights and input cast
    beforehand (no autocast), and under autocast; interleaved rounds.

    Pre-cast ``dtype`` against FP32 is the kernel's cost (on a CPU without native BF16 matmul an
    emulated kernel); autocast against pre-cast is what autocast itself adds (entering the region,
    casting the weight, bias and input on every call). Each ratio has its interval.
    """

    dev = check_device(device)
    rows = []
    for n in sizes:
        torch.manual_seed(n)
        lin, x = torch.nn.Linear(n, n).to(dev), torch.randn(n, n, device=dev)
        low_lin, low_x = copy.deepcopy(lin).to(dtype), x.to(dtype)

        def plain():
            with torch.no_grad():
                return lin(x)

        def precast():
            with torch.no_grad():
                return low_lin(low_x)

        def amp():
            with torch.no_grad(), torch.autocast(dev.type, dtype=dtype):
                return lin(x)
        low = short_dtype(dtype)
        res = interleaved({"fp32": plain, f"{low} pre-cast": precast, "autocast": amp}, device=dev,
                          rounds=rounds, min_block_s=min_block_s)
        kernel = res.compare(f"{low} pre-cast", "fp32")
        overhead = res.compare("autocast", f"{low} pre-cast")
        total = res.compare("autocast", "fp32")
        t = res.timings
        rows.append({"n": n, "fp32 (µs)": t["fp32"].median_s * 1e6,
                     f"{low}, pre-cast (µs)": t[f"{low} pre-cast"].median_s * 1e6,
                     "autocast (µs)": t["autocast"].median_s * 1e6,
                     f"autocast overhead (µs)": (t["autocast"].median_s - t[f"{low} pre-cast"].median_s) * 1e6,
                     f"{low} kernel vs fp32 (x)": kernel.interval_text(),
                     f"autocast vs pre-cast {low} (x)": overhead.interval_text(),
                     "autocast vs fp32 (x)": total.interval_text(),
                     "A/A control (fp32 vs itself)": total.aa_text(),
                     "_kernel": kernel, "_overhead": overhead, "_total": total})
    return rows


def autocast_cast_counts(device: str | torch.device = "cpu", dtype: torch.dtype = torch.bfloat16,
                         calls: int = 3) -> dict[str, int]:
    """Casts (``aten._to_copy``) autocast performs for ``calls`` Linear calls: in one region, and one region per call.

    Autocast keeps a cache of casts of leaf tensors that require grad (the parameters) while a
    region is open and clears it when the outermost region exits (``torch/amp/autocast_mode.py``,
    ``__exit__``). Counted from a dispatch trace.
    """
    dev = check_device(device)
    lin, x = torch.nn.Linear(16, 16).to(dev), torch.randn(4, 16, device=dev)

    def one_region():
        with torch.autocast(dev.type, dtype=dtype):
            for _ in range(calls):
                lin(x)

    def region_per_call():
        for _ in range(calls):
            with torch.autocast(dev.type, dtype=dtype):
                lin(x)
    return {"one region": trace_ops(one_region).counts["aten._to_copy"],
            "one region per call": trace_ops(region_per_call).counts["aten._to_copy"],
            "calls": calls, "parameters": len(list(lin.parameters()))}


def cache_flush(fn: Callable[[], Any], device: str | torch.device = "cpu", *, rounds: int = 9,
                calls: int = 5, flush_bytes: int | None = None) -> dict[str, Any]:
    """Per-call time of ``fn`` with warm caches and after overwriting a buffer larger than the last-level cache.

    Each round times ``calls`` single calls back to back (warm: operands cache-resident from the
    previous call), ``calls`` single calls each preceded by writing ``flush_bytes`` (cold) and
    ``calls`` warm calls again (the set's A/A control), in an order reversed every other round; on
    CUDA the flush writes twice the L2 size and calls are timed with events. Returns both timings'
    medians, the cold/warm ratio with its interval, the A/A (warm again / warm) interval and the
    verdict (:func:`~amp_docs_lib.core.timing.verdict_for` against that A/A interval).
    """
    dev = check_device(device)
    if flush_bytes is None:
        flush_bytes = 2 * (last_level_cache_bytes() if dev.type == "cpu"
                           else torch.cuda.get_device_properties(dev).L2_cache_size)
    buf = torch.empty(flush_bytes // 4, dtype=torch.float32, device=dev)
    for _ in range(3):
        fn()

    def one(flush: bool) -> float:
        if flush:
            buf.fill_(1.0)
        if dev.type == "cuda":
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            torch.cuda.synchronize()
            return s.elapsed_time(e) / 1e3
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    warm, cold, ratios, aa_ratios = [], [], [], []
    for r in range(rounds):
        order = ("warm", "cold", "warm again") if r % 2 == 0 else ("warm again", "cold", "warm")
        got = {}
        for what in order:
            got[what] = [one(what == "cold") for _ in range(calls)]
        warm += got["warm"]
        cold += got["cold"]
        ratios.append(statistics.median(got["cold"]) / statistics.median(got["warm"]))
        aa_ratios.append(statistics.median(got["warm again"]) / statistics.median(got["warm"]))
    med, lo, hi = median_ci(ratios)
    _, aa_lo, aa_hi = median_ci(aa_ratios)
    qw, qc = quartiles(warm), quartiles(cold)
    return {"warm median (us)": qw[1] * 1e6, "warm IQR (us)": (qw[2] - qw[0]) * 1e6,
            "flushed median (us)": qc[1] * 1e6, "flushed IQR (us)": (qc[2] - qc[0]) * 1e6,
            "flushed / warm (x)": med, "interval": (lo, hi), "aa interval": (aa_lo, aa_hi),
            "verdict": flush_verdict(lo, hi, aa_lo, aa_hi), "flush bytes": flush_bytes}


def flush_verdict(lo: float, hi: float, aa_lo: float, aa_hi: float) -> str:
    """:func:`~amp_docs_lib.core.timing.verdict_for` of a flushed/warm interval against the warm A/A interval
    (above 1: slower when flushed)."""
    from types import SimpleNamespace

    from amp_docs_lib.core.timing import verdict_for

    return verdict_for(lo, hi, SimpleNamespace(ratio_lo=aa_lo, ratio_hi=aa_hi),  # type: ignore[arg-type]
                       ("slower when flushed", "faster when flushed"))


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache this process can see (sysfs), or 64 MiB where it is not reported."""
    best = 0
    for p in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            txt = open(p).read().strip()
        except OSError:
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", txt)
        if m:
            best = max(best, int(m.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)])
    return best or 64 * 2**20


def no_sync(n: int = 4096, device: str | torch.device = "cuda", calls: int = 10) -> dict[str, float]:
    """Seconds per n×n BF16 matmul: host clock without synchronisation, with it, and CUDA events (harness)."""
    dev = check_device(device)
    if dev.type != "cuda":
        raise ValueError(f"no_sync needs a CUDA device, got {str(dev)!r}; valid: ['cuda']")
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    fn = lambda: a @ a  # noqa: E731
    for _ in range(3):
        fn()
    _sync(dev)
    return {"host clock, no synchronize": naive_seconds(fn, calls, sync=False, device=dev),
            "host clock + synchronize": naive_seconds(fn, calls, sync=True, device=dev),
            "CUDA events (harness)": measure(fn, device=dev).median_s}
