"""The classic mistakes of timing precision speedups, each one measured.

Every function returns the wrong measurement beside the right one (the
harness, :func:`amp_docs_lib.core.timing.measure`), so a chapter can show
how far apart they are on the machine that builds it:

* :func:`thread_count`: ``torch.utils.benchmark.Timer`` defaults to one thread;
* :func:`first_call`: timing the first call (lazy initialisation, kernel selection);
* :func:`fp32_warmup`: warming up in FP32, then timing a few BF16 calls;
* :func:`tiny_op_autocast`: ops so small that autocast's entry and casts dominate;
* :func:`no_sync` (CUDA): a host clock around asynchronous kernel launches.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
import torch.utils.benchmark as benchmark

from amp_docs_lib.core.timing import Timing, default_threads, measure, quartiles
from amp_docs_lib.core.devices import check_device


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
    """An n×n FP32 CPU matmul timed by ``Timer`` with its default (1 thread) and with this process's count."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    fn = lambda: a @ b  # noqa: E731
    fn()
    out = {}
    for name, threads in (("Timer default (num_threads=1)", None),
                          (f"num_threads={default_threads()} (this process)", default_threads())):
        timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, **({} if threads is None else
                                                                   {"num_threads": threads}))
        prev = torch.get_num_threads()
        try:
            times = []
            while len(times) < 5:
                times += list(timer.blocked_autorange(min_run_time=min_run_time).times)
        finally:
            torch.set_num_threads(prev)
        q1, med, q3 = quartiles(times)
        out[name] = Timing(name, med, q3 - q1, len(times), 1, threads or 1, "cpu", "blocked")
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
                dtype: torch.dtype = torch.bfloat16) -> tuple[float, Timing]:
    """Warm up in FP32, then time ``calls`` autocast calls naively; beside the harness warmed in ``dtype``."""
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
    return wrong, measure(low, device=dev, label=f"warm-up in {dtype} (harness)")


def tiny_op_autocast(sizes: tuple[int, ...] = (8, 512), device: str | torch.device = "cpu",
                     dtype: torch.dtype = torch.bfloat16, *, min_run_time: float = 0.1) -> list[dict[str, Any]]:
    """Per size: a Linear(n, n) on a (n, n) input timed in FP32 and under autocast; autocast's speedup."""
    dev = check_device(device)
    rows = []
    for n in sizes:
        lin, x = torch.nn.Linear(n, n).to(dev), torch.randn(n, n, device=dev)

        def plain():
            with torch.no_grad():
                return lin(x)

        def amp():
            with torch.no_grad(), torch.autocast(dev.type, dtype=dtype):
                return lin(x)
        t32 = measure(plain, device=dev, min_run_time=min_run_time, label=f"fp32 {n}")
        tlo = measure(amp, device=dev, min_run_time=min_run_time, label=f"autocast {n}")
        rows.append({"n": n, "fp32 (µs)": t32.median_s * 1e6, "autocast (µs)": tlo.median_s * 1e6,
                     "autocast speedup": t32.median_s / tlo.median_s})
    return rows


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
