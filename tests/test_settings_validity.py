"""Defect validity verdicts against the brute-force evaluator, on random small instances."""

from __future__ import annotations

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
    statements = imprecise_statements(fact, task.values[slot])
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


@given(small_specs(), st.data())
def test_missed_validity_agrees(spec: TaskSpec, data: st.DataObject) -> None:
    task, checker = _setup(spec)
    role = data.draw(st.sampled_from(task.roles))
    defect = Defect(kind="missed", role=role, targeted_follow_up=missed_rule(), rationale="test")
    checks = checker.missed("missed", defect)
    brute = brute_force_differs(task, checker.gold, task.slots_of(role))
    assert _verdict(checks) == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)


@given(small_specs(), st.data())
def test_combined_validity_agrees(spec: TaskSpec, data: st.DataObject) -> None:
    task, checker = _setup(spec)
    roles = data.draw(st.permutations(task.roles))
    mis_role, inc_role, missed_role = roles[0], roles[1], roles[2]
    mis_slots = [
        (c, f)
        for (c, f), alts in task.alternatives.items()
        if task.facts[f].owner == mis_role
        for v in alts.values()
        if v != task.values[(c, f)]
    ]
    assume(mis_slots)
    m_slot = data.draw(st.sampled_from(sorted(mis_slots)))
    context, value = sorted(task.alternatives[m_slot].items(), key=str)[0]
    assume(value != task.values[m_slot])
    i_slot = data.draw(st.sampled_from(task.slots_of(inc_role)))
    statements = imprecise_statements(task.facts[i_slot[1]], task.values[i_slot])
    assume(statements)
    statement = statements[-1]
    defects = [
        Defect(
            kind="misaligned",
            role=mis_role,
            fact=m_slot[1],
            candidates=[m_slot[0]],
            first_reply=[
                StatedValue(
                    candidate=m_slot[0],
                    fact=m_slot[1],
                    context=context,
                    value=to_json_scalar(value),
                )
            ],
            targeted_follow_up=misaligned_rule(
                m_slot[1], [m_slot[0]], task.facts[m_slot[1]].context
            ),
            rationale="t",
        ),
        Defect(
            kind="incomplete",
            role=inc_role,
            fact=i_slot[1],
            candidates=[i_slot[0]],
            first_reply=[
                StatedValue(
                    candidate=i_slot[0],
                    fact=i_slot[1],
                    context=task.facts[i_slot[1]].context,
                    **statement.json_fields(),
                )
            ],  # type: ignore[arg-type]
            targeted_follow_up=incomplete_rule(i_slot[1], [i_slot[0]]),
            rationale="t",
        ),
        Defect(kind="missed", role=missed_role, targeted_follow_up=missed_rule(), rationale="t"),
    ]
    combined = checker.combined("mixed", defects)
    fact = task.facts[i_slot[1]]
    restrict = {i_slot: [v for v in fact.domain_values() if statement.contains(fact, v)]}
    hidden = [i_slot, *task.slots_of(missed_role)]
    brute = brute_force_differs(
        task, checker.gold, hidden, restrict=restrict, fixed={m_slot: value}
    )
    assume(brute.status != "undecided")
    assert combined.verdict == (Verdict.PROVED if brute.status == "found" else Verdict.REFUTED)
