"""Derive the paired settings of a verified instance, each defect with its proof.

The designated role, fact and candidate of each defect are chosen deterministically for a
seed: options are ordered by how often their fact type and role have already carried that
kind of defect in the batch (:class:`DefectBalance`), ties broken by a seeded shuffle, and
the first option whose validity the solver proves is taken. Only roles proved necessary
*alone* carry defects. When no option of a kind is valid, the setting is marked unavailable
with the reason (the construction pipeline then re-instantiates or drops the instance).

Two preferences come before the balance, so that guessing does not pay (see
:mod:`._guessing`): a Misaligned option whose face-value reading gives a wrong answer for
sure (guessing floor 0) goes before one a lucky pick could still get right; and within a
group, a role that already carries another kind of defect goes last, so the single defects
spread over the team.

Options are screened by exact evaluation first (does substituting the wrong-context value
change the answer? what is an imprecise statement's exact gold chance?), so the solver is
asked mostly to *prove* what will be kept rather than to refute what will be thrown away.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import chain, islice
from typing import TypeVar

from ..errors import ConfigError
from ..solver import (
    DEFAULT_BUDGET,
    CheckResult,
    SolverBudget,
    SolverContext,
    TaskProof,
    Verdict,
    VerificationReport,
    combine,
    prove_task,
)
from ..spec import (
    Answer,
    Outcome,
    Slot,
    TaskSpec,
    TypedTask,
    Value,
    check_structure,
    to_json_scalar,
)
from ._chance import gold_chance
from ._followup import incomplete_rule, misaligned_rule, missed_rule
from ._guessing import floor, floors_json, guessing_floors
from ._imprecise import Imprecision, imprecise_statements
from ._mixed import choose_mixed, mixed_unavailable_reason
from ._model import (
    DEFAULT_MISSED_WAIT,
    SETTING_NAMES,
    Defect,
    ProofSummary,
    Setting,
    StatedValue,
    TaskGroup,
)
from ._pins import Pin, pinned_defects
from ._shared import shared_defects
from ._validity import MAX_GOLD_CHANCE, DefectChecker, gold_chances

#: Imprecise statements screened (exactly) per record before giving up on it.
STATEMENT_TRIES = 24
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

    @classmethod
    def rotating(cls, index: int) -> DefectBalance:
        """A balance that prefers a different fact type for each index of a batch.

        Parallel builders cannot share a running balance; rotating the preference by the
        group's index spreads defects over fact types just as well, and deterministically.
        """
        balance = cls()
        types = ["int", "decimal", "date", "enum", "bool"]
        shift = index % len(types)
        for rank, fact_type in enumerate(types[shift:] + types[:shift]):
            for kind in ("misaligned", "incomplete"):
                balance.by_type[(kind, fact_type)] = rank
        return balance


@dataclass
class Perturbation:
    """The result of :func:`perturb`: the group (when the base proofs hold) and the report."""

    group: TaskGroup | None
    report: VerificationReport
    unavailable: dict[str, str] = field(default_factory=dict)
    refused: str | None = None
    """why a pinned defect was refused (it is not proved to matter); no group then"""
    task: TypedTask | None = None
    """the spec's typed task (when it is structurally valid), for later stages"""


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
        self.checks = DefectChecker(proof.checker, proof.gold, want_cores=False)
        self.balance = balance
        self.seed = seed
        self.rng = random.Random(f"{seed}:{self.task.id}")
        self.alone = [
            c.role
            for c in proof.report.checks
            if c.kind == "necessity"
            and c.verdict == Verdict.PROVED
            and c.role
            and c.witness is not None
            and c.witness.get("mode") == "alone"
        ]
        self.used_roles: set[str] = set()
        """Roles already carrying a single-setting defect of this group (they go last)."""
        self._proved: dict[str, list[CheckResult] | None] = {}
        failing = {
            c: {cond.fact for cond in self.task.conditions
                if not cond.holds(self.task.values[(c, cond.fact)])}
            for c in self.task.candidates
        }  # fmt: skip
        chosen = self.gold.candidate

        def can_matter(slot: Slot) -> bool:
            # One changed value changes the answer only for the chosen candidate, or for a
            # candidate excluded by that fact alone (which would then qualify).
            return slot[0] == chosen or failing[slot[0]] == {slot[1]}

        self.can_matter = can_matter

    def changes(self, changed: dict[Slot, Value]) -> bool:
        """Exact evaluation: does the answer differ with these values?"""
        return not self.task.outcome(self.task.with_values(changed)).same_output(self.gold)

    def _ordered(
        self, options: list[tuple[str, str, str, T]], first: list[Fraction] | None = None
    ) -> list[T]:
        """Options (kind, fact type, role, payload) by ``first`` (a key per option, lowest
        first), roles not used yet in the group, balance score, then a seeded shuffle."""
        keyed = [
            (
                first[i] if first is not None else Fraction(0),
                role in self.used_roles,
                self.balance.score(kind, ftype, self.task.role_name(role)),
                self.rng.random(),
                i,
            )
            for i, (kind, ftype, role, _) in enumerate(options)
        ]
        return [options[key[-1]][3] for key in sorted(keyed)]

    def proved(self, setting: str, defect: Defect) -> list[CheckResult] | None:
        """The defect's checks when all are proved (each defect is proved at most once)."""
        key = defect.model_dump_json()
        if key not in self._proved:
            checks = self.checks.check(setting, defect)
            valid = combine([c.verdict for c in checks]) == Verdict.PROVED
            self._proved[key] = checks if valid else None
        return self._proved[key]

    # -- candidates that exact evaluation says will matter ------------------------------------
    def misaligned_defects(self) -> list[Defect]:
        """Wrong-context replies that change the answer; those a face-value reader gets
        wrong for sure first."""
        options: list[tuple[str, str, str, Defect]] = []
        floors: list[Fraction] = []
        for role in self.alone:
            for fact in self.task.facts_of(role):
                for candidate in self.task.candidates:
                    slot = (candidate, fact)
                    if not self.can_matter(slot):
                        continue
                    for context, value in sorted(self.task.alternatives.get(slot, {}).items()):
                        if value == self.task.values[slot] or not self.changes({slot: value}):
                            continue
                        reply = [
                            s if s.candidate != candidate else s.model_copy(
                                update={"context": context, "value": to_json_scalar(value)})
                            for s in _true_values(self.task, fact)
                        ]  # fmt: skip
                        defect = Defect(
                            kind="misaligned",
                            role=role,
                            fact=fact,
                            candidates=[candidate],
                            first_reply=reply,
                            targeted_follow_up=misaligned_rule(
                                fact, [candidate], self.task.facts[fact].context
                            ),
                            resolved_reply=_true_values(self.task, fact),
                            rationale=f"{self.task.candidate_name(candidate)}'s "
                            f"{self.task.facts[fact].label} is given for {context!r}, "
                            f"not {self.task.facts[fact].context!r}",
                        )
                        options.append(("misaligned", self.task.facts[fact].type, role, defect))
                        floors.append(floor(self.task, self.gold, "face-value", [defect]))
        return self._ordered(options, floors)

    def incomplete_defects(self) -> Iterator[Defect]:
        """Incomplete defects in balance order; the statement is found lazily (it costs)."""
        options: list[tuple[str, str, str, Slot]] = []
        decision = self.task.decision_facts()
        for role in self.alone:
            for fact in self.task.facts_of(role):
                for candidate in self.task.candidates:
                    slot = (candidate, fact)
                    if fact in decision and self.can_matter(slot):
                        options.append(("incomplete", self.task.facts[fact].type, role, slot))
        for candidate, fact in self._ordered(options):
            chosen = self.open_statement((candidate, fact))
            if chosen is None:
                continue
            reply = [
                s if s.candidate != candidate else StatedValue(
                    candidate=candidate, fact=fact, context=s.context, **chosen.json_fields())
                for s in _true_values(self.task, fact)
            ]  # fmt: skip
            yield Defect(
                kind="incomplete",
                role=self.task.facts[fact].owner,
                fact=fact,
                candidates=[candidate],
                first_reply=reply,
                targeted_follow_up=incomplete_rule(fact, [candidate]),
                resolved_reply=_true_values(self.task, fact),
                rationale=f"{self.task.candidate_name(candidate)}'s "
                f"{self.task.facts[fact].label} is given imprecisely",
            )

    def open_statement(self, slot: Slot) -> Imprecision | None:
        """The first statement (most natural shape; positions and options in a seeded order)
        whose exact gold chance is at most 1/2 - which also means it leaves the answer open."""
        fact = self.task.facts[slot[1]]
        rng = random.Random(f"imprecise:{self.seed}:{self.task.id}:{slot[0]}:{slot[1]}")
        statements = imprecise_statements(fact, self.task.values[slot], rng, self.task.conditions)
        for statement in islice(statements, STATEMENT_TRIES):
            if gold_chance(self.task, self.gold, slot, statement).probability <= MAX_GOLD_CHANCE:
                return statement
        return None

    def missed_defects(self) -> list[Defect]:
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
                    missed_wait=DEFAULT_MISSED_WAIT,
                    rationale=f"{self.task.role_name(role)} does not answer the first request",
                ),
            )
            for role in self.alone
        ]
        return self._ordered(options)

    def valid(
        self, setting: str, defects: Iterable[Defect]
    ) -> Iterator[tuple[Defect, list[CheckResult]]]:
        for defect in defects:
            checks = self.proved(setting, defect)
            if checks is not None:
                yield defect, checks


def perturb(
    spec: TaskSpec,
    seed: int = 0,
    balance: DefectBalance | None = None,
    budget: SolverBudget = DEFAULT_BUDGET,
    certificates: dict[str, str] | None = None,
    source: str = "<memory>",
    pins: Sequence[Pin] = (),
    context: SolverContext | None = None,
) -> Perturbation:
    """Build the task group of a spec: Reliable, Misaligned, Incomplete, Missed and Mixed.

    ``pins`` name defects to use instead of choosing them (:mod:`._pins`); each is proved
    like any other, and a pin that is not proved to matter refuses the whole group.
    ``context`` is the batch's Z3 context (a private one without it).
    """
    balance = balance if balance is not None else DefectBalance()
    check_pins(spec, pins)
    proof = prove_task(spec, source, budget, certificates, context)
    if proof.report.verdict != Verdict.PROVED or proof.gold is None:
        return Perturbation(None, proof.report, {"all": "the instance itself is not well-posed"})
    chooser = _Chooser(proof, seed, balance)
    task = chooser.task
    checks: list[CheckResult] = list(proof.report.checks)
    settings: dict[str, Setting] = {"reliable": Setting(name="reliable")}
    unavailable: dict[str, str] = {}
    makers = {
        "misaligned": chooser.misaligned_defects,
        "incomplete": lambda: _Lazy(chooser.incomplete_defects()),
        "missed": chooser.missed_defects,
    }
    pinned: dict[str, Defect] = {}
    refused = _apply_pins(chooser, pins, pinned)
    if refused is not None:
        why, failing = refused
        report = proof.report.model_copy(
            update={
                "checks": [*proof.report.checks, *failing],
                "verdict": combine([c.verdict for c in [*proof.report.checks, *failing]]),
                "document": "group",
            }
        )
        return Perturbation(None, report, {}, refused=why)
    reasons = {
        "misaligned": "no wrong-context record of a necessary role changes the answer",
        "incomplete": "no imprecise statement of a necessary role leaves the answer open "
        f"with a gold chance of at most {MAX_GOLD_CHANCE}",
        "missed": "no role is necessary on its own",
    }
    pools: dict[str, list[Defect]] = {}
    for name, make in makers.items():
        pool = make()  # ordered now: roles used by earlier kinds go last
        if name in pinned:
            pool = _Lazy(chain([pinned[name]], iter(pool)))
        pools[name] = pool
        found = next(chooser.valid(name, pool), None)
        if found is None:
            unavailable[name] = reasons[name]
            settings[name] = Setting(name=name, available=False, reason=reasons[name])
            continue
        defect, defect_checks = found
        chooser.used_roles.add(defect.role)
        checks += defect_checks
        settings[name] = Setting(name=name, defects=[defect])
    reason = mixed_unavailable_reason(task, chooser.gold, chooser.alone)
    mixed = None if reason else choose_mixed(chooser, pools)
    if mixed is None:
        reason = reason or (
            "no three valid defects on three different roles whose face-value reading "
            "leaves the answer open"
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
    ordered = [settings[name] for name in SETTING_NAMES]
    group = TaskGroup(
        id=spec.id,
        seed=seed,
        spec=spec,
        gold=Answer.from_outcome(task, chooser.gold),
        settings=ordered,
        proofs=ProofSummary(
            verdict=verdict.label,
            checks={c.name: c.verdict.label for c in checks},
            gold_chances=gold_chances(checks),
            guessing_floors=floors_json(guessing_floors(task, chooser.gold, ordered)),
            shared_defects=shared_defects(ordered),
        ),
    )
    return Perturbation(group, report, unavailable, task=task)


def check_pins(spec: TaskSpec, pins: Sequence[Pin]) -> None:
    """Check the pins' names against the spec before any proof (ConfigError, exit 2)."""
    if not pins:
        return
    kinds = [p.kind for p in pins]
    for kind in set(kinds):
        if kinds.count(kind) > 1:
            raise ConfigError(f"--{kind} is given more than once: pin one defect per setting")
    task = check_structure(spec).task
    if task is None or not task.has_values:
        return  # the proof reports what is wrong with the spec itself
    for pin in pins:
        pinned_defects(task, pin)


def _apply_pins(
    chooser: _Chooser, pins: Sequence[Pin], pinned: dict[str, Defect]
) -> tuple[str, list[CheckResult]] | None:
    """Prove each pinned defect (it goes first in its pool); why a pin is refused, if one is."""
    for pin in pins:
        options = pinned_defects(chooser.task, pin)
        chosen = next(chooser.valid(pin.kind, options), None)
        if chosen is None:
            failing = [
                c for c in chooser.checks.check(pin.kind, options[0]) if c.verdict != Verdict.PROVED
            ]
            why = "; ".join(c.summary for c in failing) or "it is not proved to matter"
            return f"{pin.text} is refused: {why}", failing
        pinned[pin.kind] = chosen[0]
    return None


class _Lazy(list[Defect]):
    """A list filled from an iterator on demand, so a pool can be walked twice cheaply."""

    def __init__(self, source: Iterator[Defect]) -> None:
        super().__init__()
        self._source = source

    def __iter__(self) -> Iterator[Defect]:
        index = 0
        while True:
            if index < len(self):
                yield self[index]
            else:
                item = next(self._source, None)
                if item is None:
                    return
                self.append(item)
                yield item
            index += 1
