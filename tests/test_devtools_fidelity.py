"""The timing harness agrees with a direct ``torch.utils.benchmark.Timer`` (``bench/fidelity.py``, issue 35
finding 17), and the check tells a harness that times twice the work.

Sized for a busy 2-core machine: a 256x256 FP32 matmul on one thread, 21 interleaved rounds of 20 ms
blocks. There single per-round ratios (harness / Timer) range from 0.47 to 1.98 and the 90% interval on
their median was as wide as [0.60, 1.29] (five runs at load 7-10, reported in issue 35's devtools report),
so the checks use the interval, at 99%, not a tolerance on one median: agreement is asserted as "the
interval does not lie outside 1 ± 5%", and the interval must be narrow enough to tell a factor of two.
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
    # Not vacuous: the interval would have told a harness off by a factor of two (the variant below).
    assert r["ratio_hi"] < 2 * (1 - fidelity.TOLERANCE), r


def test_the_check_rejects_a_harness_that_times_twice_the_work(monkeypatch):
    from amp_docs_lib.core import timing

    measure = timing.measure
    monkeypatch.setattr(timing, "measure", lambda fn, **kw: measure(lambda: (fn(), fn()), **kw))
    r = fidelity.fidelity(**SMALL)
    assert r["verdict"] == fidelity.DISAGREE and r["ratio_lo"] > 1 + fidelity.TOLERANCE, r
