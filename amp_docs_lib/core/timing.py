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
runs, with how they were obtained. On CPU a run is a block of ``calls_per_run``
calls and its time is the block's mean per call, so the IQR is that of block
means (narrower than the spread of single calls); on the CUDA-events path a run
is one call.

``interleaved({name: fn, ...})`` compares functions: every round times one block
of each, the order reversed every other round, and a speedup is the median of
the per-round ratios with a distribution-free interval (``core.stats.median_ci``).
Every set also times its baseline a second time in the same rounds (an A/A control,
:data:`AA_SUFFIX`): its interval is the set's noise floor, and :class:`Comparison`
says "faster" or "slower" only when the A/A interval holds 1 (else
:data:`NOISE_FLOOR_TOO_HIGH`) *and* its own interval lies wholly beyond the A/A
interval (else :data:`UNRESOLVED`): :func:`verdict_for`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.utils.benchmark as benchmark  # its cpp_extension notice is quietened in amp_docs_lib/__init__

from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.stats import CI_LEVEL, median_ci, min_values_for, quartiles

METHODS = ("blocked", "adaptive", "cuda_events")
MIN_RUNS = 5  # blocks (runs) a CPU measurement gathers at least, so it has a spread


@dataclass(frozen=True)
class Timing:
    """Time per call of a measured function: median and interquartile range of its runs (seconds).

    ``runs`` runs of ``calls_per_run`` calls each; a run's time is its mean per call.
    """

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
    if num_threads is not None and (
        not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1
    ):
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")


def _cuda_event_times(fn: Callable[[], Any], runs: int) -> list[float]:
    """Seconds per call of ``fn`` from CUDA events, one pair per run, read after a synchronisation."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    torch.cuda.synchronize()
    for s, e in zip(starts, ends, strict=True):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()  # events complete only once the kernels did
    return [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends, strict=True)]


def measure(
    fn: Callable[[], Any],
    *,
    device: str | torch.device = "cpu",
    label: str = "",
    warmup: int = 3,
    min_run_time: float = 0.2,
    method: str | None = None,
    num_threads: int | None = None,
) -> Timing:
    """Time ``fn()`` after ``warmup`` calls; return the median and IQR of the runs (block means on CPU).

    Args:
        fn: the work, including its autocast region if any (so warm-up runs in
            the measured precision).
        device: ``"cpu"`` or ``"cuda"``; decides the default method.
        label: name of the measurement (kept in the result).
        warmup: untimed calls first (first calls pay for lazy initialisation and
            kernel selection; autocast's cast cache is not among them: it is
            cleared whenever the outermost autocast region exits).
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
        raise ValueError(
            f"method 'cuda_events' needs a CUDA device, got {dev!r}; valid methods here: ['blocked', 'adaptive']"
        )
    threads = default_threads() if num_threads is None else num_threads
    for _ in range(warmup):
        fn()
    if dev_type == "cuda":
        torch.cuda.synchronize()
    if method == "cuda_events":
        probe = _cuda_event_times(fn, 3)
        runs = max(10, min(1000, int(min_run_time / max(statistics.median(probe), 1e-7))))
        times = _cuda_event_times(fn, runs)
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

    return pd.DataFrame(
        [
            {
                "what": t.label,
                "median (ms)": t.median_s * 1e3,
                "IQR (ms)": t.iqr_s * 1e3,
                "runs": t.runs,
                "calls/run": t.calls_per_run,
                "threads": t.num_threads,
                "method": t.method,
            }
            for t in timings
        ]
    )


# ---- interleaved A/B comparison -------------------------------------------------------------------

MIN_ROUNDS = min_values_for(CI_LEVEL)  # fewest rounds for which the interval on a median ratio exists
AA_SUFFIX = " again (A/A control)"  # the name of a set's baseline timed a second time in the same rounds
UNRESOLVED = "no difference resolved"
NOISE_FLOOR_TOO_HIGH = "noise floor too high (the A/A control resolved a difference)"


def interval_miss(rounds: int, level: float = CI_LEVEL) -> float:
    """Probability that :func:`~amp_docs_lib.core.stats.median_ci`'s interval over ``rounds`` per-round ratios
    lies wholly above the true median ratio (the same for wholly below), for ratios that are independent and
    identically distributed: ``P(Binomial(rounds, 1/2) <= k - 1)``, with ``k`` the order statistic the
    interval starts at (read from ``median_ci`` itself). Its coverage is ``1 - 2 * interval_miss``."""
    import math

    k = int(median_ci(list(range(rounds)), level)[1]) + 1  # the lower end is x_(k) of 0, 1, ..., rounds - 1
    return sum(math.comb(rounds, i) for i in range(k)) / 2**rounds


def verdict_for(
    lo: float, hi: float, aa: Comparison | None = None, words: tuple[str, str] = ("faster", "slower")
) -> str:
    """The verdict of an interval ``[lo, hi]`` on a ratio, against the set's A/A control ``aa`` (the baseline
    against itself in the same rounds), the noise floor a real difference must clear:

    * :data:`NOISE_FLOOR_TOO_HIGH` where the A/A interval excludes 1 (then an excluded 1 does not tell an
      effect from noise);
    * ``words[0]`` where ``lo`` lies above the A/A interval's upper end, ``words[1]`` where ``hi`` lies below
      its lower end (without a control, the floor is the point 1);
    * else :data:`UNRESOLVED`, also where the interval excludes 1 but overlaps the A/A interval."""
    if aa is not None and (aa.ratio_lo > 1 or aa.ratio_hi < 1):
        return NOISE_FLOOR_TOO_HIGH
    floor_lo, floor_hi = (1.0, 1.0) if aa is None else (aa.ratio_lo, aa.ratio_hi)
    if lo > floor_hi:
        return words[0]
    if hi < floor_lo:
        return words[1]
    return UNRESOLVED


@dataclass(frozen=True)
class Comparison:
    """Interleaved A/B timing of a candidate against a baseline.

    ``ratio`` is the median over rounds of baseline time / candidate time (above 1: the
    candidate is faster) and ``[ratio_lo, ratio_hi]`` its distribution-free interval at
    ``level``. ``aa`` is the set's A/A control (its baseline against itself in the same rounds), None
    where the set had none. ``verdict`` (:func:`verdict_for`) is "faster" or "slower" only when the
    A/A interval holds 1 and the interval lies wholly beyond it.
    """

    baseline: Timing
    candidate: Timing
    ratio: float
    ratio_lo: float
    ratio_hi: float
    rounds: int
    level: float
    aa: Comparison | None = None

    @property
    def verdict(self) -> str:
        """:func:`verdict_for` of this interval and the set's A/A control."""
        return verdict_for(self.ratio_lo, self.ratio_hi, self.aa)

    @property
    def resolved(self) -> bool:
        """Whether a difference was resolved (the verdict is "faster" or "slower")."""
        return self.verdict in ("faster", "slower")

    def interval_text(self) -> str:
        """``"1.23x [1.10, 1.40]"``: the median ratio and its interval (:func:`format_ratio`: a ratio far
        below 1 keeps its significant digits, ``"0.0032x [0.0031, 0.0033]"``)."""
        return f"{format_ratio(self.ratio)}x {format_interval(self.ratio_lo, self.ratio_hi)}"

    def aa_text(self) -> str | None:
        """The A/A control's :meth:`interval_text` (None where the set had none)."""
        return None if self.aa is None else self.aa.interval_text()


def format_ratio(value: float) -> str:
    """A speed ratio as a page prints it: two decimals from 0.1 up (``"4.28"``), two significant digits
    below (``"0.0032"``), so that a layer 300 times slower never reads ``0.00``."""
    return f"{value:.2f}" if abs(value) >= 0.1 or value == 0 else f"{value:.2g}"


def _rounded_outward(value: float, up: bool) -> str:
    """``value`` at :func:`format_ratio`'s precision, rounded up or down instead of to nearest."""
    if value == 0 or not math.isfinite(value):
        return format_ratio(value)
    step = 0.01 if abs(value) >= 0.1 else 10.0 ** (math.floor(math.log10(abs(value))) - 1)  # two significant digits
    units = round(value / step, 6)  # drops binary noise such as 104.00000000000001 before the floor or ceiling
    return format_ratio((math.ceil(units) if up else math.floor(units)) * step)


def format_interval(lo: float, hi: float) -> str:
    """``"[0.95, 1.31]"``: an interval at :func:`format_ratio`'s precision, rounded outward (low end down,
    high end up), so the printed interval always holds every value the interval holds, its median included:
    rounded to nearest, ``[0.0998, 1.2]`` printed ``[0.10, 1.20]`` would exclude a median of 0.0999."""
    return f"[{_rounded_outward(lo, up=False)}, {_rounded_outward(hi, up=True)}]"


def _calls_for(timer: Any, min_block_s: float) -> int:
    """Calls per block so that one block takes at least ``min_block_s`` (at least one call)."""
    number = 1
    while True:
        t = timer.timeit(number).mean * number
        if t >= min_block_s or number >= 10**6:
            return number
        number = max(number * 2, int(number * min_block_s / max(t, 1e-9) * 1.2))


def interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    baseline: str | None = None,
    device: str | torch.device = "cpu",
    rounds: int = 9,
    min_block_s: float = 0.02,
    warmup: int = 3,
    num_threads: int | None = None,
    level: float = CI_LEVEL,
    aa_control: bool | Callable[[], Any] = True,
) -> Interleaved:
    """Time several functions in interleaved rounds; compare each with ``baseline``.

    Every round times one block of each function, the order reversed every other round
    (A B C, C B A, ...), so slow drifts of the machine (other processes, clocks) hit all
    of them alike. Per function: median and IQR of its block means (a :class:`Timing`,
    ``runs`` = rounds). Per non-baseline function: the median over rounds of the
    per-round ratio baseline/candidate and its interval (:func:`median_ci`).

    Args:
        fns: name -> zero-argument function (autocast regions inside, as for :func:`measure`).
        baseline: the name the others are compared with (default: the first).
        rounds: interleaved rounds, at least :data:`MIN_ROUNDS`.
        min_block_s: shortest block; a function's calls per block are chosen once, untimed.
        aa_control: time the baseline a second time in the same rounds (``True``; or a zero-argument
            function to time as that second arm, e.g. a copy of the baseline's model), last in each
            round's order: :attr:`Interleaved.aa` is the baseline against it, the set's noise floor,
            and every :class:`Comparison` of the set carries it. ``False``: none.

    Raises:
        ValueError: fewer than two functions, unknown baseline, too few rounds, bad device.
    """
    dev_obj = check_device(device)
    if not isinstance(fns, dict) or len(fns) < 2:
        raise ValueError(f"fns must be a dict of at least two named functions, got {fns!r}")
    baseline = next(iter(fns)) if baseline is None else baseline
    if baseline not in fns:
        raise ValueError(f"baseline {baseline!r} is not one of {list(fns)}")
    if not isinstance(rounds, int) or rounds < MIN_ROUNDS:
        raise ValueError(f"rounds must be an int >= {MIN_ROUNDS}, got {rounds!r}")
    aa_name = baseline + AA_SUFFIX
    if aa_control is not False:
        if aa_name in fns:
            raise ValueError(f"{aa_name!r} is the A/A control's name; rename that function or pass aa_control=False")
        fns = {**fns, aa_name: fns[baseline] if aa_control is True else aa_control}
    for fn in fns.values():
        _check(fn, warmup, min_block_s, "blocked", num_threads)
    threads = default_threads() if num_threads is None else num_threads
    cuda = dev_obj.type == "cuda"
    names = list(fns)  # the A/A arm last, so it does not always follow the baseline directly
    block_times: dict[str, list[float]] = {n: [] for n in names}
    prev = torch.get_num_threads()
    try:
        for n in names:
            for _ in range(warmup):
                fns[n]()
        if cuda:
            torch.cuda.synchronize()
        if cuda:
            calls = {
                n: max(1, min(1000, int(min_block_s / max(statistics.median(_cuda_event_times(fns[n], 3)), 1e-7))))
                for n in names
                if n != aa_name
            }
        else:
            timers = {n: benchmark.Timer(stmt="fn()", globals={"fn": fns[n]}, num_threads=threads) for n in names}
            calls = {n: _calls_for(timers[n], min_block_s) for n in names if n != aa_name}
        if aa_name in fns:
            calls[aa_name] = calls[baseline]  # blocks of the baseline's size: a like-for-like pair
        for r in range(rounds):
            for n in names if r % 2 == 0 else names[::-1]:
                if cuda:
                    block_times[n].append(statistics.mean(_cuda_event_times(fns[n], calls[n])))
                else:
                    block_times[n].append(timers[n].timeit(calls[n]).mean)
    finally:
        torch.set_num_threads(prev)
    timings = {}
    for n in names:
        q1, med, q3 = quartiles(block_times[n])
        timings[n] = Timing(
            n,
            med,
            q3 - q1,
            rounds,
            calls[n],
            threads,
            str(dev_obj),
            "interleaved cuda_events" if cuda else "interleaved blocks",
        )
    aa_timing = timings.pop(aa_name, None)
    aa_blocks = block_times.pop(aa_name, None)
    return Interleaved(timings, block_times, baseline, level, aa_timing, aa_blocks)


@dataclass(frozen=True)
class Interleaved:
    """What :func:`interleaved` measured: a :class:`Timing` per function and its block means per round.

    The A/A control (the baseline's second arm) is kept apart (``aa_timing``, ``aa_block_times``), so
    ``timings`` and ``block_times`` hold the functions that were asked for; :attr:`aa` compares it.
    """

    timings: dict[str, Timing]
    block_times: dict[str, list[float]]
    baseline: str
    level: float = CI_LEVEL
    aa_timing: Timing | None = None
    aa_block_times: list[float] | None = None

    def _ratio(self, base: str, cand_times: list[float], cand: Timing, aa: Comparison | None) -> Comparison:
        ratios = [b / c for b, c in zip(self.block_times[base], cand_times, strict=True)]
        med, lo, hi = median_ci(ratios, self.level)
        return Comparison(self.timings[base], cand, med, lo, hi, len(ratios), self.level, aa)

    @property
    def aa(self) -> Comparison | None:
        """The baseline against its second arm in the same rounds (the set's noise floor); None without one."""
        if self.aa_block_times is None or self.aa_timing is None:
            return None
        return self._ratio(self.baseline, self.aa_block_times, self.aa_timing, None)

    def compare(self, candidate: str, baseline: str | None = None) -> Comparison:
        """Per-round ratio baseline/candidate (same rounds), its median and interval, with the set's A/A control."""
        baseline = self.baseline if baseline is None else baseline
        for n in (candidate, baseline):
            if n not in self.timings:
                raise ValueError(f"{n!r} was not timed; timed: {list(self.timings)}")
        return self._ratio(baseline, self.block_times[candidate], self.timings[candidate], self.aa)

    def rate_columns(self, candidate: str, work: float, column: str, baseline_verdict: str) -> dict:
        """``candidate``'s rate (work per second) relative to the baseline's, as a table row's columns:
        ``column`` (the ratio), ``interval``, ``verdict`` and ``A/A control``. ``work`` is the candidate's work
        over the baseline's: the per-round time ratio baseline/candidate times it is the rate ratio."""
        if candidate == self.baseline:
            aa = self.aa.interval_text() if self.aa is not None else None
            return {column: 1.0, "interval": None, "verdict": baseline_verdict, "A/A control": aa}
        c = self.compare(candidate)
        lo, hi = c.ratio_lo * work, c.ratio_hi * work
        return {
            column: c.ratio * work,
            "interval": format_interval(lo, hi),
            "verdict": verdict_for(lo, hi, c.aa, ("higher rate", "lower rate")),
            "A/A control": c.aa_text(),
        }

    def comparisons(self) -> dict[str, Comparison]:
        """Every function other than the baseline, compared with it."""
        return {n: self.compare(n) for n in self.timings if n != self.baseline}


def measurements(result: Interleaved, label: str, sub_label: str) -> list:
    """``torch.utils.benchmark.Measurement`` objects for an :class:`Interleaved` result (one per function),
    so ``torch.utils.benchmark.Compare`` can lay several results side by side."""
    from torch.utils.benchmark.utils.common import Measurement, TaskSpec

    return [
        Measurement(
            number_per_run=t.calls_per_run,
            raw_times=[b * t.calls_per_run for b in result.block_times[n]],
            task_spec=TaskSpec(
                stmt=n, setup="", label=label, sub_label=sub_label, description=n, num_threads=t.num_threads
            ),
        )
        for n, t in result.timings.items()
    ]


def compare_text(measured: list) -> str:
    """``torch.utils.benchmark.Compare`` of ``measured`` (significant figures trimmed to the spread), as text."""
    c = benchmark.Compare(measured)
    c.trim_significant_figures()
    return str(c)
