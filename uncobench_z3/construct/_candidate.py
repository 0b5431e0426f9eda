"""One candidate group through stages 3-7: instantiate, prove, perturb, render, read back.

:func:`process_candidate` is a plain function of serializable inputs with no hidden state,
so the pipeline can run it in worker processes (or on a cluster) and get the same bytes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal, NamedTuple, Protocol

from pydantic import BaseModel

from ..settings import DefectBalance, SettingName, TaskGroup, group_digest, perturb
from ..solver import DEFAULT_BUDGET, SolverBudget, SolverContext, Verdict
from ..spec import TypedTask
from ._full_information import validate_rendering
from ._generate import Draft
from ._instantiate import InstantiationError, instantiate
from ._llm_stages import (
    LLMStages,
    SpecRejected,
    generate_spec,
    render_with_llm,
    run_with_model,
    validate_with_llm,
)
from ._render import render_task

Stage = Literal["spec_validation", "logical_verification", "rendering_validation"]


class StoredProofs(NamedTuple):
    """What a build stores in a group's proofs for an evaluation to read (each None: nothing
    stored): ``proofs.minimum_rounds`` and ``proofs.decision_changes``."""

    minimum_rounds: dict[SettingName, int] | None
    decision_changes: dict[str, dict[str, int | None]] | None = None

    def computed(self) -> dict[str, object]:
        """The proofs' fields to set: those computed (a None is not stored)."""
        return {name: value for name, value in self._asdict().items() if value is not None}


class MinimumRounds(Protocol):
    """Setting -> the fewest rounds an ideal agent needs in it (a setting where it cannot
    settle the answer left out); None when the solver left a verdict undecided within its
    budget. The evaluation layer's :func:`uncobench_z3.evaluation.settings_minimum_rounds`,
    or :func:`uncobench_z3.evaluation.settings_stored_proofs` (which the command line hands
    down: the minimum rounds and the decision records' first changes, as
    :class:`StoredProofs`); construction does not import evaluation. A module-level
    function, so that worker processes and Ray tasks receive it by reference.

    ``task``: the group's typed task, when the caller has made it already (the structure
    check it comes from is a twentieth of the search)."""

    def __call__(
        self, group: TaskGroup, task: TypedTask | None = None
    ) -> dict[SettingName, int] | StoredProofs | None: ...


def stored_proofs_of(found: dict[SettingName, int] | StoredProofs | None) -> StoredProofs:
    """What a :class:`MinimumRounds` returned, as :class:`StoredProofs`."""
    return found if isinstance(found, StoredProofs) else StoredProofs(found)


def stores_decision_changes(compute: MinimumRounds | None) -> bool:
    """Whether ``compute`` gives decision changes to store (it says so by an attribute)."""
    return bool(getattr(compute, "stores_decision_changes", False))


REQUIRED_SETTINGS = ("misaligned", "incomplete", "missed")


class CandidateOutcome(BaseModel):
    """What became of one candidate group (a line of the build's work files)."""

    index: int
    domain: str
    operation: str
    scenario: str
    plan_none: bool
    retained: bool
    stage: Stage | None = None
    reason: str | None = None
    attempts: int = 0
    group_json: str | None = None
    group_digest: str | None = None
    """the retained group's content hash (:func:`~uncobench_z3.settings.group_digest`), for the
    manifest: made here, in the worker that holds the group, not by serialising it again"""
    redrawn: tuple[str, ...] = ()
    """structural problem codes of drafts the generator threw away before this one"""


def _failure_reason(report_checks: list[tuple[str, Verdict, str]]) -> str:
    for name, verdict, summary in report_checks:
        if verdict != Verdict.PROVED:
            kind = name.split("-")[0]
            return f"{kind}: {summary}"
    return "not well-posed"


def process_candidate(
    draft: Draft,
    seed: int,
    index: int,
    attempts: int = 3,
    budget: SolverBudget = DEFAULT_BUDGET,
    stages: LLMStages | None = None,
    recent: tuple[str, ...] = (),
    context: SolverContext | None = None,
    minimum_rounds: MinimumRounds | None = None,
) -> CandidateOutcome:
    """Instantiate (up to ``attempts`` times), prove, perturb, render and validate a draft.

    ``context`` is the Z3 context of the candidate's batch (a private one without it).
    ``minimum_rounds``, when given, computes what a kept group stores in
    ``proofs.minimum_rounds`` (and ``proofs.decision_changes``: :class:`StoredProofs`).

    With LLM ``stages`` the spec is written by the generator model (one repair attempt), the
    records are phrased by the renderer model and the full-information check is run by the
    validator model; model errors that retries did not cure propagate (the build stops and
    can be resumed), while a spec or rendering that fails its checks is a counted rejection.
    """
    stages = stages or LLMStages()
    if stages.generator is not None:
        try:
            draft = asyncio.run(
                run_with_model(stages.generator, generate_spec, draft, list(recent))
            )
        except SpecRejected as exc:
            return CandidateOutcome(
                index=index,
                domain=draft.domain,
                operation=draft.operation,
                scenario=draft.scenario_id,
                plan_none=draft.plan_none,
                retained=False,
                stage="spec_validation",
                reason=f"generated spec: {exc.problems[0]}"
                if exc.problems
                else "generated spec rejected",
            )
    base = {
        "index": index,
        "domain": draft.domain,
        "operation": draft.operation,
        "scenario": draft.scenario_id,
        "plan_none": draft.plan_none,
    }
    reason = "no attempt made"
    for attempt in range(attempts):
        try:
            spec = instantiate(draft, seed, attempt, budget, context)
        except InstantiationError as exc:
            reason = f"instantiation: {exc}"
            continue
        balance = DefectBalance.rotating(index)
        result = perturb(spec, seed=seed, balance=balance, budget=budget, context=context)
        if result.group is None:
            checks = [(c.name, c.verdict, c.summary) for c in result.report.checks]
            reason = _failure_reason(checks)
            continue
        missing = [name for name in REQUIRED_SETTINGS if name in result.unavailable]
        if "mixed" in result.unavailable and result.group.gold.eligible:
            missing.append("mixed")
        if missing:
            reason = f"settings: no valid {', '.join(missing)} defect"
            continue
        task = result.task
        assert task is not None
        rendered = render_task(task, seed)
        if stages.renderer is not None:
            rendered, problems = asyncio.run(
                run_with_model(stages.renderer, render_with_llm, task, rendered)
            )
        else:
            problems = validate_rendering(task, rendered, task.outcome(), seed)
        validator = stages.validator or stages.renderer
        if not problems and validator is not None:
            problems = asyncio.run(
                run_with_model(validator, validate_with_llm, task, rendered, task.outcome(), seed)
            )
        if problems:
            return CandidateOutcome(
                **base,
                retained=False,
                stage="rendering_validation",
                reason=problems[0],
                attempts=attempt + 1,
            )
        group = result.group.model_copy(
            update={
                # (a model's rendering stores no places: its group's bytes are as before)
                "rendered": rendered.model_dump(
                    mode="json", exclude={"faithful"} if rendered.faithful is None else None
                ),
                "provenance": {
                    "scenario": draft.scenario_id,
                    "domain": draft.domain,
                    "operation": draft.operation,
                    "index": index,
                    "attempt": attempt,
                    **stages.describe(),
                },
            }
        )
        # None (the solver left a verdict undecided, or the true records do not give gold):
        # nothing is stored, and an evaluation of the group computes it itself
        stored = stored_proofs_of(minimum_rounds(group, task)) if minimum_rounds else None
        update = stored.computed() if stored else {}
        if update and group.proofs is not None:
            proofs = group.proofs.model_copy(update=update)
            group = group.model_copy(update={"proofs": proofs})
        return CandidateOutcome(
            **base,
            retained=True,
            attempts=attempt + 1,
            group_json=compact_json(group.model_dump(mode="json", exclude_none=True)),
            group_digest=group_digest(group),
        )
    return CandidateOutcome(
        **base, retained=False, stage="logical_verification", reason=reason, attempts=attempts
    )


def compact_json(data: object) -> str:
    """One JSON Lines line: compact, key order as given, exact (no floats anywhere)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
