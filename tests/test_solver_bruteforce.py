"""The solver's verdicts against an independent brute-force evaluator on small domains."""

from __future__ import annotations

from itertools import combinations

from hypothesis import assume, given

from tests.strategies import small_specs
from uncobench_z3.solver import (
    GOAL_TWO_ELIGIBLE,
    Checker,
    TaskSolver,
    Verdict,
    brute_force_differs,
    verify_spec,
)
from uncobench_z3.spec import TaskSpec, TypedTask, check_structure


def _task(spec: TaskSpec) -> TypedTask:
    report = check_structure(spec)
    assert report.ok, report.problems  # the strategy must only produce valid specs
    assert report.task is not None
    return report.task


@given(small_specs())
def test_uniqueness_agrees(spec: TaskSpec) -> None:
    task = _task(spec)
    ts = TaskSolver(task)
    result = ts.query("u", task.all_slots(), GOAL_TWO_ELIGIBLE)
    eligible = [c for c in task.candidates if task.eligible(c, task.values)]
    assert (result.status == "sat") == (len(eligible) >= 2)


@given(small_specs())
def test_necessity_alone_agrees(spec: TaskSpec) -> None:
    task = _task(spec)
    gold = task.outcome()
    assume(gold.kind != "ambiguous")
    checker = Checker(TaskSolver(task, gold), evidence="full")
    for role in task.roles:
        solver_result = checker.hidden_query(frozenset({role}))
        brute = brute_force_differs(task, gold, task.slots_of(role))
        assert brute.status != "undecided"
        assert solver_result.status == ("sat" if brute.status == "found" else "unsat"), role
        if solver_result.status == "sat":
            # the witness really differs, re-checked by exact evaluation
            witness = checker.ts.checked_outcome(solver_result)
            assert not witness.same_output(gold)


def _can_qualify(task: TypedTask, candidate: str, hidden_roles: frozenset[str]) -> bool:
    """Brute force, factored per fact: eligibility is a conjunction of per-fact conditions,
    so a candidate can qualify iff every fact has a value (free if hidden, else recorded)
    that satisfies all conditions on it."""
    for key, fact in task.facts.items():
        conditions = [c for c in task.conditions if c.fact == key]
        if not conditions:
            continue
        options = (
            fact.domain_values() if fact.owner in hidden_roles else [task.values[(candidate, key)]]
        )
        if not any(all(c.holds(v) for c in conditions) for v in options):
            return False
    return True


@given(small_specs())
def test_joint_necessity_agrees_when_nobody_is_eligible(spec: TaskSpec) -> None:
    task = _task(spec)
    gold = task.outcome()
    assume(gold.kind == "none")

    def changes(roles: frozenset[str]) -> bool:
        return any(_can_qualify(task, c, roles) for c in task.candidates)

    expected = {}
    for role in task.roles:
        others = [r for r in task.roles if r != role]
        expected[role] = any(
            changes(frozenset(group) | {role}) and not changes(frozenset(group))
            for size in range(len(others) + 1)
            for group in combinations(others, size)
        )
    report = verify_spec(spec)
    verdicts = {c.role: c.verdict for c in report.checks if c.kind == "necessity"}
    for role in task.roles:
        assert verdicts[role] == (Verdict.PROVED if expected[role] else Verdict.REFUTED), role
