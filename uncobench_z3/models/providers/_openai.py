"""OpenAI chat completions, for ``openai/<model>`` and any OpenAI-compatible server.

``openai-api/<service>/<model>`` reads ``<SERVICE>_BASE_URL`` and (optionally)
``<SERVICE>_API_KEY``; the local llama.cpp server reuses :class:`OpenAIProvider` too.

Self-hosted servers do not all keep the API's promises, so for them (``enforce_max_tokens``:
``openai-api/`` and a ``local/`` server named by URL) the provider streams the reply and
stops reading once it holds ``max_tokens`` chunks (each chunk carries at least one token, so
it never stops before the server should have); the reply is marked ``client_truncated``
with the stop reason ``max_tokens``, and closing the stream tells the server to stop. A
server that refuses to stream is asked again without streaming, and not streamed to again.
An HTTP 500 whose body is empty or names the tool choice, answering a request that forced a
tool call, carries a hint: llama-cpp-python's ``chatml-function-calling`` format rejects
``tool_choice: "required"`` that way.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import openai

from ...errors import ModelConfigError
from .._secrets import logger
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
    PLACEHOLDER_API_KEY,
    ModelProvider,
    ProviderCallError,
    checked_base_url,
    require_env,
    sdk_keyword_arguments,
    server_slots,
    status_error_detail,
    take_options,
)

__all__ = [
    "OpenAIProvider",
    "create_openai_api_provider",
    "create_openai_provider",
    "openai_messages",
    "openai_tool_choice",
    "openai_tools",
    "parse_tool_arguments",
    "service_env_prefix",
]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def parse_tool_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Parsed arguments and ``None``, or ``{}`` and why ``raw`` is not a JSON object."""
    if raw is None or not raw.strip():
        return {}, None
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as error:
        return {}, f"tool arguments are not valid JSON: {error}"
    if not isinstance(parsed, dict):
        return {}, f"tool arguments must be a JSON object, got {type(parsed).__name__}"
    return parsed, None


def openai_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    translated: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            # The chat API has no error flag or name on tool results; the id links them.
            translated.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
        elif message.role == "assistant" and message.tool_calls:
            translated.append(
                {
                    "role": "assistant",
                    "content": message.content,  # "" not null: llama.cpp's server requires a string
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.function,
                                # Send back exactly what the model wrote, even if malformed.
                                "arguments": call.raw_arguments
                                if call.raw_arguments is not None
                                else json.dumps(call.arguments),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            translated.append({"role": message.role, "content": message.content})
    return translated


def openai_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def openai_tool_choice(choice: ToolMode | ToolFunction) -> str | dict[str, Any]:
    if isinstance(choice, ToolFunction):
        return {"type": "function", "function": {"name": choice.name}}
    return "required" if choice == "any" else choice


TOOL_CHOICE_HINT = (
    "this server seems to reject the forced tool choice (llama-cpp-python's "
    "chatml-function-calling format answers tool_choice 'required' so): add ',tool_choice=auto' "
    "to the agent's name, or ',protocol=text' to use no tools, or serve the model with "
    "'python -m uncobench_z3.models.llama_server', which honours it"
)


def _rejects_tool_choice(status: int, detail: str, request: Mapping[str, Any]) -> bool:
    """An HTTP 500 known to come from a server that cannot force a tool call."""
    choice = request.get("tool_choice")
    forced = choice == "required" or isinstance(choice, dict)
    lowered = detail.strip().lower()
    return status == 500 and forced and (not lowered or "tool_choice" in lowered or
                                         "tool choice" in lowered)  # fmt: skip


class OpenAIProvider(ModelProvider):
    """One model behind the chat completions API of ``base_url``."""

    def __init__(
        self,
        name: str,
        model: str,
        *,
        api_key: str,
        base_url: str,
        http_client: Any = None,
        max_tokens_field: str = "max_completion_tokens",
        cache_identity: str | None = None,
        enforce_max_tokens: bool = False,
        probe_slots: bool = False,
    ) -> None:
        super().__init__(name, cache_identity or base_url, api_key)
        self.model = model
        self.base_url = base_url
        self._max_tokens_field = max_tokens_field
        self._stream_for_max_tokens = enforce_max_tokens
        # an injected client is a test's (or a caller's) transport: no unscripted requests
        self._probe_slots = probe_slots and http_client is None
        self._owns_http_client = http_client is None
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, http_client=http_client
        )

    def build_request(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": openai_messages(messages)}
        if tools:
            request["tools"] = openai_tools(tools)
            if tool_choice is not None:
                request["tool_choice"] = openai_tool_choice(tool_choice)
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.top_p is not None:
            request["top_p"] = config.top_p
        if config.max_tokens is not None:
            request[self._max_tokens_field] = config.max_tokens
        if config.seed is not None:
            request["seed"] = config.seed
        if config.stop:
            request["stop"] = list(config.stop)
        if config.reasoning_effort is not None:
            request["reasoning_effort"] = config.reasoning_effort
        return request

    async def parallel_slots(self) -> int | None:
        """The server's ``total_slots`` (llama.cpp's ``/props``), for self-hosted servers."""
        if not self._probe_slots:
            return None
        return await asyncio.to_thread(server_slots, self.base_url)

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = self.build_request(messages, tools, tool_choice, config)
        streamed = self._stream_for_max_tokens and config.max_tokens is not None
        try:
            return await self._call(request, config, streamed)
        except _BrokenStream as error:
            reason = str(error)
        except ProviderCallError as error:
            if not streamed or error.status_code is None or "stream" not in str(error).lower():
                raise
            reason = str(error)
        logger.warning(
            "%s: streaming failed (%s); asking without streaming from now on, so max_tokens "
            "cannot be enforced client-side",
            self.name,
            reason,
        )
        self._stream_for_max_tokens = False
        return await self._call(request, config, streamed=False)

    async def _call(
        self, request: dict[str, Any], config: GenerateConfig, streamed: bool
    ) -> ModelOutput:
        create = self._client.chat.completions.create
        if streamed:
            request = {**request, "stream": True, "stream_options": {"include_usage": True}}
        try:
            answer = await create(**sdk_keyword_arguments(create, request), timeout=config.timeout)
            if streamed:
                return await self._read_stream(answer, config.max_tokens)
        except openai.APIStatusError as error:
            detail = status_error_detail(error)
            if _rejects_tool_choice(error.status_code, detail, request):
                raise ProviderCallError(
                    f"HTTP {error.status_code}: {detail or '(no message)'}; {TOOL_CHOICE_HINT}",
                    status_code=error.status_code,
                    retryable=False,
                ) from None
            raise ProviderCallError.from_status(
                error.status_code, detail, error.response.headers
            ) from None
        except openai.APITimeoutError:
            raise ProviderCallError("request timed out", retryable=True) from None
        except openai.APIConnectionError as error:
            raise ProviderCallError(f"connection error: {error.message}", retryable=True) from None
        except openai.OpenAIError as error:
            raise ProviderCallError(f"{type(error).__name__}: {error}", retryable=False) from None
        return self._parse(answer)

    async def _read_stream(self, stream: Any, max_tokens: int | None) -> ModelOutput:
        """Assemble a streamed reply, stopping after ``max_tokens`` content chunks."""
        reply = _StreamedReply()
        try:
            async for chunk in stream:
                if not reply.add(chunk, max_tokens):
                    logger.info(
                        "%s: the server went past max_tokens=%s; stopped reading",
                        self.name,
                        max_tokens,
                    )
                    break
        except Exception as error:  # anything that breaks a stream that had begun
            raise _BrokenStream(f"the stream broke off: {type(error).__name__}") from None
        finally:
            await stream.close()  # the server sees the client leave and stops generating
        if reply.finish is None and not reply.cut:
            # llama-cpp-python answers a request it fails with an empty or ping-only stream
            raise _BrokenStream("the stream ended before the reply was finished")
        return reply.output(self.model)

    def _parse(self, completion: Any) -> ModelOutput:
        if not getattr(completion, "choices", None):
            # a 200 without its answer: malformed, retried like a 5xx
            raise ProviderCallError("the response has no choices", status_code=200, retryable=True)
        choice = completion.choices[0]
        message = choice.message
        calls: list[ToolCall] = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:  # a non-function ("custom") tool call: not ours
                continue
            raw = function.arguments
            if isinstance(raw, dict):
                # some OpenAI-compatible servers send the object itself, not its JSON text
                # (an attribute error that ended the sample): taken as the text it stands for
                raw = json.dumps(raw)
            arguments, parse_error = parse_tool_arguments(raw)
            if parse_error:
                logger.info(
                    "%s: malformed arguments for %s: %s", self.name, function.name, parse_error
                )
            calls.append(
                ToolCall(
                    id=call.id,
                    function=function.name,
                    arguments=arguments,
                    raw_arguments=raw,
                    parse_error=parse_error,
                )
            )
        usage = completion.usage
        return ModelOutput(
            text=message.content or "",
            tool_calls=tuple(calls),
            usage=ModelUsage(
                input_tokens=usage.prompt_tokens if usage else 0,
                output_tokens=usage.completion_tokens if usage else 0,
                unreported_input_calls=0 if usage else 1,
            ),
            stop_reason=_STOP_REASONS.get(choice.finish_reason or "", "unknown"),
            model=completion.model or self.model,
        )

    async def aclose(self) -> None:
        if self._owns_http_client:
            await self._client.close()


class _BrokenStream(ProviderCallError):
    """A streamed reply that began (HTTP 200) but never finished."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


@dataclass
class _StreamedReply:
    """The pieces of a streamed chat completion, put together as they arrive."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    chunks: int = 0
    finish: str | None = None
    usage: Any = None
    model: str = ""
    cut: bool = False

    def add(self, chunk: Any, max_tokens: int | None) -> bool:
        """Take one chunk; ``False`` (and nothing taken) when it would pass ``max_tokens``."""
        self.model = self.model or (chunk.model or "")
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice in chunk.choices[:1]:
            delta = choice.delta
            # a chunk that carries text carries at least one token (a role or a function
            # name alone may carry none, so those are not counted)
            carries = bool(delta.content) or any(
                call.function is not None and call.function.arguments
                for call in delta.tool_calls or []
            )
            if carries and max_tokens is not None and self.chunks >= max_tokens:
                self.cut = True
                return False
            self.chunks += carries
            if delta.content:
                self.text.append(delta.content)
            for call in delta.tool_calls or []:
                slot = self.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.id or slot["id"]
                if call.function is not None:
                    slot["name"] += call.function.name or ""
                    slot["arguments"] += call.function.arguments or ""
            self.finish = choice.finish_reason or self.finish
        return True

    def output(self, model: str) -> ModelOutput:
        calls = []
        for index, slot in sorted(self.calls.items()):
            arguments, parse_error = parse_tool_arguments(slot["arguments"])
            calls.append(
                ToolCall(
                    id=slot["id"] or f"call_{index}",
                    function=slot["name"],
                    arguments=arguments,
                    raw_arguments=slot["arguments"],
                    parse_error=parse_error,
                )
            )
        usage = self.usage
        stop: StopReason = (
            "max_tokens" if self.cut else _STOP_REASONS.get(self.finish or "", "unknown")
        )
        return ModelOutput(
            text="".join(self.text),
            tool_calls=tuple(calls),
            usage=ModelUsage(
                input_tokens=usage.prompt_tokens if usage else 0,
                # without a usage chunk, the chunks read stand in for the tokens
                output_tokens=usage.completion_tokens if usage and not self.cut else self.chunks,
                # a reply cut off past max_tokens ends before the usage chunk most servers
                # send last: its prompt tokens are unknown, not 0
                unreported_input_calls=0 if usage else 1,
            ),
            stop_reason=stop,
            model=self.model or model,
            client_truncated=self.cut,
        )


_OPTIONS = {"api_key", "base_url", "http_client"}


def create_openai_provider(model: str, **options: Any) -> OpenAIProvider:
    """``openai/<model>``: key from OPENAI_API_KEY, base URL from OPENAI_BASE_URL."""
    name = f"openai/{model}"
    options = take_options(name, options, _OPTIONS)
    api_key = options.get("api_key") or require_env("OPENAI_API_KEY", name, "an API key")
    base_url = (
        options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    )
    base_url = checked_base_url(base_url, "OPENAI_BASE_URL", name)
    return OpenAIProvider(
        name, model, api_key=api_key, base_url=base_url, http_client=options.get("http_client")
    )


_SERVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def service_env_prefix(service: str) -> str:
    """``together-ai`` -> ``TOGETHER_AI`` (the prefix of its environment variables)."""
    return service.upper().replace("-", "_")


def create_openai_api_provider(path: str, **options: Any) -> OpenAIProvider:
    """``openai-api/<service>/<model>``: any OpenAI-compatible server.

    The base URL comes from ``<SERVICE>_BASE_URL``; the key from ``<SERVICE>_API_KEY``
    when set (local servers need none).
    """
    service, _, model = path.partition("/")
    name = f"openai-api/{path}"
    if not service or not model or not _SERVICE.match(service):
        raise ModelConfigError(
            f"model {name!r} must look like openai-api/<service>/<model>, "
            "for example openai-api/vllm/Qwen/Qwen2.5-7B-Instruct"
        )
    options = take_options(name, options, _OPTIONS)
    prefix = service_env_prefix(service)
    base_url = options.get("base_url") or require_env(
        f"{prefix}_BASE_URL", name, "the server's base URL"
    )
    base_url = checked_base_url(base_url, f"{prefix}_BASE_URL", name)
    api_key = (
        options.get("api_key")
        or os.environ.get(f"{prefix}_API_KEY", "").strip()
        or PLACEHOLDER_API_KEY
    )
    return OpenAIProvider(
        name,
        model,
        api_key=api_key,
        base_url=base_url,
        http_client=options.get("http_client"),
        max_tokens_field="max_tokens",
        enforce_max_tokens=True,
        probe_slots=True,
    )
