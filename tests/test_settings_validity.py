"""Defect validity verdicts against the brute-force evaluator, on random small instances.

(The Mixed face-value reading and the gold chance are checked the same way in
``tests/test_guessing.py`` and ``tests/test_chance.py``.)"""

from __future__ import annotations

from itertools import islice

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.strategies import small_specs
from uncobench_z3.settings import (
    Defect,
    DefectChecker,
    StatedValue,
    imprecise_statements,
    incomplete_rule,
    misaligned_rule,
    missed_rule,
)
from uncobench_z3.solver import Checker, TaskSolver, Verdict, brute_force_differs
from uncobench_z3.spec import Slot, TaskSpec, TypedTask, check_structure, to_json_scalar


def _setup(spec: TaskSpec) -> tuple[TypedTask, DefectChecker]:
    report = check_structure(spec)
    assert report.task is not None, report.problems
    task = report.task
    gold = task.outcome()
    assume(gold.kind != "ambiguous")
    return task, DefectChecker(Checker(TaskSolver(task, gold)), gold)


def _truth(task: TypedTask, fact: str) -> list[StatedValue]:
    return [
        StatedValue(
            candidate=c,
            fact=fact,
            context=task.facts[fact].context,
            value=to_json_scalar(task.values[(c, fact)]),
        )
        for c in task.candidates
    ]


def _verdict(checks: list) -> Verdict:  # type: ignore[type-arg]
    return next(c for c in checks if c.kind == "validity").verdict


@given(small_specs(), st.data())
def test_misaligned_validity_agrees(spec: TaskSpec, data: st.DataObject) -> None:
    task, checker = _setup(spec)
    options = [
        (slot, ctx, v)
        for slot, alts in task.alternatives.items()
        for ctx, v in alts.items()
        if v != task.values[slot]
    ]
    assume(options)
    slot, context, value = data.draw(st.sampled_from(sorted(options, key=str)))
    reply = [
        s
        if s.candidate != slot[0]
        else s.model_copy(update={"context": context, "value": to_json_scalar(value)})
        for s in _truth(task, slot[1])
    ]
    defect = Defect(
        kind="misaligned",
        role=task.facts[slot[1]].owner,
        fact=slot[1],
        candidates=[slot[0]],
        first_reply=reply,
        targeted_follow_up=misaligned_rule(slot[1], [slot[0]], task.facts[slot[1]].context),
        resolved_reply=_truth(task, slot[1]),
        rationale="test",
    )
    checks = checker.misaligned("misaligned", defect)
    assert all(c.verdict == Verdict.PROVED for c in checks if c.kind == "consistency")
    brute = brute_force_differs(task, checker.gold, [], fixed={slot: value})
    assert _verdict(checks) == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)


@given(small_specs(), st.data())
def test_incomplete_validity_agrees(spec: TaskSpec, data: st.DataObject) -> None:
    task, checker = _setup(spec)
    slot: Slot = data.draw(st.sampled_from(task.all_slots()))
    fact = task.facts[slot[1]]
    statements = list(islice(imprecise_statements(fact, task.values[slot]), 20))
    assume(statements)
    statement = data.draw(st.sampled_from(statements))
    assert statement.contains(fact, task.values[slot])  # truthful by construction
    reply = [
        s
        if s.candidate != slot[0]
        else StatedValue(
            candidate=slot[0], fact=slot[1], context=s.context, **statement.json_fields()
        )  # type: ignore[arg-type]
        for s in _truth(task, slot[1])
    ]
    defect = Defect(
        kind="incomplete",
        role=fact.owner,
        fact=slot[1],
        candidates=[slot[0]],
        first_reply=reply,
        targeted_follow_up=incomplete_rule(slot[1], [slot[0]]),
        resolved_reply=_truth(task, slot[1]),
        rationale="test",
    )
    checks = checker.incomplete("incomplete", defect)
    allowed = [v for v in fact.domain_values() if statement.contains(fact, v)]
    brute = brute_force_differs(task, checker.gold, [slot], restrict={slot: allowed})
    assert _verdict(checks) == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)
    # the statements offered have the shape the records check requires
    assert next(c for c in checks if c.kind == "consistency").verdict == Verdict.PROVED


@given(small_specs(), st.data())
def test_missed_validity_agrees(spec: TaskSpec, data: st.DataObject) -> None:
    task, checker = _setup(spec)
    role = data.draw(st.sampled_from(task.roles))
    defect = Defect(kind="missed", role=role, targeted_follow_up=missed_rule(), rationale="test")
    checks = checker.missed("missed", defect)
    brute = brute_force_differs(task, checker.gold, task.slots_of(role))
    assert _verdict(checks) == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)
