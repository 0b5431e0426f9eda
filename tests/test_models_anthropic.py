"""The Anthropic provider over the real SDK, with a scripted HTTP transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.errors import ModelAPIError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelPrice,
    ReasoningEffort,
    ResponseCache,
    ToolCall,
    ToolDef,
    get_model,
)
from uncobench_z3.models.providers._anthropic import anthropic_messages
from uncobench_z3.models.testing import (
    HTTPReply,
    ScriptedTransport,
    anthropic_message,
    http_error,
    http_json,
)

KEY = "sk-test-SECRET-1234"
WEATHER = ToolDef(
    name="get_weather",
    description="Weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def anthropic_model(transport: ScriptedTransport) -> Model:
    # A made-up model name: the SDK warns about real ones as they are deprecated.
    return get_model(
        "anthropic/claude-test-model",
        api_key=KEY,
        http_client=transport.client(),
        price=ModelPrice(3.0, 15.0),
    )


async def test_request_shape_system_tools_and_settings() -> None:
    transport = ScriptedTransport("anthropic", [http_json(anthropic_message(text="ok"))])
    await anthropic_model(transport).generate(
        [
            ChatMessage.system("You are terse."),
            ChatMessage.system("Answer in English."),
            ChatMessage.user("Weather in Oslo?"),
        ],
        tools=[WEATHER],
        tool_choice="any",
        config=GenerateConfig(temperature=0.0, top_p=0.5, stop=("END",), seed=3),
    )
    request = transport.requests[0]
    assert request.url == "https://api.anthropic.com/v1/messages"
    body = request.json
    assert body["model"] == "claude-test-model"
    assert body["system"] == "You are terse.\n\nAnswer in English."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather in a city.",
            "input_schema": WEATHER.parameters,
        }
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["max_tokens"] == 4096  # required by the API, so always sent
    assert (body["temperature"], body["top_p"], body["stop_sequences"]) == (0.0, 0.5, ["END"])
    assert "seed" not in body  # the API has no seed
    assert "output_config" not in body


@pytest.mark.parametrize(("effort", "sent"), [("minimal", "low"), ("high", "high")])
async def test_reasoning_effort_becomes_output_effort(effort: ReasoningEffort, sent: str) -> None:
    transport = ScriptedTransport("anthropic", [http_json(anthropic_message(text="ok"))])
    await anthropic_model(transport).generate(
        [ChatMessage.user("x")],
        config=GenerateConfig(reasoning_effort=effort),
    )
    assert transport.requests[0].json["output_config"] == {"effort": sent}


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
async def test_tool_choice_mapping(choice: str, expected: dict[str, str]) -> None:
    transport = ScriptedTransport("anthropic", [http_json(anthropic_message(text="ok"))])
    await anthropic_model(transport).generate(
        [ChatMessage.user("x")], tools=[WEATHER], tool_choice=choice
    )
    assert transport.requests[0].json["tool_choice"] == expected


async def test_tool_call_round_trip() -> None:
    transport = ScriptedTransport(
        "anthropic",
        [
            http_json(
                anthropic_message(
                    text="Let me check.", tool_uses=[("toolu_1", "get_weather", {"city": "Oslo"})]
                )
            ),
            http_json(anthropic_message(text="It is 3 degrees.")),
        ],
    )
    model = anthropic_model(transport)
    conversation = [ChatMessage.system("Be brief."), ChatMessage.user("Weather in Oslo?")]
    first = await model.generate(conversation, tools=[WEATHER])
    assert first.text == "Let me check."
    assert first.stop_reason == "tool_calls"
    (call,) = first.tool_calls
    assert (call.id, call.function, call.arguments) == ("toolu_1", "get_weather", {"city": "Oslo"})
    conversation += [first.message, ChatMessage.tool("3 degrees", call)]
    second = await model.generate(conversation, tools=[WEATHER])
    assert second.text == "It is 3 degrees."
    body = transport.requests[1].json
    assert body["system"] == "Be brief."
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 degrees"}],
        },
    ]


async def test_tool_inputs_keep_the_numbers_the_body_writes(tmp_path: Path) -> None:
    """The SDK hands over a tool's input parsed, 46.665000000000000001 as the float 46.665 (a
    scored answer then rounds half-even the other way); the raw arguments keep the body's
    digits for exact_arguments, and a cache hit replays them."""
    first = {"number": "N1", "parts": ["N2", {"share": "N3"}], "unit": "2.50", "count": 7}
    message = anthropic_message(
        text="Done.",
        tool_uses=[("toolu_1", "submit_answer", first), ("toolu_2", "wait", {"n": "N4"})],
    )
    written = {"N1": "46.665000000000000001", "N2": "1e16", "N3": "0.1", "N4": "-5E-4"}
    body = json.dumps(message)
    for placeholder, number in written.items():
        body = body.replace(f'"{placeholder}"', number)
    transport = ScriptedTransport(
        "anthropic",
        [HTTPReply(raw=body.encode(), headers={"content-type": "application/json"})],
    )
    model = get_model(
        "anthropic/claude-test-model",
        api_key=KEY,
        http_client=transport.client(),
        cache=ResponseCache(tmp_path),
    )
    miss = await model.generate([ChatMessage.user("x")])
    hit = await model.generate([ChatMessage.user("x")])  # (one reply scripted: the cache's)
    assert hit.from_cache and len(transport.requests) == 1
    for output in (miss, hit):
        answer, wait = output.tool_calls
        assert answer.arguments["number"] == 46.665  # (the parsed input: floats)
        assert answer.raw_arguments == (
            '{"number": 46.665000000000000001, "parts": [1e16, {"share": 0.1}], '
            '"unit": "2.50", "count": 7}'
        )
        assert answer.exact_arguments() == {
            "number": "46.665000000000000001",
            "parts": ["10000000000000000", {"share": "0.1"}],
            "unit": "2.50",
            "count": 7,
        }
        assert wait.exact_arguments() == {"n": "-0.0005"}


def test_parallel_tool_results_and_a_following_user_turn_share_one_user_message() -> None:
    first = ToolCall(id="a", function="get_weather", arguments={"city": "Oslo"})
    second = ToolCall(id="b", function="get_weather", arguments={"city": "Rome"})
    system, turns = anthropic_messages(
        [
            ChatMessage.user("Both cities?"),
            ChatMessage.assistant("", (first, second)),
            ChatMessage.tool("3", first),
            ChatMessage.tool("unknown city", second, is_error=True),
            ChatMessage.user("And now?"),
            ChatMessage.assistant(""),
        ]
    )
    assert system is None
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user"]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "3"},
        {"type": "tool_result", "tool_use_id": "b", "content": "unknown city", "is_error": True},
        {"type": "text", "text": "And now?"},
    ]


async def test_usage_counts_cached_prompt_tokens_and_is_priced() -> None:
    body = anthropic_message(text="hi", input_tokens=100, output_tokens=10)
    body["usage"]["cache_read_input_tokens"] = 50
    transport = ScriptedTransport("anthropic", [http_json(body)])
    output = await anthropic_model(transport).generate([ChatMessage.user("x")])
    assert (output.usage.input_tokens, output.usage.output_tokens) == (150, 10)
    assert output.usage.cost_usd == pytest.approx((150 * 3.0 + 10 * 15.0) / 1_000_000)
    assert output.model == "claude-test-20250101"


async def test_max_tokens_stop_reason() -> None:
    transport = ScriptedTransport(
        "anthropic", [http_json(anthropic_message(text="cut", stop_reason="max_tokens"))]
    )
    output = await anthropic_model(transport).generate(
        [ChatMessage.user("x")], config=GenerateConfig(max_tokens=3)
    )
    assert output.stop_reason == "max_tokens"
    assert transport.requests[0].json["max_tokens"] == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_not_retried(status: int) -> None:
    transport = ScriptedTransport("anthropic", [http_error(status, "nope")])
    with pytest.raises(ModelAPIError) as caught:
        await anthropic_model(transport).generate([ChatMessage.user("x")])
    assert caught.value.status_code == status
    assert len(transport.requests) == 1


async def test_overloaded_529_is_retried() -> None:
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    transport = ScriptedTransport(
        "anthropic",
        [
            http_error(529, "Overloaded", error_type="overloaded_error"),
            http_json(anthropic_message(text="ok")),
        ],
    )
    model = get_model(
        "anthropic/claude-test-model",
        api_key=KEY,
        http_client=transport.client(),
        sleep=record_sleep,
    )
    assert (await model.generate([ChatMessage.user("x")])).text == "ok"
    assert len(transport.requests) == 2 and len(waits) == 1
