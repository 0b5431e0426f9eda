"""A reply's statements and text, written in one loop that looks each line up where the record
book keeps it (``RecordBook.reply_text``), are what the plain definition gives: each
defect statement's :meth:`RecordBook.statement_line`, each other record's
:meth:`RecordBook.faithful_line`, in the records' order; and the reply's own lookups of the
book's remembered answers and readings give the book's methods' results."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sample_helpers import stored_example_groups
from uncobench_z3.construct import statement_text
from uncobench_z3.evaluation import PreparedGroup, RecordBook, ScriptedColleagues
from uncobench_z3.settings import StatedValue, TaskGroup
from uncobench_z3.spec import Slot

GROUPS: list[TaskGroup] = stored_example_groups()


def _plain(
    book: RecordBook, slots: tuple[Slot, ...], statements: dict[Slot, StatedValue]
) -> tuple[tuple[StatedValue, ...], str]:
    """The definition (the reply's text as it was written before the loop)."""
    if not statements:
        return book.faithful_reply(slots)
    faithful = book.faithful
    ordered = tuple([statements[s] if s in statements else faithful[s] for s in slots])
    text = "\n".join(
        [book.statement_line(statements[s]) if s in statements else book.faithful_line(s)
         for s in slots]
    )  # fmt: skip
    return ordered, text


def _defect_statements(group: TaskGroup) -> list[StatedValue]:
    return [
        stated
        for setting in group.settings
        for defect in setting.defects
        for stated in [*(defect.first_reply or []), *(defect.resolved_reply or [])]
    ]


@st.composite
def _replies(draw: st.DrawFn) -> tuple[int, bool, list[tuple[Slot, StatedValue | None, bool]]]:
    """A group, whether its book is the prepared one (stored lines) or a fresh one (lines
    written), and a reply's records: each with a defect statement of its record or none,
    the statement itself or a copy the book has not seen."""
    index = draw(st.integers(0, len(GROUPS) - 1))
    group = GROUPS[index]
    stated_of: dict[Slot, list[StatedValue]] = {}
    for stated in _defect_statements(group):
        stated_of.setdefault((stated.candidate, stated.fact), []).append(stated)
    slots = sorted(PreparedGroup.of(group).book.faithful)
    chosen = draw(st.lists(st.sampled_from(slots), min_size=1, max_size=8, unique=True))
    records = []
    for slot in chosen:
        options = stated_of.get(slot, [])
        stated = draw(st.sampled_from([None, *options])) if options else None
        records.append((slot, stated, draw(st.booleans())))
    return index, draw(st.booleans()), records


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_replies())
def test_a_reply_text_is_its_lines_in_order(
    drawn: tuple[int, bool, list[tuple[Slot, StatedValue | None, bool]]],
) -> None:
    index, prepared_book, records = drawn
    group = GROUPS[index]
    prepared = PreparedGroup.of(group)
    task, style = prepared.task, prepared.rendered.style
    stored = (prepared.rendered.records, prepared.rendered.faithful) if prepared_book else None
    books = [RecordBook(task, style, stored), RecordBook(task, style, stored)]
    team = ScriptedColleagues(task, [], style, books[0])
    slots = tuple(slot for slot, _, _ in records)
    statements = {
        slot: (stated.model_copy() if copied else stated)
        for slot, stated, copied in records
        if stated is not None
    }
    for _ in range(2):  # (lines not found yet, then remembered)
        made = team._book.reply_text(slots, statements)
        assert made == _plain(books[1], slots, statements)
        assert made[1] == "\n".join(
            statement_text(task, stated, style) if slot in statements else books[1]._lines[slot]
            for slot, stated in zip(slots, made[0], strict=True)
        )
        for slot, stated in zip(slots, made[0], strict=True):
            assert stated is (statements[slot] if slot in statements else books[0].faithful[slot])


def test_a_defect_line_of_another_statement_at_the_same_address_is_its_own() -> None:
    """A line remembered by a statement's identity is taken only for that statement: one
    under the same id but another object (a remembered entry left by a statement no longer
    given) is written afresh."""
    group = GROUPS[0]
    prepared = PreparedGroup.of(group)
    task, style = prepared.task, prepared.rendered.style
    book = RecordBook(task, style)
    team = ScriptedColleagues(task, [], style, book)
    stated = next(s for s in _defect_statements(group) if not s.is_exact)
    slot = (stated.candidate, stated.fact)
    other = stated.model_copy(update={"context": stated.context + " (other)"})
    book._other_lines[id(stated)] = (other, "a line that is not the statement's")
    assert team._book.reply_text((slot,), {slot: stated})[1] == statement_text(task, stated, style)


def test_the_replies_own_lookups_are_the_books_answers() -> None:
    """Every role asked the same questions (a candidate named, then a pronoun for her) by a
    team whose book remembers them from other teams' episodes (with and without a candidate
    in focus), with the remembered
    answers and readings emptied before each (as when they are full) and not: the replies
    of a team with a book of its own, and a role with no defect's is the book's faithful
    answer."""
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        task, style = prepared.task, prepared.rendered.style
        names = [task.candidate_name(c) for c in task.candidates]
        questions = (
            f"What do you hold on {names[0]}?",
            "And is that exact for her?",
            "Please send all your records.",
            f"{names[-1]}?",
            "What about him?",
        )
        for setting in group.settings:
            for cleared in (False, True):
                teams = [
                    ScriptedColleagues(task, setting.defects, style, book)
                    for book in (prepared.book, prepared.book, RecordBook(task, style))
                ]
                warm = ScriptedColleagues(task, setting.defects, style, prepared.book)
                for role in task.roles:  # (the pronouns read with no candidate in focus, too)
                    for question in questions[::-1]:
                        warm.reply(role, question)
                    for question in questions:
                        teams[0].reply(role, question)
                for role in task.roles:
                    for question in questions:
                        if cleared:
                            prepared.book._faithful_answers.clear()
                            prepared.book._concerned.clear()
                        focus = teams[1]._focus.get(role)
                        reply = teams[1].reply(role, question)
                        assert reply == teams[2].reply(role, question)
                        if role not in teams[1]._defective:
                            found = prepared.book.faithful_answer(role, question, focus)
                            assert reply is found[1]


def test_the_follow_ups_are_the_stated_defects_a_request_concerns() -> None:
    """Before each reply of a conversation, a request's follow-ups are the defects of its
    role that are stated (not armed, not resolved) and designate a record it concerns,
    in the defects' order: a first request about a defect follows nothing up."""
    questions = (
        "Please send all your records.",
        "Could you double-check your records?",
        "I need the exact value for everyone, from the required period.",
        "Please send all your records.",
    )
    seen = {"armed": 0, "stated": 0}
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        task, style = prepared.task, prepared.rendered.style
        for setting in group.settings:
            team = ScriptedColleagues(task, setting.defects, style, prepared.book)
            for question in questions:
                for role in task.roles:
                    request, slots = prepared.book.concerned(role, question)
                    touched = [
                        (index, team._state[index])
                        for index, _, designated in team._designated.get(role, ())
                        if not designated.isdisjoint(slots)
                    ]
                    for _, state in touched:
                        seen[state] = seen.get(state, 0) + 1
                    found = team._follow_ups(role, request, slots)
                    assert [f.index for f in found] == [i for i, s in touched if s == "stated"]
                    team.reply(role, question)
    assert seen["armed"] > 0 and seen["stated"] > 0
