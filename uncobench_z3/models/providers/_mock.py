"""``mock/<name>``: a scripted provider for tests and dry runs, no network.

Script it with a list (each call takes the next item: a :class:`ModelOutput`, a string
of text, or an exception to raise) or with a function ``(messages, tools) -> output``
(sync or async). Without a script, ``mock/echo`` answers with the last user message:
deterministic, so the CLI can run a whole benchmark offline.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ...errors import ModelConfigError
from .._types import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    ToolDef,
    ToolFunction,
    ToolMode,
)
from ._base import ModelProvider, ProviderCallError, take_options

__all__ = ["MockCall", "MockProvider", "MockResponder", "MockScriptItem", "create_mock_provider"]

MockScriptItem: TypeAlias = ModelOutput | str | BaseException
MockResponder: TypeAlias = Callable[
    [list[ChatMessage], list[ToolDef]],
    ModelOutput | str | Awaitable[ModelOutput | str],
]

_BUILTIN_BEHAVIOURS = ("echo",)


@dataclass(frozen=True)
class MockCall:
    """One request the mock received, for tests to inspect."""

    messages: list[ChatMessage]
    tools: list[ToolDef]
    tool_choice: ToolMode | ToolFunction | None
    config: GenerateConfig


def _count_words(text: str) -> int:
    return len(text.split())


def _echo(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


class MockProvider(ModelProvider):
    """Answers from a script; records every call in :attr:`calls`."""

    def __init__(
        self,
        name: str,
        script: Sequence[MockScriptItem] | MockResponder,
    ) -> None:
        super().__init__(name, cache_identity="mock")
        self.calls: list[MockCall] = []
        self._responder: MockResponder | None = None
        self._script: list[MockScriptItem] = []
        if callable(script):
            self._responder = script
        else:
            self._script = list(script)

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        self.calls.append(MockCall(list(messages), list(tools), tool_choice, config))
        answer: ModelOutput | str
        if self._responder is not None:
            produced = self._responder(messages, tools)
            answer = await produced if inspect.isawaitable(produced) else produced
        else:
            index = len(self.calls) - 1
            if index >= len(self._script):
                raise ProviderCallError(
                    f"{self.name}: the script has {len(self._script)} outputs, "
                    f"call {index + 1} asked for another",
                    retryable=False,
                )
            item = self._script[index]
            if isinstance(item, BaseException):
                raise item
            answer = item
        return self._complete(answer, messages)

    def _complete(self, answer: ModelOutput | str, messages: list[ChatMessage]) -> ModelOutput:
        if isinstance(answer, ModelOutput):
            if answer.model:
                return answer
            return answer.model_copy(update={"model": self.name})
        # Word counts stand in for tokens, so usage accounting has something to add up.
        return ModelOutput(
            text=answer,
            usage=ModelUsage(
                input_tokens=sum(_count_words(message.content) for message in messages),
                output_tokens=_count_words(answer),
            ),
            stop_reason="stop",
            model=self.name,
        )


def create_mock_provider(behaviour: str, **options: Any) -> MockProvider:
    """``mock/<behaviour>``; ``outputs=`` (a list or a function) scripts any name."""
    name = f"mock/{behaviour}"
    options = take_options(name, options, {"outputs"})
    outputs = options.get("outputs")
    if outputs is not None:
        return MockProvider(name, outputs)
    if behaviour == "echo":
        return MockProvider(name, _echo)
    raise ModelConfigError(
        f"model {name!r} has no script: pass outputs=[...] or a function to get_model, "
        f"or use a built-in behaviour: {', '.join('mock/' + b for b in _BUILTIN_BEHAVIOURS)}"
    )
