"""Scoring's shortcuts against the plain path, on the generated traces of
:mod:`tests.test_eval_evidence` (which share reply tuples across rounds, as a group's
faithful replies do):

* attribution given the last round's evidence (its exact values' verdict looked up in the
  judge the round notes filled) labels as attribution reading the trace alone on a new judge;
* round notes kept by a group's judge and shared by its samples equal notes made alone;
* an exact statement at its record's true value reads as the record's own value object, and
  the admission questions answer alike for equal values that are other objects;
* attribution's one pass over a trace (the values of a record compared with its first one)
  gives the definition's evidence and accepted statements, and the labels a group remembers
  by them (with the answer) equal labels made alone;
* an imprecise statement's reading remembered by a group's task tables is the statement's.
"""

from __future__ import annotations

import itertools
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_eval_evidence import BUDGET, GROUPS, TASKS, _statements, parsed_answers, traces
from uncobench_z3.evaluation import RoundRecord
from uncobench_z3.evaluation._admission import settle_admission
from uncobench_z3.evaluation._attribution import (
    EvidenceJudge,
    _attribute,
    _decision_records,
    attribute_error,
    received_evidence,
)
from uncobench_z3.evaluation._completion import TaskTables
from uncobench_z3.evaluation._evidence import evidence_by_round
from uncobench_z3.evaluation._notes import _note_parts, round_notes
from uncobench_z3.settings import StatedValue, stated_imprecision, stated_value
from uncobench_z3.spec import Slot, TypedTask, Value, ValueParseError


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_attribution_given_the_last_evidence_equals_reading_the_trace(
    data: st.DataObject,
) -> None:
    index, trace = data.draw(traces())
    parsed = data.draw(parsed_answers(index))
    task, gold = TASKS[index], GROUPS[index].gold
    judge = EvidenceJudge(task, gold, BUDGET)
    evidence = evidence_by_round(task, trace, judge.readings)
    round_notes(task, gold, trace, evidence=evidence, judge=judge)  # (the judge remembers)
    given_evidence = _attribute(judge, trace, parsed, evidence[-1])
    assert given_evidence == _attribute(EvidenceJudge(task, gold, BUDGET), trace, parsed)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_notes_of_a_groups_samples_equal_each_made_alone(
    data: st.DataObject,
) -> None:
    index, first = data.draw(traces())
    _, second = data.draw(traces(index))
    task, gold = TASKS[index], GROUPS[index].gold
    shared = EvidenceJudge(task, gold, BUDGET)
    for trace in (first, second, first):
        alone = EvidenceJudge(task, gold, BUDGET)
        notes = round_notes(task, gold, trace, judge=shared)
        assert [n.model_dump() for n in notes] == [
            n.model_dump() for n in round_notes(task, gold, trace, judge=alone)
        ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_admission_answers_alike_for_the_true_value_object_and_an_equal_copy(
    data: st.DataObject,
) -> None:
    index, trace = data.draw(traces())
    parsed = data.draw(parsed_answers(index))
    task = TASKS[index]
    if parsed is None or parsed.decision is None or parsed.candidate == "not-a-candidate":
        return
    evidence, accepted = received_evidence(task, trace)
    for slot, value in evidence.items():
        if type(value) is type(task.values[slot]) and value == task.values[slot]:
            assert value is task.values[slot]  # (read as the record's own value)
    copies = {slot: pickle.loads(pickle.dumps(value)) for slot, value in evidence.items()}
    for fixed in (evidence, {**evidence, **{s: task.values[s] for s in accepted}}):
        copied = {slot: pickle.loads(pickle.dumps(value)) for slot, value in fixed.items()}
        assert settle_admission(task, fixed, accepted, parsed) == settle_admission(
            task, copied, accepted, parsed
        )
    assert copies == evidence


def _plain_received(
    task: TypedTask, trace: list[RoundRecord]
) -> tuple[dict[Slot, Value], dict[Slot, StatedValue]]:
    """Attribution's evidence and accepted statements by their definition: every value
    stated exactly in the required context kept in a set, a record whose set holds one value
    received (at the last value stated); the last defective statement of each other record."""
    required = task.required_contexts
    seen: dict[Slot, set[Value]] = {}
    values: dict[Slot, Value] = {}
    defective: dict[Slot, StatedValue] = {}
    for stated in (s for record in trace for reply in record.replies for s in reply.stated):
        slot = (stated.candidate, stated.fact)
        if stated.is_exact and stated.context == required[stated.fact]:
            value = stated_value(task, stated)
            seen.setdefault(slot, set()).add(value)
            values[slot] = value
        else:
            defective[slot] = stated
    evidence = {slot: values[slot] for slot, found in seen.items() if len(found) == 1}
    return evidence, {slot: s for slot, s in defective.items() if slot not in seen}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_received_evidence_equals_the_definition(case: tuple[int, list[RoundRecord]]) -> None:
    index, trace = case
    task = TASKS[index]
    evidence, accepted = received_evidence(task, trace)
    plain_evidence, plain_accepted = _plain_received(task, trace)
    assert evidence == plain_evidence and list(evidence) == list(plain_evidence)
    assert [type(v) for v in evidence.values()] == [type(v) for v in plain_evidence.values()]
    assert accepted == plain_accepted and list(accepted) == list(plain_accepted)


_GROUP_KEYS = itertools.count()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_labels_a_group_remembers_equal_labels_made_alone(data: st.DataObject) -> None:
    """Attribution remembers a group's labels by the evidence, the accepted statements and
    the answer: every trace here shares a start with the first; one states its exact values
    alone (the same evidence, nothing accepted), one adds a round that changes neither (an
    earlier reply again); answers repeat."""
    index, first = data.draw(traces())
    task, gold = TASKS[index], GROUPS[index].gold
    _, other = data.draw(traces(index))
    answers = [data.draw(parsed_answers(index)) for _ in range(2)]
    again = RoundRecord(round=len(first) + 1, action="ask", replies=first[-1].replies)
    required = task.required_contexts
    exact_only = [  # the same evidence, no defective statement
        RoundRecord(round=record.round, action="ask", replies=tuple(
            reply.model_copy(update={"stated": tuple(
                s for s in reply.stated if s.is_exact and s.context == required[s.fact]
            )})
            for reply in record.replies
        ))
        for record in first
    ]  # fmt: skip
    cases = [first, exact_only, [*first, again], [*first, *other], [*first[:1], *other]]
    group = f"shortcuts-{next(_GROUP_KEYS)}"  # (a memo of its own, not another test's)
    for trace in cases:
        for parsed in answers:
            remembered = attribute_error(task, gold, trace, parsed, BUDGET, group_hash=group)
            assert remembered == _attribute(EvidenceJudge(task, gold, BUDGET), trace, parsed)


@pytest.mark.parametrize("index", range(len(TASKS)))
def test_an_imprecision_remembered_is_the_statements(index: int) -> None:
    task = TASKS[index]
    tables = TaskTables(task)
    pool = [s for s in _statements(index) if not s.is_exact]
    assert len({(s.candidate, s.fact) for s in pool}) < len(pool)  # (several a record)
    for stated in [*pool, *pool, *(s.model_copy() for s in pool)]:
        assert tables.imprecision(stated) == stated_imprecision(task, stated)
    unreadable = pool[0].model_copy(update={"high": None})
    for _ in range(2):
        with pytest.raises(ValueParseError):
            tables.imprecision(unreadable)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=traces())
def test_a_judges_record_lists_and_counts_are_their_definitions(
    case: tuple[int, list[RoundRecord]],
) -> None:
    """The decision records a judge's tables try, the records a note lists and those it
    leaves open, and the decision records a label counts, each against its plain definition
    (made by filtering every slot, sorting the facts per candidate, and testing each record
    in turn) on every round's evidence."""
    index, trace = case
    task = TASKS[index]
    judge = EvidenceJudge(task, GROUPS[index].gold, BUDGET)
    decision = frozenset(task.decision_facts())
    assert TaskTables(task).decision_slots == tuple(
        slot for slot in task.all_slots() if slot[1] in decision
    )
    assert judge.note_slots == tuple(
        (candidate, fact) for candidate in task.candidates for fact in sorted(decision)
    )
    for snapshot in evidence_by_round(task, trace):
        parts = _note_parts(judge, snapshot)
        assert parts["open"] == tuple(s for s in judge.note_slots if s not in snapshot.exact)
        # (a record of another candidate or fact counts by its fact alone, as before)
        stated = {**snapshot.exact, ("nobody", next(iter(decision))): 1, ("nobody", "x"): 2}
        assert _decision_records(judge, stated) == (
            sum(1 for _, fact in stated if fact in decision),
            len(task.candidates) * len(decision),
        )
