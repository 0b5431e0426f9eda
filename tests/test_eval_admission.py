"""Attribution's admission questions settled by exact evaluation (:mod:`._admission`): the
shortened path (a fixed value equal to the record's true value, of its type, taken as in its
domain; each value checked once, as it is put in place; an answer's number read once)
against the plain definition, which checks every value of every completion it tries, on
random fixings, statements and answers over the example tasks and generated ones."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

import pytest

from tests.stated_helpers import imprecise_stated
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import ParsedAnswer, typed_task
from uncobench_z3.evaluation._admission import (
    Settled,
    _excluded,
    _fitting,
    _result,
    admits,
    settle_admission,
)
from uncobench_z3.evaluation._completion import values_to_try
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import (
    Slot,
    TypedTask,
    Value,
    check_structure,
    round_fraction,
    to_json_scalar,
)

ROOT = Path(__file__).resolve().parent.parent


def _plain_settle(
    task: TypedTask,
    fixed: Mapping[Slot, Value],
    statements: Mapping[Slot, StatedValue],
    parsed: ParsedAnswer,
) -> Settled | None:
    """The definition: every fixed value checked against its domain, every completion tried
    checked whole (each of its values the true one or in its domain), the number read anew."""

    def admitted(values: dict[Slot, Value]) -> bool:
        if parsed.decision == "positive" and parsed.number is not None:
            chosen = parsed.candidate
            assert chosen is not None
            if not task.eligible(chosen, values):
                return False
            rule = task.rule
            given = round_fraction(Fraction(parsed.number), rule.digits, rule.mode)
            if _result(task, chosen, values) != given:
                return False
        elif not admits(task, parsed, values):
            return False
        return all(
            value is task.values.get(slot) or task.facts[slot[1]].contains(value)
            for slot, value in values.items()
        )

    try:
        values = dict(task.values)
        for slot, value in fixed.items():
            if not task.facts[slot[1]].contains(value):
                return None
            values[slot] = value
        choices: dict[Slot, list[Value]] = {}
        for slot, stated in statements.items():
            if slot in fixed:
                continue
            fits = _fitting(task, slot, stated)
            if not fits:
                return None
            choices[slot] = fits
            values[slot] = fits[0]
        if admitted(values):
            return "sat"
        if _excluded(task, parsed, fixed):
            return "unsat"
        decision = task.decision_facts()
        for slot in [s for s in task.all_slots() if s[1] in decision and s not in fixed]:
            kept = values[slot]
            for value in choices.get(slot) or dict.fromkeys(values_to_try(task, slot)):
                if value != kept:
                    values[slot] = value
                    if admitted(values):
                        return "sat"
            values[slot] = kept
        return None
    except Exception:
        return None


def _tasks() -> list[TypedTask]:
    """The example tasks and instantiated specs of the offline generator (dates, decimals,
    sets, ranges, every rule kind)."""
    from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library

    found = [
        typed_task(group)
        for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
        for group in load_groups(path)
    ]
    generator, index, generated = SpecGenerator(load_library(), 5), 0, 0
    while generated < 8:
        draft = generator.draft(index, random.Random(f"admission:{index}").random() < 0.3)
        index += 1
        try:
            task = check_structure(instantiate(draft, 5)).task
        except InstantiationError:
            continue
        assert task is not None
        found.append(task)
        generated += 1
    return found


def _fixed_value(task: TypedTask, slot: Slot, rng: random.Random) -> Value:
    """A value to fix a record at: its true value as another object of its type, a value to
    try, a value off the domain, or the true value in another type (1 for True, a Fraction
    for an integer)."""
    fact, truth = task.facts[slot[1]], task.values[slot]
    draw = rng.random()
    if draw < 0.03 and fact.is_ordered:
        low, high = fact.code_range()
        return fact.value_of(rng.choice([low - 1, high + 1]))
    if draw < 0.06 and fact.type == "bool":
        return 1 if truth else 0  # (equal to the truth, of another type: not in the domain)
    if draw < 0.06 and fact.type == "int":
        return Fraction(truth)  # type: ignore[arg-type]  # (in the domain)
    if draw < 0.4 and isinstance(truth, Fraction):
        return Fraction(truth.numerator, truth.denominator)  # (equal, not the same object)
    if draw < 0.6:
        return truth
    return rng.choice(values_to_try(task, slot))


def _statement(task: TypedTask, slot: Slot, rng: random.Random) -> StatedValue:
    """An imprecise statement of a record (a range around, beside or off its domain, a set of
    options), now and then an exact one (which no completion reads)."""
    candidate, key = slot
    fact = task.facts[key]
    made = {"candidate": candidate, "fact": key, "context": fact.context}
    if rng.random() < 0.1:
        return StatedValue(**made, value=to_json_scalar(task.values[slot]))
    return imprecise_stated(task, slot, fact.context, rng)


def _answer(task: TypedTask, fixed: Mapping[Slot, Value], rng: random.Random) -> ParsedAnswer:
    if rng.random() < 0.3:
        return ParsedAnswer(decision="negative")
    candidate = rng.choice(task.candidates)
    number = rng.choice([None, "0", "12.5", "2.5", "-0.125", "12.345", "1e400"])
    if rng.random() < 0.4:
        values = task.with_values(dict(fixed))
        try:
            operands = [Fraction(values[(candidate, k)]) for k in task.rule.operands]  # type: ignore[arg-type]
            number = str(task.rule.rounded(operands))
        except (TypeError, ValueError, ZeroDivisionError):
            pass
    return ParsedAnswer(decision="positive", candidate=candidate, number=number)


@pytest.mark.parametrize("seed", [1, 2])
def test_settled_admissions_are_the_plain_definitions(seed: int) -> None:
    rng = random.Random(seed)
    verdicts: Counter[Settled | None] = Counter()
    for task in _tasks():
        slots = task.all_slots()
        decision = [s for s in slots if s[1] in task.decision_facts()]
        for _ in range(60):
            chosen = rng.sample(slots, rng.randint(0, len(slots)))
            if rng.random() < 0.5:  # the evidence of a whole conversation: most records
                chosen = list(dict.fromkeys([*chosen, *rng.sample(decision, len(decision) // 2)]))
            fixed = {slot: _fixed_value(task, slot, rng) for slot in chosen}
            stated = {
                slot: _statement(task, slot, rng)
                for slot in rng.sample(decision, rng.randint(0, min(3, len(decision))))
            }
            parsed = _answer(task, fixed, rng)
            settled = settle_admission(task, fixed, stated, parsed)
            assert settled == _plain_settle(task, fixed, stated, parsed), (fixed, stated, parsed)
            verdicts[settled] += 1
    # every verdict occurs, so each path is compared
    assert min(verdicts[v] for v in ("sat", "unsat", None)) > 20, verdicts
