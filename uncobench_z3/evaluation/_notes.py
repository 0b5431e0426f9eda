"""The solver's note on every round of an episode: did the evidence received so far determine
the answer, and which decision records were still open.

After round ``r`` the *evidence* is what the replies of rounds ``1..r`` state at face value
(:func:`._attribution.face_value_evidence`: exact values in the required context, plus
imprecise required-context statements as constraints; a wrong-context value states nothing).
The note says whether it **determined** the gold answer (no completion of the records not
received gives another output: the question :class:`._evidence_judge.EvidenceJudge` asks for
justified accuracy and minimum rounds, so the three always agree), and lists the decision
records (those a condition or the rule reads, for every candidate) not yet received exactly
in the required context. ``determined`` is None when the solver could not decide; never
counted either way.

Notes are computed when a sample is scored, on the group's shared judge (its encoding is
loaded at most once per group, for justification, attribution and - for a group that does
not store them - the minimum rounds; equal evidence is decided once), and they are what the
report's trace viewer shows per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import filterfalse

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import (
    SharedFieldsSet,
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..solver import SolverBudget
from ..spec import Answer, TypedTask
from ._attribution import ATTRIBUTION_BUDGET, shared_judge
from ._environment import RoundRecord
from ._evidence import FaceValueEvidence, evidence_by_round
from ._evidence_judge import EvidenceJudge


class RoundNote(BaseModel):
    """What the evidence received by the end of one round determined (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    determined: bool | None
    """True: the evidence determined the gold answer; False: another output was still
    consistent with it; None: the solver could not decide"""
    received: int
    """decision records received exactly in the required context"""
    needed: int
    """decision records of the task (candidates x decision facts)"""
    open: tuple[tuple[str, str], ...] = ()
    """(candidate, fact) of the decision records not yet received exactly"""
    imprecise: int = 0
    """imprecise required-context statements used as constraints"""


_EVERY_FIELD = SharedFieldsSet(RoundNote.model_fields)
"""the fields set of every note (every field given; a frozen model's never changes: shared,
and refusing changes, as a trusted maker's)"""
_NOTES_KEPT = 4096
"""round notes a judge keeps (then it starts again)"""


def round_notes(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    group_hash: str | None = None,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
    evidence: Sequence[FaceValueEvidence] | None = None,
    judge: EvidenceJudge | None = None,
) -> list[RoundNote]:
    """One note per round of ``trace`` (``group_hash``: share the group's judge; ``evidence``:
    :func:`._evidence.evidence_by_round` of ``trace``, when the caller has read it already;
    ``judge``: ``shared_judge(group_hash, task, gold, budget)``, when the caller has it).

    A note is a function of its round and the evidence's signature (equal for equal
    evidence), so the judge keeps each note made and a group's samples share them (frozen)."""
    if judge is None:
        judge = shared_judge(group_hash, task, gold, budget)
    if evidence is None:
        evidence = evidence_by_round(task, trace, judge.readings)
    made = judge.notes
    notes: list[RoundNote] = []
    last: FaceValueEvidence | None = None
    parts: dict[str, object] = {}
    for record, snapshot in zip(trace, evidence, strict=True):
        number = record.round  # (a model's field: read once)
        key = (number, snapshot.signature)
        note = made.get(key)
        if note is None:
            if snapshot is not last:  # (a round that changed nothing shares the snapshot)
                last, parts = snapshot, _note_parts(judge, snapshot)
            # built from checked parts, on every sample's hot path: no validation pass, and
            # its state written out in field order (the round first, then the parts), as a
            # trusted maker's call makes it (544 notes in the first pass over 80 built groups,
            # at about 7.5k instructions a maker's call)
            note = new_model(RoundNote)
            set_model_state(note, {"round": number, **parts})
            set_model_fields_set(note, _EVERY_FIELD)
            set_model_extra(note, None)
            set_model_private(note, None)
            remember(made, key, note, _NOTES_KEPT)
        notes.append(note)
    return notes


def _note_parts(judge: EvidenceJudge, snapshot: FaceValueEvidence) -> dict[str, object]:
    """What a round's note says of its evidence ``snapshot`` (all but the round), in the
    note's field order."""
    status = judge.verdict(snapshot)
    exact = snapshot.exact
    slots = judge.note_slots
    # (the records not received, filtered in C: a snapshot's note tests every record)
    open_slots = tuple(filterfalse(exact.__contains__, slots))
    return {
        "determined": None if status == "unknown" else status == "unsat",
        "received": len(slots) - len(open_slots),
        "needed": len(slots),
        "open": open_slots,
        "imprecise": len(snapshot.imprecise),
    }
