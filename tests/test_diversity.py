"""Diversity by design (operators, rounding), plans that punish skipping roles, and the
rendering grammar that carries them (rule sentences whatever the label, unsure yes/no)."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from uncobench_z3.construct import (
    InstantiationError,
    SpecGenerator,
    instantiate,
    load_library,
    parse_statement,
    parse_task_text,
    render_task,
    statement_text,
    validate_rendering,
)
from uncobench_z3.construct._diversity import (
    biting_digits,
    condition_variants,
    result_grid,
    rounding_can_change,
)
from uncobench_z3.construct._instantiate import Instantiator, make_plan, shape_rounding
from uncobench_z3.construct._natural import is_money, is_signed_rule
from uncobench_z3.construct._text import Style
from uncobench_z3.settings import StatedValue, guess_accuracy, operand_roles, strategy_reading
from uncobench_z3.spec import (
    OPERATORS,
    ROUNDING_MODES,
    check_structure,
    parse_value,
    round_fraction,
    rounding_unit,
)

LIBRARY = load_library()


def test_every_operator_and_rounding_mode_is_drafted_evenly() -> None:
    generator = SpecGenerator(LIBRARY, 7)
    operators: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    for index in range(140):
        spec = generator.draft(index, index % 5 == 0).spec
        operators.update(c.op for c in spec.conditions)
        modes[spec.rule.rounding.mode] += 1
    total = sum(operators.values())
    assert set(operators) == set(OPERATORS)
    assert min(operators.values()) / total >= 0.03
    assert set(modes) == set(ROUNDING_MODES) and max(modes.values()) - min(modes.values()) <= 1


def _passing(fact, op: str, value) -> set[object]:  # type: ignore[no-untyped-def]
    from uncobench_z3.spec import TypedCondition

    members = list(fact.values or [])
    domain = members if fact.type == "enum" else [True, False]
    if isinstance(value, list):
        operand = tuple(parse_value(fact.type, v, members or None) for v in value)
    else:
        operand = parse_value(fact.type, value, members or None)
    cond = TypedCondition("k", fact.key, op, operand)  # type: ignore[arg-type]
    return {v for v in domain if cond.holds(v)}


def test_enum_and_yes_no_variants_keep_the_meaning() -> None:
    """Writing an enum or yes/no condition with another operator passes the same members."""
    for _, scenario in LIBRARY.scenarios():
        for fact in scenario.facts:
            if fact.type not in ("enum", "bool") or not fact.conditions:
                continue
            meanings = {}
            for template in fact.conditions:
                for choice in template.choices:
                    meanings[str(choice)] = _passing(fact, template.op, choice)
            for variant in condition_variants(fact):
                assert _passing(fact, variant.template.op, variant.value) in meanings.values()


def test_rounding_is_made_to_matter() -> None:
    assert result_grid_of("sum", [Fraction(1000), Fraction(500)]) == 500
    assert not rounding_can_change(Fraction(500), 0)
    digits = biting_digits(Fraction(500))
    assert digits == -3 and rounding_can_change(Fraction(500), digits)
    # the finest such rounding: one more decimal and a result on the grid never changes
    assert not rounding_can_change(Fraction(500), digits + 1)
    assert round_fraction(Fraction(60500), digits, "half_even") == 60000  # a tie, to even


def result_grid_of(operation: str, steps: list[Fraction]) -> Fraction | None:
    from uncobench_z3.spec import NumericalRule

    rule = NumericalRule(operation=operation, operands=["a", "b"], label="x", unit="u")  # type: ignore[arg-type]
    return result_grid(rule, steps)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 300))
def test_plans_make_skipping_roles_fail(seed: int, index: int) -> None:
    """With an eligible candidate, each other one fails exactly one condition fact, of two
    different roles without operands: the optimist sees all three as possible."""
    draft = SpecGenerator(LIBRARY, seed).draft(index)
    task = Instantiator(draft).task
    plan = make_plan(task, False, random.Random(seed))
    owners_of_operands = set(operand_roles(task))
    condition_only = {task.facts[c.fact].owner for c in task.conditions} - owners_of_operands
    assume(len(condition_only) >= 2)
    failing_roles = [task.facts[f].owner for facts in plan.failing.values() for f in facts]
    assert all(len(facts) == 1 for facts in plan.failing.values())
    assert len(set(failing_roles)) == 2 and not set(failing_roles) & owners_of_operands
    try:
        spec = instantiate(draft, seed)
    except InstantiationError:
        assume(False)
    typed = check_structure(spec).task
    assert typed is not None
    gold = typed.outcome()
    assume(gold.kind == "eligible")
    reading = strategy_reading(typed, "optimist", [])
    assert guess_accuracy(typed, gold, reading) == Fraction(1, 3)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 300))
def test_no_eligible_plans_have_two_roles_necessary_alone(seed: int, index: int) -> None:
    draft = SpecGenerator(LIBRARY, seed).draft(index, True)
    task = Instantiator(draft).task
    plan = make_plan(task, True, random.Random(seed))
    sizes = sorted(len(facts) for facts in plan.failing.values())
    assert sizes[:2] == [1, 1] and sum(sizes) == len(task.roles)
    singles = {task.facts[f[0]].owner for f in plan.failing.values() if len(f) == 1}
    if len(set(task.roles) - set(operand_roles(task))) >= 2:
        assert not singles & set(operand_roles(task))


@pytest.mark.parametrize(
    "label", ["units lost in assembly and test", "price in dock is the sum of fees minus tax"]
)
def test_rule_sentences_read_back_whatever_the_label(label: str) -> None:
    for index in range(30):
        try:
            spec = instantiate(SpecGenerator(LIBRARY, 2).draft(index), 2)
        except InstantiationError:
            continue
        spec = spec.model_copy(update={"rule": spec.rule.model_copy(update={"label": label})})
        task = check_structure(spec).task
        assert task is not None
        rendered = render_task(task, 2)
        read = parse_task_text(rendered.task_text)
        assert (read.rule.label, read.rule.operation) == (label, task.rule.operation)
        assert read.rule.operands == task.rule.operands and read.rule.mode == task.rule.mode
        assert validate_rendering(task, rendered, task.outcome(), 2) == []
        return
    raise AssertionError("no instance")


def test_an_unsure_yes_no_reads_back_as_two_options() -> None:
    for index in range(60):
        try:
            spec = instantiate(SpecGenerator(LIBRARY, 3).draft(index), 3)
        except InstantiationError:
            continue
        task = check_structure(spec).task
        assert task is not None
        flags = [f for f in task.facts.values() if f.type == "bool"]
        if not flags:
            continue
        read = parse_task_text(render_task(task, 3).task_text)
        fact, candidate = flags[0], task.candidates[0]
        for first in (True, False):
            stated = StatedValue(
                candidate=candidate, fact=fact.key, context=fact.context, options=[first, not first]
            )
            for frame in range(4):
                line = statement_text(task, stated, Style(frame=frame))
                assert "not sure it was recorded as" in line
                back = parse_statement(line, read.catalog)
                assert back.options == (first, not first) and back.value is None
        return
    raise AssertionError("no instance with a yes/no fact")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 300))
def test_rounding_shaping_does_what_it_says(seed: int, index: int) -> None:
    """A nudged operand makes rounding change the result (or land on a tie), keeps the
    candidate eligible, and keeps a money answer at least one rounding unit."""
    # most drafts need no nudge (shaping leaves them alone): walk on from the drawn one to
    # the first that gets one, rather than have Hypothesis filter out most of its inputs
    for at in range(index, index + 60):
        draft = SpecGenerator(LIBRARY, seed).draft(at)
        instantiator = Instantiator(draft)
        task, rng = instantiator.task, random.Random(seed)
        plan = make_plan(task, False, rng)
        try:
            values = instantiator.values(plan, rng)
        except InstantiationError:
            continue
        shaped = shape_rounding(task, plan, values, random.Random(at))
        if shaped != values:
            break
    else:
        assume(False)
    chosen = plan.eligible
    assert chosen is not None and task.eligible(chosen, shaped)
    assert sum(shaped[s] != values[s] for s in values) == 1
    operands = [Fraction(shaped[(chosen, k)]) for k in task.rule.operands]  # type: ignore[arg-type]
    units = task.rule.value(operands) / rounding_unit(task.rule.digits)
    assert units.denominator != 1
    if is_money(task.rule.unit) and not is_signed_rule(task.rule.operation, task.rule.label):
        assert units >= 1
