"""Rounding: exact, once, with a declared mode; and its preimage used by the solver."""

from __future__ import annotations

import decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uncobench_z3.spec import (
    OPERATIONS,
    ROUNDING_MODES,
    Operation,
    RoundingMode,
    TypedRule,
    _typed,
    preimage,
    round_fraction,
)

DECIMAL_MODE = {
    "half_up": decimal.ROUND_HALF_UP,
    "half_even": decimal.ROUND_HALF_EVEN,
    "half_down": decimal.ROUND_HALF_DOWN,
    "up": decimal.ROUND_UP,
    "down": decimal.ROUND_DOWN,
    "floor": decimal.ROUND_FLOOR,
    "ceiling": decimal.ROUND_CEILING,
}

fractions = st.fractions(min_value=-1000, max_value=1000, max_denominator=400)


@pytest.mark.parametrize(
    ("value", "digits", "mode", "expected"),
    [
        ("2.5", 0, "half_up", "3"),
        ("-2.5", 0, "half_up", "-3"),
        ("2.5", 0, "half_even", "2"),
        ("3.5", 0, "half_even", "4"),
        ("2.5", 0, "half_down", "2"),
        ("-2.5", 0, "half_down", "-2"),
        ("2.1", 0, "up", "3"),
        ("-2.1", 0, "up", "-3"),
        ("2.9", 0, "down", "2"),
        ("-2.9", 0, "down", "-2"),
        ("-2.1", 0, "floor", "-3"),
        ("2.1", 0, "ceiling", "3"),
        ("1234.5678", 2, "half_up", "1234.57"),
        ("1250", -2, "half_up", "1300"),
        ("1250", -2, "half_even", "1200"),
        ("0.125", 2, "half_even", "0.12"),
    ],
)
def test_rounding_table(value: str, digits: int, mode: str, expected: str) -> None:
    assert round_fraction(Fraction(value), digits, mode) == Fraction(expected)  # type: ignore[arg-type]


@given(fractions, st.integers(-2, 3), st.sampled_from(ROUNDING_MODES))
def test_rounding_agrees_with_decimal_module(value: Fraction, digits: int, mode: str) -> None:
    """An independent implementation: Python's decimal module on an exact decimal expansion."""
    context = decimal.Context(prec=60, rounding=DECIMAL_MODE[mode])
    exact = context.divide(decimal.Decimal(value.numerator), decimal.Decimal(value.denominator))
    if exact * value.denominator != value.numerator:
        return  # not a finite decimal at this precision: the comparison would be unfair
    quantum = decimal.Decimal(1).scaleb(-digits)
    expected = (
        exact.quantize(quantum, context=context)
        if digits >= 0
        else ((exact / quantum).quantize(decimal.Decimal(1), context=context) * quantum)
    )
    assert round_fraction(value, digits, mode) == Fraction(expected)  # type: ignore[arg-type]


@given(fractions, st.integers(-1, 2), st.sampled_from(ROUNDING_MODES))
def test_value_lies_in_preimage_of_its_rounding(value: Fraction, digits: int, mode: str) -> None:
    rounded = round_fraction(value, digits, mode)  # type: ignore[arg-type]
    assert value in preimage(rounded, digits, mode)  # type: ignore[arg-type]


@given(fractions, fractions, st.integers(-1, 2), st.sampled_from(ROUNDING_MODES))
def test_preimage_is_exactly_the_set_rounding_to_v(
    value: Fraction, other: Fraction, digits: int, mode: str
) -> None:
    target = round_fraction(other, digits, mode)  # type: ignore[arg-type]
    window = preimage(target, digits, mode)  # type: ignore[arg-type]
    assert (value in window) == (round_fraction(value, digits, mode) == target)  # type: ignore[arg-type]


def test_boundaries_of_preimage() -> None:
    window = preimage(Fraction(3), 0, "half_up")
    assert Fraction(5, 2) in window and Fraction(7, 2) not in window
    negative = preimage(Fraction(-3), 0, "half_up")
    assert Fraction(-5, 2) in negative and Fraction(-7, 2) not in negative
    with pytest.raises(ValueError):
        preimage(Fraction(1, 3), 0, "half_up")


def _plain_rounded(rule: TypedRule, operands: list[Fraction]) -> Fraction:
    """The reference definition, without the rule's remembered results."""
    return round_fraction(rule.value(operands), rule.digits, rule.mode)


@given(
    st.sampled_from([op for op in OPERATIONS if op not in ("ratio", "percentage_change")]),
    st.lists(st.lists(st.integers(-50, 50), min_size=3, max_size=3), min_size=1, max_size=12),
    st.integers(-1, 2),
    st.sampled_from(ROUNDING_MODES),
    st.booleans(),
)
def test_rule_remembers_results_equal_to_the_definition(
    operation: Operation, rows: list[list[int]], digits: int, mode: RoundingMode, as_ints: bool
) -> None:
    """``TypedRule.rounded`` remembers results by the operands' values: asked again (as
    integers or Fractions of the same values, after other operands, after its memo was
    emptied for being full) it gives the definition's result every time."""
    rule = TypedRule(operation, ("a", "b", "c"), "x", "", digits, mode, (Fraction(1),) * 3)
    for row in rows * 2:
        operands = [int(v) if as_ints else Fraction(v, 4) for v in row]
        assert rule.rounded(operands) == _plain_rounded(rule, [Fraction(v) for v in operands])
        same = [Fraction(v) for v in operands]  # 2 and Fraction(2): one key, one result
        assert rule.rounded(same) == _plain_rounded(rule, same)


def test_rule_results_are_bounded_and_still_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_typed, "_RESULTS_KEPT", 3)
    rule = TypedRule("sum", ("a", "b"), "x", "", 0, "half_up")
    for a in range(10):
        operands = [Fraction(a, 2), Fraction(1, 2)]
        assert rule.rounded(operands) == _plain_rounded(rule, operands)
        assert len(rule._results) <= 3
    assert rule.rounded([Fraction(0), Fraction(1, 2)]) == 1  # emptied, then asked afresh
