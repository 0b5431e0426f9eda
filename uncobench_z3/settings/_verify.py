"""Re-proving a task group: the instance, then every defect of every setting.

Everything is recomputed from the group's data (spec, records, settings); the figures the
group stores in its proofs (gold chances, guessing floors) must equal the recomputed ones.
"""

from __future__ import annotations

from ..solver import (
    DEFAULT_BUDGET,
    CheckResult,
    Evidence,
    SolverBudget,
    SolverContext,
    Verdict,
    VerificationReport,
    combine,
    prove_task,
)
from ..spec import Answer, TypedTask
from ._guessing import floors_check
from ._model import TaskGroup
from ._shared import shared_defects_check
from ._validity import DefectChecker, stored_chances_check


def verify_group(
    group: TaskGroup,
    source: str = "<memory>",
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    context: SolverContext | None = None,
    evidence: Evidence = "verdict",
) -> VerificationReport:
    """Prove the group's instance and the validity of each defect again, from its data.

    ``context`` and ``evidence`` as for :func:`~uncobench_z3.solver.prove_task`.
    """
    return verify_group_task(group, source, budget, certificates, context, evidence)[0]


def verify_group_task(
    group: TaskGroup,
    source: str = "<memory>",
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    context: SolverContext | None = None,
    evidence: Evidence = "verdict",
) -> tuple[VerificationReport, TypedTask | None]:
    """:func:`verify_group`, and the typed task its structure check made (``None`` when the
    spec is not structurally valid), for later checks of the same group to reuse."""
    proof = prove_task(group.spec, source, budget, certificates, context, evidence)
    checks = list(proof.report.checks)
    notes = list(proof.report.notes)
    if proof.gold is None or proof.checker is None or proof.task is None:
        return proof.report.model_copy(update={"document": "group"}), proof.task
    computed = Answer.from_outcome(proof.task, proof.gold)
    same = computed == group.gold
    checks.append(
        CheckResult(
            name="gold-identical",
            kind="consistency",
            verdict=Verdict.PROVED if same else Verdict.REFUTED,
            summary=(
                "every setting shares the instance's gold answer"
                if same
                else f"the group states {group.gold.text()}, the instance gives {computed.text()}"
            ),
        )
    )
    defect_checker = DefectChecker(proof.checker, proof.gold)
    for setting in group.settings:
        if not setting.available:
            notes.append(f"setting {setting.name} unavailable: {setting.reason}")
            continue
        roles = [d.role for d in setting.defects]
        if setting.name == "mixed":
            kinds = sorted(d.kind for d in setting.defects)
            if kinds != ["incomplete", "misaligned", "missed"] or len(set(roles)) != 3:
                checks.append(
                    CheckResult(
                        name="validity-mixed-shape",
                        kind="consistency",
                        setting="mixed",
                        verdict=Verdict.REFUTED,
                        summary="mixed needs one misaligned, one incomplete and one missed "
                        "defect on three different roles",
                    )
                )
        elif setting.name != "reliable" and [d.kind for d in setting.defects] != [setting.name]:
            checks.append(
                CheckResult(
                    name=f"validity-{setting.name}-shape",
                    kind="consistency",
                    setting=setting.name,
                    verdict=Verdict.REFUTED,
                    summary=f"the {setting.name} setting needs exactly one {setting.name} defect",
                )
            )
        for defect in setting.defects:
            checks += defect_checker.check(setting.name, defect)
        if setting.name == "mixed" and setting.defects:
            checks.append(defect_checker.face_value_reading("mixed", list(setting.defects)))
    stored = group.proofs
    checks.append(stored_chances_check(checks, stored.gold_chances if stored else None))
    checks.append(
        floors_check(
            proof.task, proof.gold, group.settings, stored.guessing_floors if stored else None
        )
    )
    if stored is not None and stored.shared_defects is not None:
        checks.append(shared_defects_check(group.settings, stored.shared_defects))
    report = VerificationReport(
        source=source,
        document="group",
        task_id=group.id,
        gold=computed,
        verdict=combine([c.verdict for c in checks]),
        checks=checks,
        notes=notes,
    )
    return report, proof.task
