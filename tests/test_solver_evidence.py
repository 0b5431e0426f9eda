"""Verdict-only and full-evidence proofs agree; batch contexts, the fallback solver and the
C-API model reader change no answer."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import assume, given

from tests.strategies import small_specs
from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.settings import perturb, verify_group
from uncobench_z3.solver import (
    GOAL_DIFFERS,
    Checker,
    CheckResult,
    ModelReader,
    QueryResult,
    SolverContext,
    TaskSolver,
    Verdict,
    VerificationReport,
    prove_task,
    slot_var,
    verify_spec,
)
from uncobench_z3.spec import TaskSpec, TypedTask, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library()


def _verdicts(report: VerificationReport) -> list[tuple[object, ...]]:
    """What must not depend on the evidence mode: each check's verdict, and how necessity
    was proved (alone, or jointly with which roles)."""
    return [
        (
            c.name,
            c.kind,
            c.role,
            c.setting,
            c.verdict,
            (c.witness or {}).get("mode"),
            (c.witness or {}).get("with_roles"),
        )
        for c in report.checks
    ]


def _generated_specs(count: int, seed: int) -> list[TaskSpec]:
    generator = SpecGenerator(LIBRARY, seed)
    specs: list[TaskSpec] = []
    index = 0
    while len(specs) < count:
        draft = generator.draft(index, random.Random(f"evidence:{index}").random() < 0.3)
        index += 1
        try:
            specs.append(instantiate(draft, seed))
        except InstantiationError:
            continue
    return specs


GENERATED = _generated_specs(12, 5)


def _task(spec: TaskSpec) -> TypedTask:
    task = check_structure(spec).task
    assert task is not None
    return task


@given(small_specs())
def test_verdict_only_and_full_evidence_agree_on_random_specs(spec: TaskSpec) -> None:
    verdict = verify_spec(spec)
    full = verify_spec(spec, evidence="full")
    assert _verdicts(verdict) == _verdicts(full)
    assert verdict.verdict == full.verdict


@pytest.mark.parametrize("index", range(len(GENERATED)))
def test_verdict_only_and_full_evidence_agree_on_generated_groups(index: int) -> None:
    result = perturb(GENERATED[index], seed=5)
    assert result.group is not None
    verdict = verify_group(result.group)
    full = verify_group(result.group, evidence="full")
    assert _verdicts(verdict) == _verdicts(full)
    assert verdict.verdict == full.verdict == Verdict.PROVED
    # full evidence: every satisfiable proof has a witness with the output it gives; a gold
    # chance is an exact count, not a solver query, and is the same in both modes
    chances = {c.name: c.witness for c in verdict.checks if c.name.endswith("-chance")}
    for check in full.checks:
        if check.name.endswith("-chance"):
            assert check.witness == chances.pop(check.name) and check.witness
        elif check.kind in ("necessity", "validity") and check.verdict == Verdict.PROVED:
            assert check.witness is not None and check.witness["outcome"]
    assert not chances


def _refuted(report: VerificationReport) -> list[CheckResult]:
    return [c for c in report.checks if c.verdict == Verdict.REFUTED]


def test_an_empty_core_says_no_record_matters() -> None:
    # nobody can meet "at least 41 years" in a 0-40 domain: every role is refuted with an
    # empty core, which read "the other roles' facts fix the answer ()"
    data = load_spec(ROOT / "examples/mining_supervisor.json").model_dump(mode="json")
    (condition,) = [c for c in data["conditions"] if c["fact"] == "hardrock_years"]
    condition["value"] = 41
    report = verify_spec(TaskSpec.model_validate(data))
    refuted = _refuted(report)
    assert len(refuted) == 6 and all(check.core == [] for check in refuted)
    for check in refuted:
        assert "no value of any record changes the answer" in check.summary
        assert "()" not in check.summary


def test_joint_necessity_keeps_its_verdict_when_its_evidence_runs_out_of_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Full evidence asks a proved joint hiding again for its model; when that second ask
    # ran out of time the check read the missing model (an AssertionError, exit 4) instead
    # of keeping the verdict without a completion, as a role necessary alone does.
    ask = TaskSolver.query

    def out_of_time(
        self: TaskSolver,
        name: str,
        pinned: Any,
        goal: str | None = None,
        extras: Any = (),
        want_core: bool = True,
        want_model: bool = True,
    ) -> QueryResult:
        result = ask(self, name, pinned, goal, extras, want_core, want_model)
        if "+" in name and want_model and result.status == "sat":  # a joint hiding's model
            reason = "timeout: the query ran past 1 ms"
            return replace(result, status="unknown", codes=None, solver_outcome=None, reason=reason)
        return result

    spec = load_spec(ROOT / "examples/healthcare_nurse_manager.json")
    expected = _verdicts(verify_spec(spec))
    monkeypatch.setattr(TaskSolver, "query", out_of_time)
    report = prove_task(spec, evidence="full").report
    assert _verdicts(report) == expected
    joint = [c for c in report.checks if c.witness and c.witness.get("mode") == "jointly"]
    assert joint and all("completion" not in c.witness for c in joint if c.witness)


def test_refuted_checks_carry_evidence_in_verdict_mode() -> None:
    unnecessary = verify_spec(load_spec(ROOT / "examples/invalid/unnecessary_role.json"))
    (check,) = _refuted(unnecessary)
    assert check.core  # the pinned facts that fix the answer without the role
    two = verify_spec(load_spec(ROOT / "examples/invalid/two_eligible.json"))
    (check,) = _refuted(two)
    assert check.witness == {"eligible": ["vance", "natarajan"]}


def test_proved_checks_carry_no_model_in_verdict_mode() -> None:
    report = verify_spec(load_spec(ROOT / "examples/mining_supervisor.json"))
    necessity = [c for c in report.checks if c.kind == "necessity"]
    assert necessity and all(c.verdict == Verdict.PROVED for c in necessity)
    assert all(c.witness == {"mode": "alone", "hidden_roles": [c.role]} for c in necessity)


def test_a_verdict_only_answer_carries_neither_evidence_nor_a_reason() -> None:
    task = check_structure(load_spec(ROOT / "examples/mining_supervisor.json")).task
    assert task is not None
    solver = TaskSolver(task, task.outcome())
    every_slot = list(task.all_slots())
    sat = solver.query("sat", every_slot, want_core=False, want_model=False)
    assert sat.status == "sat" and sat.codes is None and sat.reason is None
    # (a reason is an unknown answer's: it used to be Z3's "unknown" text on every sat answer)
    full = solver.query("sat, model read", every_slot)  # (asked again: a model is wanted)
    assert full.status == "sat" and full.codes is not None and full.reason is None
    unsat = solver.query("unsat", every_slot, extras=["false"], want_core=False)
    assert unsat.status == "unsat" and unsat.core is None and unsat.reason is None


def test_a_shared_batch_context_changes_no_verdict() -> None:
    with SolverContext() as context:
        batch = [verify_spec(spec, context=context) for spec in GENERATED]
    private = [verify_spec(spec) for spec in GENERATED]
    assert [_verdicts(r) for r in batch] == [_verdicts(r) for r in private]


def test_witnesses_depend_only_on_the_batch_content() -> None:
    """The same batch, run again on a new context after other work, gives the same bytes."""

    def run() -> list[str]:
        with SolverContext() as context:
            reports = [verify_spec(s, context=context, evidence="full") for s in GENERATED[:4]]
        return [r.model_dump_json() for r in reports]

    first = run()
    with SolverContext() as other:
        for spec in GENERATED[4:]:
            verify_spec(spec, context=other, evidence="full")
    assert run() == first


@given(small_specs())
def test_answers_read_off_by_monotonicity_match_the_solver(spec: TaskSpec) -> None:
    task = _task(spec)
    gold = task.outcome()
    assume(gold.kind == "none")
    checker = Checker(TaskSolver(task, gold))
    for role in task.roles:
        checker.necessity_check(role, gold)
    implied = [(roles, r) for roles, r in checker._hidden.items() if r.implied_by]
    fresh = Checker(TaskSolver(task, gold))
    for roles, result in implied:
        asked = fresh.ts.query("check", fresh._hiding(roles)[1], GOAL_DIFFERS, (), False, False)
        assert asked.status == result.status


def test_an_unknown_from_the_kernel_is_asked_of_the_combined_solver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = load_spec(ROOT / "examples/mining_supervisor.json")
    task = _task(spec)
    gold = task.outcome()
    ts = TaskSolver(task, gold)
    kernel = ts.solver
    original = TaskSolver._check

    def kernel_gives_up(
        self: TaskSolver, solver: z3.Solver, literals: list[str]
    ) -> tuple[z3.CheckSatResult, bool]:
        if solver is kernel:
            return z3.unknown, False
        return original(self, solver, literals)

    monkeypatch.setattr(TaskSolver, "_check", kernel_gives_up)
    role = task.roles[0]
    hidden = [s for s in task.all_slots() if task.facts[s[1]].owner != role]
    sat = ts.query("hide", hidden, GOAL_DIFFERS)
    assert sat.status == "sat" and not ts.checked_outcome(sat).same_output(gold)
    unsat = ts.query("all", task.all_slots(), GOAL_DIFFERS)
    assert unsat.status == "unsat" and unsat.core
    assert ts._fallback is not None


def test_a_core_asked_for_after_the_verdict_never_turns_the_verdict_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Necessity is refuted by a verdict-only query, then asked again for its core: if the
    budget runs out on that second query, the proved verdict stands and says the core is
    missing (it was stored as unknown over the proof, and the check showed an empty core)."""
    task = _task(load_spec(ROOT / "examples/invalid/unnecessary_role.json"))
    gold = task.outcome()
    original = TaskSolver.query

    def core_runs_out(self: TaskSolver, *args: Any, **kwargs: Any) -> QueryResult:
        answer = original(self, *args, **kwargs)
        want_core = kwargs.get("want_core", args[4] if len(args) > 4 else True)
        if want_core and answer.status == "unsat":
            return replace(answer, status="unknown", core=None, reason="timeout")
        return answer

    monkeypatch.setattr(TaskSolver, "query", core_runs_out)
    checker = Checker(TaskSolver(task, gold))
    refuted = [
        check
        for check in (checker.necessity_check(role, gold) for role in task.roles)
        if check.verdict == Verdict.REFUTED
    ]
    assert refuted, "the example has a role that is not necessary"
    for check in refuted:
        assert check.core == []
        assert "the core could not be read: timeout" in check.summary
        assert checker._hidden[frozenset({check.role})].status == "unsat"
    monkeypatch.undo()
    plain = Checker(TaskSolver(task, gold))
    for check in refuted:
        again = plain.necessity_check(check.role, gold)
        assert again.verdict == Verdict.REFUTED and again.core


@pytest.mark.parametrize("index", range(4))
def test_model_reader_agrees_with_z3py(index: int) -> None:
    task = _task(GENERATED[index])
    ts = TaskSolver(task, task.outcome())
    for role in task.roles:  # the first role whose hiding leaves the answer open
        hidden = [s for s in task.all_slots() if task.facts[s[1]].owner != role]
        if ts.query("q", hidden, GOAL_DIFFERS, (), False, False).status == "sat":
            break
    else:
        pytest.fail("no role is necessary alone")
    model = ts.solver.model()
    names = [(slot_var(s), task.facts[s[1]].type == "bool") for s in task.all_slots()]
    expected: list[int | bool] = [
        z3.is_true(model.eval(z3.Bool(n, ts.solver.ctx), model_completion=True))
        if is_bool
        else model.eval(z3.Int(n, ts.solver.ctx), model_completion=True).as_long()
        for n, is_bool in names
    ]
    assert ModelReader(ts.solver).read(names) == expected
