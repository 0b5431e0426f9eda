"""The policy around every provider: retries, concurrency, timeouts, cache and usage.

Providers make one attempt and classify its failure; a 200 whose body is not JSON counts
as a retryable failure too. :class:`Model` decides whether to try again and how long to
wait (exponential backoff, never shorter than what the server asked for in Retry-After,
capped), bounds how many calls run at once, bounds each attempt with a timeout, answers
repeated requests from the on-disk cache, and adds up the tokens spent. A request that does
not fit the context window is never retried: it raises
:class:`~uncobench_z3.errors.ContextWindowError`.

How many calls run at once: ``max_connections`` when given, else what the provider says
its endpoint serves (:meth:`ModelProvider.parallel_slots`: a llama.cpp server's slots, 1
for the server ``local/`` starts), else :data:`DEFAULT_MAX_CONNECTIONS`.
"""

from __future__ import annotations

import asyncio
import json
import random
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base

from .._secrets import redact_model_text
from .._textcap import one_line
from ..errors import ContextWindowError, ModelAPIError
from ._cache import ResponseCache, cache_key
from ._secrets import logger, redact, redact_cut
from ._types import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    ToolCall,
    ToolChoice,
    ToolDef,
    ToolFunction,
    ToolMode,
    resolve_tool_choice,
)
from ._usage import ModelPrice, price_for, priced, record_usage
from .providers._base import ModelProvider, ProviderCallError

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_TIMEOUT",
    "Model",
    "RetryCallback",
    "Sleep",
]

RetryCallback: TypeAlias = Callable[[str, int, float, str], None]
"""``on_retry(model_name, failed_attempt, wait_seconds, reason)``, called before a wait."""
Sleep: TypeAlias = Callable[[float], Awaitable[None]]

DEFAULT_MAX_CONNECTIONS = 8
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_TIMEOUT = 300.0
_INITIAL_BACKOFF = 1.0
# Spread of the random extra wait, as a fraction of the backoff, so that many agents
# throttled together do not come back together.
_JITTER = 0.1


def _is_retryable(error: BaseException) -> bool:
    return isinstance(error, ProviderCallError) and error.retryable


class _BackoffHonouringRetryAfter(wait_base):
    """``min(cap, max(exponential backoff + jitter, Retry-After))``."""

    def __init__(self, initial: float, cap: float) -> None:
        self.initial = initial
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> float:
        backoff = self.initial * 2 ** (retry_state.attempt_number - 1)
        backoff += random.uniform(0, _JITTER * backoff)
        error = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(error, "retry_after", None) or 0.0
        return float(min(self.cap, max(backoff, retry_after)))


def _redacted_output(output: ModelOutput) -> ModelOutput:
    """``output`` with every key masked in what the model wrote: its text and its tool calls.

    A model can repeat a key it saw (in a prompt, a tool result, an echoing server); masked
    here, where every answer passes, the agent, the trace and the cache see the same text.
    """
    calls = tuple(_redacted_call(call) for call in output.tool_calls)
    text, model = redact_model_text(output.text), redact_model_text(output.model)
    if text == output.text and model == output.model and calls == output.tool_calls:
        return output
    return output.model_copy(update={"text": text, "model": model, "tool_calls": calls})


def _redacted_call(call: ToolCall) -> ToolCall:
    redacted = ToolCall(
        id=redact_model_text(call.id),
        function=redact_model_text(call.function),
        arguments=_redacted_json(call.arguments),
        raw_arguments=None if call.raw_arguments is None else redact_model_text(call.raw_arguments),
        parse_error=None if call.parse_error is None else redact_model_text(call.parse_error),
    )
    return call if redacted == call else redacted


def _redacted_json(value: Any) -> Any:
    if isinstance(value, str):
        return redact_model_text(value)
    if isinstance(value, dict):
        return {redact_model_text(key): _redacted_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted_json(item) for item in value]
    return value


class Model:
    """A provider wrapped in this package's calling policy; see :func:`get_model`."""

    def __init__(
        self,
        provider: ModelProvider,
        *,
        config: GenerateConfig | None = None,
        cache: ResponseCache | None = None,
        max_connections: int | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_retry_wait: float = 60.0,
        on_retry: RetryCallback | None = None,
        sleep: Sleep | None = None,
        price: ModelPrice | None = None,
    ) -> None:
        if (max_connections is not None and max_connections < 1) or max_attempts < 1:
            raise ValueError("max_connections and max_attempts must be >= 1")
        if max_retry_wait < 0:
            raise ValueError("max_retry_wait must be >= 0")
        self.provider = provider
        self.config = config or GenerateConfig()
        self.cache = cache
        self.max_connections = max_connections
        """the limit asked for (``None``: the provider's, see :meth:`connection_limit`)"""
        self._connection_limit: int | None = None
        self._connection_share: Callable[[int], int] | None = None
        self.max_attempts = max_attempts
        self.max_retry_wait = max_retry_wait
        self.on_retry = on_retry
        self.price = price or price_for(provider.name)
        self._sleep: Sleep = sleep or asyncio.sleep
        self.usage = ModelUsage()
        """Tokens spent by this model's provider calls (cache hits spend none)."""
        self.provider_calls = 0
        self.cache_hits = 0
        # One semaphore per event loop: a semaphore that ever made a task wait belongs
        # to that loop, and tests (or a CLI) may drive one Model from several loops.
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()
        self._asking: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Event]
        ] = weakref.WeakKeyDictionary()
        """per event loop: cache key -> set when the request asked under it has finished"""

    @property
    def name(self) -> str:
        return self.provider.name

    async def connection_limit(self) -> int:
        """How many calls of this model run at once: ``max_connections`` if given, else the
        endpoint's parallel slots when the provider knows them, else the default (8); of
        that, the share :meth:`share_connections` gave, if any."""
        if self._connection_limit is None:
            limit = (
                self.max_connections
                or await self.provider.parallel_slots()
                or DEFAULT_MAX_CONNECTIONS
            )
            share = self._connection_share
            self._connection_limit = limit if share is None else share(limit)
        return self._connection_limit

    def share_connections(self, share: Callable[[int], int]) -> None:
        """Call with ``share(limit)`` of the connections :meth:`connection_limit` finds: one
        process's part of a limit that holds across several (an eval shard's). Given before
        the first call; the limit may be the endpoint's, known only once it is asked."""
        if self._connection_limit is not None:
            raise RuntimeError("share_connections comes before the model's first call")
        self._connection_share = share

    def __repr__(self) -> str:
        return f"Model({self.name!r})"

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolDef] | None = None,
        tool_choice: ToolChoice | None = None,
        config: GenerateConfig | None = None,
        *,
        trial: int | str | None = None,
    ) -> ModelOutput:
        """One answer to ``messages``, from the cache or the provider.

        ``config`` overrides this model's default settings field by field. ``trial`` (an
        evaluation's epoch seed) scopes the cache: the same request in another trial is asked
        again, never replayed. Raises
        :class:`ModelAPIError` when the provider fails and retries do not cure it.
        """
        message_list = list(messages)
        if not message_list:
            raise ValueError("generate needs at least one message")
        tool_list = list(tools or [])
        choice = resolve_tool_choice(tool_choice, tool_list)
        settings = self.config.merged(config)

        if self.cache is None:
            return await self._asked(message_list, tool_list, choice, settings)
        key = cache_key(
            self.name,
            self.provider.cache_identity,
            message_list,
            tool_list,
            choice,
            settings,
            trial,
        )
        # An identical request already being asked is waited for, not asked again: at
        # temperature > 0 two calls answer differently, and the arms of one sample (played at
        # once) would no longer share the history before their intervention
        # (docs/interventions.md). Then it is a cache hit, as if played one after the other.
        asking = self._asking.setdefault(asyncio.get_running_loop(), {})
        while (waiting := asking.get(key)) is not None:
            await waiting.wait()
        cached = self.cache.get(key)
        if cached is not None:
            self.cache_hits += 1
            logger.debug("%s: cache hit %s", self.name, key[:12])
            # (an entry written before answers were redacted is redacted now, so a hit
            # says exactly what the miss that wrote it said)
            return _redacted_output(cached)
        asking[key] = asked = asyncio.Event()
        try:
            output = await self._asked(message_list, tool_list, choice, settings)
            self.cache.put(key, self.name, output)
        finally:
            del asking[key]
            asked.set()
        return output

    async def _asked(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        """The provider's answer (retried), redacted and priced; its usage counted."""
        output = await self._generate_with_retries(messages, tools, tool_choice, config)
        output = _redacted_output(output).model_copy(
            update={"usage": priced(output.usage, self.price), "from_cache": False}
        )
        self.usage += output.usage
        record_usage(self.name, output.usage)
        return output

    async def _generate_with_retries(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=_BackoffHonouringRetryAfter(_INITIAL_BACKOFF, self.max_retry_wait),
            retry=retry_if_exception(_is_retryable),
            sleep=self._sleep,
            before_sleep=self._before_sleep,
            reraise=True,
        )
        attempts = 0
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    return await self._attempt(messages, tools, tool_choice, config)
        except ProviderCallError as error:
            tried = f" (after {attempts} attempts)" if attempts > 1 else ""
            if error.context_overflow:
                raise ContextWindowError(
                    redact(f"{self.name}: {error}"),
                    status_code=error.status_code,
                    attempts=attempts,
                ) from error
            raise ModelAPIError(
                redact(f"{self.name}: {error}{tried}"),
                status_code=error.status_code,
                attempts=attempts,
            ) from error
        raise AssertionError("unreachable: tenacity either returns or re-raises")

    async def _attempt(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        timeout = config.timeout or DEFAULT_TIMEOUT
        # The SDK gets the same bound, so its connection pool gives up in step with us.
        config = config.model_copy(update={"timeout": timeout})
        async with await self._semaphore():
            self.provider_calls += 1
            try:
                async with asyncio.timeout(timeout):
                    return await self.provider.generate(messages, tools, tool_choice, config)
            except TimeoutError:
                raise ProviderCallError(f"no answer within {timeout:g} s", retryable=True) from None
            except ProviderCallError:
                raise
            except json.JSONDecodeError as error:
                # A 200 whose body is not JSON: the SDK fails while reading it. Like a 5xx,
                # the next attempt may be fine. (Other exceptions are bugs and propagate.)
                raise ProviderCallError(
                    f"malformed response (not JSON): {redact_cut(str(error), 200)}",
                    status_code=200,
                    retryable=True,
                ) from None

    async def _semaphore(self) -> asyncio.Semaphore:
        limit = await self.connection_limit()
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = asyncio.Semaphore(limit)
            self._semaphores[loop] = semaphore
        return semaphore

    def _before_sleep(self, retry_state: RetryCallState) -> None:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        wait = retry_state.next_action.sleep if retry_state.next_action else 0.0
        # printed as it is (a log line, the progress display): one line without the escape
        # sequences a server's error body can hold
        reason = one_line(redact(str(error))) if error else "unknown error"
        logger.warning(
            "%s: attempt %d failed (%s); retrying in %.1f s",
            self.name,
            retry_state.attempt_number,
            reason,
            wait,
        )
        if self.on_retry is not None:
            try:
                self.on_retry(self.name, retry_state.attempt_number, wait, reason)
            except Exception:  # a broken progress display must not stop the run
                logger.exception("%s: the on_retry callback failed", self.name)

    async def aclose(self) -> None:
        """Close the SDK clients the provider created (injected clients stay open)."""
        await self.provider.aclose()

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
