"""The environment: rounds, replies, budget, invalid actions, the trace; and the tool schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    ANSWER_TOOL,
    ASK_TOOL,
    TOOL_NAMES,
    WAIT_TOOL,
    Action,
    AnswerAction,
    AskAction,
    Conversation,
    Environment,
    InvalidAction,
    RoleRequest,
    WaitAction,
    action_from_tool_call,
    conversation_messages,
    observation_text,
    run_episode,
    tool_arguments,
)
from uncobench_z3.models import ChatMessage, ToolCall, ToolDef

ROOT = Path(__file__).resolve().parent.parent
MINING = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
NURSE = load_groups(ROOT / "examples" / "groups" / "healthcare_nurse_manager.group.json")[0]


def ask(*pairs: tuple[str, str]) -> AskAction:
    return AskAction(requests=tuple(RoleRequest(role=r, question=q) for r, q in pairs))


def test_briefing_shows_the_task_roles_tools_and_budget() -> None:
    env = Environment(MINING, "reliable", budget=7)
    briefing = env.briefing
    assert "Eligibility conditions" in briefing.task_text
    assert [r.id for r in briefing.roles] == [r.id for r in MINING.spec.roles]
    assert [t.name for t in briefing.tools] == [ASK_TOOL, WAIT_TOOL, ANSWER_TOOL]
    assert briefing.budget == 7 and "colleagues" in briefing.instructions
    schema = briefing.tools[0].parameters["properties"]["requests"]["items"]["properties"]
    assert schema["role"]["enum"] == [r.id for r in MINING.spec.roles]
    for tool in briefing.tools:  # plain JSON, acceptable to the providers as it is
        ToolDef.model_validate(json.loads(tool.model_dump_json()))


def test_several_roles_answer_in_the_same_round_and_the_trace_records_it() -> None:
    env = Environment(MINING, "misaligned")
    observation = env.step(ask(("operations", "all records"), ("finance", "all records")))
    assert observation.round == 1 and observation.rounds_left == 19
    assert [r.role for r in observation.replies] == ["operations", "finance"]
    assert all(r.text for r in observation.replies)
    record = env.trace[0]
    assert record.action == "ask"
    assert [r.question for r in record.replies] == ["all records", "all records"]
    operations, finance = record.replies
    assert operations.defects == ("misaligned",) and finance.defects == ()
    assert {s.context for s in operations.stated} >= {"FY2025 site allowance table"}
    assert operations.text == observation.replies[0].text


def test_a_missed_request_is_pending_and_one_wait_delivers_its_reply() -> None:
    env = Environment(MINING, "missed")
    first = env.step(ask(("security", "Marcus Vance's clearance, please")))
    assert first.replies[0].text is None
    assert "No reply from Security office [security]" in observation_text(first)
    assert env.trace[0].replies[0].pending and env.trace[0].replies[0].defects == ("missed",)
    waited = env.step(WaitAction())
    assert env.trace[1].action == "wait" and waited.note and "arrived" in waited.note
    (late,) = env.trace[1].replies
    assert late.delivered and late.answers_round == 1 and late.resolved == ("missed",)
    assert late.question == "Marcus Vance's clearance, please"
    assert [s.candidate for s in late.stated] == ["vance"]  # it answers what was asked
    assert waited.replies[0].text == late.text
    nothing = env.step(WaitAction())
    assert nothing.replies == () and "nothing was asked" in (nothing.note or "")


def test_a_re_request_brings_the_pending_reply_with_its_own() -> None:
    env = Environment(MINING, "missed")
    env.step(ask(("security", "Marcus Vance's clearance, please")))
    again = env.step(ask(("security", "And Priya Natarajan's clearance?")))
    record = env.trace[1].replies[0]
    assert again.replies[0].text and record.resolved == ("missed",)
    assert record.answers_round == 1 and not record.delivered
    assert [s.candidate for s in record.stated] == ["vance", "natarajan"]


def test_missed_wait_zero_never_delivers_and_more_waits_are_counted() -> None:
    never = Environment(MINING, "missed", missed_wait=0)
    never.step(ask(("security", "clearances please")))
    for _ in range(3):
        assert never.step(WaitAction()).replies == ()
    slow = Environment(MINING, "missed", missed_wait=2)
    slow.step(ask(("security", "clearances please")))
    assert slow.step(WaitAction()).replies == ()
    assert slow.step(WaitAction()).replies[0].text
    with pytest.raises(ConfigError):
        Environment(MINING, "missed", missed_wait=-1)


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (ask(("nobody", "hi")), "no colleague 'nobody'"),
        (ask(("hr", "a"), ("hr", "b")), "asked twice"),
        (AskAction(requests=()), "at least one"),
        (InvalidAction(reason="the arguments are not JSON", raw="{"), "not JSON"),
    ],
)
def test_invalid_actions_are_rejected_and_cost_a_round(action: Action, error: str) -> None:
    env = Environment(MINING, "reliable")
    observation = env.step(action)
    assert observation.error is not None and error in observation.error
    assert observation.replies == () and env.trace[0].action == "invalid"
    assert env.rounds == 1 and not env.finished


def test_an_answer_ends_the_episode() -> None:
    env = Environment(MINING, "reliable")
    env.step(AnswerAction(decision="Appoint", candidate="Marcus Vance", number="60000"))
    assert env.finished and env.status == "answered" and env.answer is not None
    with pytest.raises(RuntimeError):
        env.step(WaitAction())


class Waiter:
    async def act(self, conversation: Conversation) -> Action:
        return WaitAction()


async def test_running_out_of_rounds_is_budget_exhausted() -> None:
    env = await run_episode(Environment(MINING, "reliable", budget=3), Waiter())
    assert env.status == "budget_exhausted" and env.answer is None and env.rounds == 3
    assert env.conversation.turns[-1].observation.rounds_left == 0


def test_an_agent_must_return_an_action() -> None:
    with pytest.raises(TypeError):
        Environment(MINING, "reliable").step("answer: Appoint")  # type: ignore[arg-type]


def test_unavailable_setting_and_bad_budget_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unavailable"):
        Environment(NURSE, "mixed")
    with pytest.raises(ConfigError, match="budget"):
        Environment(MINING, "reliable", budget=0)


# -- the tool schema as an LLM agent uses it ----------------------------------------------------
ACTIONS: list[Action] = [
    ask(("hr", "Marcus Vance's experience?"), ("finance", "grants")),
    WaitAction(),
    AnswerAction(decision="Appoint", candidate="Marcus Vance", number="60000", unit="AUD"),
    AnswerAction(decision="Do not appoint", candidate=None, number=None),
]


@pytest.mark.parametrize("action", ACTIONS)
def test_tool_calls_round_trip(action: Action) -> None:
    name, arguments = tool_arguments(action)
    call = ToolCall(id="c1", function=name, arguments=arguments)
    assert action_from_tool_call(call) == action


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (ToolCall(id="c", function="ask_colleagues", arguments={"requests": []}), "non-empty"),
        (
            ToolCall(id="c", function="ask_colleagues", arguments={"requests": [{"role": "hr"}]}),
            "'role' and 'question'",
        ),
        (ToolCall(id="c", function="teleport", arguments={}), "unknown tool"),
        (ToolCall(id="c", function="wait", raw_arguments="{", parse_error="bad json"), "not JSON"),
    ],
)
def test_malformed_tool_calls_become_invalid_actions(call: ToolCall, reason: str) -> None:
    action = action_from_tool_call(call)
    assert isinstance(action, InvalidAction) and reason in action.reason
    name, _ = tool_arguments(action)  # replayed under a tool the providers know
    assert name == (call.function if call.function in TOOL_NAMES else ASK_TOOL)


def test_numbers_in_answer_calls_become_text() -> None:
    call = ToolCall(
        id="c",
        function=ANSWER_TOOL,
        arguments={"decision": "Appoint", "candidate": "Marcus Vance", "number": 60000.5},
    )
    action = action_from_tool_call(call)
    assert isinstance(action, AnswerAction) and action.number == "60000.5"


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # more digits than a float holds: 46.665 would round half-even to another score
        ("46.665000000000000001", "46.665000000000000001"),
        ("1e16", "10000000000000000"),  # (the float's "1e+16" reads as 1)
        ("-5E-4", "-0.0005"),
        ("60000", "60000"),
        ("1e999999999", "inf"),  # no billion-digit plain form: the float
    ],
)
def test_a_json_number_in_an_answer_call_is_read_as_written(written: str, read: str) -> None:
    raw = f'{{"decision": "Select", "candidate": "Geelong Plant", "number": {written}}}'
    call = ToolCall(id="c", function=ANSWER_TOOL, arguments=json.loads(raw), raw_arguments=raw)
    action = action_from_tool_call(call)
    assert isinstance(action, AnswerAction) and action.number == read


def test_conversation_renders_as_chat_messages() -> None:
    env = Environment(MINING, "missed")
    env.step(ask(("security", "clearances")))
    env.step(InvalidAction(reason="oops", raw="{"))
    env.step(WaitAction())
    messages = conversation_messages(env.conversation)
    # an unreadable action goes back as the model's own text and a user message with the
    # error (a tool call whose arguments are not JSON is rejected by some servers)
    roles = ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert [m.role for m in messages] == roles
    assert all(isinstance(m, ChatMessage) for m in messages)
    assert "Eligibility conditions" in messages[1].content
    assert messages[2].tool_calls[0].function == ASK_TOOL
    assert "No reply from" in messages[3].content
    assert messages[4].content == "{" and not messages[4].tool_calls
    assert "oops" in messages[5].content
    assert messages[6].tool_calls[0].function == WAIT_TOOL


def test_faithful_replies_are_made_once_per_group_and_recorded_as_made_fresh() -> None:
    """A faithful reply is the record book's one value, its record and view the prepared
    group's: each equal (fields set too) to what the environment would make of it anew."""
    from uncobench_z3.evaluation import PreparedGroup, ReplyRecord
    from uncobench_z3.evaluation._protocol import ReplyView

    prepared = PreparedGroup.of(MINING)
    action = ask(("operations", "all records"), ("finance", "all records"))
    first = Environment(MINING, "reliable", prepared=prepared)
    again = Environment(MINING, "reliable", prepared=prepared)
    seen = first.step(action), again.step(action)
    for left, right in zip(first.trace[0].replies, again.trace[0].replies, strict=True):
        assert left is right  # one record, shared
        fresh = ReplyRecord(role=left.role, question=left.question, text=left.text,
                            stated=left.stated, concerned=left.concerned)  # fmt: skip
        assert left == fresh and left.model_dump_json() == fresh.model_dump_json()
        assert left.model_fields_set == set(ReplyRecord.model_fields)
    for observation in seen:
        for view in observation.replies:
            fresh_view = ReplyView(
                role=view.role, role_name=first.role_names[view.role], text=view.text
            )
            assert view == fresh_view and view.model_fields_set == fresh_view.model_fields_set
    # a reply a defect touches is not the book's faithful reply: its record says so
    defective = Environment(MINING, "misaligned", prepared=prepared)
    defective.step(action)
    assert [r.defects for r in defective.trace[0].replies] == [("misaligned",), ()]
    assert defective.trace[0].replies[1] is first.trace[0].replies[1]


def test_each_colleague_asked_in_a_round_gets_its_own_question() -> None:
    """The environment reads each request's role and question once (from the model's fields):
    every reply of a round is recorded with its own role's question, in request order."""
    env = Environment(MINING, "misaligned", budget=3)
    pairs = [("finance", "grants please"), ("hr", "Marcus Vance's experience?")]
    observation = env.step(ask(*pairs))
    assert [(r.role, r.question) for r in env.trace[0].replies] == pairs
    assert [r.role for r in observation.replies] == ["finance", "hr"]
    assert observation.rounds_left == 2
    # a known role asked after an unknown one, and a known one asked twice: the first wrong
    # request names the error
    unknown = env.step(ask(("finance", "a"), ("nobody", "b"), ("finance", "c")))
    assert unknown.error is not None and "no colleague 'nobody'" in unknown.error
    assert env.step(ask(("hr", "a"), ("finance", "b"), ("hr", "c"))).rounds_left == 0
    assert "hr is asked twice" in (env.trace[-1].error or "")


class _OwnAsk(AskAction):
    """An action class of the agent's own (a subclass): found by ``isinstance``, not by its
    type (the environment looks its class up by type first)."""


class _OwnWait(WaitAction):
    pass


def test_an_action_of_a_subclass_is_played_as_its_base_and_a_non_action_is_refused() -> None:
    env = Environment(MINING, "reliable", budget=3)
    observation = env.step(_OwnAsk(requests=(RoleRequest(role="finance", question="grants?"),)))
    assert env.trace[-1].action == "ask" and [r.role for r in observation.replies] == ["finance"]
    assert observation.rounds_left == 2 and observation.error is None
    waited = env.step(_OwnWait())
    assert env.trace[-1].action == "wait" and waited.note is not None
    assert waited.note.startswith("You waited") and waited.rounds_left == 1
    with pytest.raises(TypeError, match="an agent must return an action, not str"):
        env.step("ask finance")  # type: ignore[arg-type]
    assert env.rounds == 2  # (a refused object costs no round)
    last = env.step(WaitAction())
    assert last.rounds_left == 0 and env.status == "budget_exhausted"
