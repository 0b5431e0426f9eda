"""A small unit algebra: enough to check that an operation's operands and result agree.

A unit is written as factors joined by ``*`` and ``/`` (``AUD``, ``AUD/hour``,
``t/h``, ``kWh``); ``%`` and ``1`` are dimensionless. Factors compare case-insensitively and
a plural ``s`` is ignored (``hours`` == ``hour``), so ``hours * AUD/hour`` is ``AUD``.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*([*/])\s*")


def _canonical_factor(factor: str) -> str:
    word = factor.strip().lower()
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Dimension:
    """A unit as a multiset of base factors with integer exponents."""

    exponents: tuple[tuple[str, int], ...]

    @classmethod
    def parse(cls, unit: str | None) -> Dimension:
        if cls is Dimension and type(unit) is str:
            return _parsed(unit)  # a rule's units, parsed once per text
        return cls._parse(unit)

    @classmethod
    def _parse(cls, unit: str | None) -> Dimension:
        counts: Counter[str] = Counter()
        if unit is None:
            return cls(())
        sign = 1
        for piece in _TOKEN.split(unit.strip()):
            if piece == "*":
                sign = 1
                continue
            if piece == "/":
                sign = -1
                continue
            factor = _canonical_factor(piece)
            if factor in ("", "1", "%", "percent"):
                continue
            counts[factor] += sign
            sign = 1
        return cls(tuple(sorted((k, v) for k, v in counts.items() if v != 0)))

    def __mul__(self, other: Dimension) -> Dimension:
        counts: Counter[str] = Counter(dict(self.exponents))
        for factor, power in other.exponents:
            counts[factor] += power
        return Dimension(tuple(sorted((k, v) for k, v in counts.items() if v != 0)))

    def inverse(self) -> Dimension:
        return Dimension(tuple((k, -v) for k, v in self.exponents))

    def __truediv__(self, other: Dimension) -> Dimension:
        return self * other.inverse()

    @property
    def dimensionless(self) -> bool:
        return not self.exponents

    def __str__(self) -> str:
        if not self.exponents:
            return "1"
        up = [k if v == 1 else f"{k}^{v}" for k, v in self.exponents if v > 0]
        down = [k if v == -1 else f"{k}^{-v}" for k, v in self.exponents if v < 0]
        text = "*".join(up) or "1"
        return text + ("/" + "/".join(down) if down else "")


@functools.lru_cache(maxsize=1024)
def _parsed(unit: str) -> Dimension:
    """:meth:`Dimension.parse` of a text, remembered (a dimension is immutable)."""
    return Dimension._parse(unit)


def same_unit(a: str | None, b: str | None) -> bool:
    return Dimension.parse(a) == Dimension.parse(b)


def is_percent(unit: str | None) -> bool:
    return unit is not None and unit.strip().lower() in ("%", "percent", "pct")
