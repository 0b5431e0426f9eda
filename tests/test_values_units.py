"""Exact value parsing and the unit algebra."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from fractions import Fraction

import pytest

from uncobench_z3.spec import Dimension, ValueParseError, format_value, parse_value, same_unit
from uncobench_z3.spec._values import format_fraction, parse_fraction


def test_decimals_are_exact() -> None:
    assert parse_fraction("0.1") + parse_fraction("0.2") == Fraction(3, 10)
    assert parse_fraction(Decimal("12.50")) == Fraction(25, 2)
    assert parse_fraction("1_000") == 1000


@pytest.mark.parametrize("raw", [0.1, True, "abc", "nan", "inf", None, [1]])
def test_inexact_or_bad_numbers_are_rejected(raw: object) -> None:
    with pytest.raises(ValueParseError):
        parse_fraction(raw)


@pytest.mark.parametrize(
    "raw", ["1e20000000", Decimal("1e20000000"), "1e-101", "1e4999", 10**101, Decimal(10) ** 101]
)
def test_numbers_past_the_digit_bound_are_refused_at_once(raw: object) -> None:
    # a short exponent text took half a minute to read exactly, and a value past 4,300
    # digits could not be printed: refused as input, with the type it was read as
    started = time.process_time()
    with pytest.raises(ValueParseError, match="at most 100 digits"):
        parse_value("decimal", raw)
    with pytest.raises(ValueParseError, match="at most 100 digits"):
        parse_value("int", raw)
    assert time.process_time() - started < 1
    assert parse_fraction("1e99") == 10**99 and parse_value("int", 10**100 - 1) == 10**100 - 1
    assert parse_fraction("1e-100") == Fraction(1, 10**100)


def test_typed_parsing() -> None:
    assert parse_value("int", 7) == 7
    assert parse_value("date", "2026-08-01") == dt.date(2026, 8, 1)
    assert parse_value("bool", False) is False
    assert parse_value("enum", "passed", ["passed", "failed"]) == "passed"
    with pytest.raises(ValueParseError):
        parse_value("int", "7.5")
    with pytest.raises(ValueParseError):
        parse_value("enum", "maybe", ["passed", "failed"])
    with pytest.raises(ValueParseError):
        parse_value("date", "01/08/2026")
    with pytest.raises(ValueParseError):
        parse_value("bool", "yes")


def test_formatting() -> None:
    assert format_fraction(Fraction(1, 3)) == "1/3"
    assert format_fraction(Fraction(5, 4)) == "1.25"
    assert format_fraction(Fraction(-5, 4), 3) == "-1.250"
    assert format_value(Fraction(60000), "AUD") == "60,000 AUD"
    assert format_value(Fraction(88875, 10), "AUD", digits=2) == "8,887.50 AUD"
    assert format_value(Fraction(15, 2), "%") == "7.5%"
    assert format_value(True) == "yes"


def test_unit_algebra() -> None:
    assert Dimension.parse("hours") * Dimension.parse("AUD/hour") == Dimension.parse("AUD")
    assert Dimension.parse("t") / Dimension.parse("h") == Dimension.parse("t/h")
    assert Dimension.parse("%").dimensionless
    assert same_unit("Years", "year")
    assert not same_unit("AUD", "USD")
    assert str(Dimension.parse("AUD/hour")) == "aud/hour"
