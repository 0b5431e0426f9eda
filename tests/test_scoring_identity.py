"""A judge's readings name each decision record by the judge's own object of it, and round
notes written out equal notes made by the model's constructor:

* every reading a judge's table makes (of the book's statements known at once, of copies, of
  defects' statements, read as new) names a decision record by the object the judge's tables
  and notes name it by (so that a snapshot's exact values find it by identity), and reads as
  the plain reading otherwise;
* the snapshots read with the judge's table equal those read without one, round by round;
* a reader taking a trace's rounds in one call gives the snapshots it gives read round by
  round (:meth:`EvidenceReader.read`, then :meth:`EvidenceReader.evidence`), in parts too;
* each round note equals the note ``RoundNote(...)`` makes of its fields, with every field
  set, frozen, and its fields set shared without being changeable.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import ValidationError

from tests.test_eval_evidence import BUDGET, GROUPS, TASKS, traces
from tests.test_evidence_faithful import BOOKS, _defect_statements
from uncobench_z3.evaluation import PreparedGroup, RoundNote, RoundRecord
from uncobench_z3.evaluation._evidence import (
    EvidenceReader,
    ReadingTable,
    evidence_by_round,
    new_reading,
    read_statement,
)
from uncobench_z3.evaluation._evidence_judge import EvidenceJudge
from uncobench_z3.evaluation._notes import round_notes


def _judge(index: int) -> EvidenceJudge:
    judge = EvidenceJudge(TASKS[index], GROUPS[index].gold, BUDGET)
    judge.know_faithful(TASKS[index], BOOKS[index].faithful)
    return judge


def test_a_judges_tables_and_notes_share_each_decision_records_object() -> None:
    for index, task in enumerate(TASKS):
        judge = EvidenceJudge(task, GROUPS[index].gold, BUDGET)
        slots = judge.readings.slots
        assert set(slots) == set(judge.tables.decision_slots)
        assert all(slots[slot] is slot for slot in judge.tables.decision_slots)
        assert all(slots[slot] is slot for slot in judge.note_slots)


def test_a_judges_readings_name_decision_records_by_its_objects() -> None:
    named = 0
    for index, task in enumerate(TASKS):
        judge = _judge(index)
        table, slots = judge.readings, judge.readings.slots
        faithful = BOOKS[index].faithful
        copies = [stated.model_copy() for stated in faithful.values()]
        for stated in [*faithful.values(), *copies, *_defect_statements(index)]:
            kept = table.get(id(stated))
            reading = kept if kept is not None else new_reading(task, stated, faithful, table)
            plain = read_statement(task, stated)
            if kept is None and plain[1] != reading[1]:
                raise AssertionError(f"{stated} read as another record")
            assert reading[1] == plain[1]
            if reading[1] in slots:
                assert reading[1] is slots[reading[1]]
                if reading[7] is not None:
                    assert reading[7][0] is slots[reading[1]]
                named += 1
            # the same reading as a table that names no record by an object of its own
            assert reading[:7] == new_reading(task, stated, faithful, ReadingTable())[:7]
    assert named > 100


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=traces())
def test_snapshots_read_with_a_judges_table_equal_those_read_without(
    case: tuple[int, list[RoundRecord]],
) -> None:
    index, trace = case
    task = TASKS[index]
    judge = _judge(index)
    slots = judge.readings.slots
    read = evidence_by_round(task, trace, judge.readings)
    plain = evidence_by_round(task, trace)
    assert len(read) == len(plain)
    for snapshot, alone in zip(read, plain, strict=True):
        assert snapshot == alone
        assert snapshot.untrue == alone.untrue and snapshot.conflicted == alone.conflicted
        assert list(snapshot.exact) == list(alone.exact)
        assert all(slot is slots.get(slot, slot) for slot in snapshot.exact)
        assert all(slot is slots.get(slot, slot) for slot, _ in snapshot.imprecise)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=traces())
def test_round_notes_equal_the_notes_the_model_makes(
    case: tuple[int, list[RoundRecord]],
) -> None:
    index, trace = case
    task, gold = TASKS[index], GROUPS[index].gold
    for note in round_notes(task, gold, trace, judge=_judge(index)):
        fields = dict(note.__dict__)
        made = RoundNote(**fields)
        assert note == made and list(fields) == list(RoundNote.model_fields)
        assert note.model_fields_set == made.model_fields_set == set(RoundNote.model_fields)
        assert note.model_dump_json() == made.model_dump_json()
        assert note.__pydantic_extra__ is None and note.__pydantic_private__ is None
        assert note.model_copy(update={"round": 0}).model_fields_set == note.model_fields_set
        with pytest.raises(ValidationError):
            note.round = 0  # type: ignore[misc]
        with pytest.raises(TypeError):
            note.model_fields_set.add("round")


def test_a_prepared_groups_scoring_names_records_as_its_judge() -> None:
    """The book a sample's scoring hands the judge (a prepared group's) is read with the
    judge's objects of the decision records."""
    prepared = PreparedGroup.of(GROUPS[0], TASKS[0])
    judge = EvidenceJudge(TASKS[0], GROUPS[0].gold, BUDGET)
    judge.know_faithful(prepared.book.task, prepared.book.faithful)
    slots = judge.readings.slots
    for slot, stated in prepared.book.faithful.items():
        if slot in slots:
            assert judge.readings[id(stated)][1] is slots[slot]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=traces())
def test_a_traces_rounds_read_in_one_call_as_round_by_round(
    case: tuple[int, list[RoundRecord]],
) -> None:
    index, trace = case
    task = TASKS[index]
    for table in (None, _judge(index).readings):
        one = EvidenceReader(task, table)
        by_round = []
        for record in trace:
            one.read(record)
            by_round.append(one.evidence())
        assert one.rounds == len(trace)
        for split in {0, len(trace) // 2, len(trace)}:
            reader, snapshots = EvidenceReader(task, table), []
            reader.read_rounds(trace[:split], snapshots)
            reader.read_rounds(trace[split:], snapshots)
            assert reader.rounds == len(trace) and snapshots == by_round
            assert [s.untrue for s in snapshots] == [s.untrue for s in by_round]
            assert [s.conflicted for s in snapshots] == [s.conflicted for s in by_round]
            # a round that changed nothing shares the snapshot before it, as round by round
            assert [a is b for a, b in pairwise(snapshots)] == [
                a is b for a, b in pairwise(by_round)
            ]
        assert evidence_by_round(task, trace, table) == by_round
