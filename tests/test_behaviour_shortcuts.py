"""The behaviour counts' shortcut against the plain definition: :func:`behaviour_of` reads
the records a reply's statements give exactly once per tuple of statements and ``required``
(remembered by identity: a faithful reply's statements are one tuple for every reply of the
group with its records); counting from every statement every time gives the same counts, on
random traces whose records (and so their statements) are shared between rounds and traces,
read with two ``required`` mappings that disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.evaluation._behaviour import Behaviour, behaviour_of
from uncobench_z3.evaluation._trace import ReplyRecord, RoundRecord
from uncobench_z3.settings import StatedValue

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
