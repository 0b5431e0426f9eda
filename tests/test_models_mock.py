"""The scripted mock provider, and the Model policy exercised through it."""

from __future__ import annotations

import asyncio

import pytest

from uncobench_z3.errors import ModelAPIError, ModelConfigError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    MockProvider,
    ModelOutput,
    ModelPrice,
    ModelUsage,
    ProviderCallError,
    ToolCall,
    ToolDef,
    get_model,
    model_usage,
    reset_model_usage,
)

CALCULATOR = ToolDef(name="add", description="Add two integers.")


async def test_scripted_outputs_come_in_order_and_calls_are_recorded() -> None:
    call = ToolCall(id="c1", function="add", arguments={"a": 1, "b": 2})
    model = get_model("mock/script", outputs=[ModelOutput(tool_calls=(call,)), "three"])
    first = await model.generate([ChatMessage.user("1+2?")], tools=[CALCULATOR])
    assert first.tool_calls == (call,)
    assert first.model == "mock/script"
    second = await model.generate(
        [ChatMessage.user("1+2?"), first.message, ChatMessage.tool("3", call)],
        tools=[CALCULATOR],
        tool_choice="none",
        config=GenerateConfig(temperature=0.0),
    )
    assert second.text == "three"
    provider = model.provider
    assert isinstance(provider, MockProvider)
    assert len(provider.calls) == 2
    assert provider.calls[1].tool_choice == "none"
    assert provider.calls[1].config.temperature == 0.0
    assert provider.calls[1].messages[-1].tool_call_id == "c1"


async def test_exhausted_script_is_an_api_error_not_a_hang() -> None:
    model = get_model("mock/short", outputs=["only"])
    await model.generate([ChatMessage.user("a")])
    with pytest.raises(ModelAPIError, match="script has 1 outputs"):
        await model.generate([ChatMessage.user("b")])


async def test_callable_script_sync_and_async() -> None:
    def shout(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        return messages[-1].content.upper() + f" ({len(tools)} tools)"

    async def whisper(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
        return ModelOutput(text=messages[-1].content.lower())

    loud = await get_model("mock/f", outputs=shout).generate(
        [ChatMessage.user("hi")], tools=[CALCULATOR]
    )
    assert loud.text == "HI (1 tools)"
    quiet = await get_model("mock/g", outputs=whisper).generate([ChatMessage.user("HI")])
    assert quiet.text == "hi"


async def test_echo_is_deterministic_and_counts_words() -> None:
    model = get_model("mock/echo")
    messages = [ChatMessage.system("be brief"), ChatMessage.user("two words")]
    output = await model.generate(messages)
    assert output.text == "two words"
    assert output.usage.input_tokens == 4 and output.usage.output_tokens == 2
    assert output.usage.cost_usd is None


def test_unscripted_mock_other_than_echo_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError, match="mock/echo"):
        get_model("mock/unknown")


async def test_usage_accumulates_per_model_and_process_wide() -> None:
    reset_model_usage()
    usage = ModelUsage(input_tokens=1_000_000, output_tokens=0)
    model = get_model(
        "mock/priced", outputs=[ModelOutput(usage=usage)] * 2, price=ModelPrice(2.0, 8.0)
    )
    first = await model.generate([ChatMessage.user("x")])
    assert first.usage.cost_usd == pytest.approx(2.0)
    await model.generate([ChatMessage.user("x")])
    assert model.usage.input_tokens == 2_000_000
    assert model.usage.cost_usd == pytest.approx(4.0)
    assert model_usage()["mock/priced"] == model.usage
    assert model.provider_calls == 2


@pytest.mark.parametrize(
    ("max_connections", "slots", "peak_expected"), [(2, None, 2), (None, 1, 1)]
)
async def test_concurrency_is_limited_by_max_connections(
    max_connections: int | None, slots: int | None, peak_expected: int
) -> None:
    """At most ``max_connections`` calls at once, else as many as the endpoint has slots."""
    running = 0
    peak = 0

    async def slow(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return "done"

    async def parallel_slots() -> int | None:
        return slots

    model = get_model("mock/slow", outputs=slow, max_connections=max_connections)
    model.provider.parallel_slots = parallel_slots  # type: ignore[method-assign]
    outputs = await asyncio.gather(*(model.generate([ChatMessage.user(str(i))]) for i in range(6)))
    assert [output.text for output in outputs] == ["done"] * 6
    assert peak == peak_expected


async def test_an_attempt_that_exceeds_the_timeout_is_retried() -> None:
    attempts = 0

    async def hang_once(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await asyncio.sleep(10)
        return "late but fine"

    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    model = get_model("mock/hang", outputs=hang_once, sleep=no_sleep)
    output = await model.generate([ChatMessage.user("x")], config=GenerateConfig(timeout=0.05))
    assert output.text == "late but fine"
    assert attempts == 2 and len(waits) == 1


async def test_non_provider_bugs_propagate_unchanged() -> None:
    model = get_model("mock/bug", outputs=[KeyError("bug")])
    with pytest.raises(KeyError):
        await model.generate([ChatMessage.user("x")])


async def test_generate_needs_messages() -> None:
    with pytest.raises(ValueError):
        await get_model("mock/echo").generate([])


async def test_provider_errors_raised_by_a_script_follow_the_retry_policy() -> None:
    model = get_model(
        "mock/flaky",
        outputs=[ProviderCallError("HTTP 503: busy", status_code=503, retryable=True), "ok"],
        sleep=lambda seconds: asyncio.sleep(0),
    )
    assert (await model.generate([ChatMessage.user("x")])).text == "ok"
    assert model.provider_calls == 2
