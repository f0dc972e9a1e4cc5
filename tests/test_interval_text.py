"""Printed intervals are rounded outward, so a printed interval holds the median it brackets."""

import random

from amp_docs_lib.core.timing import format_interval, format_ratio


def test_an_interval_is_rounded_outward_at_the_pages_precision():
    assert format_interval(0.0998, 1.2) == "[0.099, 1.20]"  # to nearest: "[0.10, 1.20]", which excludes 0.0999
    assert format_interval(0.951, 1.3049) == "[0.95, 1.31]"
    assert format_interval(0.0031, 0.00334) == "[0.0031, 0.0034]"
    assert format_interval(1.04, 1.16) == "[1.04, 1.16]"  # exact at the precision: unchanged (no binary noise)
    assert format_interval(0.0, 2.0) == "[0.00, 2.00]"


def test_the_printed_interval_holds_every_value_inside_it():
    rng = random.Random(0)
    for _ in range(20000):
        lo = 10 ** rng.uniform(-4, 1)
        mid = lo * (1 + rng.random() * 0.2)
        hi = mid * (1 + rng.random() * 0.2)
        plo, phi = (float(x) for x in format_interval(lo, hi).strip("[]").split(","))
        assert plo <= lo <= mid <= hi <= phi, (lo, hi, format_interval(lo, hi))
        assert float(format_ratio(plo)) == plo  # printed at the page's own precision
