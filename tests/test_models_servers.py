"""Self-hosted servers that do not keep the API's promises: client-side max_tokens, context
overflow, the tool-choice hint, connection limits from the server's slots. Over the real SDK
with a scripted transport (no network)."""

from __future__ import annotations

import pytest

from uncobench_z3.errors import ContextWindowError, ModelAPIError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelPrice,
    StoredOutput,
    ToolCall,
    ToolDef,
    get_model,
    stored_text,
)
from uncobench_z3.models.providers._base import is_context_overflow
from uncobench_z3.models.testing import (
    ScriptedTransport,
    http_error,
    http_json,
    http_stream,
    openai_chunks,
    openai_completion,
)

ASK = ToolDef(
    name="ask",
    description="Ask.",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}},
)


@pytest.fixture(autouse=True)
def _service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.delenv("LLAMA_API_KEY", raising=False)


def _model(transport: ScriptedTransport, **options: object):  # type: ignore[no-untyped-def]
    return get_model("openai-api/llama/smollm2", http_client=transport.client(), **options)


async def test_a_server_that_ignores_max_tokens_is_cut_off_client_side() -> None:
    # the server streams 50 pieces although 5 tokens were asked for
    transport = ScriptedTransport("openai", [http_stream(openai_chunks(["w "] * 50))])
    output = await _model(transport).generate(
        [ChatMessage.user("ramble")], config=GenerateConfig(max_tokens=5)
    )
    body = transport.requests[0].json
    assert body["stream"] is True and body["max_tokens"] == 5
    assert output.text == "w " * 5
    assert output.stop_reason == "max_tokens" and output.client_truncated
    assert output.usage.output_tokens == 5  # the chunks read stand in for tokens


async def test_a_reply_cut_before_its_usage_leaves_its_prompt_tokens_unknown_not_0() -> None:
    """The usage chunk comes last, so a reply cut past max_tokens never reads it: its prompt
    tokens are unreported (not a prompt of 0 tokens) and its cost unknown; a usage the server
    sent with the chunks read is kept."""
    price = ModelPrice(1.0, 2.0)
    rambling = openai_chunks(["w "] * 50, usage=(40, 50))
    with_usage = [{**chunk, "usage": rambling[-1]["usage"]} for chunk in rambling[:-1]]
    finished = openai_chunks(["a", "b"], finish_reason="stop", usage=(40, 2))
    replies = [http_stream(rambling), http_stream(with_usage), http_stream(finished)]
    model = _model(ScriptedTransport("openai", replies), price=price)
    config = GenerateConfig(max_tokens=5)
    cut = await model.generate([ChatMessage.user("ramble")], config=config)
    assert cut.client_truncated and cut.usage.unreported_input_calls == 1
    assert (cut.usage.input_tokens, cut.usage.output_tokens, cut.usage.cost_usd) == (0, 5, None)
    counted = await model.generate([ChatMessage.user("ramble")], config=config)
    assert counted.client_truncated and not counted.usage.unreported_input_calls
    assert (counted.usage.input_tokens, counted.usage.output_tokens) == (40, 5)
    whole = await model.generate([ChatMessage.user("x")], config=config)
    assert (whole.usage.input_tokens, whole.usage.cost_usd) == (40, (40 + 2 * 2) / 1_000_000)
    assert "unreported" not in whole.usage.model_dump_json()  # records written before read alike
    total = cut.usage + counted.usage + whole.usage
    assert (total.input_tokens, total.unreported_input_calls, total.cost_usd) == (80, 1, None)


async def test_a_server_that_honours_max_tokens_is_read_whole() -> None:
    chunks = openai_chunks(["a", "b", "c"], finish_reason="length", usage=(40, 3))
    transport = ScriptedTransport("openai", [http_stream(chunks)])
    output = await _model(transport).generate(
        [ChatMessage.user("x")], config=GenerateConfig(max_tokens=3)
    )
    assert output.text == "abc" and output.stop_reason == "max_tokens"
    assert not output.client_truncated
    assert (output.usage.input_tokens, output.usage.output_tokens) == (40, 3)


async def test_streamed_tool_calls_are_assembled_and_cut_mid_arguments() -> None:
    whole = openai_chunks(
        tool_call=("c1", "ask", ['{"q": ', '"hi"', "}"]), finish_reason="tool_calls"
    )
    cut = openai_chunks(tool_call=("c2", "ask", ['{"q": "', "x" * 5, "y" * 5, '"}']))
    transport = ScriptedTransport("openai", [http_stream(whole), http_stream(cut)])
    model = _model(transport)
    config = GenerateConfig(max_tokens=3)
    first = await model.generate([ChatMessage.user("x")], tools=[ASK], config=config)
    (call,) = first.tool_calls
    assert (call.id, call.function, call.arguments) == ("c1", "ask", {"q": "hi"})
    assert first.stop_reason == "tool_calls" and not first.client_truncated
    second = await model.generate([ChatMessage.user("y")], tools=[ASK], config=config)
    (call,) = second.tool_calls
    assert call.raw_arguments == '{"q": "xxxxxyyyyy' and call.parse_error  # cut, kept as written
    assert second.client_truncated and second.stop_reason == "max_tokens"


async def test_a_server_that_cannot_stream_is_asked_again_without() -> None:
    refusal = http_error(500, "Automatic streaming tool choice is not supported")
    transport = ScriptedTransport(
        "openai",
        [refusal, http_json(openai_completion(text="ok")), http_json(openai_completion(text="2"))],
    )
    model = _model(transport)
    config = GenerateConfig(max_tokens=8)
    assert (await model.generate([ChatMessage.user("x")], config=config)).text == "ok"
    assert (await model.generate([ChatMessage.user("y")], config=config)).text == "2"
    streamed = [request.json.get("stream", False) for request in transport.requests]
    assert streamed == [True, False, False]  # not streamed to again


async def test_without_max_tokens_nothing_is_streamed() -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    await _model(transport).generate([ChatMessage.user("x")])
    assert "stream" not in transport.requests[0].json


async def test_the_official_api_is_not_streamed() -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="ok"))])
    model = get_model("openai/gpt-4.1-mini", api_key="sk-test", http_client=transport.client())
    await model.generate([ChatMessage.user("x")], config=GenerateConfig(max_tokens=4))
    assert "stream" not in transport.requests[0].json


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "This model's maximum context length is 8192 tokens. However, you requested 9000"),
        (400, "Requested tokens (4631) exceed context window of 4096"),
        (400, "the request exceeds the available context size, try increasing it"),
        (400, "prompt is too long: 210000 tokens > 200000 maximum"),
    ],
)
async def test_context_overflow_is_its_own_error_and_never_retried(
    status: int, message: str
) -> None:
    transport = ScriptedTransport("openai", [http_error(status, message)])
    with pytest.raises(ContextWindowError, match="HTTP 400"):
        await _model(transport).generate([ChatMessage.user("x")])
    assert len(transport.requests) == 1


def test_context_overflow_patterns_do_not_catch_other_errors() -> None:
    assert not is_context_overflow(400, "Invalid value for 'temperature'")
    assert not is_context_overflow(401, "maximum context length")  # wrong status
    assert is_context_overflow(None, "context_length_exceeded")


async def test_a_forced_tool_choice_rejected_with_an_empty_500_gets_a_hint() -> None:
    transport = ScriptedTransport("openai", [http_error(500, "")])
    with pytest.raises(ModelAPIError) as caught:
        await _model(transport).generate([ChatMessage.user("x")], tools=[ASK], tool_choice="any")
    text = str(caught.value)
    assert ",tool_choice=auto" in text and ",protocol=text" in text and "HTTP 500" in text
    assert len(transport.requests) == 1  # a known rejection is not retried


async def test_other_500s_get_no_hint_and_are_retried() -> None:
    async def no_wait(seconds: float) -> None:
        return None

    transport = ScriptedTransport(
        "openai", [http_error(500, ""), http_json(openai_completion(text="ok"))]
    )
    model = _model(transport, sleep=no_wait)
    # tool choice auto: an empty 500 says nothing about the tool choice
    output = await model.generate([ChatMessage.user("x")], tools=[ASK], tool_choice="auto")
    assert output.text == "ok" and len(transport.requests) == 2


async def test_connection_limit_comes_from_the_server_slots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from uncobench_z3.models.providers import _openai

    asked: list[str] = []

    def slots(base_url: str, timeout: float = 2.0) -> int | None:
        asked.append(base_url)
        return 2

    monkeypatch.setattr(_openai, "server_slots", slots)
    # no injected client: the provider may ask the server (the stand-in answers)
    model = get_model("openai-api/llama/smollm2")
    assert await model.connection_limit() == 2
    assert await model.connection_limit() == 2 and len(asked) == 1  # asked once
    explicit = get_model("openai-api/llama/smollm2", max_connections=5)
    assert await explicit.connection_limit() == 5
    official = get_model("openai/gpt-4.1-mini", api_key="sk-test")
    assert await official.connection_limit() == 8
    assert asked == ["http://127.0.0.1:8080/v1"]


def test_stored_text_keeps_length_and_digest_of_the_whole() -> None:
    text = "é" * 10
    kept = stored_text(text, limit=4)
    assert kept.text == "éééé" and kept.length == 10 and kept.truncated
    assert kept.sha256 == stored_text(text).sha256 and not stored_text(text).truncated
    call = ToolCall(id="1", function="ask", raw_arguments="{bad", parse_error="x")
    stored = StoredOutput.of(ModelOutput(text="hm", tool_calls=(call,), stop_reason="max_tokens"))
    assert stored.text is not None and stored.text.text == "hm"
    assert stored.tool_calls[0].arguments.text == "{bad" and stored.stop_reason == "max_tokens"


async def test_a_stream_that_never_finishes_falls_back_to_a_plain_request() -> None:
    # llama-cpp-python's chatml-function-calling fails a streamed forced tool call with an
    # empty 200 stream; asked again without streaming it answers the HTTP 500 we can explain
    transport = ScriptedTransport("openai", [http_stream([], done=False), http_error(500, "")])
    with pytest.raises(ModelAPIError, match=",tool_choice=auto"):
        await _model(transport).generate(
            [ChatMessage.user("x")],
            tools=[ASK],
            tool_choice="any",
            config=GenerateConfig(max_tokens=9),
        )
    assert [r.json.get("stream", False) for r in transport.requests] == [True, False]
