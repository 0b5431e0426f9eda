"""The behaviour counts' shortcuts against the plain definition: :func:`behaviour_of` reads
the records a reply's statements give exactly once per tuple of statements and ``required``
(remembered by identity: a faithful reply's statements are one tuple for every reply of the
group with its records); counting from every statement every time gives the same counts, on
random traces whose records (and so their statements) are shared between rounds and traces,
read with two ``required`` mappings that disagree. Scoring passes the trace's evidence by
round instead, whose snapshots say what was received: the same counts on traces of example
tasks whose records are stated exactly, at two values, in another context and imprecisely."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3._trusted import SharedFieldsSet, TrustedMaker
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import typed_task
from uncobench_z3.evaluation._behaviour import Behaviour, behaviour_of
from uncobench_z3.evaluation._evidence import evidence_by_round
from uncobench_z3.evaluation._trace import ReplyRecord, RoundRecord
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import TypedTask, to_json_scalar

ROLES = ("ops", "finance", "security")
SLOTS = [(c, f) for c in ("vance", "natarajan") for f in ("clearance", "allowance")]
CONTEXTS = ("current", "previous")
KINDS = ("misaligned", "incomplete", "missed")
REQUIRED = (
    {"clearance": "current", "allowance": "current"},
    {"clearance": "previous", "allowance": "current"},
)


def plain_behaviour(trace: Sequence[RoundRecord], required: Mapping[str, str]) -> Behaviour:
    """The counts of the module's docstring, from the records' fields every time."""
    received: set[tuple[str, str]] = set()
    asked: set[str] = set()
    counts = dict.fromkeys(("contacts", "waits", "redundant_contacts", "invalid_actions"), 0)
    counts |= dict.fromkeys(("targeted_follow_ups", "generic_follow_ups"), 0)
    seen: list[str] = []
    fixed: list[str] = []
    pending: set[str] = set()
    designated: set[str] = set()
    answered_pending = False
    for record in trace:
        counts["waits"] += record.action == "wait"
        counts["invalid_actions"] += record.action == "invalid"
        for reply in record.replies:
            if reply.pending:
                pending.add(reply.role)
                designated.add(reply.role)
            if reply.answers_round is not None:
                pending.discard(reply.role)
            fixed = list(dict.fromkeys([*fixed, *reply.resolved]))
            if reply.delivered:
                continue
            counts["contacts"] += 1
            if reply.role in asked and all(slot in received for slot in reply.concerned):
                counts["redundant_contacts"] += 1
            if reply.follow_up is not None:
                counts[f"{reply.follow_up}_follow_ups"] += 1
            seen = list(dict.fromkeys([*seen, *reply.defects]))
        answered_pending = answered_pending or (record.action == "answer" and bool(pending))
        for reply in record.replies:
            asked.add(reply.role)
            received |= {
                (s.candidate, s.fact)
                for s in reply.stated
                if s.is_exact and s.context == required.get(s.fact)
            }
    contacts_designated = sum(
        1 for r in trace for reply in r.replies if reply.role in designated and not reply.delivered
    )
    return Behaviour(
        **counts,
        defects_seen=tuple(seen),
        defects_resolved=tuple(fixed),
        answered_pending=answered_pending,
        designated_contacts=contacts_designated,
    )


@st.composite
def statements(draw: st.DrawFn) -> StatedValue:
    candidate, fact = draw(st.sampled_from(SLOTS))
    exact = draw(st.booleans())
    return StatedValue(
        candidate=candidate,
        fact=fact,
        context=draw(st.sampled_from(CONTEXTS)),
        value=1 if exact else None,
        options=None if exact else [1, 2],
    )


@st.composite
def replies(draw: st.DrawFn) -> ReplyRecord:
    kinds = st.lists(st.sampled_from(KINDS), max_size=2).map(tuple)
    return ReplyRecord(
        role=draw(st.sampled_from(ROLES)),
        question="q",
        text="t",
        stated=tuple(draw(st.lists(statements(), max_size=4))),
        concerned=tuple(draw(st.lists(st.sampled_from(SLOTS), max_size=4))),
        defects=draw(kinds),
        resolved=draw(kinds),
        follow_up=draw(st.sampled_from((None, "targeted", "generic"))),
        pending=draw(st.booleans()),
        answers_round=draw(st.sampled_from((None, 1))),
        delivered=draw(st.booleans()),
    )


@st.composite
def traces(draw: st.DrawFn, pool: list[ReplyRecord]) -> list[RoundRecord]:
    """Rounds whose replies are drawn from ``pool`` (the same record objects again)."""
    rounds = []
    for number in range(1, draw(st.integers(1, 6)) + 1):
        chosen = draw(st.lists(st.sampled_from(pool), max_size=3))
        action = draw(st.sampled_from(("ask", "wait", "answer", "invalid")))
        rounds.append(RoundRecord(round=number, action=action, replies=tuple(chosen)))
    return rounds


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_behaviour_counts_equal_the_plain_definition(data: st.DataObject) -> None:
    pool = data.draw(st.lists(replies(), min_size=1, max_size=6))
    for _ in range(4):  # traces sharing the pool's records, read with either mapping
        trace = data.draw(traces(pool))
        required = data.draw(st.sampled_from(REQUIRED))
        assert behaviour_of(trace, required) == plain_behaviour(trace, required)


# -- the records received read from the evidence's snapshots ----------------------------------
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "groups"
TASKS = [typed_task(group) for path in sorted(EXAMPLES.glob("*.group.json"))
         for group in load_groups(path)][:4]  # fmt: skip


def _task_statements(task: TypedTask) -> tuple[list[tuple[str, str]], list[StatedValue]]:
    """Two candidates' two facts of ``task``, and what a reply may state of them: the true
    value and another (stated both, a record is conflicted), each in the required context
    and in another, and an imprecise statement."""
    slots = [(c, f) for c in task.candidates[:2] for f in sorted(task.facts)[:2]]
    found = []
    for candidate, fact in slots:
        typed, value = task.facts[fact], task.values[(candidate, fact)]
        other = (not value) if typed.type == "bool" else typed.value_of(typed.code_range()[1])
        if other == value:
            other = typed.value_of(typed.code_range()[0])
        for context in (typed.context, "elsewhere"):
            for stated in (value, other):
                found.append(StatedValue(candidate=candidate, fact=fact, context=context,
                                         value=to_json_scalar(stated)))  # fmt: skip
        found.append(StatedValue(candidate=candidate, fact=fact, context=typed.context,
                                 options=[to_json_scalar(value)]))  # fmt: skip
    return slots, found


@st.composite
def task_traces(draw: st.DrawFn) -> tuple[TypedTask, list[RoundRecord]]:
    """A trace of an example's task whose replies (some the same records again) state
    records exactly, at two values, in another context or imprecisely."""
    task = draw(st.sampled_from(TASKS))
    slots, pool = _task_statements(task)
    kinds = st.lists(st.sampled_from(KINDS), max_size=2).map(tuple)
    made = st.builds(
        ReplyRecord,
        role=st.sampled_from(ROLES[:2]),
        question=st.just("q"),
        text=st.just("t"),
        stated=st.lists(st.sampled_from(pool), max_size=4).map(tuple),
        concerned=st.lists(st.sampled_from(slots), min_size=1, max_size=3).map(tuple),
        defects=kinds,
        follow_up=st.sampled_from((None, "targeted", "generic")),
        pending=st.booleans(),
        delivered=st.booleans(),
    )
    replies_pool = draw(st.lists(made, min_size=1, max_size=6))
    rounds = []
    for number in range(1, draw(st.integers(1, 7)) + 1):
        chosen = draw(st.lists(st.sampled_from(replies_pool), max_size=3))
        action = draw(st.sampled_from(("ask", "wait", "answer", "invalid")))
        rounds.append(RoundRecord(round=number, action=action, replies=tuple(chosen)))
    return task, rounds


@settings(max_examples=400, deadline=None)
@given(task_traces())
def test_behaviour_from_the_evidence_equals_the_plain_definition(
    drawn: tuple[TypedTask, list[RoundRecord]],
) -> None:
    """Scoring passes the trace's evidence by round: the records received are its snapshots'
    (exact or conflicted), and the counts are those of the statements read again."""
    task, trace = drawn
    required = task.required_contexts
    evidence = evidence_by_round(task, trace)
    expected = plain_behaviour(trace, required)
    assert behaviour_of(trace, required) == expected
    assert behaviour_of(trace, required, evidence) == expected


def test_behaviour_refuses_evidence_of_another_trace() -> None:
    task = TASKS[0]
    _, pool = _task_statements(task)
    reply = ReplyRecord(role="ops", question="q", text="t", stated=(pool[0],))
    trace = [RoundRecord(round=n, action="ask", replies=(reply,)) for n in (1, 2)]
    evidence = evidence_by_round(task, trace)
    with pytest.raises(ValueError):
        behaviour_of(trace, task.required_contexts, evidence[:1])


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_behaviour_counts_are_the_model_the_maker_makes(data: st.DataObject) -> None:
    """:func:`behaviour_of` writes its model out: the state in field order, the shared
    fields set of every field given (refusing changes), as the trusted maker makes it."""
    pool = data.draw(st.lists(replies(), min_size=1, max_size=6))
    trace = data.draw(traces(pool))
    made = behaviour_of(trace, data.draw(st.sampled_from(REQUIRED)))
    expected = TrustedMaker(Behaviour)(**made.__dict__)
    assert list(made.__dict__.items()) == list(expected.__dict__.items())
    assert list(made.__dict__) == list(Behaviour.model_fields)
    assert type(made.model_fields_set) is SharedFieldsSet
    assert made.model_fields_set == expected.model_fields_set == set(Behaviour.model_fields)
    assert made.model_fields_set is behaviour_of((), {}).model_fields_set
    assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None
    assert made == expected and made.model_dump_json() == expected.model_dump_json()
    with pytest.raises(TypeError, match="not changed"):
        made.model_fields_set.add("x")
    assert made.model_copy(update={"waits": 9}).waits == 9
