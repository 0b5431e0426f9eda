"""The provider-neutral vocabulary: messages, tools, generation settings and outputs.

Providers translate these to and from their SDKs; nothing here knows about a provider.
All types are frozen pydantic models, so a conversation can be hashed into a cache key
and stored as JSON without custom code.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import ModelConfigError

__all__ = [
    "ChatMessage",
    "ChatRole",
    "GenerateConfig",
    "ModelOutput",
    "ModelUsage",
    "ReasoningEffort",
    "StopReason",
    "ToolCall",
    "ToolChoice",
    "ToolDef",
    "ToolFunction",
    "ToolMode",
    "resolve_tool_choice",
]

ChatRole: TypeAlias = Literal["system", "user", "assistant", "tool"]
StopReason: TypeAlias = Literal["stop", "max_tokens", "tool_calls", "content_filter", "unknown"]
ReasoningEffort: TypeAlias = Literal["minimal", "low", "medium", "high"]
ToolMode: TypeAlias = Literal["auto", "none", "any"]

# Both Anthropic and OpenAI restrict tool names to this shape.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A function call the model asked for.

    ``arguments`` is the parsed JSON object; when the model produced text that is not a
    JSON object, ``arguments`` is empty, ``parse_error`` says why and ``raw_arguments``
    keeps the text, so the agent can tell the model what went wrong.
    """

    id: str
    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    parse_error: str | None = None

    def exact_arguments(self) -> dict[str, Any]:
        """``arguments`` with each JSON number that has a fraction or an exponent as the plain
        decimal text the model wrote (``46.665000000000000001``; ``1e16`` as
        ``"10000000000000000"``), not the binary float ``arguments`` holds: for numbers that
        are scored, which are exact."""
        if self.raw_arguments is None:
            return self.arguments
        try:
            exact = json.loads(self.raw_arguments, parse_float=_plain_decimal)
        except ValueError:
            return self.arguments
        return exact if isinstance(exact, dict) else self.arguments


def _plain_decimal(text: str) -> str | float:
    """A JSON number's text without an exponent; past 100 digits (``1e999999999``, no number
    a task holds, and slow to write out) the float it parses to."""
    value = Decimal(text)
    return format(value, "f") if abs(value.adjusted()) <= 100 else float(text)


class ToolDef(_Frozen):
    """A function the model may call; ``parameters`` is a JSON schema of an object."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _TOOL_NAME.match(name):
            raise ValueError(
                f"tool name {name!r} must be 1-64 letters, digits, '_' or '-' "
                "(the providers reject anything else)"
            )
        return name


class ToolFunction(_Frozen):
    """Forces the model to call the named tool."""

    name: str


ToolChoice: TypeAlias = ToolMode | ToolFunction | str
"""``"auto"``, ``"none"``, ``"any"`` (some tool must be called), or a tool name —
either as a plain string or as :class:`ToolFunction` when the tool is called ``auto``."""


def resolve_tool_choice(
    choice: ToolChoice | None, tools: list[ToolDef] | None
) -> ToolMode | ToolFunction | None:
    """Normalise ``choice`` against ``tools``; ``None`` when no tools are offered."""
    if not tools:
        if isinstance(choice, ToolFunction) or choice not in (None, "auto", "none"):
            raise ModelConfigError(f"tool_choice {choice!r} needs tools, but none were given")
        return None
    if choice is None:
        return "auto"
    if isinstance(choice, str) and choice in ("auto", "none", "any"):
        return choice  # type: ignore[return-value]  # narrowed by the membership test
    name = choice.name if isinstance(choice, ToolFunction) else choice
    known = [tool.name for tool in tools]
    if name not in known:
        raise ModelConfigError(
            f"tool_choice names {name!r}, which is not among the tools offered: {known}"
        )
    return ToolFunction(name=name)


class ChatMessage(_Frozen):
    """One turn of a conversation.

    Assistant messages may carry ``tool_calls``; a ``tool`` message answers one call and
    names it by ``tool_call_id`` and the function ``name``. ``is_error`` marks a tool
    result that reports a failure (Anthropic shows this to the model).
    """

    role: ChatRole
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @model_validator(mode="after")
    def _check_role_fields(self) -> ChatMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages carry tool_calls")
        if self.role == "tool":
            if not self.tool_call_id or not self.name:
                raise ValueError("a tool message needs tool_call_id and name")
        elif self.tool_call_id is not None or self.is_error:
            raise ValueError("tool_call_id and is_error belong to tool messages only")
        return self

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, content: str, call: ToolCall, *, is_error: bool = False) -> ChatMessage:
        """The result of ``call``."""
        return cls(
            role="tool",
            content=content,
            tool_call_id=call.id,
            name=call.function,
            is_error=is_error,
        )


class GenerateConfig(_Frozen):
    """Generation settings; ``None`` means "the provider's default".

    ``timeout`` (seconds) bounds one attempt and is not part of the cache key, since it
    does not change the answer.
    """

    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    timeout: float | None = Field(default=None, gt=0)
    stop: tuple[str, ...] | None = None

    def merged(self, override: GenerateConfig | None) -> GenerateConfig:
        """This config with every field that ``override`` sets replacing ours."""
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_none=True))


class ModelUsage(_Frozen):
    """Tokens spent, and their price in USD when the model's price is known."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    unreported_input_calls: int = Field(default=0, ge=0, exclude_if=lambda calls: calls == 0)
    """calls whose prompt tokens the server did not report (a streamed reply cut off past
    ``max_tokens`` before its usage chunk, a server that sends none): ``input_tokens`` holds
    none of theirs, so it is a lower bound and the cost unknown, not a prompt of 0 tokens
    (left out of the JSON when 0: records written before it read the same)"""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: ModelUsage) -> ModelUsage:
        # An empty usage is the identity, so summing from ModelUsage() keeps a known cost;
        # otherwise one unknown cost makes the total unknown rather than understated.
        if self.total_tokens == 0 and self.cost_usd is None and not self.unreported_input_calls:
            return other
        if other.total_tokens == 0 and other.cost_usd is None and not other.unreported_input_calls:
            return self
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else self.cost_usd + other.cost_usd
        )
        return ModelUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=cost,
            unreported_input_calls=self.unreported_input_calls + other.unreported_input_calls,
        )


class ModelOutput(_Frozen):
    """What one call to :meth:`Model.generate` returns.

    ``model`` is the model name the provider reported (for example a dated snapshot);
    ``from_cache`` is true when the answer came from the response cache;
    ``client_truncated`` is true when the server went past ``max_tokens`` and this client
    stopped reading (the stop reason is then ``max_tokens``).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: ModelUsage = Field(default_factory=ModelUsage)
    stop_reason: StopReason = "stop"
    model: str = ""
    from_cache: bool = False
    client_truncated: bool = False

    @property
    def message(self) -> ChatMessage:
        """The assistant turn to append to the conversation."""
        return ChatMessage.assistant(self.text, self.tool_calls)
