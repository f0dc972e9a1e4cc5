"""Was the machine quiet enough to time on? A load check around CPU timings.

A shared machine slows a timing down without widening its spread: on a 2-core machine
with other work running, a 2-thread 256³ FP32 matmul was timed at 0.18 ms and at 7 ms
minutes apart, each with a tiny IQR (every OpenMP region waits for a descheduled thread).
Two precautions, both here:

* :func:`timing_threads`: time with fewer threads than the machine has cores (one core is
  left to everything else), so another process costs a share of a core, not a whole
  parallel region;
* :class:`LoadCheck`: a fixed reference kernel (a one-thread 256³ FP32 matmul) timed before
  and after the measurement, and the number of runnable tasks sampled at both ends (the
  kernel's count in ``/proc/loadavg``, the instantaneous form of the load average; the
  one-minute load average lags by a minute and is only reported). The machine counts as
  quiet only when the reference's median moved by no more than the spread of its blocks
  before (no drift beyond the reference's own noise) and the other runnable tasks (the median
  runnable count less this process's sampling thread) plus the timing's own threads stayed at or
  below the number of cores (every thread of the timing could have a core: a load present both
  before and after slows the reference alike and only this count sees it). Where it was not quiet, a page says so and draws no conclusion.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.utils.benchmark as benchmark

REFERENCE_N = 256  # the reference kernel: an n×n FP32 matmul, one thread
WITHHELD = "withheld: the machine was busy"  # what a verdict cell says where the load check found it busy


def machine_cores() -> int:
    """CPUs this process may run on (its affinity mask; ``os.cpu_count()`` where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def timing_threads() -> int:
    """Threads to time CPU work with: one fewer than the cores this process may use, at least one."""
    return max(1, machine_cores() - 1)


def load_average() -> float | None:
    """The OS's one-minute load average (runnable and waiting tasks), or None where the OS has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def runnable_tasks() -> int | None:
    """Tasks runnable right now, machine-wide, this one included (Linux ``/proc/loadavg``), or None elsewhere."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def _runnable_samples(samples: int = 5, interval_s: float = 0.02) -> list[int]:
    """``samples`` readings of :func:`runnable_tasks`, ``interval_s`` apart (empty where the OS has none)."""
    out = []
    for i in range(samples):
        r = runnable_tasks()
        if r is None:
            return []
        out.append(r)
        if i + 1 < samples:
            time.sleep(interval_s)
    return out


def reference_blocks(min_run_time: float = 0.2, n: int = REFERENCE_N) -> list[float]:
    """Seconds per call of each block of the reference kernel (one thread, ``blocked_autorange``)."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=1)
    prev = torch.get_num_threads()
    try:
        timer.timeit(3)  # warm-up
        times: list[float] = []
        while len(times) < 5:
            times += list(timer.blocked_autorange(min_run_time=min_run_time).times)
    finally:
        torch.set_num_threads(prev)  # Timer changes the process's thread count while it runs
    return times


@dataclass
class LoadCheck:
    """The reference kernel's blocks and the load average before and after a measurement.

    Use :meth:`start` before timing and :meth:`finish` after; then :attr:`quiet` decides
    whether the timing in between may be read as what this machine does.
    """

    cores: int
    threads: int
    before: list[float]
    load_before: float | None
    runnable: list[int] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    load_after: float | None = None

    @classmethod
    def start(cls, *, threads: int | None = None, min_run_time: float = 0.2) -> LoadCheck:
        """Time the reference kernel and read the load average, before the measurement."""
        runnable = _runnable_samples()
        return cls(machine_cores(), timing_threads() if threads is None else threads,
                   reference_blocks(min_run_time), load_average(), runnable)

    def finish(self, *, min_run_time: float = 0.2) -> LoadCheck:
        """Time the reference kernel and read the load average again, after the measurement."""
        self.after = reference_blocks(min_run_time)
        self.load_after = load_average()
        self.runnable = self.runnable + _runnable_samples()
        return self

    @property
    def reference_ms(self) -> tuple[float, float]:
        """The reference kernel's median (ms) before and after."""
        if not self.after:
            raise ValueError("finish() was not called: the reference was timed only before")
        return statistics.median(self.before) * 1e3, statistics.median(self.after) * 1e3

    @property
    def reference_steady(self) -> bool:
        """The reference's median moved by no more than the spread (max - min) of its blocks before:
        a drift is counted only where it exceeds the reference's own measured noise."""
        before, after = (x / 1e3 for x in self.reference_ms)
        return abs(after - before) <= max(self.before) - min(self.before)

    @property
    def load_peak(self) -> float | None:
        """The larger of the two one-minute load averages read (None where the OS reports none); reported only."""
        loads = [x for x in (self.load_before, self.load_after) if x is not None]
        return max(loads) if loads else None

    @property
    def runnable_median(self) -> float | None:
        """The median runnable-task count sampled at both ends, this process included (None where unknown)."""
        return statistics.median(self.runnable) if self.runnable else None

    @property
    def others_runnable(self) -> float | None:
        """Runnable tasks other than this process's sampling thread (median count minus one; None where unknown)."""
        return None if self.runnable_median is None else max(0.0, self.runnable_median - 1)

    @property
    def load_ok(self) -> bool:
        """Every thread of the timing could have a core: the other runnable tasks plus the timing's
        ``threads`` are at most the cores (a 2-thread timing beside one other task on 2 cores is 3
        threads for 2 cores, busy); True where the runnable count is unknown."""
        return self.others_runnable is None or self.others_runnable + self.threads <= self.cores

    @property
    def quiet(self) -> bool:
        """Quiet enough to read the timing in between as this machine's: steady reference and load
        (``AMP_DOCS_LOAD_CHECK=quiet`` or ``busy`` sets the outcome instead; the note says so)."""
        from amp_docs_lib.core.settings import load_check_override

        forced = load_check_override()
        if forced is not None:
            return forced == "quiet"
        return self.reference_steady and self.load_ok

    def withhold_verdicts(self, df):
        """``df`` as a page may show it: where the machine was busy, every column whose name contains
        "verdict" says :data:`WITHHELD` instead (the measured numbers stay); unchanged where it was quiet.
        The one place a timing table's verdicts are withheld."""
        if self.quiet:
            return df
        out = df.copy()
        for col in out.columns:
            if "verdict" in str(col).lower():
                out[col] = out[col].astype(object).mask(out[col].notna(), WITHHELD)
        return out

    def note(self) -> str:
        """One sentence: the threads used, the reference before/after, the load, and the outcome."""
        before, after = self.reference_ms
        load = ("runnable tasks not reported" if self.runnable_median is None else
                f"{self.runnable_median:g} runnable tasks (median of {len(self.runnable)} samples, this one included) "
                f"on {self.cores} cores")
        if self.load_peak is not None:
            load += f", one-minute load average up to {self.load_peak:.1f}"
        head = (f"Timed with {self.threads} thread(s) of {self.cores} cores; reference {REFERENCE_N}³ FP32 matmul "
                f"(1 thread) {before:.3g} ms before, {after:.3g} ms after; {load}")
        from amp_docs_lib.core.settings import LOAD_CHECK_ENV_VAR, load_check_override

        forced = load_check_override()
        if forced is not None:
            return head + f": {LOAD_CHECK_ENV_VAR}={forced} set this check's outcome, whatever was measured."
        if self.quiet:
            return head + ": the machine was quiet."
        why = [w for w, bad in (("the reference's median moved by more than the spread of its blocks before", not self.reference_steady),
                                ("more runnable tasks than cores: the other runnable tasks plus this timing's "
                                 f"{self.threads} thread(s) outnumber the cores", not self.load_ok)) if bad]
        return head + f": the machine was busy ({' and '.join(why)}), so no conclusion is drawn from this timing."


@dataclass
class CheckLog:
    """The load checks of one chapter (all its pages), kept so that its end can say how many found the machine busy."""

    checks: list[LoadCheck] = field(default_factory=list)

    def start(self, **kwargs) -> LoadCheck:
        """:meth:`LoadCheck.start`, recorded."""
        check = LoadCheck.start(**kwargs)
        self.checks.append(check)
        return check

    def summary(self) -> str:
        """One sentence: how many of the finished checks found the machine busy."""
        done = [c for c in self.checks if c.after]
        busy = sum(not c.quiet for c in done)
        tail = (": every conclusion they guard was withheld, and only the measured numbers stand" if done and busy == len(done)
                else ": their cells' conclusions were withheld" if busy else ": every guarded conclusion was drawn")
        return f"{busy} of the {len(done)} load checks of this chapter found the machine busy{tail}."
