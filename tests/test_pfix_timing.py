"""Performance reader findings 3, 8 and 12 (issue 34): a verdict needs the comparison's interval to clear
the set's A/A interval (the noise floor), not only to exclude 1; and the chance of a false verdict is
computed from the rounds (core.timing.interval_miss), not written as 9-round figures."""

import math

from amp_docs_lib.core import timing


def _aa(lo, hi):
    return timing.Comparison(None, None, (lo + hi) / 2, lo, hi, 9, 0.9)


def test_an_interval_that_overlaps_the_aa_interval_is_no_verdict():
    # the reader's example: fp16 n=255 at [1.64, 2.44] against an A/A interval of [0.88, 2.04]
    assert timing.verdict_for(1.64, 2.44, _aa(0.88, 2.04), ("higher rate", "lower rate")) == timing.UNRESOLVED
    assert timing.verdict_for(0.5, 0.9, _aa(0.88, 2.04)) == timing.UNRESOLVED  # below 1, not below 0.88
    assert timing.verdict_for(2.1, 2.44, _aa(0.88, 2.04)) == "faster"  # clear of the A/A interval's top
    assert timing.verdict_for(0.5, 0.87, _aa(0.88, 2.04)) == "slower"  # clear of its bottom
    assert timing.verdict_for(1.01, 1.2, None) == "faster"  # no control: the floor is 1 itself
    assert timing.verdict_for(1.5, 2.0, _aa(1.05, 1.2)) == timing.NOISE_FLOOR_TOO_HIGH


def test_comparisons_carry_the_rule():
    c = timing.Comparison(None, None, 2.0, 1.64, 2.44, 9, 0.9, _aa(0.88, 2.04))
    assert c.verdict == timing.UNRESOLVED and not c.resolved


def _binomial_tail(n, k):
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def test_interval_miss_is_the_one_sided_tail_of_the_sign_test_interval():
    assert timing.interval_miss(9) == 10 / 512  # the 2nd smallest of 9 ratios: P(Bin(9, 1/2) <= 1)
    assert timing.interval_miss(9) != 0.05  # not the nominal one-sided 5% the page's comment said
    assert timing.interval_miss(15) == _binomial_tail(15, 3)
    assert timing.interval_miss(5) == 1 / 32
    for n in range(5, 30):
        assert 2 * timing.interval_miss(n) <= 1 - timing.CI_LEVEL
