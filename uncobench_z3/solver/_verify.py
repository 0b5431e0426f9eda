"""``verify``: structure, then the solver proofs, as one report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, field_serializer

from ..spec import Answer, Outcome, TaskSpec, TypedTask, check_structure
from ._checks import Checker, Evidence
from ._engine import TaskSolver
from ._factory import DEFAULT_BUDGET, SolverBudget, SolverContext
from ._status import CheckResult, Verdict, combine


class VerificationReport(BaseModel):
    """Everything ``uncobench verify`` says about one document."""

    source: str
    document: Literal["spec", "group", "manifest"] = "spec"
    """what was verified: a spec, a task group, or a benchmark's manifest (its content hash)"""
    task_id: str | None = None
    gold: Answer | None = None
    verdict: Verdict
    checks: list[CheckResult]
    notes: list[str] = Field(default_factory=list)

    @field_serializer("verdict")
    def _dump_verdict(self, verdict: Verdict) -> str:
        return verdict.label

    @property
    def exit_code(self) -> int:
        return {Verdict.PROVED: 0, Verdict.REFUTED: 1, Verdict.UNKNOWN: 3}[self.verdict]


@dataclass
class TaskProof:
    """A verified task and the live solver its checks ran on (for further queries)."""

    task: TypedTask | None
    gold: Outcome | None
    checker: Checker | None
    report: VerificationReport


def prove_task(
    spec: TaskSpec,
    source: str = "<memory>",
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    context: SolverContext | None = None,
    evidence: Evidence = "verdict",
) -> TaskProof:
    """Run every check of a spec; keep the solver for the checks of later stages.

    ``context`` is the batch's Z3 context (a private one without it); ``evidence`` chooses
    verdict-only queries (the default: evidence only for what is refuted) or witnesses and
    cores for every check (``"full"``, implied by ``certificates``).
    """
    structure = check_structure(spec)
    if not structure.ok:
        check = CheckResult(
            name="structure",
            kind="structure",
            verdict=Verdict.REFUTED,
            summary=f"{len(structure.problems)} structural problem(s)",
            problems=structure.problems,
        )
        report = VerificationReport(
            source=source,
            task_id=spec.id,
            verdict=Verdict.REFUTED,
            checks=[check],
            notes=["logical checks were skipped: fix the structure first"],
        )
        return TaskProof(None, None, None, report)
    task = structure.task
    assert task is not None
    checks = [
        CheckResult(
            name="structure",
            kind="structure",
            verdict=Verdict.PROVED,
            summary="counts, references, domains, units and denominators are consistent",
        )
    ]
    if not task.has_values:
        report = VerificationReport(
            source=source,
            task_id=spec.id,
            verdict=Verdict.PROVED,
            checks=checks,
            notes=["the spec holds no records: only the structural checks ran"],
        )
        return TaskProof(task, None, None, report)
    gold = task.outcome()
    solver = TaskSolver(task, gold if gold.kind != "ambiguous" else None, budget, context)
    checker = Checker(solver, certificates, evidence)
    notes: list[str] = []
    if gold.kind == "ambiguous":
        checks.append(checker.uniqueness_check())
        notes.append("role necessity was skipped: the instance has no unique answer")
        report = VerificationReport(
            source=source,
            task_id=spec.id,
            verdict=combine([c.verdict for c in checks]),
            checks=checks,
            notes=notes,
        )
        return TaskProof(task, None, checker, report)
    checks.append(checker.gold_check(gold))
    checks.append(checker.uniqueness_check())
    for role in task.roles:
        checks.append(checker.necessity_check(role, gold))
    report = VerificationReport(
        source=source,
        task_id=spec.id,
        gold=Answer.from_outcome(task, gold),
        verdict=combine([c.verdict for c in checks]),
        checks=checks,
        notes=notes,
    )
    return TaskProof(task, gold, checker, report)


def verify_spec(
    spec: TaskSpec,
    source: str = "<memory>",
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    context: SolverContext | None = None,
    evidence: Evidence = "verdict",
) -> VerificationReport:
    """The report of :func:`prove_task`."""
    return prove_task(spec, source, budget, certificates, context, evidence).report
