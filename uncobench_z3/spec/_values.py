"""Exact values: parsing JSON scalars into typed values and formatting them back.

A fact's value is one of ``int``, ``Fraction`` (type ``decimal``), ``datetime.date``,
``str`` (an enum member) or ``bool``. Decimals are never floats: JSON numbers are read as
:class:`decimal.Decimal` (see ``_io.load_json``) and strings such as ``"12.50"`` are accepted
too, both converted exactly to :class:`fractions.Fraction`.
"""

from __future__ import annotations

import datetime as _dt
import functools
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

FactType = Literal["int", "decimal", "date", "enum", "bool"]
FACT_TYPES: tuple[FactType, ...] = ("int", "decimal", "date", "enum", "bool")

#: What a fact value is once typed.
Value = int | Fraction | _dt.date | str | bool
#: What a JSON document may hold where a value is expected.
RawScalar = bool | int | Decimal | str

EPOCH = _dt.date(1970, 1, 1)


INT_OR_FRACTION = (int, Fraction)
"""What ``isinstance`` checks an exact number against: a tuple made once (``int |
Fraction`` in the call makes a union each time it runs, a cost in hot loops). A
bool passes too (``bool`` is an ``int``): where it must not, the caller says so."""


class ValueParseError(ValueError):
    """A raw scalar cannot be read as the expected type (message is user-facing)."""


MAX_DIGITS = 100
"""Digits a number may have before its decimal point, and after it: far more than any record
needs, and it keeps every code, product and bound the solver writes short. Unbounded, a
short text such as ``"1e20000000"`` took half a minute to read (longer exponents, hours),
and a value past 4,300 digits could not be printed (an internal error, exit 4)."""
_INT_BOUND = 10**MAX_DIGITS


def _bounded(parsed: Decimal, raw: object) -> Decimal:
    """``parsed`` (finite) if its digits are within :data:`MAX_DIGITS`, checked before the
    exact conversion that a huge exponent makes slow."""
    _, digits, exponent = parsed.as_tuple()
    assert isinstance(exponent, int)  # finite
    if len(digits) + exponent > MAX_DIGITS or -exponent > MAX_DIGITS:
        raise ValueParseError(
            f"expected at most {MAX_DIGITS} digits before and after the decimal point, "
            f"got {_shown(raw)}"
        )
    return parsed


def _shown(raw: object) -> str:
    """A refused number's text for a message, a long one cut."""
    text = repr(raw) if isinstance(raw, str) else str(raw)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def parse_fraction(raw: object) -> Fraction:
    """Read an exact rational from an int, a Decimal or a decimal string (never a float)."""
    if type(raw) is str:  # most decimals of a spec (records, bounds, steps), read once each
        return fraction_of_text(raw)
    if isinstance(raw, bool):
        raise ValueParseError(f"expected a number, got the boolean {str(raw).lower()}")
    if isinstance(raw, int):
        if not -_INT_BOUND < raw < _INT_BOUND:
            # not printed: past 4,300 digits an int has no decimal text
            raise ValueParseError(f"expected at most {MAX_DIGITS} digits before the decimal point")
        return Fraction(raw)
    if isinstance(raw, Decimal):
        if not raw.is_finite():
            raise ValueParseError(f"expected a finite number, got {raw}")
        return Fraction(_bounded(raw, raw))
    if isinstance(raw, Fraction):
        return raw
    if isinstance(raw, str):
        return _read_fraction_text(raw)
    if isinstance(raw, float):
        raise ValueParseError(
            f'got the binary float {raw!r}; write exact decimals as strings such as "12.5"'
        )
    raise ValueParseError(f"expected a number, got {type(raw).__name__}")


def _read_fraction_text(raw: str) -> Fraction:
    text = raw.strip().replace("_", "")
    try:
        parsed = Decimal(text)
    except InvalidOperation:
        raise ValueParseError(f"expected a decimal number, got {raw!r}") from None
    if not parsed.is_finite():
        raise ValueParseError(f"expected a finite number, got {raw!r}")
    return Fraction(_bounded(parsed, raw))


fraction_of_text = functools.lru_cache(maxsize=16384)(_read_fraction_text)
""":func:`_read_fraction_text` remembered by the text (a Fraction is immutable; a text that
is refused raises again each time, as lru_cache keeps no exceptions): a group's records
write about 11 decimals, each read through a Decimal, and the texts recur across groups"""


def parse_int(raw: object) -> int:
    if type(raw) is int and -_INT_BOUND < raw < _INT_BOUND:
        return raw  # the common case, exact as it is (a bool is not an int here)
    value = parse_fraction(raw)
    if value.denominator != 1:
        raise ValueParseError(f"expected an integer, got {format_fraction(value)}")
    return int(value)


def parse_date(raw: object) -> _dt.date:
    if isinstance(raw, _dt.date):
        return raw
    if not isinstance(raw, str):
        raise ValueParseError(f"expected an ISO date string YYYY-MM-DD, got {type(raw).__name__}")
    try:
        return _dt.date.fromisoformat(raw.strip())
    except ValueError:
        raise ValueParseError(f"expected an ISO date YYYY-MM-DD, got {raw!r}") from None


def parse_bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    raise ValueParseError(f"expected true or false, got {raw!r}")


def parse_value(fact_type: FactType, raw: object, members: list[str] | None = None) -> Value:
    """Read ``raw`` as a value of ``fact_type``; enum members are checked against ``members``."""
    if fact_type == "int":
        return parse_int(raw)
    if fact_type == "decimal":
        return parse_fraction(raw)
    if fact_type == "date":
        return parse_date(raw)
    if fact_type == "bool":
        return parse_bool(raw)
    if not isinstance(raw, str):
        raise ValueParseError(f"expected an enum member (a string), got {raw!r}")
    if members is not None and raw not in members:
        raise ValueParseError(f"{raw!r} is not one of the declared values {members}")
    return raw


def day_number(day: _dt.date) -> int:
    """Days since 1970-01-01: how dates are encoded for the solver."""
    return (day - EPOCH).days


def from_day_number(days: int) -> _dt.date:
    return EPOCH + _dt.timedelta(days=days)


def format_fraction(value: Fraction, digits: int | None = None) -> str:
    """An exact decimal string; ``digits`` fixes the number of decimals (after rounding)."""
    if digits is not None:
        if digits <= 0:
            return str(int(value)) if value.denominator == 1 else _long_decimal(value)
        scaled = value * 10**digits
        if scaled.denominator != 1:
            return _long_decimal(value)
        sign = "-" if scaled < 0 else ""
        whole, frac = divmod(abs(int(scaled)), 10**digits)
        return f"{sign}{whole}.{frac:0{digits}d}"
    if value.denominator == 1:
        return str(value.numerator)
    return _long_decimal(value)


def _long_decimal(value: Fraction) -> str:
    """Exact decimal expansion when finite, otherwise the fraction ``p/q``."""
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = max(twos, fives)
    return format_fraction(value, digits) if digits > 0 else str(int(value))


def to_json_scalar(value: Value) -> bool | int | str:
    """How a typed value is written back into JSON (decimals as exact strings)."""
    if isinstance(value, int):  # (a bool is an int)
        return value
    if isinstance(value, Fraction):
        return format_fraction(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    return value


def format_value(
    value: Value,
    unit: str | None = None,
    fact_type: FactType | None = None,
    digits: int | None = None,
) -> str:
    """Human-readable text of a value: thousands separators for numbers, ISO dates.

    ``digits`` fixes the decimals shown for a number (a rounded result keeps its zeros).
    """
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, int) and digits is None:
        text = f"{value:,}"
    elif isinstance(value, INT_OR_FRACTION):
        exact = format_fraction(Fraction(value), None if digits is None else max(digits, 0))
        if "/" in exact:
            text = exact
        else:
            whole, _, frac = exact.partition(".")
            sign = "-" if whole.startswith("-") else ""
            text = f"{sign}{int(whole.lstrip('-')):,}" + (f".{frac}" if frac else "")
    elif isinstance(value, _dt.date):
        text = value.isoformat()
    else:
        text = value
    if unit and fact_type not in ("enum", "bool", "date"):
        return f"{text} {unit}" if unit != "%" else f"{text}%"
    return text
