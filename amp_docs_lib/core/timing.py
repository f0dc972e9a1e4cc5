"""The timing harness: medians with a spread, never a single run.

``measure(fn, device=...)`` warms ``fn`` up (so the warm-up runs in whatever
precision ``fn`` itself uses: put the autocast region *inside* ``fn``), then
times it:

* on CPU with ``torch.utils.benchmark.Timer`` and an explicit ``num_threads``
  (``Timer`` defaults to **one** thread, which is not what a training run
  uses), through ``blocked_autorange`` or ``adaptive_autorange``;
* on CUDA with CUDA events recorded around each run and a synchronisation
  before reading them (kernels are launched asynchronously; a host clock
  without synchronisation times the launch, not the work).

The result is a :class:`Timing`: median and interquartile range of the
per-call times, with how they were obtained.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any, Callable

import torch

import torch.utils.benchmark as benchmark  # its cpp_extension notice is quietened in amp_docs_lib/__init__

from amp_docs_lib.core.devices import check_device

METHODS = ("blocked", "adaptive", "cuda_events")
MIN_RUNS = 5  # blocks (runs) a CPU measurement gathers at least, so it has a spread


@dataclass(frozen=True)
class Timing:
    """Per-call time of a measured function: median and interquartile range (seconds)."""

    label: str
    median_s: float
    iqr_s: float
    runs: int
    calls_per_run: int
    num_threads: int
    device: str
    method: str

    @property
    def relative_iqr(self) -> float:
        """IQR as a fraction of the median (the noise of this measurement)."""
        return self.iqr_s / self.median_s if self.median_s > 0 else float("nan")

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for tables, JSON and CSV)."""
        return asdict(self)


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """First quartile, median and third quartile of ``values`` (inclusive method)."""
    if not values:
        raise ValueError("quartiles of an empty list")
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def default_threads() -> int:
    """The thread count this process computes with (``torch.get_num_threads()``)."""
    return torch.get_num_threads()


def _check(fn: Any, warmup: Any, min_run_time: Any, method: str, num_threads: Any) -> None:
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not isinstance(warmup, int) or isinstance(warmup, bool) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if not isinstance(min_run_time, (int, float)) or min_run_time <= 0:
        raise ValueError(f"min_run_time must be a positive number of seconds, got {min_run_time!r}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {list(METHODS)}")
    if num_threads is not None and (not isinstance(num_threads, int) or isinstance(num_threads, bool)
                                    or num_threads < 1):
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")


def cuda_event_times(fn: Callable[[], Any], runs: int) -> list[float]:
    """Seconds per call of ``fn`` from CUDA events, one pair per run, read after a synchronisation."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    torch.cuda.synchronize()
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()  # events complete only once the kernels did
    return [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends)]


def measure(fn: Callable[[], Any], *, device: str | torch.device = "cpu", label: str = "",
            warmup: int = 3, min_run_time: float = 0.2, method: str | None = None,
            num_threads: int | None = None) -> Timing:
    """Time ``fn()`` after ``warmup`` calls; return the median and IQR per call.

    Args:
        fn: the work, including its autocast region if any (so warm-up runs in
            the measured precision).
        device: ``"cpu"`` or ``"cuda"``; decides the default method.
        label: name of the measurement (kept in the result).
        warmup: untimed calls first (first calls pay for lazy initialisation,
            kernel selection, autocast's cast caches).
        min_run_time: seconds of measurement ``Timer`` aims for, or the
            budget that sizes the number of CUDA-event runs.
        method: ``"blocked"`` (``Timer.blocked_autorange``), ``"adaptive"``
            (``Timer.adaptive_autorange``), ``"cuda_events"``; default:
            ``cuda_events`` on CUDA, ``blocked`` on CPU.
        num_threads: threads for ``Timer`` (default: ``torch.get_num_threads()``,
            deliberately, since ``Timer``'s own default is 1).

    Raises:
        ValueError: bad ``warmup``, ``min_run_time``, ``method`` or ``num_threads``.
        TypeError: ``fn`` is not callable.
    """
    dev_obj = check_device(device)
    dev, dev_type = str(dev_obj), dev_obj.type
    method = method or ("cuda_events" if dev_type == "cuda" else "blocked")
    _check(fn, warmup, min_run_time, method, num_threads)
    if method == "cuda_events" and dev_type != "cuda":
        raise ValueError(f"method 'cuda_events' needs a CUDA device, got {dev!r}; "
                         f"valid methods here: ['blocked', 'adaptive']")
    threads = default_threads() if num_threads is None else num_threads
    for _ in range(warmup):
        fn()
    if dev_type == "cuda":
        torch.cuda.synchronize()
    if method == "cuda_events":
        probe = cuda_event_times(fn, 3)
        runs = max(10, min(1000, int(min_run_time / max(statistics.median(probe), 1e-7))))
        times = cuda_event_times(fn, runs)
        q1, med, q3 = quartiles(times)
        return Timing(label, med, q3 - q1, len(times), 1, threads, dev, method)
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads, label=label)
    prev = torch.get_num_threads()
    try:
        if method == "blocked":
            m = timer.blocked_autorange(min_run_time=min_run_time)
        else:
            m = timer.adaptive_autorange(min_run_time=min(min_run_time, 0.05), max_run_time=10 * min_run_time)
        times = list(m.times)
        while len(times) < MIN_RUNS:  # a slow op gives one long block and no spread: add blocks of the same size
            times += list(timer.timeit(m.number_per_run).times)
    finally:
        torch.set_num_threads(prev)  # Timer changes the process's thread count while it runs
    q1, med, q3 = quartiles(times)
    return Timing(label, med, q3 - q1, len(times), m.number_per_run, threads, dev, method)


def timings_frame(timings: list[Timing]):
    """A DataFrame of timings (milliseconds), for ``show_table``."""
    import pandas as pd

    return pd.DataFrame([{"what": t.label, "median (ms)": t.median_s * 1e3, "IQR (ms)": t.iqr_s * 1e3,
                          "runs": t.runs, "calls/run": t.calls_per_run, "threads": t.num_threads,
                          "method": t.method} for t in timings])
