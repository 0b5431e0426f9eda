"""The scripted colleagues: what a question concerns, faithful replies, and each defect's policy
(first reply, generic vs targeted follow-up, Missed silence), deterministically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.construct import load_groups, rendered_of, statement_text
from uncobench_z3.evaluation import RecordBook, ScriptedColleagues, named_candidates, typed_task
from uncobench_z3.settings import SettingName, StatedValue, TaskGroup, is_targeted, stated_value
from uncobench_z3.spec import Value

ROOT = Path(__file__).resolve().parent.parent
GROUP = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
TASK = typed_task(GROUP)
STYLE = rendered_of(GROUP).style


def colleagues(setting: SettingName, group: TaskGroup = GROUP) -> ScriptedColleagues:
    return ScriptedColleagues(TASK, group.setting(setting).defects, STYLE)


def value(stated: StatedValue) -> Value:
    return stated_value(TASK, stated)


def by_slot(stated: tuple[StatedValue, ...]) -> dict[tuple[str, str], StatedValue]:
    return {(s.candidate, s.fact): s for s in stated}


# -- what a question concerns ------------------------------------------------------------------
def test_a_question_naming_nothing_gets_every_record_of_the_role() -> None:
    slots = colleagues("reliable").concerned_slots("operations", "Please send me everything.")
    assert slots == [(c, f) for c in TASK.candidates for f in ("available_from", "field_allowance")]


def test_named_candidates_and_facts_narrow_the_reply() -> None:
    team = colleagues("reliable")
    assert team.concerned_slots("operations", "What is Priya Natarajan's availability date?") == [
        ("natarajan", "available_from")
    ]
    # a fact named by its key, a candidate by a unique last name
    assert team.concerned_slots("operations", "field_allowance of Ruiz, please") == [
        ("ruiz", "field_allowance")
    ]
    # a distinctive word of the label ("allowance") names the fact
    assert team.concerned_slots("operations", "and the allowance for Marcus Vance?") == [
        ("vance", "field_allowance")
    ]


def test_another_roles_fact_gets_all_of_this_roles_facts() -> None:
    slots = colleagues("reliable").concerned_slots("operations", "Vance's security clearance?")
    assert slots == [("vance", "available_from"), ("vance", "field_allowance")]


def test_names_count_in_any_case_and_by_first_name() -> None:
    assert named_candidates(TASK, "Is Ruiz available?") == ["ruiz"]
    assert named_candidates(TASK, "is ruiz available?") == ["ruiz"]
    assert named_candidates(TASK, "TOMAS RUIZ's records") == ["ruiz"]  # a full name: any case
    assert named_candidates(TASK, "and priya?") == ["natarajan"]
    assert named_candidates(TASK, "Vance and Natarajan, please") == ["vance", "natarajan"]


def test_a_pronoun_is_the_candidate_the_previous_request_named() -> None:
    team = colleagues("reliable")
    team.reply("security", "What is Marcus Vance's clearance?")
    assert team.concerned_slots("security", "Did he pass?") == [("vance", "clearance")]
    team.reply("security", "And everyone's clearance?")  # names nobody: the focus stays
    assert team.concerned_slots("security", "Did she pass?") == [("vance", "clearance")]


# -- faithful replies ---------------------------------------------------------------------------
def test_a_faithful_reply_states_the_required_context_in_record_lines() -> None:
    reply = colleagues("reliable").reply("finance", "All your records, please.")
    assert reply.defects == () and reply.follow_up is None
    assert [s.context for s in reply.stated] == ["2026 relocation schedule"] * 3
    assert [value(s) for s in reply.stated] == [45000, 38000, 52000]
    lines = [statement_text(TASK, s, STYLE) for s in reply.stated]
    assert reply.text == "\n".join(lines)
    assert "Marcus Vance" in lines[0] and "45,000 AUD" in lines[0]


def test_unknown_role_is_an_error() -> None:
    with pytest.raises(KeyError):
        colleagues("reliable").reply("nobody", "hello")


# -- misaligned ---------------------------------------------------------------------------------
MISALIGNED = GROUP.setting("misaligned").defects[0]
TARGETED_MIS = (
    "Your reply gave Marcus Vance's field establishment allowance for the FY2025 table; "
    "I need the FY2026 site allowance table."
)


def test_misaligned_first_reply_then_generic_then_targeted() -> None:
    assert (MISALIGNED.role, MISALIGNED.fact) == ("operations", "field_allowance")
    team = colleagues("misaligned")
    first = team.reply("operations", "Please send all your records.")
    wrong = by_slot(first.stated)[("vance", "field_allowance")]
    assert (wrong.context, value(wrong)) == ("FY2025 site allowance table", 12500)
    assert "FY2025 site allowance table" in (first.text or "")
    assert first.defects == ("misaligned",) and first.follow_up is None
    # the other records of the reply are faithful
    assert by_slot(first.stated)[("vance", "available_from")].context == "confirmed start date"

    generic = team.reply("operations", "Could you double-check your records?")
    assert not is_targeted(TASK, MISALIGNED, "Could you double-check your records?")
    assert generic.stated == first.stated and generic.text == first.text
    assert generic.follow_up == "generic" and generic.defects == ("misaligned",)

    assert is_targeted(TASK, MISALIGNED, TARGETED_MIS)
    fixed = team.reply("operations", TARGETED_MIS)
    assert fixed.follow_up == "targeted" and fixed.resolved == ("misaligned",)
    assert [(s.candidate, s.context, value(s)) for s in fixed.stated] == [
        ("vance", "FY2026 site allowance table", 15000)
    ]
    # resolved for good: a generic request now gets the truth
    later = team.reply("operations", "Send everything again.")
    assert value(by_slot(later.stated)[("vance", "field_allowance")]) == 15000
    assert later.defects == () and later.follow_up is None


def test_the_first_reply_about_the_fact_is_defective_however_it_is_asked() -> None:
    team = colleagues("misaligned")
    reply = team.reply("operations", TARGETED_MIS)  # precise, but it is the first reply
    assert reply.defects == ("misaligned",) and reply.resolved == ()
    assert reply.stated[0].context == "FY2025 site allowance table"


def test_a_reply_not_touching_the_designated_record_does_not_arm_the_defect() -> None:
    team = colleagues("misaligned")
    other = team.reply("operations", "What is Priya Natarajan's field allowance?")
    assert other.defects == () and value(other.stated[0]) == 15000
    dates = team.reply("operations", "Marcus Vance's availability date?")
    assert dates.defects == ()
    first = team.reply("operations", "Marcus Vance's field allowance?")
    assert first.defects == ("misaligned",) and value(first.stated[0]) == 12500


# -- incomplete ---------------------------------------------------------------------------------
def test_incomplete_repeats_on_generic_and_resolves_on_precision() -> None:
    team = colleagues("incomplete")
    first = team.reply("security", "Send me the clearance results of every candidate.")
    vague = by_slot(first.stated)[("vance", "clearance")]
    assert vague.options == ["passed", "failed"] and vague.value is None
    assert "either passed or failed" in (first.text or "")
    again = team.reply("security", "Are you sure about Marcus Vance?")
    assert again.follow_up == "generic" and again.stated[0].options == ["passed", "failed"]
    fixed = team.reply("security", "What is Marcus Vance's exact clearance result?")
    assert fixed.follow_up == "targeted" and fixed.resolved == ("incomplete",)
    assert fixed.stated[0].value == "passed"


# -- missed -------------------------------------------------------------------------------------
def test_missed_first_request_is_silent_then_answered_normally() -> None:
    team = colleagues("missed")
    silent = team.reply("security", "Send me your clearance records.")
    assert silent.text is None and silent.stated == () and silent.defects == ("missed",)
    assert silent.concerned  # what it would have covered is still recorded
    answered = team.reply("security", "Hello?")
    assert answered.text is not None and answered.resolved == ("missed",)
    assert answered.follow_up == "targeted"
    assert [s.value for s in answered.stated] == ["passed", "passed", "pending"]
    third = team.reply("security", "Thanks, once more please.")
    assert third.resolved == () and third.follow_up is None


def test_missed_affects_only_its_role() -> None:
    team = colleagues("missed")
    assert team.reply("finance", "records?").text is not None
    assert team.reply("security", "records?").text is None


# -- mixed and determinism ------------------------------------------------------------------------
def test_mixed_defects_act_on_their_own_roles() -> None:
    team = colleagues("mixed")
    kinds = {d.role: d.kind for d in GROUP.setting("mixed").defects}
    replies = {role: team.reply(role, "All records please.") for role in TASK.roles}
    for role, reply in replies.items():
        expected = (kinds[role],) if role in kinds else ()
        assert reply.defects == expected, role
    assert kinds == {"operations": "misaligned", "security": "incomplete", "hr": "missed"}
    clearance = by_slot(replies["security"].stated)[("vance", "clearance")]
    assert clearance.options == ["passed", "failed"]


CONVERSATION = [
    ("operations", "All records please."),
    ("security", "All records please."),
    ("operations", "Could you double-check?"),
    ("operations", TARGETED_MIS),
    ("security", "exact clearance of Marcus Vance"),
    ("health", "fitness?"),
]


@pytest.mark.parametrize("setting", ["reliable", "misaligned", "incomplete", "missed", "mixed"])
def test_the_same_conversation_gets_the_same_replies(setting: SettingName) -> None:
    runs = []
    for _ in range(2):
        team = colleagues(setting)
        runs.append([team.reply(role, question) for role, question in CONVERSATION])
    assert runs[0] == runs[1]


def test_a_shared_record_book_gives_the_same_replies() -> None:
    book = RecordBook(TASK, STYLE)
    shared = ScriptedColleagues(TASK, GROUP.setting("mixed").defects, STYLE, book)
    own = colleagues("mixed")
    for role, question in CONVERSATION:
        assert shared.reply(role, question) == own.reply(role, question)


def test_the_colleagues_decisions_are_the_ones_made_in_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The colleagues tell ``decide`` that a request concerning a designated record follows
    it up, and ``decide`` makes its checks without their ``__init__``: every decision of
    episodes of the example groups' defect settings equals the one made in full, its parts
    as their classes' ``__init__`` makes them."""
    import asyncio

    from uncobench_z3.evaluation import Environment, _colleagues, make_agent, run_episode
    from uncobench_z3.settings import ClauseCheck, FollowUpDecision, decide

    made: list[tuple[object, ...]] = []

    def watched(*args: Any, **kwargs: Any) -> FollowUpDecision:
        decision = decide(*args, **kwargs)
        made.append((*args, kwargs, decision))
        return decision

    monkeypatch.setattr(_colleagues, "decide", watched)
    groups = [g for p in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
              for g in load_groups(p)]  # fmt: skip
    for group in groups:
        for setting in ("misaligned", "incomplete", "mixed"):
            if not group.setting(setting).available:
                continue
            for agent in ("builtin/careful", "builtin/naive", "builtin/patient"):
                asyncio.run(run_episode(Environment(group, setting), make_agent(agent, 0)))
    team = colleagues("mixed")
    for role, question in CONVERSATION:
        team.reply(role, question)
    assert len(made) >= 10 and {m[-1].targeted for m in made} == {True, False}  # type: ignore[attr-defined]
    for task, defect, request, kwargs, decision in made:
        assert kwargs == {"follows": True}
        fresh = decide(task, defect, request)  # type: ignore[arg-type]
        assert decision == fresh and vars(decision) == vars(fresh)
        assert list(vars(decision)) == list(vars(FollowUpDecision(True, ())))
        for check in decision.clauses:  # type: ignore[attr-defined]
            again = ClauseCheck(check.text, check.satisfied, check.because)
            assert type(check) is ClauseCheck and list(vars(check)) == list(vars(again))
            assert vars(check) == vars(again)


@pytest.mark.parametrize("setting", ["misaligned", "incomplete", "missed", "mixed"])
def test_episodes_sharing_a_book_share_no_defect_state(setting: SettingName) -> None:
    """A setting's defect tables are the book's, made once; each episode's defect state is
    its own: an episode played after another on the same book gets a fresh book's replies."""
    book = RecordBook(TASK, STYLE)
    defects = GROUP.setting(setting).defects
    first = ScriptedColleagues(TASK, defects, STYLE, book)
    played = [first.reply(role, question) for role, question in CONVERSATION]
    second = ScriptedColleagues(TASK, defects, STYLE, book)
    assert second._designated is first._designated and second._state is not first._state
    assert [second.reply(role, question) for role, question in CONVERSATION] == played
    fresh = colleagues(setting)
    assert [fresh.reply(role, question) for role, question in CONVERSATION] == played
    assert fresh._state == first._state == second._state
    if setting != "missed":  # (Missed has no state) the episodes changed theirs, not the book's
        new = ScriptedColleagues(TASK, defects, STYLE, book)
        assert set(new._state.values()) == {"armed"} != set(first._state.values())
