"""Truthful but imprecise statements of a value: a range for ordered facts, a set otherwise.

Candidates come in order of preference: the most precise first (a narrow range with round
bounds, the month of a date, one alternative beside the true member), wider ones after.
Whether a candidate is *decision-relevant* is for the solver to prove; this module only
proposes statements that are true and look like what a person would say.
"""

from __future__ import annotations

import calendar
import datetime as _dt
from dataclasses import dataclass
from fractions import Fraction

from ..spec import TypedFact, Value, to_json_scalar

_NICE = (1, 2, 5)


@dataclass(frozen=True)
class Imprecision:
    """An inclusive range (``low``..``high``) or a set of ``options`` containing the truth."""

    low: Value | None = None
    high: Value | None = None
    options: tuple[Value, ...] | None = None

    def contains(self, fact: TypedFact, value: Value) -> bool:
        if self.options is not None:
            return value in self.options
        assert self.low is not None and self.high is not None
        code = fact.code(value)
        low, high = fact.code(self.low), fact.code(self.high)
        assert not isinstance(code, bool) and not isinstance(low, bool)
        assert not isinstance(high, bool)
        return low <= code <= high

    def json_fields(self) -> dict[str, object]:
        if self.options is not None:
            return {"options": [to_json_scalar(v) for v in self.options]}
        assert self.low is not None and self.high is not None
        return {"low": to_json_scalar(self.low), "high": to_json_scalar(self.high)}


def _nice_units(step: Fraction, span: Fraction) -> list[Fraction]:
    units: list[Fraction] = []
    scale = step
    while scale <= span:
        for k in _NICE:
            unit = scale * k
            if step <= unit <= span:
                units.append(unit)
        scale *= 10
    return sorted(set(units))


def _floor_to(x: Fraction, unit: Fraction) -> Fraction:
    return (x // unit) * unit


def _ceil_to(x: Fraction, unit: Fraction) -> Fraction:
    return -((-x) // unit) * unit


def _magnitude(v: Fraction, span: Fraction) -> Fraction:
    """The power of ten of a value (of the domain span for zero)."""
    x = abs(v) or span
    power = Fraction(1)
    while power * 10 <= x:
        power *= 10
    while power > x:
        power /= 10
    return power


def _numeric(fact: TypedFact, value: Value) -> list[Imprecision]:
    assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    assert isinstance(fact.low, int | Fraction) and isinstance(fact.high, int | Fraction)
    v, low, high = Fraction(value), Fraction(fact.low), Fraction(fact.high)
    out: list[Imprecision] = []
    seen: set[tuple[Fraction, Fraction]] = set()
    # People round at about half the value's order of magnitude ("17" -> "10 to 25",
    # "45,000" -> "40,000 to 50,000"); finer units are kept as a fallback.
    units = _nice_units(fact.step, high - low)
    natural = _magnitude(v, high - low) / 2
    ordered = [u for u in units if u >= natural] + [u for u in reversed(units) if u < natural]
    for unit in ordered:
        lo = max(low, _floor_to(v - unit, unit))
        hi = min(high, _ceil_to(v + unit, unit))
        if hi - lo < fact.step or (lo, hi) in seen or not lo <= v <= hi:
            continue
        seen.add((lo, hi))
        cast = int if fact.type == "int" else Fraction
        out.append(Imprecision(low=cast(lo), high=cast(hi)))
    return out


def _dates(fact: TypedFact, value: Value) -> list[Imprecision]:
    assert isinstance(value, _dt.date)
    assert isinstance(fact.low, _dt.date) and isinstance(fact.high, _dt.date)
    windows = []
    last = calendar.monthrange(value.year, value.month)[1]
    windows.append((value.replace(day=1), value.replace(day=last)))  # "in July 2026"
    quarter = (value.month - 1) // 3
    q_start = _dt.date(value.year, 3 * quarter + 1, 1)
    q_end_month = 3 * quarter + 3
    q_end = _dt.date(value.year, q_end_month, calendar.monthrange(value.year, q_end_month)[1])
    windows.append((q_start, q_end))  # "in Q3 2026"
    windows.append(
        (
            _dt.date(value.year, 1 if value.month <= 6 else 7, 1),
            _dt.date(value.year, 6, 30) if value.month <= 6 else _dt.date(value.year, 12, 31),
        )
    )
    out = []
    for start, end in windows:
        start, end = max(start, fact.low), min(end, fact.high)
        if start < end and start <= value <= end:
            out.append(Imprecision(low=start, high=end))
    return out


def imprecise_statements(fact: TypedFact, value: Value) -> list[Imprecision]:
    """Truthful, imprecise statements of ``value``, most precise first."""
    if fact.type in ("int", "decimal"):
        return _numeric(fact, value)
    if fact.type == "date":
        return _dates(fact, value)
    if fact.type == "enum":
        others = [m for m in fact.members if m != value]
        # listed in declaration order, so the order never hints at the true member
        pairs = [
            Imprecision(options=tuple(sorted((value, m), key=fact.members.index))) for m in others
        ]
        return [*pairs, Imprecision(options=tuple(fact.members))] if len(others) > 1 else pairs
    return [Imprecision(options=(True, False))]
