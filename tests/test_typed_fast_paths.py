"""The reference semantics' fast paths give what the plain definitions give.

``TypedFact.value_of`` computes ``code x step`` in integers and ``_compare`` compares two
numbers before its type checks; both run for every record a build, a verification or a
scoring evaluates. ``round_fraction`` (which ``TypedRule.rounded`` calls) rounds in
integers. Here each is compared with the definition it replaced.
"""

from __future__ import annotations

import datetime as _dt
import operator
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.spec import OPERATIONS, ROUNDING_MODES, TypedRule, round_fraction
from uncobench_z3.spec._rounding import rounding_unit
from uncobench_z3.spec._typed import TypedFact, _compare, _value_in_integers
from uncobench_z3.spec._values import day_number


def _fact(kind: str, step: Fraction) -> TypedFact:
    return TypedFact(
        key="f", owner="r", label="f", type=kind, unit=None, context="c",  # type: ignore[arg-type]
        other_contexts=(), low=None, high=None, step=step,
    )  # fmt: skip


_steps = st.fractions(min_value=Fraction(1, 10**6), max_value=10**6)


@settings(max_examples=400, deadline=None)
@given(step=_steps, code=st.integers(-(10**9), 10**9))
def test_a_decimal_value_is_code_times_step(step: Fraction, code: int) -> None:
    value = _fact("decimal", step).value_of(code)
    assert type(value) is Fraction
    assert value == code * step


@settings(max_examples=400, deadline=None)
@given(step=st.integers(1, 10**6) | _steps, code=st.integers(-(10**9), 10**9))
def test_an_int_value_is_code_times_step_as_an_int(step: int | Fraction, code: int) -> None:
    value = _fact("int", Fraction(step)).value_of(code)
    assert type(value) is int
    assert value == int(code * Fraction(step))


_ORDER = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def _plain_compare(value: object, op: str, threshold: object) -> bool:
    """The definition, without the numbers' fast path: equality for every type; an order for
    numbers and dates (as day numbers), never for booleans or enum members."""
    if op in ("==", "!="):
        return (value == threshold) == (op == "==")
    if isinstance(value, bool | str) or isinstance(threshold, bool | str):
        raise TypeError("no order")
    if op not in _ORDER:
        raise ValueError(op)

    def number(item: object) -> object:
        return day_number(item) if isinstance(item, _dt.date) else item

    return bool(_ORDER[op](number(value), number(threshold)))


_values = st.one_of(
    st.integers(-50, 50),
    st.fractions(min_value=-50, max_value=50, max_denominator=8),
    st.booleans(),
    st.dates(min_value=_dt.date(2020, 1, 1), max_value=_dt.date(2020, 3, 1)),
    st.sampled_from(["gold", "silver"]),
)


def _outcome(compare: object, *args: object) -> object:
    try:
        return compare(*args)  # type: ignore[operator]
    except Exception as exc:  # the kind of failure must match too
        return type(exc)


@settings(max_examples=1000, deadline=None)
@given(
    value=_values,
    op=st.sampled_from([">=", ">", "<=", "<", "==", "!=", "~"]),
    threshold=_values,
)
def test_a_comparison_is_the_plain_definition(value: object, op: str, threshold: object) -> None:
    assert _outcome(_compare, value, op, threshold) == _outcome(
        _plain_compare, value, op, threshold
    )


@settings(max_examples=2000, deadline=None)
@given(
    value=st.fractions(min_value=-(10**9), max_value=10**9, max_denominator=10**4)
    | st.builds(Fraction, st.integers(-(10**6), 10**6), st.sampled_from([1, 2, 4, 8, 20, 200])),
    digits=st.integers(-4, 6),
    mode=st.sampled_from(ROUNDING_MODES),
)
def test_rounding_in_integers_is_round_fraction(value: Fraction, digits: int, mode: str) -> None:
    """The same Fraction as the rounding in Fraction operations it replaced, ties included
    (the second strategy makes halves of the grid often), for every mode and both signs."""
    found = round_fraction(value, digits, mode)  # type: ignore[arg-type]
    assert type(found) is Fraction
    assert found == _plain_round(value, digits, mode)


def _plain_round(value: Fraction, digits: int, mode: str) -> Fraction:
    """``round_fraction`` as it was, in Fraction operations: ``value`` in grid units, its floor
    and what is left above it, the mode's choice, back on the grid."""
    unit = rounding_unit(digits)
    y = value / unit
    low = y.numerator // y.denominator
    fraction = y - low
    half = Fraction(1, 2)
    if fraction == 0 or mode == "floor":
        units = low
    elif mode == "ceiling":
        units = low + 1
    elif mode == "down":
        units = low if y > 0 else low + 1
    elif mode == "up":
        units = low + 1 if y > 0 else low
    elif fraction != half:
        units = low if fraction < half else low + 1
    elif mode == "half_up":
        units = low + 1 if y > 0 else low
    elif mode == "half_down":
        units = low if y > 0 else low + 1
    else:
        units = low if low % 2 == 0 else low + 1
    return units * unit


def test_a_rule_rounds_as_round_fraction() -> None:
    """``TypedRule.rounded`` (remembered, in integers) against the definition, on exact ties
    of every mode at both signs."""
    for mode in ROUNDING_MODES:
        rule = TypedRule("sum", ("a",), "x", "u", 1, mode)
        for value in (Fraction(25, 100), Fraction(-25, 100), Fraction(35, 100), Fraction(-7, 3)):
            assert rule.rounded([value]) == _plain_round(value, 1, mode)


_numbers = st.integers(-(10**6), 10**6) | st.fractions(
    min_value=-(10**6), max_value=10**6, max_denominator=10**4
)


@settings(max_examples=600, deadline=None)
@given(
    operation=st.sampled_from(OPERATIONS),
    operands=st.lists(_numbers | st.sampled_from([0, Fraction(0)]), max_size=4),
    weights=st.lists(st.fractions(min_value=-10, max_value=10, max_denominator=100), max_size=4),
)
def test_a_rule_value_in_integers_is_the_definition(
    operation: str, operands: list[int | Fraction], weights: list[Fraction]
) -> None:
    """``TypedRule.rounded`` computes the unrounded value in integers (``_value_in_integers``)
    where the definition cannot raise: the same number, and None wherever the definition
    raises, for every operation, with zero operands and weights summing to zero among them."""
    rule = TypedRule(operation, ("a",), "x", "u", 2, "half_even", tuple(weights))  # type: ignore[arg-type]
    fast = _value_in_integers(operation, tuple(operands), rule.weights)
    try:
        plain: Fraction | None = rule.value(operands)
    except (ZeroDivisionError, IndexError, ValueError):
        plain = None
    if fast is None:  # left to the definition: only where it raises, or to say why
        assert plain is None
        return
    assert type(fast) is Fraction and fast == plain
    assert rule.rounded(operands) == round_fraction(plain, 2, "half_even")


def test_a_rule_value_of_other_types_is_left_to_the_definition() -> None:
    """A bool or float operand (which the definition makes a Fraction its own way) and an
    unknown operation go to :meth:`TypedRule.value`."""
    assert _value_in_integers("sum", (True, 2), ()) is None
    assert _value_in_integers("sum", (0.5, 2), ()) is None
    assert _value_in_integers("median", (1, 2), ()) is None
    assert TypedRule("sum", ("a",), "x", "u", 1, "half_up").rounded([True, 2]) == 3
