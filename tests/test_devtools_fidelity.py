"""The timing harness agrees with a direct ``torch.utils.benchmark.Timer`` (``bench/fidelity.py``, issue 35
finding 17), and the check tells a harness that times twice the work.

Sized for a busy 2-core machine: a 256x256 FP32 matmul on one thread, 21 interleaved rounds of 20 ms
blocks (about 12 s). Measured on such a machine shared with other builds (load 6-10, 2026-11-25): single
per-round ratios harness / Timer from 0.04 to 7.7, medians of 18 runs from 0.90 to 1.20, 99% intervals
on the median as wide as [0.28, 1.39] and [0.95, 1.71]; a harness timing twice the work: [1.61, 2.24].
So the checks read the interval (99%), not a tolerance on one median: agreement is asserted as "the
interval does not lie wholly outside 1 ± 5%" (``fidelity.agreement``), on an interval that excludes 2.
"""

import pytest

from amp_docs_lib.bench import fidelity

pytestmark = pytest.mark.slow

SMALL = {"n": 256, "rounds": 21, "min_run_time": 0.02, "num_threads": 1, "level": 0.99}


@pytest.mark.parametrize(
    "lo,hi,verdict",
    [
        (0.97, 1.04, fidelity.AGREE),
        (0.90, 1.04, fidelity.UNRESOLVED),
        (1.02, 1.30, fidelity.UNRESOLVED),
        (1.06, 1.30, fidelity.DISAGREE),
        (0.50, 0.94, fidelity.DISAGREE),
    ],
)
def test_agreement_reads_the_interval_against_the_tolerance(lo, hi, verdict):
    assert fidelity.agreement(lo, hi) == verdict


def test_the_harness_agrees_with_a_direct_timer():
    r = fidelity.fidelity(**SMALL)
    assert r["verdict"] != fidelity.DISAGREE, r
    # Not vacuous: the interval excludes a harness off by a factor of two (the variant below).
    assert r["ratio_hi"] < 2, r


def test_the_check_rejects_a_harness_that_times_twice_the_work(monkeypatch):
    from amp_docs_lib.core import timing

    measure = timing.measure
    monkeypatch.setattr(timing, "measure", lambda fn, **kw: measure(lambda: (fn(), fn()), **kw))
    r = fidelity.fidelity(**SMALL)
    assert r["verdict"] == fidelity.DISAGREE and r["ratio_lo"] > 1 + fidelity.TOLERANCE, r
