"""Rounding of the final result: one place, exact, with a declared mode.

The modes carry the names of Python's :mod:`decimal` module and mean the same thing:

========== ==========================================================
half_up    to nearest; ties away from zero      (2.5 -> 3, -2.5 -> -3)
half_even  to nearest; ties to the even neighbour (2.5 -> 2, 3.5 -> 4)
half_down  to nearest; ties toward zero         (2.5 -> 2, -2.5 -> -2)
up         away from zero                       (2.1 -> 3, -2.1 -> -3)
down       toward zero (truncate)               (2.9 -> 2, -2.9 -> -2)
floor      toward minus infinity                (-2.1 -> -3)
ceiling    toward plus infinity                 (2.1 -> 3)
========== ==========================================================

``digits`` is the number of decimals kept (negative values round to tens, hundreds...).

For the solver, "the rounded result equals v" is encoded without division as membership of
the unrounded result in an interval, the *preimage* of ``v`` (see :func:`preimage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from ._values import INT_OR_FRACTION

RoundingMode = Literal["half_up", "half_even", "half_down", "up", "down", "floor", "ceiling"]
ROUNDING_MODES: tuple[RoundingMode, ...] = (
    "half_up",
    "half_even",
    "half_down",
    "up",
    "down",
    "floor",
    "ceiling",
)

HALF = Fraction(1, 2)


def rounding_unit(digits: int) -> Fraction:
    """The spacing of the rounded grid: 10^-digits."""
    return Fraction(1, 10**digits) if digits >= 0 else Fraction(10 ** (-digits))


def _round_units(num: int, den: int, mode: RoundingMode) -> int:
    """Round ``num / den`` (already in grid units; ``den > 0``) to an integer according to
    ``mode``, in integers: a Fraction operation normalises through a gcd, and this rounds
    every result a build, a verification or a scoring evaluates."""
    low, rest = divmod(num, den)  # the floor, and what is left above it
    if rest == 0 or mode == "floor":
        return low
    if mode == "ceiling":
        return low + 1
    if mode == "down":
        return low if num > 0 else low + 1
    if mode == "up":
        return low + 1 if num > 0 else low
    if 2 * rest != den:  # not a tie: to the nearer end
        return low if 2 * rest < den else low + 1
    # An exact tie between low and low + 1.
    if mode == "half_up":
        return low + 1 if num > 0 else low
    if mode == "half_down":
        return low if num > 0 else low + 1
    return low if low % 2 == 0 else low + 1  # half_even


def round_fraction(value: Fraction, digits: int, mode: RoundingMode) -> Fraction:
    """Round an exact rational once, to ``digits`` decimals, by ``mode``."""
    scale = 10 ** abs(digits)  # the grid's spacing is 1 / scale, or scale
    if digits >= 0:
        return Fraction(_round_units(value.numerator * scale, value.denominator, mode), scale)
    return Fraction(_round_units(value.numerator, value.denominator * scale, mode) * scale)


@dataclass(frozen=True)
class Interval:
    """A rational interval with open or closed ends."""

    low: Fraction
    high: Fraction
    low_closed: bool
    high_closed: bool

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, INT_OR_FRACTION):
            return False
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def describe(self) -> str:
        left = "[" if self.low_closed else "("
        right = "]" if self.high_closed else ")"
        return f"{left}{self.low}, {self.high}{right}"


def preimage(rounded: Fraction, digits: int, mode: RoundingMode) -> Interval:
    """Every unrounded value that rounds to ``rounded``, as an interval.

    ``rounded`` must lie on the grid of ``digits``; the property
    ``round_fraction(x) == rounded  <=>  x in preimage(rounded)`` is tested exhaustively.
    """
    unit = rounding_unit(digits)
    units = rounded / unit
    if units.denominator != 1:
        raise ValueError(f"{rounded} is not a multiple of {unit}")
    n = int(units)
    if mode == "floor":
        bounds = (Fraction(n), Fraction(n + 1), True, False)
    elif mode == "ceiling":
        bounds = (Fraction(n - 1), Fraction(n), False, True)
    elif mode == "down":
        if n > 0:
            bounds = (Fraction(n), Fraction(n + 1), True, False)
        elif n < 0:
            bounds = (Fraction(n - 1), Fraction(n), False, True)
        else:
            bounds = (Fraction(-1), Fraction(1), False, False)
    elif mode == "up":
        if n > 0:
            bounds = (Fraction(n - 1), Fraction(n), False, True)
        elif n < 0:
            bounds = (Fraction(n), Fraction(n + 1), True, False)
        else:
            bounds = (Fraction(0), Fraction(0), True, True)
    elif mode == "half_up":
        if n > 0:
            bounds = (n - HALF, n + HALF, True, False)
        elif n < 0:
            bounds = (n - HALF, n + HALF, False, True)
        else:
            bounds = (-HALF, HALF, False, False)
    elif mode == "half_down":
        if n > 0:
            bounds = (n - HALF, n + HALF, False, True)
        elif n < 0:
            bounds = (n - HALF, n + HALF, True, False)
        else:
            bounds = (-HALF, HALF, True, True)
    else:  # half_even
        even = n % 2 == 0
        bounds = (n - HALF, n + HALF, even, even)
    low, high, low_closed, high_closed = bounds
    return Interval(low * unit, high * unit, low_closed, high_closed)
