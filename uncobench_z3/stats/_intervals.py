"""Confidence intervals of a binomial proportion, in exact rational arithmetic.

The Wilson score interval needs one square root; it is taken with an integer square root at a
resolution of 10^-12 and rounded *outward* (the low bound down, the high bound up), so the
interval is never narrower than the real-valued one and is the same on every platform.
"""

from __future__ import annotations

import math
from fractions import Fraction

Z_95 = Fraction("1.959963984540054")
"""The 0.975 quantile of the standard normal, to 15 decimals."""
RESOLUTION = 10**12
"""Bounds are multiples of 1 / RESOLUTION."""


def _sqrt_up(value: Fraction) -> Fraction:
    """The smallest multiple of 1/RESOLUTION that is >= sqrt(value)."""
    scaled = value * RESOLUTION * RESOLUTION
    ceiling = -(-scaled.numerator // scaled.denominator)
    root = math.isqrt(ceiling)
    if root * root < ceiling:
        root += 1
    return Fraction(root, RESOLUTION)


def _down(value: Fraction) -> Fraction:
    return Fraction(math.floor(value * RESOLUTION), RESOLUTION)


def _up(value: Fraction) -> Fraction:
    return Fraction(math.ceil(value * RESOLUTION), RESOLUTION)


def wilson_interval(successes: int, total: int, z: Fraction = Z_95) -> tuple[Fraction, Fraction]:
    """The Wilson score interval of ``successes`` in ``total`` trials ((0, 1) for no trials).

    Exact except for the square root, which is rounded outward; the interval always holds
    the observed proportion.
    """
    if total <= 0:
        return Fraction(0), Fraction(1)
    if not 0 <= successes <= total:
        raise ValueError(f"successes must lie in 0..{total}, not {successes}")
    p = Fraction(successes, total)
    z2 = z * z
    denominator = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denominator
    half = z * _sqrt_up(p * (1 - p) / total + z2 / (4 * total * total)) / denominator
    low = max(Fraction(0), min(p, _down(centre - half)))
    high = min(Fraction(1), max(p, _up(centre + half)))
    return low, high
