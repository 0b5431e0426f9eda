"""Paired tests: the exact McNemar test and Holm's step-down correction, in exact arithmetic.

McNemar compares two classifiers on the same items from the discordant pairs only: ``b``
items the first got right and the second wrong, ``c`` the reverse. Under the null hypothesis
each discordant item is a fair coin, so the exact two-sided p-value is
``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)`` (1 when ``b + c = 0``).

Holm's procedure adjusts ``m`` p-values for multiple testing with family-wise error control:
sorted ascending, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) * p_(j))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb


def mcnemar_exact(b: int, c: int) -> Fraction:
    """The exact two-sided McNemar p-value for ``b`` and ``c`` discordant pairs."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def holm_adjust(p_values: Sequence[Fraction]) -> list[Fraction]:
    """Holm-adjusted p-values, in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [Fraction(0)] * m
    running = Fraction(0)
    for rank, index in enumerate(order):
        running = max(running, min(Fraction(1), (m - rank) * Fraction(p_values[index])))
        adjusted[index] = running
    return adjusted
