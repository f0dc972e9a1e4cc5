"""Order statistics with no assumption about the distribution: quartiles and an interval on a median.

Timings on a shared machine are skewed and heavy-tailed, so the site summarises them by medians
and quartiles and puts intervals on medians with the sign test (a median ratio's interval from the
ordered ratios), never with a normal approximation.
"""

from __future__ import annotations

import math
import statistics

CI_LEVEL = 0.9  # nominal coverage of the site's intervals on a median


def _ordered(values: list[float]) -> list[float]:
    """``values`` as sorted floats; ``ValueError`` for a NaN, which has no place in an order
    (``sorted`` would leave it wherever it fell and every order statistic would be wrong).
    Dropping it silently would shrink the sample an interval's coverage is computed from."""
    xs = [float(v) for v in values]
    nans = [i for i, v in enumerate(xs) if math.isnan(v)]
    if nans:
        raise ValueError(
            f"values contain nan at positions {nans} of {len(xs)}; order statistics need numbers "
            f"(drop the failed measurements before summarising)"
        )
    return sorted(xs)


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """First quartile, median and third quartile of ``values`` (inclusive method). ``ValueError`` for a NaN."""
    values = _ordered(values)
    if not values:
        raise ValueError("quartiles of an empty list")
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def min_values_for(level: float = CI_LEVEL) -> int:
    """Fewest values for which :func:`median_ci` has an interval at ``level`` (5 for 0.9)."""
    n = 1
    while 2 / 2**n > 1 - level:
        n += 1
    return n


def median_ci(values: list[float], level: float = CI_LEVEL) -> tuple[float, float, float]:
    """Median of ``values`` and a distribution-free confidence interval for it (the sign test).

    The interval is ``[x_(k), x_(n+1-k)]`` of the sorted values with the largest ``k`` such that
    ``P(Binomial(n, 1/2) <= k - 1) <= (1 - level) / 2``: it covers the population median with
    probability at least ``level`` whatever the distribution. Raises ValueError for a bad level,
    too few values (5 for 0.9) or a NaN among them.
    """
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    xs = _ordered(values)
    n = len(xs)
    alpha = (1 - level) / 2
    k, tail = 0, 0.0
    while k < n and tail + math.comb(n, k) / 2**n <= alpha:
        tail += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        raise ValueError(
            f"{n} values are too few for a {level:.0%} interval on the median; need at least {min_values_for(level)}"
        )
    return statistics.median(xs), xs[k - 1], xs[n - k]


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the probability of a split at least this uneven if wins and losses
    were equally likely (ties left out). For paired comparisons, e.g. images only one model gets right."""
    if wins < 0 or losses < 0:
        raise ValueError(f"wins and losses must be non-negative counts, got {wins!r}, {losses!r}")
    n, k = wins + losses, min(wins, losses)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)
