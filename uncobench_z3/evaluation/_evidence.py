"""Face-value evidence, round by round, in one pass over a trace.

What the replies of rounds ``1..r`` state about the required-context records, taken
literally (the definitions are :mod:`._attribution`'s): the records stated exactly, once or
always alike (a record stated with two different values counts as not received), and the
imprecise required-context statements of the records not received exactly, as constraints.
A wrong-context value states nothing about the required context.

Scoring asks this after every round of a sample (the round notes), once for its
justification, and the minimum-rounds search after every round of an ideal agent; reading the
trace once, in order, and keeping a snapshot per round costs what one reading of the whole
trace did. The ``signature`` of a snapshot is equal for equal evidence, so a judge decides
equal evidence once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..settings import StatedValue, stated_value
from ..spec import Slot, TypedTask, Value
from ._environment import RoundRecord

StatementKey = tuple[str, ...]


def statement_key(stated: StatedValue) -> StatementKey:
    """Everything a statement says, as a hashable key (equal keys, equal statements)."""
    return (
        stated.candidate,
        stated.fact,
        stated.context,
        repr(stated.value),
        repr(stated.low),
        repr(stated.high),
        repr(stated.options),
    )


@dataclass(frozen=True, slots=True)
class FaceValueEvidence:
    """The face-value evidence after one round (module docstring)."""

    exact: dict[Slot, Value]
    """records received exactly in the required context, at the value stated"""
    imprecise: tuple[tuple[Slot, StatedValue], ...]
    """imprecise required-context statements of the records not in ``exact``, first-seen
    order, each once"""
    signature: tuple[object, ...]
    """equal for equal evidence: the key a judge remembers its verdict by"""


def evidence_by_round(task: TypedTask, trace: Sequence[RoundRecord]) -> list[FaceValueEvidence]:
    """The face-value evidence after each round of ``trace`` (one snapshot per round)."""
    required = {key: fact.context for key, fact in task.facts.items()}
    seen: dict[Slot, set[str]] = {}  # slot -> repr of every exact value stated for it
    values: dict[Slot, Value] = {}
    imprecise: dict[tuple[Slot, StatementKey], StatedValue] = {}
    snapshots: list[FaceValueEvidence] = []
    for record in trace:
        for reply in record.replies:
            for stated in reply.stated:
                if stated.context != required[stated.fact]:
                    continue  # a wrong-context value or range says nothing of the record
                slot = (stated.candidate, stated.fact)
                if stated.is_exact:
                    value = stated_value(task, stated)
                    seen.setdefault(slot, set()).add(repr(value))
                    values[slot] = value
                else:
                    imprecise.setdefault((slot, statement_key(stated)), stated)
        exact = {slot: values[slot] for slot, stated in seen.items() if len(stated) == 1}
        kept = tuple((key[0], s) for key, s in imprecise.items() if key[0] not in exact)
        signature = (
            tuple(sorted((slot, repr(value)) for slot, value in exact.items())),
            tuple(sorted(key for key in imprecise if key[0] not in exact)),
        )
        snapshots.append(FaceValueEvidence(exact, kept, signature))
    return snapshots


def final_evidence(task: TypedTask, trace: Sequence[RoundRecord]) -> FaceValueEvidence:
    """The face-value evidence of the whole trace (none for an empty one)."""
    found = evidence_by_round(task, trace)
    return found[-1] if found else FaceValueEvidence({}, (), ((), ()))
