"""OpenAI chat completions, for ``openai/<model>`` and any OpenAI-compatible server.

``openai-api/<service>/<model>`` reads ``<SERVICE>_BASE_URL`` and (optionally)
``<SERVICE>_API_KEY``; the local llama.cpp server reuses :class:`OpenAIProvider` too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
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
    require_env,
    sdk_keyword_arguments,
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


def _error_detail(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        return json.dumps(body)[:500]
    return str(body)[:500] if body else error.message


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
    ) -> None:
        super().__init__(name, cache_identity or base_url, api_key)
        self.model = model
        self.base_url = base_url
        self._max_tokens_field = max_tokens_field
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

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = self.build_request(messages, tools, tool_choice, config)
        try:
            create = self._client.chat.completions.create
            completion = await create(
                **sdk_keyword_arguments(create, request), timeout=config.timeout
            )
        except openai.APIStatusError as error:
            raise ProviderCallError.from_status(
                error.status_code, _error_detail(error), error.response.headers
            ) from None
        except openai.APITimeoutError:
            raise ProviderCallError("request timed out", retryable=True) from None
        except openai.APIConnectionError as error:
            raise ProviderCallError(f"connection error: {error.message}", retryable=True) from None
        except openai.OpenAIError as error:
            raise ProviderCallError(f"{type(error).__name__}: {error}", retryable=False) from None
        return self._parse(completion)

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
            arguments, parse_error = parse_tool_arguments(function.arguments)
            if parse_error:
                logger.info(
                    "%s: malformed arguments for %s: %s", self.name, function.name, parse_error
                )
            calls.append(
                ToolCall(
                    id=call.id,
                    function=function.name,
                    arguments=arguments,
                    raw_arguments=function.arguments,
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
            ),
            stop_reason=_STOP_REASONS.get(choice.finish_reason or "", "unknown"),
            model=completion.model or self.model,
        )

    async def aclose(self) -> None:
        if self._owns_http_client:
            await self._client.close()


_OPTIONS = {"api_key", "base_url", "http_client"}


def create_openai_provider(model: str, **options: Any) -> OpenAIProvider:
    """``openai/<model>``: key from OPENAI_API_KEY, base URL from OPENAI_BASE_URL."""
    name = f"openai/{model}"
    options = take_options(name, options, _OPTIONS)
    api_key = options.get("api_key") or require_env("OPENAI_API_KEY", name, "an API key")
    base_url = (
        options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    )
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
    )
