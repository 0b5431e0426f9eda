"""What every provider implements, and the error classification the retry policy reads.

A provider only translates between this package's types and one SDK. Retries, caching,
concurrency limits and usage accounting belong to :class:`uncobench_z3.models.Model`.
"""

from __future__ import annotations

import email.utils
import inspect
import json
import os
import time
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import ModelAPIError, ModelConfigError
from .._secrets import redact, redact_cut, register_secret
from .._types import ChatMessage, GenerateConfig, ModelOutput, ToolDef, ToolFunction, ToolMode

__all__ = [
    "CONTEXT_OVERFLOW_PATTERNS",
    "PLACEHOLDER_API_KEY",
    "ModelProvider",
    "ProviderCallError",
    "is_context_overflow",
    "is_retryable_status",
    "parse_retry_after",
    "require_env",
    "sdk_keyword_arguments",
    "server_slots",
    "status_error_detail",
    "take_options",
]

# Local servers ignore the key, but the SDKs refuse to start without one.
PLACEHOLDER_API_KEY = "not-needed"

# 408 request timeout, 409 conflict (lock contention), 429 rate limit: transient by
# definition; every 5xx (including Anthropic's 529 "overloaded") too.
_RETRYABLE_STATUS = frozenset({408, 409, 429})

# How servers say that a request does not fit the context window (lower case): OpenAI's and
# llama-cpp-python's error code, OpenAI / vLLM / llama-cpp-python, llama.cpp's llama-server,
# Anthropic, Ollama.
CONTEXT_OVERFLOW_PATTERNS = (
    "context_length_exceeded",
    "maximum context length",
    "exceed context window",
    "exceeds the available context size",
    "prompt is too long",
    "exceed context limit",
    "input length exceeds the context length",
)

# Characters kept of an error body that has no message of its own.
_ERROR_BODY_CHARACTERS = 500

# A Retry-After beyond this is treated as "not soon" and capped by the wrapper anyway.
_MAX_RETRY_AFTER_SECONDS = 3600.0


def is_retryable_status(status_code: int) -> bool:
    return status_code in _RETRYABLE_STATUS or status_code >= 500


def is_context_overflow(status_code: int | None, detail: str) -> bool:
    """Whether an error says the request does not fit the model's context window."""
    if status_code is not None and status_code not in (400, 413, 422, 500):
        return False
    lowered = detail.lower()
    return any(pattern in lowered for pattern in CONTEXT_OVERFLOW_PATTERNS)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be a number of seconds or an HTTP date. Returns ``None`` when
    neither header is present or parsable.
    """
    if not headers:
        return None
    lowered = {key.lower(): value for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return _bounded(float(milliseconds) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return _bounded(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return _bounded(when.timestamp() - time.time())


def _bounded(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_SECONDS)


class ProviderCallError(ModelAPIError):
    """One failed attempt, classified for the retry policy.

    ``retry_after`` is what the server asked for (seconds), when it said. The message is
    built from the status and the provider's own explanation, and is redacted anyway.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool,
        retry_after: float | None = None,
        context_overflow: bool = False,
    ) -> None:
        super().__init__(redact(message), status_code=status_code)
        self.retryable = retryable and not context_overflow
        self.retry_after = retry_after
        self.context_overflow = context_overflow

    @classmethod
    def from_status(
        cls, status_code: int, detail: str, headers: Mapping[str, str] | None = None
    ) -> ProviderCallError:
        return cls(
            f"HTTP {status_code}: {detail}",
            status_code=status_code,
            retryable=is_retryable_status(status_code),
            retry_after=parse_retry_after(headers),
            context_overflow=is_context_overflow(status_code, detail),
        )


def status_error_detail(error: Any) -> str:
    """What an SDK's ``APIStatusError`` says went wrong: the body's error message, else the
    body itself, redacted and then cut (cut first, a key it echoes would survive in part)."""
    body = error.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return redact_cut(inner["message"], _ERROR_BODY_CHARACTERS)
        return redact_cut(json.dumps(body), _ERROR_BODY_CHARACTERS)
    return redact_cut(str(body), _ERROR_BODY_CHARACTERS) if body else str(error.message)


def sdk_keyword_arguments(method: Callable[..., Any], request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as keyword arguments for the SDK ``method``.

    SDK releases add and drop typed parameters (recent Anthropic SDKs have no
    ``temperature``); fields the installed ``method`` does not declare travel in
    ``extra_body``, so the request on the wire is the same whatever the SDK version.
    """
    declared = inspect.signature(method).parameters
    arguments = {key: value for key, value in request.items() if key in declared}
    extra = {key: value for key, value in request.items() if key not in declared}
    if extra:
        arguments["extra_body"] = extra
    return arguments


def take_options(name: str, options: Mapping[str, Any], allowed: set[str]) -> dict[str, Any]:
    """``options`` as a dict, or a :class:`ModelConfigError` naming the ones not in ``allowed``."""
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ModelConfigError(
            f"model {name!r} does not take option(s) {unknown}; it takes {sorted(allowed)}"
        )
    return dict(options)


def require_env(variable: str, model_name: str, purpose: str) -> str:
    """The value of ``variable``, or a :class:`ModelConfigError` that names it (never its value)."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise ModelConfigError(
            f"model {model_name!r} needs {purpose}: set the environment variable {variable}"
        )
    return value


def checked_base_url(url: str, variable: str, model_name: str) -> str:
    """``url`` once it is an ``http://`` or ``https://`` URL with a host; otherwise a
    :class:`ModelConfigError` naming where it came from (never the value: it may hold a
    password), before any request, run folder or file."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelConfigError(
            f"model {model_name!r}: the base URL ({variable} or the base_url option) must be "
            "an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080/v1"
        )
    return url.strip()


def server_slots(base_url: str, timeout: float = 2.0) -> int | None:
    """How many requests the server at ``base_url`` serves at once, when it says: llama.cpp's
    ``GET /props`` reports ``total_slots`` (so does :mod:`uncobench_z3.models.llama_server`)."""
    import httpx  # (only a local server's provider asks: offline commands never import it)

    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        response = httpx.get(f"{root}/props", timeout=timeout)
        slots = response.json().get("total_slots") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return slots if isinstance(slots, int) and slots > 0 else None


class ModelProvider(ABC):
    """Translates one conversation into one provider request and the answer back.

    ``name`` is the full model name (``anthropic/claude-sonnet-4-5``); ``cache_identity``
    identifies the endpoint in cache keys (normally the base URL, never a key).
    """

    def __init__(self, name: str, cache_identity: str, api_key: str | None = None) -> None:
        self.name = name
        self.cache_identity = cache_identity
        if api_key != PLACEHOLDER_API_KEY:  # not a secret, and common in ordinary text
            register_secret(api_key)

    @abstractmethod
    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        """One attempt; raise :class:`ProviderCallError` for any provider failure."""

    async def parallel_slots(self) -> int | None:
        """How many calls the endpoint serves at once, when the provider knows (``None``:
        it does not; :class:`~uncobench_z3.models.Model` then allows its default)."""
        return None

    async def aclose(self) -> None:  # noqa: B027  # most providers hold nothing to close
        """Release clients this provider created (not the ones it was given)."""
