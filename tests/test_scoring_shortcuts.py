"""Scoring's shortcuts against the plain path, on the generated traces of
:mod:`tests.test_eval_evidence` (which share reply tuples across rounds, as a group's
faithful replies do):

* attribution given the last round's evidence (its exact values' verdict looked up in the
  judge the round notes filled) labels as attribution reading the trace alone on a new judge;
* round notes kept by a group's judge and shared by its samples equal notes made alone;
* an exact statement at its record's true value reads as the record's own value object, and
  the admission questions answer alike for equal values that are other objects.
"""

from __future__ import annotations

import pickle

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_eval_evidence import BUDGET, GROUPS, TASKS, parsed_answers, traces
from uncobench_z3.evaluation._admission import settle_admission
from uncobench_z3.evaluation._attribution import EvidenceJudge, _attribute, received_evidence
from uncobench_z3.evaluation._evidence import evidence_by_round
from uncobench_z3.evaluation._notes import round_notes


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
