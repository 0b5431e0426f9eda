"""The behaviour counts and the sample's record read the trace's fields as attributes (round 46).

:func:`uncobench_z3.evaluation._behaviour.behaviour_of` and ``_run_sample._record`` read a
record's and a reply's fields as plain attributes (the models read plainly: see
tests/test_plain_reads.py), not from their ``__dict__``, and compare a follow-up's kind only when
there is one. Here a follow-up's kind given as another text object equal to the literal still
counts (the comparison is by value), a trace made without validation reads as a validated one,
and the counts and the record's fields read from the trace agree with the trace.
"""

from __future__ import annotations

from uncobench_z3.evaluation._behaviour import behaviour_of
from uncobench_z3.evaluation._trace import ReplyRecord, RoundRecord

REQUIRED = {"clearance": "current"}


def _reply(role: str, **fields: object) -> ReplyRecord:
    return ReplyRecord(role=role, question="q", text="t", **fields)  # type: ignore[arg-type]


def _kind(text: str) -> str:
    """``text`` as a new object (not the interned literal)."""
    made = "".join(list(text))
    assert made == text
    return made


def test_follow_up_kinds_count_by_value() -> None:
    """Kinds that are other objects equal to the literals count as the literals do; replies
    with none count as neither."""
    kinds = [_kind("targeted"), _kind("generic"), None, "targeted", None, "generic", "targeted"]
    replies = [
        ReplyRecord.model_construct(role=f"r{n}", question="q", text="t", follow_up=kind)
        for n, kind in enumerate(kinds)
    ]
    assert replies[0].follow_up == "targeted" and replies[0].follow_up is not "targeted"  # noqa: F632
    trace = [RoundRecord.model_construct(round=1, action="ask", replies=tuple(replies))]
    behaviour = behaviour_of(trace, REQUIRED)
    assert (behaviour.targeted_follow_ups, behaviour.generic_follow_ups) == (3, 2)
    assert behaviour.contacts == len(kinds)


def test_a_trace_made_without_validation_counts_as_a_validated_one() -> None:
    """The same trace, validated and made with ``model_construct``: the same counts (every
    field of a reply read: pending, answered, resolved, delivered, defects, follow-ups)."""
    plain = [
        dict(role="ops", pending=True, defects=("missed",)),
        dict(role="finance", follow_up="generic"),
        dict(role="ops", answers_round=1, delivered=True, resolved=("missed",)),
        dict(role="ops", follow_up="targeted", concerned=(("vance", "clearance"),)),
        dict(role="finance", concerned=(("vance", "clearance"),)),
    ]
    rounds = [("ask", plain[:2]), ("wait", plain[2:3]), ("ask", plain[3:]), ("answer", [])]
    checked = [
        RoundRecord(round=n, action=action, replies=tuple(_reply(**f) for f in fields))
        for n, (action, fields) in enumerate(rounds, start=1)
    ]
    made = [
        RoundRecord.model_construct(
            round=n,
            action=action,
            replies=tuple(
                ReplyRecord.model_construct(question="q", text="t", **f)  # type: ignore[arg-type]
                for f in fields
            ),
        )
        for n, (action, fields) in enumerate(rounds, start=1)
    ]
    counts = behaviour_of(checked, REQUIRED)
    assert behaviour_of(made, REQUIRED) == counts
    assert counts.contacts == 4 and counts.waits == 1
    assert (counts.targeted_follow_ups, counts.generic_follow_ups) == (1, 1)
    assert counts.defects_seen == ("missed",) and counts.defects_resolved == ("missed",)
    assert counts.designated_contacts == 2  # (ops: asked twice, its late reply not counted)
    assert counts.redundant_contacts == 0
    assert counts.answered_pending is False
