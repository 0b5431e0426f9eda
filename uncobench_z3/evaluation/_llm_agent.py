"""Language models as main agents: native tool calling, or a plain-text protocol.

``provider/model[,key=value...]`` names an agent: generation settings (temperature,
max_tokens, top_p, seed, reasoning_effort) follow the name, and ``protocol=text`` switches to
the plain-text protocol for servers without tool calling. A malformed tool call, or text that
follows neither protocol, becomes an :class:`InvalidAction`: it costs a round and the agent
gets the error back; it never crashes the run.
"""

from __future__ import annotations

import re
from typing import Literal

from ..construct import ModelRef, model_with_defaults
from ..errors import ConfigError
from ..models import ChatMessage, ModelOutput, ModelUsage, StoredOutput
from ._models import shared_model, trial_config
from ._protocol import (
    ANSWER_TOOL,
    ASK_TOOL,
    WAIT_TOOL,
    Action,
    AnswerAction,
    AskAction,
    Conversation,
    InvalidAction,
    RoleRequest,
    WaitAction,
    action_from_tool_call,
    briefing_text,
    conversation_messages,
    observation_text,
)
from ._registry import register_agent_prefix

Protocol = Literal["tools", "text"]
LLM_PROVIDERS = ("anthropic", "openai", "openai-api", "local", "mock")

TEXT_PROTOCOL = """
Reply with exactly one action per message, in one of these forms:

ASK <role id>: <your question>
    (one line per colleague; several ASK lines ask several colleagues in the same round)
WAIT
ANSWER
Decision: <decision word>
Candidate: <name, or none>
Number: <the number with its unit, or null>
""".strip()


_ANSWER_FIELD = re.compile(r"^\W*(?:decision|candidate|number)\W*:", re.IGNORECASE | re.MULTILINE)
"""a line of the protocol's answer (markdown bold and bullets allowed, as the scoring reads)"""


def parse_text_action(text: str) -> Action:
    """Read one action of the plain-text protocol.

    A message that starts with ``ANSWER`` is an answer, whatever follows. After other text
    (a model's reasoning), a line starting with ``ANSWER`` is one only in the protocol's
    form: the word alone, or followed by ``Decision:`` / ``Candidate:`` / ``Number:`` lines;
    reasoning that says "Answer: it depends on finance's figures" does not end the episode.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    asks = []
    for line in lines:
        match = re.match(r"^ASK\s+\[?([A-Za-z][A-Za-z0-9_]*)\]?\s*:\s*(.+)$", line, re.IGNORECASE)
        if match:
            asks.append(RoleRequest(role=match[1], question=match[2].strip()))
    if asks:
        return AskAction(requests=tuple(asks))
    if any(re.fullmatch(r"WAIT\.?", line, re.IGNORECASE) for line in lines):
        return WaitAction()
    mentioned = False
    for i, line in enumerate(lines):
        if re.match(r"^ANSWER\b", line, re.IGNORECASE):
            body = "\n".join([line[len("ANSWER") :].lstrip(" :"), *lines[i + 1 :]]).strip()
            if i == 0 or not line[len("ANSWER") :].strip(" :.") or _ANSWER_FIELD.search(body):
                return AnswerAction(text=body or None)
            mentioned = True
    reason = "no action found: reply with ASK <role id>: <question>, WAIT, or ANSWER"
    if mentioned:
        reason += " (after other text: ANSWER alone on a line, then Decision:, Candidate:, Number:)"
    return InvalidAction(reason=reason, raw=text[:2000])


def text_messages(conversation: Conversation) -> list[ChatMessage]:
    """The conversation for the plain-text protocol (no tool messages)."""
    briefing = conversation.briefing
    messages = [
        ChatMessage.system(f"{briefing.instructions}\n\n{TEXT_PROTOCOL}"),
        ChatMessage.user(briefing_text(briefing)),
    ]
    for turn in conversation.turns:
        action = turn.action
        if isinstance(action, AskAction):
            said = "\n".join(f"ASK {r.role}: {r.question}" for r in action.requests)
        elif isinstance(action, WaitAction):
            said = "WAIT"
        elif isinstance(action, AnswerAction):
            said = "ANSWER\n" + (action.text or "")
        else:
            said = action.raw or "(unreadable)"
        messages.append(ChatMessage.assistant(said))
        messages.append(ChatMessage.user(observation_text(turn.observation)))
    return messages


class LLMAgent:
    """A main agent backed by a language model."""

    def __init__(
        self,
        ref: ModelRef,
        protocol: Protocol = "tools",
        tool_choice: str = "any",
        seed: int | None = None,
    ) -> None:
        self.ref = ref
        self.protocol = protocol
        self.tool_choice = tool_choice
        self.seed = seed
        """the epoch seed: the model's ``seed`` (unless the name pins one) and the scope of
        the response cache, so a call repeats from the cache within its epoch only"""
        self.usage = ModelUsage()
        """tokens and cost of this agent's calls in its sample (cache hits spend nothing)"""
        self.cached_usage = ModelUsage()
        """what the answers served from the response cache cost when they were first made"""
        self.last_output: StoredOutput | None = None
        """what the model wrote for the latest action (capped; the trace keeps it per round)"""

    def _count(self, output: ModelOutput) -> None:
        if output.from_cache:
            self.cached_usage = self.cached_usage + output.usage
        else:
            self.usage = self.usage + output.usage
        self.last_output = StoredOutput.of(output)

    async def act(self, conversation: Conversation) -> Action:
        model = shared_model(self.ref)
        config = trial_config(self.ref, self.seed)
        if self.protocol == "text":
            output = await model.generate(
                text_messages(conversation), config=config, trial=self.seed
            )
            self._count(output)
            return parse_text_action(output.text)
        output = await model.generate(
            conversation_messages(conversation),
            tools=list(conversation.briefing.tools),
            tool_choice=self.tool_choice,
            config=config,
            trial=self.seed,
        )
        self._count(output)
        calls = [c for c in output.tool_calls if c.function in (ASK_TOOL, WAIT_TOOL, ANSWER_TOOL)]
        if calls:
            return action_from_tool_call(calls[0])
        if output.tool_calls:
            return action_from_tool_call(output.tool_calls[0])  # an unknown tool: invalid
        return untooled_action(output.text)


def untooled_action(text: str) -> Action:
    """The action of a tool-calling model's reply that calls no tool: what the plain-text
    protocol reads in it, else an invalid action asking for a tool."""
    fallback = parse_text_action(text)
    if isinstance(fallback, InvalidAction):
        return InvalidAction(reason="no tool call: use one of the tools", raw=text[:2000])
    return fallback


def parse_agent_name(name: str) -> tuple[ModelRef, Protocol]:
    """``provider/model[,key=value...][,protocol=text][,tool_choice=auto]`` -> model, protocol."""
    ref, protocol, _ = parse_agent_options(name)
    return ref, protocol


def parse_agent_options(name: str) -> tuple[ModelRef, Protocol, str]:
    protocol: Protocol = "tools"
    tool_choice = "any"
    kept = []
    for part in (p.strip() for p in name.split(",")):
        key, _, value = part.partition("=")
        if key == "protocol":
            if value not in ("tools", "text"):
                raise ConfigError(f"agent {name!r}: protocol is 'tools' or 'text'")
            protocol = value  # type: ignore[assignment]
        elif key == "tool_choice":
            if value not in ("any", "auto"):
                raise ConfigError(f"agent {name!r}: tool_choice is 'any' or 'auto'")
            tool_choice = value
        else:
            kept.append(part)
    return model_with_defaults(",".join(kept)), protocol, tool_choice


def llm_agent(name: str, seed: int) -> LLMAgent:
    """An LLM agent for one sample; ``seed`` is the epoch seed (see :class:`LLMAgent`)."""
    ref, protocol, tool_choice = parse_agent_options(name)
    return LLMAgent(ref, protocol, tool_choice, seed)


def model_generation(ref: ModelRef) -> dict[str, object]:
    """What a run records about a model's decoding: the settings its name gives (the
    provider's default where it gives none) and where its seed comes from."""
    settings: dict[str, object] = {"temperature": "provider default", **dict(ref.settings)}
    settings.setdefault("seed", "per epoch")
    return {**settings, "cache": ref.cache}


def generation_settings(name: str) -> dict[str, object]:
    """:func:`model_generation` of an LLM agent's name, with its protocol and tool choice."""
    ref, protocol, tool_choice = parse_agent_options(name)
    return {**model_generation(ref), "protocol": protocol, "tool_choice": tool_choice}


def register_llm_agents() -> None:
    for provider in LLM_PROVIDERS:
        register_agent_prefix(provider, llm_agent)
