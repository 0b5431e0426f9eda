"""Imprecise statements and their exact gold chance, against enumeration of every value."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from fractions import Fraction
from itertools import islice

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.strategies import small_specs
from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.settings import Imprecision, gold_chance, imprecise_statements, range_midpoint
from uncobench_z3.settings._imprecise import WIDTH_UNITS, thresholds
from uncobench_z3.spec import Outcome, Slot, TypedTask, Value, check_structure, day_number

LIBRARY = load_library()


def brute_chance(task: TypedTask, gold: Outcome, slot: Slot, allowed: list[Value]) -> Fraction:
    """The definition, one value at a time."""
    same = sum(task.outcome(task.with_values({slot: v})).same_output(gold) for v in allowed)
    return Fraction(same, len(allowed))


def allowed_values(task: TypedTask, slot: Slot, statement: Imprecision) -> list[Value]:
    fact = task.facts[slot[1]]
    if statement.options is not None:
        return list(statement.options)
    low, high = fact.code(statement.low), fact.code(statement.high)  # type: ignore[arg-type]
    return [fact.value_of(c) for c in range(int(low), int(high) + 1)]


@given(small_specs(), st.data())
def test_gold_chance_counts_like_enumeration_on_small_specs(spec, data) -> None:  # type: ignore[no-untyped-def]
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    assume(gold.kind != "ambiguous")
    slot = data.draw(st.sampled_from(task.all_slots()))
    fact = task.facts[slot[1]]
    if fact.type in ("bool", "enum"):
        members = fact.domain_values()
        extra = data.draw(st.lists(st.sampled_from(members), unique=True))
        statement = Imprecision(options=tuple(dict.fromkeys([task.values[slot], *extra])))
    else:
        low, high = fact.code_range()
        a = data.draw(st.integers(low, high))
        b = data.draw(st.integers(a, high))
        statement = Imprecision(low=fact.value_of(a), high=fact.value_of(b))
    chance = gold_chance(task, gold, slot, statement)
    assert chance.probability == brute_chance(
        task, gold, slot, allowed_values(task, slot, statement)
    )


@st.composite
def generated_instances(draw: st.DrawFn) -> TypedTask:
    seed, index = draw(st.integers(0, 2**16)), draw(st.integers(0, 300))
    draft = SpecGenerator(LIBRARY, seed).draft(index, draw(st.booleans()))
    try:
        spec = instantiate(draft, seed)
    except InstantiationError:
        assume(False)
    task = check_structure(spec).task
    assert task is not None
    assume(task.outcome().kind != "ambiguous")
    return task


@settings(max_examples=25, deadline=None)
@given(generated_instances(), st.data())
def test_gold_chance_counts_like_enumeration_on_real_rules(task: TypedTask, data) -> None:  # type: ignore[no-untyped-def]
    """Wide ranges over real domains: the interval structure and the binary searches."""
    gold = task.outcome()
    numeric = [s for s in task.all_slots() if task.facts[s[1]].type in ("int", "decimal", "date")]
    # the gold candidate's operands first: there the count needs the monotone search
    operands = [s for s in numeric if s[0] == gold.candidate and s[1] in task.rule.operands]
    slot = data.draw(st.sampled_from(operands or numeric))
    fact = task.facts[slot[1]]
    low, high = fact.code_range()
    truth = fact.code(task.values[slot])
    assert not isinstance(truth, bool)
    width = data.draw(st.integers(0, 3000))
    start = data.draw(st.integers(max(low, truth - width), truth))
    end = min(high, start + width)
    statement = Imprecision(low=fact.value_of(start), high=fact.value_of(end))
    chance = gold_chance(task, gold, slot, statement)
    assert chance.probability == brute_chance(
        task, gold, slot, allowed_values(task, slot, statement)
    )


def _shape_ok(task: TypedTask, slot: Slot, statement: Imprecision) -> None:
    fact = task.facts[slot[1]]
    truth = task.values[slot]
    assert statement.contains(fact, truth)
    if statement.options is not None:
        assert 2 <= len(set(statement.options)) == len(statement.options) <= 4
        return
    low, high = fact.code(statement.low), fact.code(statement.high)  # type: ignore[arg-type]
    assert (low, high) != fact.code_range() and low < high
    assert fact.contains(statement.low) and fact.contains(statement.high)  # type: ignore[arg-type]
    assert fact.contains(range_midpoint(statement.low, statement.high))  # type: ignore[arg-type]
    avoid = thresholds(task.conditions, fact)
    ends = [statement.low, statement.high]
    numbers = [Fraction(day_number(v)) if isinstance(v, dt.date) else Fraction(v) for v in ends]  # type: ignore[arg-type]
    assert not set(numbers) & avoid  # a bound never sits on a threshold
    if fact.type in ("int", "decimal"):
        width = numbers[1] - numbers[0]
        units = [width / m for m in WIDTH_UNITS]
        # round bounds: multiples of a unit 1, 2 or 5 x 10^k whose width is 2 or 4 units
        assert any((numbers[0] / u).denominator == 1 and _is_round(u) for u in units), (
            statement,
            width,
        )


def _is_round(unit: Fraction) -> bool:
    while unit >= 10:
        unit /= 10
    while unit < 1:
        unit *= 10
    return unit in (1, 2, 5)


@settings(max_examples=25, deadline=None)
@given(generated_instances(), st.data())
def test_statements_are_truthful_and_shaped(task: TypedTask, data) -> None:  # type: ignore[no-untyped-def]
    slot = data.draw(st.sampled_from(task.all_slots()))
    fact = task.facts[slot[1]]
    rng = random.Random(data.draw(st.integers(0, 1000)))
    for statement in islice(
        imprecise_statements(fact, task.values[slot], rng, task.conditions), 40
    ):
        _shape_ok(task, slot, statement)


def test_a_range_position_is_uniform_over_the_round_values() -> None:
    """For a fixed shape, every position holding the truth is offered, each first equally
    often over seeds: the truth is not centred."""
    task = next(iter([_instantiated(3, 11)]))
    fact = next(
        f for f in task.facts.values() if f.type == "int" and f.key not in task.rule.operands
    )
    slot = (task.candidates[0], fact.key)
    truth = task.values[slot]
    firsts: Counter[tuple[Value, Value]] = Counter()
    offered: set[tuple[Value, Value]] = set()
    for seed in range(300):
        statements = list(imprecise_statements(fact, truth, random.Random(seed)))
        shape = statements[0].high - statements[0].low  # type: ignore[operator]
        same = [(s.low, s.high) for s in statements if s.high - s.low == shape]  # type: ignore[operator]
        offered.update(same)
        firsts[same[0]] += 1
    assert set(firsts) == offered and len(offered) >= 2
    assert max(firsts.values()) - min(firsts.values()) < 300 // len(offered)  # no favourite


def test_option_lists_vary_in_size_and_put_the_truth_anywhere() -> None:
    task = _instantiated(5, 21)
    facts = [f for f in task.facts.values() if f.type == "enum" and len(f.members) >= 3]
    assert facts
    fact = facts[0]
    truth = task.values[(task.candidates[0], fact.key)]
    sizes: Counter[int] = Counter()
    places: Counter[int] = Counter()
    for seed in range(200):
        first = next(imprecise_statements(fact, truth, random.Random(seed)))
        assert first.options is not None
        sizes[len(first.options)] += 1
        places[first.options.index(truth)] += 1
    assert len(sizes) >= 2 and len(places) >= 2
    assert places[0] < 140  # the truth is not listed first most of the time


def _instantiated(seed: int, index: int) -> TypedTask:
    for i in range(index, index + 50):
        try:
            spec = instantiate(SpecGenerator(LIBRARY, seed).draft(i), seed)
        except InstantiationError:
            continue
        task = check_structure(spec).task
        assert task is not None
        if any(f.type == "enum" and len(f.members) >= 3 for f in task.facts.values()) and any(
            f.type == "int" and f.key not in task.rule.operands for f in task.facts.values()
        ):
            return task
    raise AssertionError("no suitable instance")
