"""What a main agent sees and does: the briefing, actions, observations and the tool schema.

An agent is a function of the conversation so far (briefing + turns) to its next action;
it never sees the structured instance. The tool schema is data (:class:`ToolDef`), so an
LLM agent offers exactly these tools and maps its tool calls back with
:func:`action_from_tool_call`; :func:`conversation_messages` renders a conversation as chat
messages for such an agent.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from .._assets import asset_path
from .._plain_reads import plain_reads_of_subclasses
from ..construct import RoleCard
from ..models import ChatMessage, ToolCall, ToolDef

ASK_TOOL = "ask_colleagues"
WAIT_TOOL = "wait"
ANSWER_TOOL = "submit_answer"
TOOL_NAMES = (ASK_TOOL, WAIT_TOOL, ANSWER_TOOL)
DEFAULT_BUDGET = 20
INSTRUCTIONS_FILE = "main_agent.md"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __pydantic_init_subclass__ = plain_reads_of_subclasses  # (see _plain_reads.py)


class RoleRequest(_Frozen):
    """One question to one colleague (by role id)."""

    role: str
    question: str


class AskAction(_Frozen):
    """Ask one or several colleagues at once; their replies arrive in the same round."""

    kind: Literal["ask"] = "ask"
    requests: tuple[RoleRequest, ...]


class WaitAction(_Frozen):
    """Ask nothing this round."""

    kind: Literal["wait"] = "wait"


class AnswerAction(_Frozen):
    """The final answer: structured fields, free ``text``, or both (fields take precedence)."""

    kind: Literal["answer"] = "answer"
    decision: str | None = None
    candidate: str | None = None
    number: str | None = None
    unit: str | None = None
    text: str | None = None


class InvalidAction(_Frozen):
    """An action the agent meant but that cannot be carried out (a malformed tool call)."""

    kind: Literal["invalid"] = "invalid"
    reason: str
    raw: str = ""
    tool: str = ""
    """the tool the agent called, if any"""


Action = Annotated[
    AskAction | WaitAction | AnswerAction | InvalidAction, Field(discriminator="kind")
]


class ReplyView(_Frozen):
    """A colleague's reply as the agent sees it; ``text`` is None when nothing came back."""

    role: str
    role_name: str
    text: str | None


class Observation(_Frozen):
    """What the environment tells the agent after one action."""

    round: int
    rounds_left: int
    replies: tuple[ReplyView, ...] = ()
    note: str | None = None
    error: str | None = None


class Turn(_Frozen):
    action: Action
    observation: Observation


class Briefing(_Frozen):
    """Everything the agent is shown before its first action."""

    task_text: str
    roles: tuple[RoleCard, ...]
    budget: int
    instructions: str
    tools: tuple[ToolDef, ...]


class Conversation(_Frozen):
    briefing: Briefing
    turns: tuple[Turn, ...] = ()

    @property
    def rounds_used(self) -> int:
        return len(self.turns)

    @property
    def rounds_left(self) -> int:
        return self.briefing.budget - len(self.turns)


class Agent(Protocol):
    """A main agent: the conversation so far in, the next action out."""

    async def act(self, conversation: Conversation) -> Action: ...


# -- the tool schema --------------------------------------------------------------------------
def tool_definitions(roles: list[RoleCard] | tuple[RoleCard, ...]) -> tuple[ToolDef, ...]:
    """The three tools of the main agent (JSON schemas a provider accepts as they are)."""
    directory = "; ".join(f"{r.id} = {r.name}" for r in roles)
    ask = ToolDef(
        name=ASK_TOOL,
        description="Ask one or several colleagues at once (one question each). Their replies "
        f"arrive in this round. Colleagues: {directory}.",
        parameters={
            "type": "object",
            "properties": {
                "requests": {
                    "type": "array",
                    "description": "One request per colleague asked (at least one).",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "role": {
                                "type": "string",
                                "enum": [r.id for r in roles],
                                "description": "The colleague's role id.",
                            },
                            "question": {
                                "type": "string",
                                "description": "Your question, in plain language.",
                            },
                        },
                        "required": ["role", "question"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["requests"],
            "additionalProperties": False,
        },
    )
    wait = ToolDef(
        name=WAIT_TOOL,
        description="Ask nothing this round (costs one round).",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    answer = ToolDef(
        name=ANSWER_TOOL,
        description="Give the final answer; this ends the task.",
        parameters={
            "type": "object",
            "properties": {
                "decision": {"type": "string", "description": "One of the decision words."},
                "candidate": {
                    "type": ["string", "null"],
                    "description": "The eligible candidate's name, or null if none is eligible.",
                },
                "number": {
                    "type": ["string", "number", "null"],
                    "description": "The computed number (rounded as the rule says), or null.",
                },
                "unit": {"type": ["string", "null"], "description": "The number's unit."},
            },
            "required": ["decision", "candidate", "number"],
            "additionalProperties": False,
        },
    )
    return ask, wait, answer


def _text_or_none(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value)


def action_from_tool_call(call: ToolCall) -> Action:
    """Map a model's tool call to an action; anything unusable becomes :class:`InvalidAction`."""
    raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    if call.parse_error is not None:
        return InvalidAction(
            reason=f"the arguments are not JSON: {call.parse_error}", raw=raw, tool=call.function
        )
    args = call.arguments
    if call.function == WAIT_TOOL:
        return WaitAction()
    if call.function == ANSWER_TOOL:
        return AnswerAction(
            decision=_text_or_none(args.get("decision")),
            candidate=_text_or_none(args.get("candidate")),
            # (as written: a JSON number is not read through a binary float)
            number=_text_or_none(call.exact_arguments().get("number")),
            unit=_text_or_none(args.get("unit")),
        )
    if call.function == ASK_TOOL:
        requests = args.get("requests")
        if not isinstance(requests, list) or not requests:
            return InvalidAction(
                reason="'requests' must be a non-empty list", raw=raw, tool=call.function
            )
        parsed = []
        for item in requests:
            if not isinstance(item, dict):
                return InvalidAction(
                    reason="each request must be an object", raw=raw, tool=call.function
                )
            role, question = item.get("role"), item.get("question")
            if not isinstance(role, str) or not isinstance(question, str):
                return InvalidAction(
                    reason="each request needs 'role' and 'question'", raw=raw, tool=call.function
                )
            parsed.append(RoleRequest(role=role, question=question))
        return AskAction(requests=tuple(parsed))
    return InvalidAction(reason=f"unknown tool {call.function!r}", raw=raw, tool=call.function)


def tool_arguments(action: Action) -> tuple[str, dict[str, Any]]:
    """The tool call (name, arguments) that stands for ``action`` in a rendered conversation."""
    if isinstance(action, AskAction):
        return ASK_TOOL, {"requests": [r.model_dump() for r in action.requests]}
    if isinstance(action, WaitAction):
        return WAIT_TOOL, {}
    if isinstance(action, AnswerAction):
        fields = action.model_dump(exclude={"kind"}, exclude_none=True)
        return ANSWER_TOOL, fields
    # an invalid call is replayed under the tool it named (a known one: providers reject
    # unknown tool names in the history); its raw arguments travel in the ToolCall
    return (action.tool if action.tool in TOOL_NAMES else ASK_TOOL), {}


# -- rendering for language models ------------------------------------------------------------
@functools.cache
def default_instructions() -> str:
    """The main agent's instructions (asset ``evaluators/main_agent.md``)."""
    path = asset_path("evaluators") / INSTRUCTIONS_FILE
    return path.read_text(encoding="utf-8").strip()


def briefing_text(briefing: Briefing) -> str:
    roles = "\n".join(f"- {r.name} [{r.id}]: {r.description}" for r in briefing.roles)
    return (
        f"{briefing.task_text.rstrip()}\n\nColleagues you can ask (role ids in brackets):\n"
        f"{roles}\n\nYou have {briefing.budget} rounds; every action (asking, waiting, "
        "answering) takes one round."
    )


def observation_text(observation: Observation) -> str:
    """The tool result an LLM agent reads for one observation."""
    lines = [f"Round {observation.round} done; {observation.rounds_left} rounds left."]
    if observation.error:
        lines.append(f"Error: {observation.error}")
    if observation.note:
        lines.append(observation.note)
    for reply in observation.replies:
        if reply.text is None:
            lines.append(f"No reply from {reply.role_name} [{reply.role}].")
        else:
            lines.append(f"Reply from {reply.role_name} [{reply.role}]:\n{reply.text}")
    return "\n".join(lines)


def conversation_messages(conversation: Conversation) -> list[ChatMessage]:
    """The conversation as chat messages: instructions, briefing, then call/result pairs."""
    briefing = conversation.briefing
    messages = [
        ChatMessage.system(briefing.instructions),
        ChatMessage.user(briefing_text(briefing)),
    ]
    for turn in conversation.turns:
        if isinstance(turn.action, InvalidAction):
            # what the model wrote could not be read as a tool call: send it back as text (a
            # provider rejects a tool call whose arguments are not JSON) with the error
            said = turn.action.raw[:2000] or "(an unreadable action)"
            messages.append(ChatMessage.assistant(said))
            messages.append(ChatMessage.user(observation_text(turn.observation)))
            continue
        name, arguments = tool_arguments(turn.action)
        call = ToolCall(id=f"call_{turn.observation.round}", function=name, arguments=arguments)
        messages.append(ChatMessage.assistant(tool_calls=(call,)))
        messages.append(
            ChatMessage.tool(
                observation_text(turn.observation), call, is_error=bool(turn.observation.error)
            )
        )
    return messages
