"""The few statistics the reports need, exact and dependency-free.

A pass rate is a count of Bernoulli outcomes, so its interval is Wilson's (it stays inside
[0, 1] and does not collapse to zero width at 0% or 100%, as the normal interval does).
Two models are compared with an exact two-sided sign test on the tasks where they differ:
with one draw per task that is exactly McNemar's exact test on the discordant pairs.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(passed: int, measured: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for passed/measured; None when nothing was measured."""
    if measured <= 0:
        return None
    p = passed / measured
    denominator = 1 + z * z / measured
    centre = (p + z * z / (2 * measured)) / denominator
    half = z * math.sqrt(p * (1 - p) / measured + z * z / (4 * measured * measured)) / denominator
    low = 0.0 if passed == 0 else max(0.0, centre - half)   # exact ends: no 1e-17 from rounding
    high = 1.0 if passed == measured else min(1.0, centre + half)
    return low, high


def sign_test(wins_a: int, wins_b: int) -> float:
    """Exact two-sided p-value that A and B win equally often (ties already dropped)."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins_a, wins_b) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def fewest_for_significance(alpha: float = 0.05) -> int:
    """How many discordant tasks, all won by one side, a sign test needs to reach `alpha`."""
    n = 1
    while sign_test(n, 0) >= alpha:
        n += 1
    return n


def classify(passed: int, measured: int) -> str:
    """'always', 'never' or 'split' across draws; 'not measured' when no draw had evidence."""
    if measured == 0:
        return "not measured"
    if passed == measured:
        return "always"
    return "never" if passed == 0 else "split"


def fisher_greater(a_pass: int, a_fail: int, b_pass: int, b_fail: int) -> float:
    """Exact one-sided p-value (Fisher) that group A's pass rate exceeds group B's: the
    probability, with the margins fixed, of A passing at least `a_pass` times."""
    passes, a_total, total = a_pass + b_pass, a_pass + a_fail, a_pass + a_fail + b_pass + b_fail
    if total == 0 or a_total == 0 or a_total == total:
        return 1.0
    denominator = math.comb(total, a_total)
    top = min(passes, a_total)
    return min(1.0, sum(math.comb(passes, k) * math.comb(total - passes, a_total - k)
                        for k in range(a_pass, top + 1)) / denominator)
