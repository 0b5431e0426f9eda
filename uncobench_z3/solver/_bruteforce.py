"""An independent brute-force evaluator: enumerate completions, evaluate them exactly.

It shares nothing with the SMT encoding: it reads the typed task's reference semantics
(:meth:`TypedTask.outcome`, exact Fractions) and tries every combination of values of the
hidden slots. On small domains it is the oracle the solver's verdicts are tested against; on
real domains it is the slow baseline of ``benchmarks/verify_throughput.py`` and gives up
("undecided") beyond a cap.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..spec import Outcome, Slot, TypedTask, Value


@dataclass(frozen=True)
class BruteForceResult:
    """``found``: a completion differs from gold (like sat); ``none``: no completion does
    (like unsat); ``undecided``: more completions than the cap allows."""

    status: Literal["found", "none", "undecided"]
    completion: dict[Slot, Value] | None = None
    outcome: Outcome | None = None
    explored: int = 0


def completion_count(
    task: TypedTask, hidden: Sequence[Slot], restrict: Mapping[Slot, Sequence[Value]]
) -> int:
    total = 1
    for slot in hidden:
        total *= len(restrict[slot]) if slot in restrict else task.facts[slot[1]].domain_size()
    return total


def brute_force_differs(
    task: TypedTask,
    gold: Outcome,
    hidden: Iterable[Slot],
    restrict: Mapping[Slot, Sequence[Value]] | None = None,
    fixed: Mapping[Slot, Value] | None = None,
    cap: int = 200_000,
    explore: int | None = None,
) -> BruteForceResult:
    """Is there a completion of ``hidden`` whose output differs from ``gold``?

    ``restrict`` narrows a hidden slot to given values (an interval, a substitution);
    ``fixed`` overrides recorded values of non-hidden slots. With more than ``cap``
    completions it gives up before starting; with ``explore`` it enumerates at most that many
    (stopping early at the first differing one, as always) and is undecided after them.
    """
    restrict = dict(restrict or {})
    hidden = list(dict.fromkeys(hidden))
    if completion_count(task, hidden, restrict) > cap:
        return BruteForceResult("undecided")
    base = dict(task.values)
    base.update(fixed or {})
    choices = [
        list(restrict[slot]) if slot in restrict else task.facts[slot[1]].domain_values()
        for slot in hidden
    ]
    explored = 0
    for combo in itertools.product(*choices):
        if explore is not None and explored >= explore:
            return BruteForceResult("undecided", explored=explored)
        explored += 1
        values = dict(base)
        values.update(zip(hidden, combo, strict=True))
        outcome = task.outcome(values)
        if not outcome.same_output(gold):
            return BruteForceResult(
                "found", dict(zip(hidden, combo, strict=True)), outcome, explored
            )
    return BruteForceResult("none", explored=explored)
