"""A round's models, written out in ``Environment._finish`` and ``Environment.conversation``
(and a faithful reply's record and a reply's view in ``PreparedGroup``): the reply records,
the round record, the observation, its views, the turn and the conversation are the models a
trusted maker (:class:`~uncobench_z3._trusted.TrustedMaker`) makes from the same fields, in
every kind of round (asks, a missed request's wait, an invalid action, an answer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from uncobench_z3._trusted import SharedFieldsSet, TrustedMaker
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    AnswerAction,
    AskAction,
    Environment,
    InvalidAction,
    RoleRequest,
    WaitAction,
)
from uncobench_z3.evaluation._protocol import Conversation, Observation, ReplyView, Turn
from uncobench_z3.evaluation._trace import ReplyRecord, RoundRecord

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [g for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
          for g in load_groups(path)][:3]  # fmt: skip


def _ask(*pairs: tuple[str, str]) -> AskAction:
    return AskAction(requests=tuple(RoleRequest(role=r, question=q) for r, q in pairs))


def _played() -> list[BaseModel]:
    """Every model the environments of a few groups' settings made, round by round."""
    made: list[BaseModel] = []
    for group in GROUPS:
        roles = [role.id for role in group.spec.roles]
        for setting in ("reliable", "missed", "misaligned"):
            if not group.setting(setting).available:
                continue
            environment = Environment(group, setting, budget=8)
            actions = [
                _ask(*((role, "all records") for role in roles)),
                WaitAction(),
                WaitAction(),
                _ask((roles[0], "all records again, please")),
                InvalidAction(reason="the tool call could not be read"),
                _ask(("nobody", "anything")),
                AnswerAction(decision="eligible"),
            ]
            for action in actions:
                made.append(environment.conversation)
                environment.step(action)
            made += environment._turns  # (the turns and their observations)
            made += [turn.observation for turn in environment._turns]
            made += [view for turn in environment._turns for view in turn.observation.replies]
            made += environment.trace
            made += [reply for round_ in environment.trace for reply in round_.replies]
    return made


MADE = _played()


def test_every_kind_of_model_and_a_non_faithful_reply_is_made() -> None:
    kinds = {type(model) for model in MADE}
    assert kinds == {Conversation, Turn, Observation, ReplyView, RoundRecord, ReplyRecord}
    replies = [model for model in MADE if type(model) is ReplyRecord]
    assert any(reply.delivered for reply in replies)  # (a wait's: written out in _finish)
    assert any(not (r.defects or r.delivered or r.pending) for r in replies)  # (faithful)
    assert any(reply.defects for reply in replies)


@pytest.mark.parametrize("model", MADE, ids=lambda m: type(m).__name__)
def test_a_model_is_the_one_the_maker_makes_from_its_given_fields(model: BaseModel) -> None:
    cls = type(model)
    given = model.model_fields_set
    made = TrustedMaker(cls)(**{n: v for n, v in model.__dict__.items() if n in given})
    assert list(model.__dict__) == list(cls.model_fields)  # (field order)
    assert model.__dict__ == made.__dict__
    assert type(model.model_fields_set) is SharedFieldsSet
    assert model.model_fields_set == made.model_fields_set
    assert model.__pydantic_extra__ is None and model.__pydantic_private__ is None
    assert model == made
    assert model.model_dump_json() == made.model_dump_json()
    assert model.model_copy(update={}) == made.model_copy(update={})


def test_a_round_record_is_given_every_field_but_its_output() -> None:
    rounds = [model for model in MADE if type(model) is RoundRecord]
    assert rounds
    for record in rounds:
        assert record.model_fields_set == set(RoundRecord.model_fields) - {"output"}
        assert record.output is None
    for model in MADE:
        if type(model) is not RoundRecord:
            assert model.model_fields_set == set(type(model).model_fields)


def test_a_faithful_reply_record_holds_the_defaults_of_what_it_is_not_given() -> None:
    faithful = [
        model
        for model in MADE
        if type(model) is ReplyRecord and not (model.defects or model.delivered or model.pending)
    ]
    assert faithful
    maker = TrustedMaker(ReplyRecord)
    for record in faithful:
        given = ("role", "question", "text", "stated", "concerned")
        made = maker(**{name: record.__dict__[name] for name in given})
        assert record.__dict__ == made.__dict__
        assert [type(v) for v in record.__dict__.values()] == [
            type(v) for v in made.__dict__.values()
        ]
