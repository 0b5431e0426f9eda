"""The OpenAI provider over the real SDK, with a scripted HTTP transport."""

from __future__ import annotations

import pytest

from uncobench_z3.errors import ModelAPIError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    Model,
    ToolCall,
    ToolDef,
    ToolFunction,
    get_model,
)
from uncobench_z3.models.testing import (
    HTTPReply,
    ScriptedTransport,
    http_error,
    http_json,
    http_stream,
    openai_chunks,
    openai_completion,
)

KEY = "sk-test-SECRET-1234"
WEATHER = ToolDef(
    name="get_weather",
    description="Weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def openai_model(transport: ScriptedTransport, name: str = "openai/gpt-4.1-mini") -> Model:
    return get_model(name, api_key=KEY, http_client=transport.client())


async def test_request_shape_for_messages_tools_and_settings() -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    model = openai_model(transport)
    config = GenerateConfig(
        temperature=0.2, max_tokens=50, top_p=0.9, seed=7, stop=("END",), reasoning_effort="low"
    )
    await model.generate(
        [ChatMessage.system("You are terse."), ChatMessage.user("Weather in Oslo?")],
        tools=[WEATHER],
        tool_choice="any",
        config=config,
    )
    request = transport.requests[0]
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json
    assert body["model"] == "gpt-4.1-mini"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Oslo?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather in a city.",
                "parameters": WEATHER.parameters,
            },
        }
    ]
    assert body["tool_choice"] == "required"
    assert (body["temperature"], body["top_p"], body["seed"], body["stop"]) == (
        0.2,
        0.9,
        7,
        ["END"],
    )
    assert body["max_completion_tokens"] == 50
    assert body["reasoning_effort"] == "low"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        (None, "auto"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
        (
            ToolFunction(name="get_weather"),
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
)
async def test_tool_choice_mapping(choice: object, expected: object) -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    await openai_model(transport).generate(
        [ChatMessage.user("x")],
        tools=[WEATHER],
        tool_choice=choice,  # type: ignore[arg-type]
    )
    assert transport.requests[0].json["tool_choice"] == expected


async def test_no_tools_means_no_tool_fields() -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    await openai_model(transport).generate([ChatMessage.user("x")])
    assert "tools" not in transport.requests[0].json
    assert "tool_choice" not in transport.requests[0].json


async def test_tool_call_round_trip() -> None:
    transport = ScriptedTransport(
        "openai",
        [
            http_json(
                openai_completion(tool_calls=[("call_1", "get_weather", '{"city": "Oslo"}')])
            ),
            http_json(openai_completion(text="It is 3 degrees in Oslo.")),
        ],
    )
    model = openai_model(transport)
    conversation = [ChatMessage.user("Weather in Oslo?")]
    first = await model.generate(conversation, tools=[WEATHER])
    assert first.stop_reason == "tool_calls"
    (call,) = first.tool_calls
    assert (call.id, call.function, call.arguments, call.parse_error) == (
        "call_1",
        "get_weather",
        {"city": "Oslo"},
        None,
    )
    conversation += [first.message, ChatMessage.tool("3 degrees", call)]
    second = await model.generate(conversation, tools=[WEATHER])
    assert second.text == "It is 3 degrees in Oslo."
    assert second.stop_reason == "stop"
    sent = transport.requests[1].json["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": "",  # a string, not null: llama.cpp's server rejects null
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            }
        ],
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "3 degrees"}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [('{"city": "Oslo"', "not valid JSON"), ('["Oslo"]', "must be a JSON object")],
)
async def test_malformed_tool_arguments_give_parse_error(arguments: str, problem: str) -> None:
    transport = ScriptedTransport(
        "openai",
        [
            http_json(openai_completion(tool_calls=[("call_9", "get_weather", arguments)])),
            http_json(openai_completion(text="sorry")),
        ],
    )
    model = openai_model(transport)
    output = await model.generate([ChatMessage.user("x")], tools=[WEATHER])
    (call,) = output.tool_calls
    assert call.arguments == {}
    assert call.parse_error is not None and problem in call.parse_error
    assert call.raw_arguments == arguments
    # The malformed text goes back verbatim, so the model sees what it wrote.
    await model.generate(
        [
            ChatMessage.user("x"),
            output.message,
            ChatMessage.tool("bad arguments", call, is_error=True),
        ],
        tools=[WEATHER],
    )
    echoed = transport.requests[1].json["messages"][1]["tool_calls"][0]["function"]
    assert echoed["arguments"] == arguments


async def test_usage_model_name_and_cost_come_from_the_response() -> None:
    body = openai_completion(text="hi", model="gpt-4.1-mini-2025-04-14", prompt_tokens=1_000_000)
    transport = ScriptedTransport("openai", [http_json(body)])
    output = await openai_model(transport).generate([ChatMessage.user("x")])
    assert output.model == "gpt-4.1-mini-2025-04-14"
    assert output.usage.input_tokens == 1_000_000
    assert output.usage.cost_usd == pytest.approx(0.40 + 7 * 1.60 / 1_000_000)


async def test_length_finish_reason_maps_to_max_tokens() -> None:
    body = openai_completion(text="trunc", finish_reason="length")
    transport = ScriptedTransport("openai", [http_json(body)])
    output = await openai_model(transport).generate([ChatMessage.user("x")])
    assert output.stop_reason == "max_tokens"


async def test_openai_api_service_uses_its_base_url_and_max_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VLLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    # a self-hosted server is streamed to, so that max_tokens holds even if it ignores it
    transport = ScriptedTransport("openai", [http_stream(openai_chunks(["ok"]))])
    model = get_model("openai-api/vllm/Qwen/Qwen2.5-7B", http_client=transport.client())
    await model.generate([ChatMessage.user("x")], config=GenerateConfig(max_tokens=9))
    request = transport.requests[0]
    assert request.url == "http://127.0.0.1:8000/v1/chat/completions"
    assert request.json["model"] == "Qwen/Qwen2.5-7B"
    assert request.json["max_tokens"] == 9 and request.json["stream"] is True
    assert request.headers["authorization"] == "Bearer not-needed"


async def test_unauthorized_is_not_retried_and_reports_the_status() -> None:
    transport = ScriptedTransport("openai", [http_error(401, "Incorrect API key provided")])
    with pytest.raises(ModelAPIError) as caught:
        await openai_model(transport).generate([ChatMessage.user("x")])
    assert caught.value.status_code == 401
    assert "HTTP 401" in str(caught.value)
    assert len(transport.requests) == 1


async def test_connection_errors_are_retried() -> None:
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    transport = ScriptedTransport(
        "openai",
        [HTTPReply(error="ConnectError"), http_json(openai_completion(text="back"))],
    )
    model = get_model(
        "openai/gpt-4.1-mini", api_key=KEY, http_client=transport.client(), sleep=record_sleep
    )
    output = await model.generate([ChatMessage.user("x")])
    assert output.text == "back"
    assert len(transport.requests) == 2 and len(waits) == 1


async def test_tool_call_ids_survive_unusual_characters() -> None:
    call = ToolCall(id="call:ä/1", function="get_weather", arguments={"city": "Oslo"})
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    await openai_model(transport).generate(
        [ChatMessage.user("x"), ChatMessage.assistant("", (call,)), ChatMessage.tool("r", call)],
        tools=[WEATHER],
    )
    messages = transport.requests[0].json["messages"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'
    assert messages[2]["tool_call_id"] == "call:ä/1"


async def test_tool_arguments_sent_as_an_object_are_read_as_its_text() -> None:
    # the API sends the arguments as JSON text; some compatible servers send the object
    # itself, which ended the sample with an attribute error (no retry, no invalid action)
    body = openai_completion(tool_calls=[("call_3", "get_weather", "{}")])
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = {"city": "Oslo"}
    model = openai_model(ScriptedTransport("openai", [http_json(body)]))
    output = await model.generate([ChatMessage.user("x")], tools=[WEATHER])
    (call,) = output.tool_calls
    assert (call.arguments, call.parse_error) == ({"city": "Oslo"}, None)
    assert call.raw_arguments == '{"city": "Oslo"}'
