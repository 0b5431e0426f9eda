"""Truthful but imprecise statements of a value: a range for ordered facts, a set otherwise.

The statements are what a person would say, and they do not give the truth away:

* **Numbers**: a range ``[k*u, (k+m)*u]`` whose bounds are round (``u`` is 1, 2 or 5 times a
  power of ten, and a multiple of the fact's step) and whose width holds ``m`` = 2 or 4 such
  units, so the midpoint is a round number too and lies on the fact's grid. For each
  ``(u, m)`` every position ``k`` whose range holds the truth is offered, in a seeded random
  order: the truth's place inside the range is uniform over the round values it can take,
  never centred by construction. A range never spans the whole domain, always fits inside
  it, and never has a condition's threshold as a bound (which would tell where the truth is).
* **Dates**: the calendar month, quarter or half-year of the date (same rules on the domain
  and on thresholds).
* **Enum members**: 2-4 members including the true one, in a seeded random order (the first
  is the true one no more often than any other place).
* **Booleans**: both values in a seeded random order, read as "not sure it was recorded as
  <the first>" (see :func:`~uncobench_z3.construct.format_options`).

``(u, m)`` pairs and option-list sizes are offered in order of how natural they are (a width
near the value's order of magnitude first). Whether a statement is *decision-relevant* - it
leaves the answer open, and the gold answer's probability under it is at most 1/2 - is for
:mod:`._chance` and the solver to prove; this module only proposes statements.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from ..spec import TypedCondition, TypedFact, Value, day_number, to_json_scalar
from ..spec._values import INT_OR_FRACTION

_NICE = (1, 2, 5)
#: Range widths, in round units: even, so that the midpoint is a round value on the grid.
WIDTH_UNITS = (2, 4)
#: How many (unit, width) shapes are offered per value, most natural first.
MAX_SHAPES = 6
MAX_OPTIONS = 4


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
    """Round units (1, 2 or 5 times a power of ten) that are multiples of ``step``."""
    power = Fraction(1)
    while power > step:
        power /= 10
    while power * 10 <= step:
        power *= 10
    units = []
    while power <= span:
        for k in _NICE:
            unit = power * k
            if step <= unit <= span and (unit / step).denominator == 1:
                units.append(unit)
        power *= 10
    return sorted(set(units))


def _magnitude(v: Fraction, span: Fraction) -> Fraction:
    """The power of ten of a value (of the domain span for zero)."""
    x = abs(v) or span
    power = Fraction(1)
    while power * 10 <= x:
        power *= 10
    while power > x:
        power /= 10
    return power


def _shapes(step: Fraction, span: Fraction, v: Fraction) -> list[tuple[Fraction, int]]:
    """(unit, width in units) pairs, the width nearest the value's magnitude first."""
    natural = _magnitude(v, span)
    shapes = [
        (unit, m)
        for unit in _nice_units(step, span)
        for m in WIDTH_UNITS
        if unit * m < span  # never the whole domain
    ]

    def distance(shape: tuple[Fraction, int]) -> tuple[Fraction, int, Fraction]:
        width = shape[0] * shape[1]
        ratio = width / natural if width >= natural else natural / width
        return (ratio, shape[1], shape[0])

    return sorted(shapes, key=distance)[:MAX_SHAPES]


def thresholds(conditions: Iterable[TypedCondition], fact: TypedFact) -> set[Fraction]:
    """A fact's condition operands as exact numbers (day numbers for dates)."""
    out: set[Fraction] = set()
    for cond in conditions:
        if cond.fact != fact.key:
            continue
        operands = cond.operand if isinstance(cond.operand, tuple) else (cond.operand,)
        for operand in operands:
            if isinstance(operand, _dt.date):
                out.add(Fraction(day_number(operand)))
            elif isinstance(operand, INT_OR_FRACTION) and not isinstance(operand, bool):
                out.add(Fraction(operand))
    return out


def _numeric(
    fact: TypedFact, value: Value, rng: random.Random, avoid: set[Fraction]
) -> Iterator[Imprecision]:
    assert isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool)
    assert isinstance(fact.low, INT_OR_FRACTION) and isinstance(fact.high, INT_OR_FRACTION)
    v, low, high = Fraction(value), Fraction(fact.low), Fraction(fact.high)
    cast = int if fact.type == "int" else Fraction
    for unit, m in _shapes(fact.step, high - low, v):
        width = unit * m
        first = -((width - v) // unit)  # the lowest k with k*unit + width >= v
        last = v // unit  # the highest k with k*unit <= v
        starts = [
            k * unit
            for k in range(int(first), int(last) + 1)
            if low <= k * unit and k * unit + width <= high
            and k * unit not in avoid and k * unit + width not in avoid
        ]  # fmt: skip
        rng.shuffle(starts)
        for start in starts:
            yield Imprecision(low=cast(start), high=cast(start + width))


def _dates(fact: TypedFact, value: Value, avoid: set[Fraction]) -> Iterator[Imprecision]:
    assert isinstance(value, _dt.date)
    assert isinstance(fact.low, _dt.date) and isinstance(fact.high, _dt.date)
    last = calendar.monthrange(value.year, value.month)[1]
    quarter = (value.month - 1) // 3
    q_end_month = 3 * quarter + 3
    first_half = value.month <= 6
    windows = [
        (value.replace(day=1), value.replace(day=last)),  # "in July 2026"
        (
            _dt.date(value.year, 3 * quarter + 1, 1),
            _dt.date(value.year, q_end_month, calendar.monthrange(value.year, q_end_month)[1]),
        ),  # "in Q3 2026"
        (
            _dt.date(value.year, 1 if first_half else 7, 1),
            _dt.date(value.year, 6, 30) if first_half else _dt.date(value.year, 12, 31),
        ),
    ]
    for start, end in windows:
        inside = fact.low <= start and end <= fact.high and (start, end) != (fact.low, fact.high)
        on_threshold = {Fraction(day_number(start)), Fraction(day_number(end))} & avoid
        if inside and not on_threshold and start <= value <= end:
            yield Imprecision(low=start, high=end)


def _members(fact: TypedFact, value: Value, rng: random.Random) -> Iterator[Imprecision]:
    others = [m for m in fact.members if m != value]
    sizes = list(range(2, min(MAX_OPTIONS, len(fact.members)) + 1))
    rng.shuffle(sizes)  # no size is preferred: a list's length says nothing
    for size in sizes:
        groups = [list(g) for g in combinations(others, size - 1)]
        rng.shuffle(groups)
        for group in groups:
            options: list[Value] = [value, *group]
            rng.shuffle(options)
            yield Imprecision(options=tuple(options))


def imprecise_statements(
    fact: TypedFact,
    value: Value,
    rng: random.Random | None = None,
    conditions: Iterable[TypedCondition] = (),
) -> Iterator[Imprecision]:
    """Truthful, imprecise statements of ``value``, most natural shapes first (lazily).

    ``rng`` orders positions and options (default: seeded by the fact and the value);
    ``conditions`` are the task's conditions, whose thresholds never become range bounds.
    """
    rng = rng if rng is not None else random.Random(f"{fact.key}:{value}")
    avoid = thresholds(conditions, fact)
    if fact.type in ("int", "decimal"):
        return _numeric(fact, value, rng, avoid)
    if fact.type == "date":
        return _dates(fact, value, avoid)
    if fact.type == "enum":
        return _members(fact, value, rng)
    options: list[Value] = [True, False]
    rng.shuffle(options)
    return iter([Imprecision(options=tuple(options))])
