"""The scripted colleagues' short paths give what their plain definitions give: a follow-up's
decision and reading remembered by the record book, a defect statement's line, and the
faithful reply of a role no defect of the setting concerns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from tests.sample_helpers import stored_example_groups
from uncobench_z3.construct import statement_text
from uncobench_z3.evaluation import (
    Environment,
    PreparedGroup,
    RecordBook,
    ScriptedColleagues,
    _colleagues,
    make_agent,
    run_episode,
)
from uncobench_z3.evaluation._colleagues import FollowUpReading
from uncobench_z3.settings import (
    Defect,
    FollowUpDecision,
    Request,
    SettingName,
    StatedValue,
    TaskGroup,
    decide,
)
from uncobench_z3.spec import TypedTask, to_json_scalar

GROUPS: list[TaskGroup] = stored_example_groups()
DEFECT_SETTINGS: tuple[SettingName, ...] = ("misaligned", "incomplete", "missed", "mixed")
AGENTS = ("builtin/careful", "builtin/naive", "builtin/patient")


def test_a_remembered_follow_up_is_the_one_made_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every follow-up the colleagues of episodes sharing a prepared group decide (every
    defect setting, three agents) gets the decision and the rules' reading made afresh,
    as the reply made them before the book remembered them; some are remembered."""
    Found = tuple[FollowUpDecision, FollowUpReading]
    calls: list[tuple[TypedTask, Defect, Request, Found]] = []
    original = RecordBook.follow_up

    def watched(book: RecordBook, defect: Defect, request: Request, make: Any) -> Found:
        found: Found = original(book, defect, request, make)
        calls.append((book.task, defect, request, found))
        return found

    made: list[object] = []
    decided = _colleagues._decided

    def counted(*args: object) -> object:
        made.append(args)
        return decided(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(RecordBook, "follow_up", watched)
    monkeypatch.setattr(_colleagues, "_decided", counted)
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        for setting in DEFECT_SETTINGS:
            if not group.setting(setting).available:
                continue
            for agent in AGENTS:
                environment = Environment(group, setting, prepared=prepared)
                asyncio.run(run_episode(environment, make_agent(agent, 0)))
    assert 0 < len(made) < len(calls)
    for task, defect, request, (decision, reading) in calls:
        fresh = decide(task, defect, request)
        assert vars(decision) == vars(fresh)
        assert reading == FollowUpReading(
            defect=defect.kind, rules=fresh.targeted, why=fresh.why(), model=None
        )
        assert reading.model_fields_set == {"defect", "rules", "why", "model", "model_note", "used"}


def test_follow_ups_are_remembered_by_defect_and_request() -> None:
    """Every defect of every setting, asked the same follow-ups through one book (one
    reading of each question for all of a role's defects), gets its own decision each time."""
    questions = ("Could you double-check?", "Which table is that from? I need the exact value.")
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        book, task = prepared.book, prepared.task
        defects = [d for s in group.settings for d in s.defects if d.kind != "missed"]
        assert len({d.role for d in defects}) < len(defects)  # (roles with several defects)
        for _ in range(2):
            for defect in defects:
                for question in questions:
                    request = book.read(defect.role, question)
                    decision, _ = book.follow_up(defect, request, _colleagues._decided)
                    assert vars(decision) == vars(decide(task, defect, request, follows=True))


def test_a_defect_statements_line_is_its_statement_text() -> None:
    """A defect's statement equal to the faithful one takes the faithful line; every other
    is written in full: both are its statement text, the first time and when remembered."""
    equal = 0
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        book, task, style = prepared.book, prepared.task, prepared.rendered.style
        for setting in group.settings:
            for defect in setting.defects:
                for stated in [*(defect.first_reply or []), *(defect.resolved_reply or [])]:
                    stated = stated.model_copy()  # (not one the book has seen)
                    expected = statement_text(task, stated, style)
                    assert book.statement_line(stated) == expected
                    assert book.statement_line(stated) == expected
                    equal += stated == book.faithful.get((stated.candidate, stated.fact))
    assert equal > 0


@pytest.mark.parametrize("setting", DEFECT_SETTINGS)
def test_a_role_without_a_defect_gets_the_faithful_reply(setting: SettingName) -> None:
    """The roles a setting's defects concern are the only ones whose replies can differ
    from the faithful reply: every other role's reply is the book's faithful one."""
    for group in GROUPS:
        if not group.setting(setting).available:
            continue
        prepared = PreparedGroup.of(group)
        defects = group.setting(setting).defects
        team = ScriptedColleagues(prepared.task, defects, prepared.rendered.style, prepared.book)
        assert team._defective == {d.role for d in defects}
        for role in prepared.task.roles:
            for question in ("Please send all your records.", "What do you hold?"):
                reply = team.reply(role, question)
                slots = prepared.book.concerned(role, question)[1]
                if role not in team._defective:
                    assert reply is prepared.book.faithful_colleague_reply(role, slots)


def test_the_books_faithful_statements_are_the_validated_ones() -> None:
    """The record book makes its faithful statements without validation: each is the
    ``StatedValue`` validation makes from its plain definition (the record's true value in
    the required context), field for field, in order, with the same fields set, and as
    frozen."""
    made = 0
    for group in GROUPS:
        task = PreparedGroup.of(group).task
        book = RecordBook(task, PreparedGroup.of(group).rendered.style)
        assert list(book.faithful) == task.all_slots()
        for (candidate, fact), stated in book.faithful.items():
            expected = StatedValue(
                candidate=candidate,
                fact=fact,
                context=task.facts[fact].context,
                value=to_json_scalar(task.values[(candidate, fact)]),
            )
            assert type(stated) is StatedValue
            assert list(vars(stated).items()) == list(vars(expected).items())
            assert stated.model_fields_set == expected.model_fields_set
            assert stated.__pydantic_extra__ is expected.__pydantic_extra__
            assert stated.__pydantic_private__ is expected.__pydantic_private__
            assert stated == expected
            assert stated.model_dump_json() == expected.model_dump_json()
            with pytest.raises(ValidationError):
                stated.context = "another"  # type: ignore[misc]
            made += 1
    assert made > 50
