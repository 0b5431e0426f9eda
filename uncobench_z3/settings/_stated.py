"""Reading a stated value back into typed values, and what a trusting reader takes it to say."""

from __future__ import annotations

import datetime as _dt
from fractions import Fraction
from functools import lru_cache

from ..spec import (
    FactType,
    TypedTask,
    Value,
    ValueParseError,
    day_number,
    from_day_number,
    parse_value,
)
from ..spec._values import INT_OR_FRACTION
from ._imprecise import Imprecision
from ._model import StatedValue

_CONTAINERS = (list, dict)


def stated_value(task: TypedTask, stated: StatedValue) -> Value:
    fact = task.facts[stated.fact]
    raw = stated.value
    if isinstance(raw, _CONTAINERS):  # not a scalar: let the parser say why
        return parse_value(fact.type, raw, list(fact.members) or None)
    try:  # type(raw) is in the key: True == 1 and hash alike, but parse differently
        return _parse_scalar(fact.type, type(raw).__name__, raw, tuple(fact.members))
    except TypeError:  # unhashable (a signalling NaN): parse it uncached, to its error
        return parse_value(fact.type, raw, list(fact.members) or None)


@lru_cache(maxsize=65536)
def _parse_scalar(fact_type: FactType, _kind: str, raw: object, members: tuple[str, ...]) -> Value:
    """A stated scalar parsed once: the scripted colleagues state a small, fixed set of values
    per group, and every round of every sample reads them again (the values are immutable)."""
    return parse_value(fact_type, raw, list(members) or None)


def stated_imprecision(task: TypedTask, stated: StatedValue) -> Imprecision:
    fact = task.facts[stated.fact]
    members = list(fact.members) or None
    if stated.options is not None:
        return Imprecision(
            options=tuple(parse_value(fact.type, o, members) for o in stated.options)
        )
    if stated.low is None or stated.high is None:
        raise ValueParseError("an imprecise statement needs low and high, or options")
    return Imprecision(
        low=parse_value(fact.type, stated.low, members),
        high=parse_value(fact.type, stated.high, members),
    )


def range_midpoint(low: Value, high: Value) -> Value:
    """The middle of a range: the exact midpoint of numbers, the earlier middle day of dates."""
    if isinstance(low, _dt.date) and isinstance(high, _dt.date):
        return from_day_number((day_number(low) + day_number(high)) // 2)
    assert isinstance(low, INT_OR_FRACTION) and isinstance(high, INT_OR_FRACTION)
    middle = (Fraction(low) + Fraction(high)) / 2
    return int(middle) if middle.denominator == 1 and isinstance(low, int) else middle


def face_value_of(statement: Imprecision) -> Value:
    """What a trusting reader takes an imprecise statement to say: the midpoint of a range,
    the first of a list of options."""
    if statement.options is not None:
        return statement.options[0]
    assert statement.low is not None and statement.high is not None
    return range_midpoint(statement.low, statement.high)


def face_value(task: TypedTask, stated: StatedValue) -> Value:
    """A statement at face value: its value (whatever context it names), else as above."""
    if stated.is_exact:
        return stated_value(task, stated)
    return face_value_of(stated_imprecision(task, stated))
