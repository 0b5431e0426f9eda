"""Derive the paired settings of a verified instance, each defect with its proof.

The designated role, fact and candidate of each defect are chosen deterministically for a
seed: options are ordered by how often their fact type and role have already carried that
kind of defect in the batch (:class:`DefectBalance`), ties broken by a seeded shuffle, and
the first option whose validity the solver proves is taken. Only roles proved necessary
*alone* carry defects. When no option of a kind is valid, the setting is marked unavailable
with the reason (the construction pipeline then re-instantiates or drops the instance).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from ..solver import (
    DEFAULT_BUDGET,
    CheckResult,
    SolverBudget,
    TaskProof,
    Verdict,
    VerificationReport,
    combine,
    prove_task,
)
from ..spec import Answer, Outcome, TaskSpec, TypedTask, to_json_scalar
from ._followup import incomplete_rule, misaligned_rule, missed_rule
from ._imprecise import Imprecision, imprecise_statements
from ._model import SETTING_NAMES, Defect, ProofSummary, Setting, StatedValue, TaskGroup
from ._validity import DefectChecker

MAX_VALIDITY_QUERIES = 60
MIXED_POOL = 4
T = TypeVar("T")


@dataclass
class DefectBalance:
    """How often each (defect kind, fact type) and (defect kind, role name) was used."""

    by_type: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_role: Counter[tuple[str, str]] = field(default_factory=Counter)

    def score(self, kind: str, fact_type: str, role_name: str) -> int:
        return self.by_type[(kind, fact_type)] + self.by_role[(kind, role_name)]

    def record(self, task: TypedTask, defect: Defect) -> None:
        fact_type = task.facts[defect.fact].type if defect.fact else "role"
        self.by_type[(defect.kind, fact_type)] += 1
        self.by_role[(defect.kind, task.role_name(defect.role))] += 1


@dataclass
class Perturbation:
    """The result of :func:`perturb`: the group (when the base proofs hold) and the report."""

    group: TaskGroup | None
    report: VerificationReport
    unavailable: dict[str, str] = field(default_factory=dict)


def _true_values(task: TypedTask, fact: str) -> list[StatedValue]:
    required = task.facts[fact].context
    return [
        StatedValue(
            candidate=c, fact=fact, context=required, value=to_json_scalar(task.values[(c, fact)])
        )
        for c in task.candidates
    ]


class _Chooser:
    def __init__(self, proof: TaskProof, seed: int, balance: DefectBalance) -> None:
        assert proof.task is not None and proof.gold is not None and proof.checker is not None
        self.task: TypedTask = proof.task
        self.gold: Outcome = proof.gold
        self.checks = DefectChecker(proof.checker, proof.gold)
        self.balance = balance
        self.rng = random.Random(f"{seed}:{self.task.id}")
        self.queries = 0
        self._validity: dict[str, bool] = {}
        self.alone = [
            c.role
            for c in proof.report.checks
            if c.kind == "necessity"
            and c.verdict == Verdict.PROVED
            and c.role
            and c.witness is not None
            and c.witness.get("mode") == "alone"
        ]

    def _ordered(self, options: list[tuple[str, str, str, T]]) -> list[T]:
        """Options (kind, fact type, role, payload) by balance score, then a seeded shuffle."""
        keyed = [
            (self.balance.score(kind, ftype, self.task.role_name(role)), self.rng.random(), i)
            for i, (kind, ftype, role, _) in enumerate(options)
        ]
        return [options[i][3] for _, _, i in sorted(keyed)]

    # -- option generators (payloads are ready-made defects, validated lazily) ----------------
    def misaligned_options(self) -> list[Defect]:
        options: list[tuple[str, str, str, Defect]] = []
        for role in self.alone:
            for fact in self.task.facts_of(role):
                for candidate in self.task.candidates:
                    for context, value in sorted(
                        self.task.alternatives.get((candidate, fact), {}).items()
                    ):
                        if value == self.task.values[(candidate, fact)]:
                            continue
                        reply = [
                            s
                            if s.candidate != candidate
                            else s.model_copy(
                                update={"context": context, "value": to_json_scalar(value)}
                            )
                            for s in _true_values(self.task, fact)
                        ]
                        defect = Defect(
                            kind="misaligned",
                            role=role,
                            fact=fact,
                            candidates=[candidate],
                            first_reply=reply,
                            targeted_follow_up=misaligned_rule(self.task, fact, context),
                            resolved_reply=_true_values(self.task, fact),
                            rationale=f"{self.task.candidate_name(candidate)}'s "
                            f"{self.task.facts[fact].label} is given for {context!r}, "
                            f"not {self.task.facts[fact].context!r}",
                        )
                        options.append(("misaligned", self.task.facts[fact].type, role, defect))
        return self._ordered(options)

    def incomplete_options(self) -> list[tuple[Defect, list[Imprecision]]]:
        options: list[tuple[str, str, str, tuple[Defect, list[Imprecision]]]] = []
        decision = self.task.decision_facts()
        for role in self.alone:
            for fact in self.task.facts_of(role):
                if fact not in decision:
                    continue
                for candidate in self.task.candidates:
                    slot = (candidate, fact)
                    statements = imprecise_statements(self.task.facts[fact], self.task.values[slot])
                    if statements:
                        base = Defect(
                            kind="incomplete",
                            role=role,
                            fact=fact,
                            candidates=[candidate],
                            first_reply=[],
                            targeted_follow_up=incomplete_rule(self.task, fact),
                            resolved_reply=_true_values(self.task, fact),
                            rationale=f"{self.task.candidate_name(candidate)}'s "
                            f"{self.task.facts[fact].label} is given imprecisely",
                        )
                        options.append(
                            ("incomplete", self.task.facts[fact].type, role, (base, statements))
                        )
        return self._ordered(options)

    def missed_options(self) -> list[Defect]:
        options: list[tuple[str, str, str, Defect]] = [
            (
                "missed",
                "role",
                role,
                Defect(
                    kind="missed",
                    role=role,
                    first_reply=None,
                    targeted_follow_up=missed_rule(),
                    resolved_reply=None,
                    rationale=f"{self.task.role_name(role)} does not answer the first request",
                ),
            )
            for role in self.alone
        ]
        return self._ordered(options)

    # -- validation ---------------------------------------------------------------------------
    def _valid(self, setting: str, defect: Defect) -> list[CheckResult] | None:
        """The defect's checks when all are proved (each option is tried at most once)."""
        key = defect.model_dump_json()
        if self._validity.get(key) is False:
            return None
        if key not in self._validity:
            if self.queries >= MAX_VALIDITY_QUERIES:
                return None
            self.queries += 1
        checks = self.checks.check(setting, defect)
        valid = combine([c.verdict for c in checks]) == Verdict.PROVED
        self._validity[key] = valid
        return checks if valid else None

    def valid_misaligned(self, setting: str) -> Iterator[tuple[Defect, list[CheckResult]]]:
        for defect in self.misaligned_options():
            checks = self._valid(setting, defect)
            if checks is not None:
                yield defect, checks

    def valid_incomplete(self, setting: str) -> Iterator[tuple[Defect, list[CheckResult]]]:
        for base, statements in self.incomplete_options():
            assert base.fact is not None
            candidate = base.candidates[0]
            for statement in statements:
                reply = [
                    s
                    if s.candidate != candidate
                    else StatedValue(
                        candidate=candidate,
                        fact=base.fact,
                        context=s.context,
                        **statement.json_fields(),
                    )
                    for s in _true_values(self.task, base.fact)
                ]
                defect = base.model_copy(update={"first_reply": reply})
                checks = self._valid(setting, defect)
                if checks is not None:
                    yield defect, checks
                    break

    def valid_missed(self, setting: str) -> Iterator[tuple[Defect, list[CheckResult]]]:
        for defect in self.missed_options():
            checks = self.checks.check(setting, defect)
            if combine([c.verdict for c in checks]) == Verdict.PROVED:
                yield defect, checks


def _first(
    found: Iterator[tuple[Defect, list[CheckResult]]],
) -> tuple[Defect, list[CheckResult]] | None:
    return next(found, None)


def perturb(
    spec: TaskSpec,
    seed: int = 0,
    balance: DefectBalance | None = None,
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    source: str = "<memory>",
) -> Perturbation:
    """Build the task group of a spec: Reliable, Misaligned, Incomplete, Missed and Mixed."""
    balance = balance if balance is not None else DefectBalance()
    proof = prove_task(spec, source, budget, certificates)
    if proof.report.verdict != Verdict.PROVED or proof.gold is None:
        return Perturbation(None, proof.report, {"all": "the instance itself is not well-posed"})
    chooser = _Chooser(proof, seed, balance)
    task = chooser.task
    checks: list[CheckResult] = list(proof.report.checks)
    settings: dict[str, Setting] = {"reliable": Setting(name="reliable")}
    unavailable: dict[str, str] = {}
    single = {
        "misaligned": _first(chooser.valid_misaligned("misaligned")),
        "incomplete": _first(chooser.valid_incomplete("incomplete")),
        "missed": _first(chooser.valid_missed("missed")),
    }
    reasons = {
        "misaligned": "no wrong-context record of a necessary role changes the answer",
        "incomplete": "no imprecise statement of a necessary role leaves the answer open",
        "missed": "no role is necessary on its own",
    }
    for name, found in single.items():
        if found is None:
            unavailable[name] = reasons[name]
            settings[name] = Setting(name=name, available=False, reason=reasons[name])
            continue
        defect, defect_checks = found
        checks += defect_checks
        settings[name] = Setting(name=name, defects=[defect])
    mixed = _choose_mixed(chooser)
    if mixed is None:
        reason = "no three different roles each carry a valid defect" + (
            " (with no eligible candidate at most three roles can be necessary alone)"
            if chooser.gold.kind == "none"
            else ""
        )
        unavailable["mixed"] = reason
        settings["mixed"] = Setting(name="mixed", available=False, reason=reason)
    else:
        defects, mixed_checks = mixed
        checks += mixed_checks
        settings["mixed"] = Setting(name="mixed", defects=defects)
    for setting in settings.values():
        for defect in setting.defects:
            balance.record(task, defect)
    verdict = combine([c.verdict for c in checks])
    report = proof.report.model_copy(
        update={"checks": checks, "verdict": verdict, "document": "group"}
    )
    gold = Answer.from_outcome(task, chooser.gold)
    group = TaskGroup(
        id=spec.id,
        seed=seed,
        spec=spec,
        gold=gold,
        settings=[settings[name] for name in SETTING_NAMES],
        proofs=ProofSummary(
            verdict=verdict.label, checks={c.name: c.verdict.label for c in checks}
        ),
    )
    return Perturbation(group, report, unavailable)


def _choose_mixed(chooser: _Chooser) -> tuple[list[Defect], list[CheckResult]] | None:
    """Three valid defects on three different roles whose combination also matters."""
    mis = [
        found
        for _, found in zip(range(MIXED_POOL), chooser.valid_misaligned("mixed"), strict=False)
    ]
    inc = [
        found
        for _, found in zip(range(MIXED_POOL), chooser.valid_incomplete("mixed"), strict=False)
    ]
    missed = list(chooser.valid_missed("mixed"))
    for m_defect, m_checks in mis:
        for i_defect, i_checks in inc:
            if i_defect.role == m_defect.role:
                continue
            for s_defect, s_checks in missed:
                if s_defect.role in (m_defect.role, i_defect.role):
                    continue
                defects = [m_defect, i_defect, s_defect]
                combined = chooser.checks.combined("mixed", defects)
                if combined.verdict == Verdict.PROVED:
                    return defects, [*m_checks, *i_checks, *s_checks, combined]
    return None
