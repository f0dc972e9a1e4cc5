"""Fidelity of the harness: its figure for an n×n FP32 matmul against a direct
``torch.utils.benchmark.Timer.blocked_autorange`` of the same op, in the same process.

Run ``python -m amp_docs_lib.bench.fidelity [--n 2048]``; it prints both
medians, the median per-round ratio with its interval, and the verdict (``agreement``):
"agree" where the interval lies within the tolerance (5%) of 1, "disagree" where it lies
wholly outside it, else "unresolved"; it exits non-zero unless they agree. The two are
interleaved in many short rounds, in alternating order (harness then direct, direct then
harness, ...), so that a change in the machine's speed hits both alike: on a shared 2-core
machine a 2-thread matmul drifts by 30% over a few seconds, more than any difference between
the two timers, and single per-round ratios range from 0.5 to 2 under load; the interval on
their median (``core.stats.median_ci``) says what such a machine resolves.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from amp_docs_lib.core.stats import CI_LEVEL, median_ci  # the standard library only: --help needs no torch

TOLERANCE = 0.05
AGREE, DISAGREE, UNRESOLVED = "agree", "disagree", "unresolved"


def agreement(ratio_lo: float, ratio_hi: float, tolerance: float = TOLERANCE) -> str:
    """The verdict on an interval ``[ratio_lo, ratio_hi]`` for harness time / direct time: ``AGREE`` where it
    lies within ``1 ± tolerance``, ``DISAGREE`` where it lies wholly outside that band, else ``UNRESOLVED``
    (a machine too noisy to tell)."""
    if 1 - tolerance <= ratio_lo and ratio_hi <= 1 + tolerance:
        return AGREE
    if ratio_lo > 1 + tolerance or ratio_hi < 1 - tolerance:
        return DISAGREE
    return UNRESOLVED


def fidelity(n: int = 2048, *, rounds: int = 20, min_run_time: float = 0.25,
             num_threads: int | None = None, level: float = CI_LEVEL) -> dict[str, float]:
    """Median seconds per call from the harness and from a direct ``Timer``; the median per-round ratio
    (harness / direct) with its interval at ``level`` and the ``agreement`` verdict on it."""
    # Imported here, not at the top: ``--help`` and a bad argument answer without torch's seconds of import.
    import torch
    import torch.utils.benchmark as benchmark

    from amp_docs_lib.core.timing import measure

    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    threads = num_threads or torch.get_num_threads()
    harness, direct = [], []
    timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=threads)

    def run_harness():
        harness.append(measure(lambda: a @ b, device="cpu", min_run_time=min_run_time,
                               num_threads=threads).median_s)

    def run_direct():
        direct.append(timer.blocked_autorange(min_run_time=min_run_time).median)
        torch.set_num_threads(threads)  # Timer leaves the process at its own thread count

    for r in range(rounds):
        # Alternate which goes first, so a steady drift in speed favours neither.
        for step in ((run_harness, run_direct) if r % 2 == 0 else (run_direct, run_harness)):
            step()
    h, d = statistics.median(harness), statistics.median(direct)
    # Each round pairs two adjacent measurements; the median of the per-round ratios is robust to
    # load that changes between rounds (other work on a shared machine).
    ratios = [x / y for x, y in zip(harness, direct, strict=True)]
    ratio, lo, hi = median_ci(ratios, level)
    return {"n": n, "threads": threads, "rounds": rounds, "harness_s": h, "direct_timer_s": d,
            "median_ratio": ratio, "ratio_lo": lo, "ratio_hi": hi, "level": level,
            "relative_difference": abs(ratio - 1.0), "verdict": agreement(lo, hi)}


def main(argv: list[str] | None = None) -> int:
    summary, _, details = __doc__.partition("\n\n")
    ap = argparse.ArgumentParser(prog="python -m amp_docs_lib.bench.fidelity", description=" ".join(summary.split()),
                                 epilog=" ".join(details.split()))
    ap.add_argument("--n", type=int, default=2048, help="matrix size (default 2048)")
    ap.add_argument("--rounds", type=int, default=20, help="interleaved rounds (default 20)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for both timers (default: torch.get_num_threads())")
    args = ap.parse_args(argv)
    if args.n < 1 or args.rounds < 1 or (args.threads is not None and args.threads < 1):
        ap.error("--n, --rounds and --threads must be positive")
    r = fidelity(args.n, rounds=args.rounds, num_threads=args.threads)
    print(f"{args.n}x{args.n} FP32 matmul, {r['threads']} threads: harness {r['harness_s'] * 1e3:.2f} ms, "
          f"direct Timer.blocked_autorange {r['direct_timer_s'] * 1e3:.2f} ms, "
          f"harness / direct {r['median_ratio']:.3f} [{r['ratio_lo']:.3f}, {r['ratio_hi']:.3f}] "
          f"({r['level']:.0%} interval over {r['rounds']} rounds): {r['verdict']} (tolerance {TOLERANCE:.0%})")
    return 0 if r["verdict"] == AGREE else 1


if __name__ == "__main__":
    sys.exit(main())
