"""The records a request concerns (:meth:`RecordBook.slots`), written with loops (round 46):
against the plain definition it replaces, on made requests of every shape (candidates named or
not, of the task or not, all candidates, facts of the role, of others or none) and on the
readings of the example groups' questions."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_eval_colleagues import STYLE, TASK
from uncobench_z3.evaluation import example_groups, typed_task
from uncobench_z3.evaluation._record_book import RecordBook
from uncobench_z3.settings import Request
from uncobench_z3.spec import Slot, TypedTask


def _plain_slots(task: TypedTask, role: str, request: Request) -> list[Slot]:
    """The records, as the book made them before (comprehensions over
    ``concerned_candidates``)."""
    candidates = request.concerned_candidates(task.candidates)
    own = tuple(task.facts_of(role))
    facts = [f for f in own if f in request.facts] or list(own)
    return [(c, f) for c in candidates for f in facts]


def _request(candidates: Iterable[str], all_candidates: bool, facts: Iterable[str]) -> Request:
    return Request(
        text="",
        role=None,
        candidates=tuple(candidates),
        all_candidates=all_candidates,
        pronoun=None,
        facts=tuple(facts),
        contexts=(),
        members=(),
        values=(),
        intents=frozenset(),
    )


_BOOK = RecordBook(TASK, STYLE)
_NAMES = [*TASK.candidates, "nobody"]
_FACTS = [*TASK.facts, "no_such_fact"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(TASK.roles)),
    st.lists(st.sampled_from(_NAMES), unique=True),
    st.booleans(),
    st.lists(st.sampled_from(_FACTS), unique=True),
)
def test_a_requests_records_are_as_before(
    role: str, candidates: list[str], all_candidates: bool, facts: list[str]
) -> None:
    request = _request(candidates, all_candidates, facts)
    made = _BOOK.slots(role, request)
    assert type(made) is list
    assert made == _plain_slots(TASK, role, request)


def test_the_examples_readings_concern_the_records_as_before() -> None:
    questions = [
        "Please send me everything.",
        "For every candidate, please send your records of: {facts}",
        "What is {name}'s {fact}?",
        "{name}, all of it please",
        "and for all candidates the {fact}?",
        "Did he pass?",
    ]
    checked = 0
    for group in example_groups():
        task = typed_task(group)
        book = RecordBook(task, STYLE)
        labels = [fact.label for fact in task.facts.values()]
        for role in task.roles:
            for name in [*task.candidates, ""]:
                for label in labels:
                    for question in questions:
                        text = question.format(name=name, fact=label, facts=", ".join(labels))
                        request, slots = book.concerned(role, text, task.candidates[0])
                        assert list(slots) == _plain_slots(task, role, request)
                        checked += 1
    assert checked > 100
