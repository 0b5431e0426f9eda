"""A record book takes a setting's defect as the first one like it that another setting of the
group gave it (a mixed setting's defects are those of the settings with one defect): only a
defect the same in every field, each value of the same type and written the same, and the
episodes' replies and records are the ones each setting's own defects give."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest

from tests.sample_helpers import stored_example_groups
from uncobench_z3.evaluation import (
    Environment,
    PreparedGroup,
    RecordBook,
    _colleagues,
    make_agent,
    run_episode,
)
from uncobench_z3.evaluation._record_book import same_defect
from uncobench_z3.settings import (
    SETTING_NAMES,
    CandidateSign,
    Clause,
    Defect,
    FactSign,
    FollowUpRule,
    ReplySign,
    StatedValue,
    TaskGroup,
)

GROUPS: list[TaskGroup] = stored_example_groups()


def _defects() -> list[Defect]:
    return [d for g in GROUPS for s in g.settings for d in s.defects]


def test_the_fields_compared_are_all_the_fields() -> None:
    """``same_defect`` names every field of a defect and compares a statement's, a rule's and
    a clause's as a whole: a new field must be compared too."""
    assert list(Defect.model_fields) == [
        "kind",
        "role",
        "fact",
        "candidates",
        "first_reply",
        "targeted_follow_up",
        "resolved_reply",
        "rationale",
        "missed_wait",
    ]
    assert list(FollowUpRule.model_fields) == ["all_of"]
    assert list(Clause.model_fields) == ["any_of"]


def test_same_defect_is_equality_on_the_examples() -> None:
    defects = _defects()
    assert len(defects) >= 10
    pairs = [(a, b) for a in defects for b in defects]
    assert any(a is not b and same_defect(a, b) for a, b in pairs)  # (mixed settings)
    for a, b in pairs:
        assert same_defect(a, b) == (a == b)


def _designated() -> Defect:
    return next(d for d in _defects() if d.kind == "incomplete" and d.first_reply)


def _with_statement(defect: Defect, index: int, **fields: Any) -> Defect:
    statements = list(defect.first_reply or [])
    statements[index] = statements[index].model_copy(update=fields)
    return defect.model_copy(update={"first_reply": statements})


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ({"value": 1}, {"value": True}),
        ({"value": Decimal("1")}, {"value": Decimal("1.0")}),
        ({"value": 1}, {"value": Decimal("1")}),
        ({"options": [1, 0]}, {"options": [True, False]}),
        ({"low": Decimal("2.5")}, {"low": Decimal("2.50")}),
    ],
)
def test_values_equal_but_written_otherwise_are_not_the_same(
    ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    defect = _designated()
    a, b = _with_statement(defect, 1, **ours), _with_statement(defect, 1, **theirs)
    assert a == b  # (pydantic's ==, which the book does not take)
    assert not same_defect(a, b) and not same_defect(b, a)
    assert same_defect(a, _with_statement(defect, 1, **ours))


def test_a_defect_differing_in_any_field_is_not_the_same() -> None:
    defect = _designated()
    statement = (defect.first_reply or [])[0]
    other = statement.model_copy(update={"context": statement.context + " (old)"})
    rule = defect.targeted_follow_up
    changed = [
        {"role": defect.role + "_x"},
        {"fact": (defect.fact or "") + "_x"},
        {"candidates": [*defect.candidates, "zz"]},
        {"rationale": defect.rationale + "."},
        {"missed_wait": 3},
        {"first_reply": [other, *(defect.first_reply or [])[1:]]},
        {"first_reply": None},
        {"resolved_reply": [other, *(defect.resolved_reply or [])[1:]]},
        {"resolved_reply": (defect.resolved_reply or [])[:-1]},
        {"targeted_follow_up": FollowUpRule(all_of=rule.all_of[:-1])},
        {
            "targeted_follow_up": FollowUpRule(
                all_of=[*rule.all_of[:-1], Clause(any_of=[ReplySign(fact=defect.fact or "")])]
            )
        },
        {
            "targeted_follow_up": FollowUpRule(
                all_of=[Clause(any_of=[CandidateSign(candidates=["zz"])]), *rule.all_of[1:]]
            )
        },
        {
            "targeted_follow_up": FollowUpRule(
                all_of=[Clause(any_of=[FactSign(fact="zz")]), *rule.all_of[1:]]
            )
        },
    ]
    for update in changed:
        assert not same_defect(defect, defect.model_copy(update=update)), update
    waits = (
        defect.model_copy(update={"missed_wait": 1}),
        defect.model_copy(update={"missed_wait": True}),
    )
    assert waits[0] == waits[1] and not same_defect(*waits)
    assert not same_defect(defect, defect.model_copy(update={"kind": "misaligned"}))


def test_a_book_gives_the_first_defect_like_it() -> None:
    group = next(g for g in GROUPS if g.setting("mixed").available)
    book = PreparedGroup.of(group).book
    firsts = {id(d): d for s in SETTING_NAMES[:4] for d in group.setting(s).defects}
    for defect in [d for s in SETTING_NAMES[:4] for d in group.setting(s).defects]:
        assert book.shared_defect(defect) is defect
    for defect in group.setting("mixed").defects:
        shared = book.shared_defect(defect)
        if defect.kind == "missed":
            assert shared is defect  # (nothing of it is remembered by its identity)
        else:
            assert shared is not defect and id(shared) in firsts and shared == defect
    missed = next(d for d in _defects() if d.kind == "missed")
    assert book.shared_defect(missed) is missed
    assert book.shared_defect(missed.model_copy()) is not missed  # (not looked up)
    statement = StatedValue(candidate="zz", fact="zz", context="zz", value=1)
    unlike = _designated().model_copy(update={"first_reply": [statement]})
    assert book.shared_defect(unlike) is unlike


def _replies(environment: Environment) -> list[object]:
    return [reply.model_dump() for record in environment.trace for reply in record.replies]


def test_episodes_sharing_defects_get_each_settings_own_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every setting of every example group, played by three agents with one prepared group
    (its book shares the mixed settings' defects) and with a group prepared for each episode
    (nothing shared), gives the same trace; the shared book decides fewer follow-ups."""
    decided: list[Defect] = []
    original = _colleagues._decided

    def counted(task: Any, defect: Defect, request: Any) -> Any:
        decided.append(defect)
        return original(task, defect, request)

    monkeypatch.setattr(_colleagues, "_decided", counted)
    mixed = {id(d) for g in GROUPS for d in g.setting("mixed").defects}
    counts, traces = [], []
    for fresh in (False, True):
        decided.clear()
        played = []
        for group in GROUPS:
            prepared = PreparedGroup.of(group)
            for setting in SETTING_NAMES:
                if not group.setting(setting).available:
                    continue
                for agent in ("builtin/careful", "builtin/naive", "builtin/patient"):
                    own = PreparedGroup.of(group) if fresh else prepared
                    environment = Environment(group, setting, prepared=own)
                    asyncio.run(run_episode(environment, make_agent(agent, 0)))
                    played.append(_replies(environment))
        counts.append(len(decided))
        traces.append(played)
        shared = [d for d in decided if id(d) in mixed]
        assert shared if fresh else not shared  # (the first defect like it decides)
    assert traces[0] == traces[1]
    assert 0 < counts[0] < counts[1]


def test_a_book_keeps_a_few_defects_of_one_kind_role_and_fact() -> None:
    group = GROUPS[0]
    book = RecordBook(PreparedGroup.of(group).task, PreparedGroup.of(group).rendered.style)
    defect = _designated()
    made = [_with_statement(defect, 0, context=f"context {i}") for i in range(20)]
    assert [book.shared_defect(d) is d for d in made] == [True] * 20
    assert book.shared_defect(made[0].model_copy()) is made[0]
    assert book.shared_defect(made[19].model_copy()) is not made[19]  # (not kept)
