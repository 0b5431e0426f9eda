"""Guessing floors: the exact accuracy of strategies that skip part of the work.

A strategy ends with a *reading*: a value for each record it believes it knows (the others
are unknown). From a reading it answers as the built-in agents do
(:func:`~uncobench_z3.evaluation.decide`): a condition whose record is unknown is assumed to
hold; the candidates passing every condition are the possible ones; with none possible the
answer is "no eligible candidate", otherwise it picks one of them uniformly at random and
computes the number from its operands (no number when one is unknown). Its **guessing floor**
in a setting is the exact probability, over that one uniform pick, that the answer is gold:

* no possible candidate: 1 if gold is "no eligible candidate", else 0;
* otherwise: ``1/|possible|`` if gold's candidate is possible and the number computed for it
  is gold's number, else 0.

The three strategies (built-in agents of the same names read the same way):

* ``optimist`` asks only the roles that own rule operands (and repairs their defects): its
  reading is the true value of every record of those roles, whatever the setting.
* ``midpoint`` repairs wrong contexts and silences like ``builtin/careful`` but takes an
  imprecise statement at face value: the midpoint of a range (the earlier middle day of a
  date range), the first of a list of options.
* ``face-value`` asks everyone once and takes every first reply at face value: a wrong
  context's value as the value, an imprecise statement as ``midpoint`` does; a silent role's
  records are unknown.

Every floor is computed by exact evaluation of the task's reference semantics (the same
semantics the solver encoding is cross-checked against): a reading is one assignment, so no
search is involved. ``tests/test_guessing.py`` checks the floors against the built-in
agents' actual answers over many seeds and against a solver formulation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Literal

from ..solver import CheckResult, Verdict
from ..spec import Outcome, Slot, TypedTask, Value
from ._model import Defect, Setting
from ._stated import face_value

Strategy = Literal["optimist", "midpoint", "face-value"]
STRATEGIES: tuple[Strategy, ...] = ("optimist", "midpoint", "face-value")


def possible_candidates(task: TypedTask, reading: Mapping[Slot, Value]) -> list[str]:
    """Candidates passing every condition whose record the reading holds."""
    return [
        c
        for c in task.candidates
        if all(
            cond.holds(reading[(c, cond.fact)])
            for cond in task.conditions
            if (c, cond.fact) in reading
        )
    ]


def guess_accuracy(task: TypedTask, gold: Outcome, reading: Mapping[Slot, Value]) -> Fraction:
    """The exact probability that a uniform guess from ``reading`` is the gold answer."""
    possible = possible_candidates(task, reading)
    if not possible:
        return Fraction(int(gold.kind == "none"))
    if gold.kind != "eligible" or gold.candidate not in possible:
        return Fraction(0)
    operands = [reading.get((gold.candidate, key)) for key in task.rule.operands]
    if any(v is None for v in operands):
        return Fraction(0)
    try:
        number = task.rule.rounded([Fraction(v) for v in operands])  # type: ignore[arg-type]
    except ZeroDivisionError:
        return Fraction(0)
    return Fraction(1, len(possible)) if number == gold.number else Fraction(0)


def operand_roles(task: TypedTask) -> list[str]:
    return [r for r in task.roles if any(task.facts[k].owner == r for k in task.rule.operands)]


ReadingChanges = tuple[frozenset[Slot], frozenset[tuple[Slot, Value]]]
"""How a reading differs from the true values: the slots it does not know, the values it
believes instead (a key: two equal changes are the same reading)"""


def reading_changes(
    task: TypedTask, strategy: Strategy, defects: Iterable[Defect]
) -> ReadingChanges:
    """What ``strategy`` believes, other than the truth, in a setting with ``defects``
    (``optimist`` reads the truth of some roles only: see :func:`strategy_reading`)."""
    unknown: set[Slot] = set()
    believed: dict[Slot, Value] = {}
    for defect in defects:
        if defect.kind == "missed":
            if strategy == "face-value":
                for slot in task.slots_of(defect.role):
                    unknown.add(slot)
                    believed.pop(slot, None)
            continue
        if defect.kind == "misaligned" and strategy != "face-value":
            continue
        for stated in defect.first_reply or []:
            if strategy == "midpoint" and stated.is_exact:
                continue
            slot = (stated.candidate, stated.fact)
            believed[slot] = face_value(task, stated)
            unknown.discard(slot)
    return frozenset(unknown), frozenset(believed.items())


def strategy_reading(
    task: TypedTask, strategy: Strategy, defects: Iterable[Defect]
) -> dict[Slot, Value]:
    """What ``strategy`` ends up believing in a setting with ``defects``."""
    if strategy == "optimist":
        roles = set(operand_roles(task))
        return {s: v for s, v in task.values.items() if task.facts[s[1]].owner in roles}
    return changed_reading(task, reading_changes(task, strategy, defects))


def changed_reading(task: TypedTask, changes: ReadingChanges) -> dict[Slot, Value]:
    """The true values with ``changes`` (see :func:`reading_changes`) made."""
    unknown, believed = changes
    reading = {s: v for s, v in task.values.items() if s not in unknown}
    reading.update(believed)
    return reading


def floor(
    task: TypedTask, gold: Outcome, strategy: Strategy, defects: Iterable[Defect]
) -> Fraction:
    """The exact accuracy of ``strategy`` in a setting with ``defects``."""
    return guess_accuracy(task, gold, strategy_reading(task, strategy, defects))


def guessing_floors(
    task: TypedTask, gold: Outcome, settings: Iterable[Setting]
) -> dict[str, dict[str, Fraction]]:
    """Strategy -> available setting -> exact accuracy.

    :func:`floor` of each strategy in each setting, each distinct reading evaluated once:
    ``optimist``'s does not depend on the setting, and the other strategies often read the
    truth (a setting without defects, or defects a strategy repairs) or the same values.
    """
    out: dict[str, dict[str, Fraction]] = {s: {} for s in STRATEGIES}
    optimist: Fraction | None = None
    seen: dict[ReadingChanges, Fraction] = {}
    for setting in settings:
        if not setting.available:
            continue
        for strategy in STRATEGIES:
            if strategy == "optimist":
                if optimist is None:
                    optimist = floor(task, gold, strategy, ())
                out[strategy][setting.name] = optimist
                continue
            changes = reading_changes(task, strategy, setting.defects)
            if changes not in seen:
                seen[changes] = guess_accuracy(task, gold, changed_reading(task, changes))
            out[strategy][setting.name] = seen[changes]
    return out


def floors_json(floors: Mapping[str, Mapping[str, Fraction]]) -> dict[str, dict[str, str]]:
    return {s: {name: str(v) for name, v in row.items()} for s, row in floors.items()}


def stored_figures_check(
    name: str,
    what: str,
    computed: Mapping[str, object],
    stored: Mapping[str, object] | None,
    shown: str,
) -> CheckResult:
    """The exact figures a group stores (if any) equal those recomputed from its data."""
    if stored and dict(stored) != dict(computed):
        return CheckResult(
            name=name,
            kind="consistency",
            verdict=Verdict.REFUTED,
            summary=f"the stored {what} differ from the recomputed ones ({shown})",
            witness={"computed": dict(computed), "stored": dict(stored)},
        )
    return CheckResult(
        name=name,
        kind="consistency",
        verdict=Verdict.PROVED,
        summary=f"exact {what}: {shown}" + ("" if stored else "; the group stores none"),
        witness={"computed": dict(computed)},
    )


def floors_check(
    task: TypedTask,
    gold: Outcome,
    settings: Iterable[Setting],
    stored: Mapping[str, Mapping[str, str]] | None,
) -> CheckResult:
    """Recompute the floors from the group's data; they must equal the stored ones (if any)."""
    floors = floors_json(guessing_floors(task, gold, settings))
    shown = "; ".join(
        f"{strategy}: " + ", ".join(f"{name} {value}" for name, value in row.items())
        for strategy, row in floors.items()
    )
    as_stored = {k: dict(v) for k, v in stored.items()} if stored else None
    return stored_figures_check("guessing-floors", "guessing floors", floors, as_stored, shown)
