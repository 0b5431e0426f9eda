"""The record book's faithful lines read from a stored table in one loop, and a faithful
reply's text taken from them (round 45): against the plain definitions they replace, on the
example groups' tables and on tables broken at random (verify refutes those; the book writes
the lines of a role whose table does not fit its records)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uncobench_z3.evaluation._record_book as record_book
from tests.test_eval_colleagues import GROUP, STYLE, TASK
from uncobench_z3.construct import RenderedTask, render_task
from uncobench_z3.evaluation import ScriptedColleagues, example_groups, typed_task
from uncobench_z3.evaluation._record_book import RecordBook
from uncobench_z3.spec import Slot, TypedTask

Table = tuple[dict[str, list[str]], dict[str, list[int]]]


@cache
def _examples() -> tuple[tuple[TypedTask, RenderedTask], ...]:
    made = []
    for group in example_groups():
        task = typed_task(group)
        made.append((task, render_task(task, group.seed)))
    return tuple(made)


def _plain_stored_lines(
    task: TypedTask, records: Mapping[str, Sequence[str]], places: Mapping[str, Sequence[int]]
) -> dict[Slot, str]:
    """The lines the table gives, as the book read them before (``slots_of`` and a zip)."""
    lines: dict[Slot, str] = {}
    for role, found in places.items():
        role_lines = records.get(role, ())
        slots = task.slots_of(role)
        if len(found) == len(slots) and (
            not found or (min(found) >= 0 and max(found) < len(role_lines))
        ):
            lines.update(zip(slots, map(role_lines.__getitem__, found), strict=True))
    return lines


def _written(task: TypedTask, rendered: RenderedTask, slot: Slot) -> str:
    """A faithful line written, not read (what the book writes without a table)."""
    return RecordBook(task, rendered.style).faithful_line(slot)


def _table(rendered: RenderedTask) -> Table:
    assert rendered.faithful is not None
    records = {role: list(lines) for role, lines in rendered.records.items()}
    return records, {role: list(found) for role, found in rendered.faithful.items()}


def test_the_examples_tables_are_read_as_before() -> None:
    for task, rendered in _examples():
        records, places = _table(rendered)
        book = RecordBook(task, rendered.style, (records, places))
        book._read_stored_lines()
        expected = _plain_stored_lines(task, records, places)
        assert book._lines == expected
        assert list(book._lines) == list(expected)  # (the same order too)
        assert len(expected) == len(task.all_slots())
        assert book._stored is None


@st.composite
def _broken_tables(draw: st.DrawFn) -> tuple[TypedTask, RenderedTask, Table]:
    task, rendered = draw(st.sampled_from(_examples()))
    records, places = _table(rendered)
    roles = sorted(places)
    for role in draw(st.lists(st.sampled_from(roles), max_size=3)):
        how = draw(st.sampled_from(["shuffle", "shorter", "longer", "negative", "past", "none"]))
        found = places[role]
        if how == "shuffle":
            places[role] = draw(st.permutations(found))
        elif how == "shorter":
            places[role] = found[:-1]
        elif how == "longer":
            places[role] = [*found, 0]
        elif how == "negative" and found:
            places[role] = [*found[:-1], draw(st.integers(-5, -1))]
        elif how == "past" and found:
            places[role] = [len(records.get(role, ())) + draw(st.integers(0, 3)), *found[1:]]
        elif how == "none":
            records.pop(role, None)
    if draw(st.booleans()):
        places["nobody"] = draw(st.lists(st.integers(-1, 3), max_size=2))
    if draw(st.booleans()):
        places[roles[0]] = []
    return task, rendered, (records, places)


@settings(max_examples=200, deadline=None)
@given(_broken_tables())
def test_a_broken_table_is_read_as_before(drawn: tuple[TypedTask, RenderedTask, Table]) -> None:
    task, rendered, (records, places) = drawn
    book = RecordBook(task, rendered.style, (records, places))
    book._read_stored_lines()
    expected = _plain_stored_lines(task, records, places)
    assert book._lines == expected
    assert list(book._lines) == list(expected)


@settings(max_examples=200, deadline=None)
@given(_broken_tables(), st.data())
def test_a_faithful_reply_is_its_records_lines(
    drawn: tuple[TypedTask, RenderedTask, Table], data: st.DataObject
) -> None:
    """Read from the table, written where the table gives none, in the slots' order."""
    task, rendered, (records, places) = drawn
    book = RecordBook(task, rendered.style, (records, places))
    every = task.all_slots()
    slots = tuple(data.draw(st.lists(st.sampled_from(every), min_size=1, max_size=6)))
    stated, text = book.faithful_reply(slots)
    assert stated == tuple(book.faithful[slot] for slot in slots)
    read = _plain_stored_lines(task, records, places)
    lines = [read[slot] if slot in read else _written(task, rendered, slot) for slot in slots]
    assert text == "\n".join(lines)
    assert book.faithful_reply(slots) == (stated, text)  # (remembered)


# -- a faithful reply by its question ----------------------------------------------------------
_QUESTIONS = (
    "What is Marcus Vance's clearance?",
    "Did he pass?",
    "And everyone's clearance?",
    "Did she pass?",
    "All your records, please.",
    "What about Ruiz and priya?",
    "Is Ruiz available?",
    "What is Marcus Vance's clearance?",
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.sampled_from(_QUESTIONS)), max_size=14))
def test_a_role_with_no_defect_answers_as_by_its_records(asked: list[tuple[int, str]]) -> None:
    """A reliable setting's replies (one lookup by the question) against the plain steps on a
    book of their own: the reading, the focus it leaves, the faithful reply of its records."""
    team = ScriptedColleagues(TASK, GROUP.setting("reliable").defects, STYLE)
    plain = RecordBook(TASK, STYLE)
    focus: dict[str, str | None] = {}
    for at, question in asked:
        role = TASK.roles[at % len(TASK.roles)]
        reply = team.reply(role, question)
        request, slots = plain.concerned(role, question, focus.get(role))
        if len(request.candidates) == 1:
            focus[role] = request.candidates[0]
        assert reply == plain.faithful_colleague_reply(role, slots)
        assert team.records.is_faithful(reply)
        assert team.concerned_slots(role, question) == list(
            plain.concerned_slots(role, question, focus.get(role))
        )
        assert team._focus == focus


def test_the_answers_are_let_go_with_the_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the book's faithful replies start again, so do the answers that hold them: every
    answer handed out is a reply the book knows as faithful, the one of its records."""
    monkeypatch.setattr(record_book, "READINGS_KEPT", 3)
    book = RecordBook(TASK, STYLE)
    asked = [(role, question) for question in _QUESTIONS for role in TASK.roles] * 2
    for at in range(len(asked)):
        for role, question in asked[max(0, at - 2) : at + 1]:  # (each asked again, twice)
            request, reply = book.faithful_answer(role, question)
            assert book.is_faithful(reply)
            assert request == book.read(role, question)
            slots = book.concerned(role, question)[1]
            assert reply is book.faithful_colleague_reply(role, slots)


def test_an_answer_is_not_kept_past_its_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_book, "READINGS_KEPT", 3)
    book = RecordBook(TASK, STYLE)
    role = TASK.roles[0]
    first = book.faithful_answer(role, "All your records, please.")[1]
    slots = TASK.slots_of(role)
    for at in range(1, 4):  # (other replies, until the book's replies start again)
        book.faithful_colleague_reply(role, tuple(slots[:at]) if at < len(slots) else ())
    assert not book.is_faithful(first)
    again = book.faithful_answer(role, "All your records, please.")[1]
    assert again is not first and again == first and book.is_faithful(again)
