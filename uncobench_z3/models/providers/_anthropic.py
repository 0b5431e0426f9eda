"""Anthropic's Messages API, for ``anthropic/<model>``.

System messages become the ``system`` parameter, tool results become ``tool_result``
blocks in a user turn, and consecutive turns of one role are merged because the API
requires user and assistant turns to alternate. ``reasoning_effort`` becomes
``output_config.effort``; the API has no seed, so ``seed`` is not sent. A tool call's
``raw_arguments`` is its input as the response body writes it: the SDK hands over the input
parsed, each JSON number with a fraction a binary float (46.665000000000000001 as 46.665),
so the body is read again with those numbers kept as their digits, which
:meth:`ToolCall.exact_arguments` (a scored answer, the judge's coverage) reads.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

import anthropic

from .._types import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    StopReason,
    ToolCall,
    ToolDef,
    ToolFunction,
    ToolMode,
)
from ._base import (
    ModelProvider,
    ProviderCallError,
    checked_base_url,
    require_env,
    sdk_keyword_arguments,
    status_error_detail,
    take_options,
)

__all__ = [
    "AnthropicProvider",
    "anthropic_messages",
    "anthropic_tool_choice",
    "anthropic_tools",
    "create_anthropic_provider",
]

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
# The API requires max_tokens; this is used when the config leaves it unset.
DEFAULT_MAX_TOKENS = 4096

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "max_tokens",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def anthropic_messages(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """The ``system`` text (``None`` without system messages) and the alternating turns."""
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system_parts.append(message.content)
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue  # the API rejects empty turns; an empty assistant turn says nothing
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    system = "\n\n".join(system_parts) if system_parts else None
    return system, turns


def _blocks(message: ChatMessage) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return "user", [result]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.function, "input": call.arguments}
        )
    return message.role, blocks


def anthropic_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]


def anthropic_tool_choice(choice: ToolMode | ToolFunction) -> dict[str, Any]:
    if isinstance(choice, ToolFunction):
        return {"type": "tool", "name": choice.name}
    return {"type": choice}


class AnthropicProvider(ModelProvider):
    """One Claude model behind the Messages API of ``base_url``."""

    def __init__(
        self,
        name: str,
        model: str,
        *,
        api_key: str,
        base_url: str,
        http_client: Any = None,
    ) -> None:
        super().__init__(name, base_url, api_key)
        self.model = model
        self.base_url = base_url
        self._owns_http_client = http_client is None
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, http_client=http_client
        )

    def build_request(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> dict[str, Any]:
        system, turns = anthropic_messages(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if system is not None:
            request["system"] = system
        if tools:
            request["tools"] = anthropic_tools(tools)
            if tool_choice is not None:
                request["tool_choice"] = anthropic_tool_choice(tool_choice)
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.top_p is not None:
            request["top_p"] = config.top_p
        if config.stop:
            request["stop_sequences"] = list(config.stop)
        if config.reasoning_effort is not None:
            # The API's effort scale starts at "low".
            effort = "low" if config.reasoning_effort == "minimal" else config.reasoning_effort
            request["output_config"] = {"effort": effort}
        return request

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = self.build_request(messages, tools, tool_choice, config)
        try:
            # the raw response, for the body's numbers as written (see _written_inputs)
            create = self._client.messages.with_raw_response.create
            raw = await create(**sdk_keyword_arguments(create, request), timeout=config.timeout)
            response = raw.parse()
            if inspect.isawaitable(response):  # (a legacy raw response parses synchronously)
                response = await response
        except anthropic.APIStatusError as error:
            raise ProviderCallError.from_status(
                error.status_code, status_error_detail(error), error.response.headers
            ) from None
        except anthropic.APITimeoutError:
            raise ProviderCallError("request timed out", retryable=True) from None
        except anthropic.APIConnectionError as error:
            raise ProviderCallError(f"connection error: {error.message}", retryable=True) from None
        except anthropic.AnthropicError as error:
            raise ProviderCallError(f"{type(error).__name__}: {error}", retryable=False) from None
        return self._parse(response, raw.http_response.text)

    def _parse(self, response: Any, body: str) -> ModelOutput:
        """``response`` as an output; ``body`` is the response's text, read again for the
        tool_use blocks' inputs as it writes them (:func:`_written_inputs`), when it has any."""
        content = getattr(response, "content", None)
        usage: Any = getattr(response, "usage", None)
        if not isinstance(content, list) or not isinstance(
            getattr(usage, "output_tokens", None), int
        ):
            # a 200 without its answer (not JSON, or JSON of another shape): malformed,
            # retried like a 5xx, as the OpenAI providers do
            raise ProviderCallError(
                "malformed response (no message content)", status_code=200, retryable=True
            )
        texts: list[str] = []
        calls: list[ToolCall] = []
        written: list[tuple[Any, str]] | None = None  # (a reply without tool calls: unread)
        for block in content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                arguments = block.input
                # the input as the body writes it; as parsed when the body's tool_use blocks
                # do not line up with the SDK's (a body it read otherwise)
                if written is None:
                    written = _written_inputs(body)
                index = len(calls)
                exact = index < len(written) and written[index][0] == block.id
                calls.append(
                    ToolCall(
                        id=block.id,
                        function=block.name,
                        arguments=arguments if isinstance(arguments, dict) else {},
                        raw_arguments=written[index][1] if exact else json.dumps(arguments),
                        parse_error=None
                        if isinstance(arguments, dict)
                        else f"tool input must be a JSON object, got {type(arguments).__name__}",
                    )
                )
        # Cached prompt tokens are reported apart from input_tokens; all were read.
        input_tokens = (
            usage.input_tokens
            + (getattr(usage, "cache_creation_input_tokens", None) or 0)
            + (getattr(usage, "cache_read_input_tokens", None) or 0)
        )
        return ModelOutput(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=ModelUsage(input_tokens=input_tokens, output_tokens=usage.output_tokens),
            stop_reason=_STOP_REASONS.get(response.stop_reason or "", "unknown"),
            model=response.model or self.model,
        )

    async def aclose(self) -> None:
        if self._owns_http_client:
            await self._client.close()


class _Digits(str):
    """A JSON number with a fraction or an exponent, as the body writes it."""


def _written_inputs(body: str) -> list[tuple[Any, str]]:
    """Each tool_use block's ``(id, input)`` in ``body``, the input as JSON text that keeps
    every number as written (``json.dumps`` spacing, as the parsed input was written before);
    none when the body is not a message."""
    try:
        message = json.loads(body, parse_float=_Digits)
    except ValueError:
        return []
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        (block.get("id"), _json_text(block.get("input")))
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]


def _json_text(value: Any) -> str:
    if isinstance(value, _Digits):
        return str(value)
    if isinstance(value, dict):
        members = (f"{json.dumps(key)}: {_json_text(item)}" for key, item in value.items())
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_text(item) for item in value) + "]"
    return json.dumps(value)


def create_anthropic_provider(model: str, **options: Any) -> AnthropicProvider:
    """``anthropic/<model>``: key from ANTHROPIC_API_KEY, base URL from ANTHROPIC_BASE_URL."""
    name = f"anthropic/{model}"
    options = take_options(name, options, {"api_key", "base_url", "http_client"})
    api_key = options.get("api_key") or require_env("ANTHROPIC_API_KEY", name, "an API key")
    base_url = (
        options.get("base_url")
        or os.environ.get("ANTHROPIC_BASE_URL")
        or DEFAULT_ANTHROPIC_BASE_URL
    )
    base_url = checked_base_url(base_url, "ANTHROPIC_BASE_URL", name)
    return AnthropicProvider(
        name, model, api_key=api_key, base_url=base_url, http_client=options.get("http_client")
    )
