"""Retries: which failures are retried, how long the waits are, how often we try."""

from __future__ import annotations

import email.utils
import time
from datetime import UTC, datetime, timedelta

import pytest

from uncobench_z3.errors import ModelAPIError
from uncobench_z3.models import ChatMessage, Model, get_model, parse_retry_after
from uncobench_z3.models import _model as model_module
from uncobench_z3.models.testing import (
    HTTPReply,
    ScriptedTransport,
    SDKName,
    anthropic_message,
    http_error,
    http_json,
    http_raw,
    openai_completion,
)

KEY = "sk-test-SECRET-1234"
MODEL_FOR_SDK = {"openai": "openai/gpt-4.1-mini", "anthropic": "anthropic/claude-test-model"}


def success(sdk: SDKName) -> HTTPReply:
    body = openai_completion(text="ok") if sdk == "openai" else anthropic_message(text="ok")
    return http_json(body)


class FakeClock:
    """Records the waits instead of sleeping, so tests never depend on wall time."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def model_for(
    sdk: SDKName, transport: ScriptedTransport, clock: FakeClock, **kwargs: object
) -> Model:
    return get_model(
        MODEL_FOR_SDK[sdk],
        api_key=KEY,
        http_client=transport.client(),
        sleep=clock.sleep,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [429, 503])
async def test_retry_after_header_is_honoured(sdk: SDKName, status: int) -> None:
    transport = ScriptedTransport(
        sdk,
        [
            http_error(status, "slow down", {"retry-after": "7"}),
            http_error(status, "slow down", {"retry-after": "2"}),
            success(sdk),
        ],
    )
    clock = FakeClock()
    retries: list[tuple[str, int, float, str]] = []
    model = model_for(
        sdk, transport, clock, on_retry=lambda *event: retries.append(event), max_retry_wait=60.0
    )
    output = await model.generate([ChatMessage.user("x")])
    assert output.text == "ok"
    assert len(transport.requests) == 3
    assert len(clock.waits) == 2
    # The first backoff (about 1 s) is shorter than the header: the header wins.
    assert 7.0 <= clock.waits[0] < 8.0
    # The second backoff (about 2 s) already meets the header of 2 s.
    assert 2.0 <= clock.waits[1] < 3.0
    assert [(name, attempt) for name, attempt, _, _ in retries] == [
        (MODEL_FOR_SDK[sdk], 1),
        (MODEL_FOR_SDK[sdk], 2),
    ]
    assert retries[0][2] == clock.waits[0]
    assert f"HTTP {status}" in retries[0][3]
    # Retries are the wrapper's job: the SDK itself must not retry.
    assert all(
        request.headers.get("x-stainless-retry-count", "0") == "0" for request in transport.requests
    )


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
async def test_bad_request_is_not_retried(sdk: SDKName) -> None:
    transport = ScriptedTransport(sdk, [http_error(400, "messages: field required")])
    clock = FakeClock()
    with pytest.raises(ModelAPIError) as caught:
        await model_for(sdk, transport, clock).generate([ChatMessage.user("x")])
    assert caught.value.status_code == 400
    assert "messages: field required" in str(caught.value)
    assert len(transport.requests) == 1
    assert clock.waits == []


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "malformed",
    [http_raw(b"<html>upstream busy</html>"), http_json({"id": "x"})],
    ids=["not-json", "json-without-the-answer"],
)
async def test_a_200_without_its_answer_is_retried_like_a_5xx(
    sdk: SDKName, malformed: HTTPReply
) -> None:
    transport = ScriptedTransport(sdk, [malformed, success(sdk)])
    clock = FakeClock()
    output = await model_for(sdk, transport, clock).generate([ChatMessage.user("x")])
    assert output.text == "ok"
    assert len(transport.requests) == 2
    assert len(clock.waits) == 1


async def test_attempts_are_bounded_and_the_last_error_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the jitter at its largest, so that the waits are exact
    monkeypatch.setattr(model_module.random, "uniform", lambda low, high: high)
    transport = ScriptedTransport("openai", lambda request: http_error(429, "rate limited"))
    clock = FakeClock()
    model = model_for("openai", transport, clock, max_attempts=3)
    with pytest.raises(ModelAPIError, match=r"HTTP 429.*after 3 attempts") as caught:
        await model.generate([ChatMessage.user("x")])
    assert caught.value.status_code == 429
    assert len(transport.requests) == 3
    assert len(clock.waits) == 2
    # Exponential backoff without a header: 1 s, then 2 s, each plus its jitter (10% here).
    assert clock.waits == [1.0 * (1 + model_module._JITTER), 2.0 * (1 + model_module._JITTER)]


async def test_waits_are_capped_even_when_the_server_asks_for_more() -> None:
    transport = ScriptedTransport(
        "openai", [http_error(429, "later", {"retry-after": "900"}), success("openai")]
    )
    clock = FakeClock()
    await model_for("openai", transport, clock, max_retry_wait=30.0).generate(
        [ChatMessage.user("x")]
    )
    assert clock.waits == [30.0]


@pytest.mark.parametrize("status", [408, 409, 500, 502, 504])
async def test_other_transient_statuses_are_retried(status: int) -> None:
    transport = ScriptedTransport("openai", [http_error(status, "transient"), success("openai")])
    clock = FakeClock()
    await model_for("openai", transport, clock).generate([ChatMessage.user("x")])
    assert len(transport.requests) == 2


async def test_retry_after_ms_is_read_over_the_sdk() -> None:
    transport = ScriptedTransport(
        "anthropic", [http_error(429, "later", {"retry-after-ms": "4500"}), success("anthropic")]
    )
    clock = FakeClock()
    await model_for("anthropic", transport, clock).generate([ChatMessage.user("x")])
    assert 4.5 <= clock.waits[0] < 5.0


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    in_thirty = datetime.now(UTC) + timedelta(seconds=30)
    parsed = parse_retry_after({"retry-after": email.utils.format_datetime(in_thirty, usegmt=True)})
    assert parsed is not None and 25.0 <= parsed <= 30.0
    past = email.utils.formatdate(time.time() - 100, usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0


async def test_a_failing_retry_callback_does_not_stop_the_retry() -> None:
    def broken(*event: object) -> None:
        raise RuntimeError("display crashed")

    transport = ScriptedTransport("openai", [http_error(503, "busy"), success("openai")])
    clock = FakeClock()
    output = await model_for("openai", transport, clock, on_retry=broken).generate(
        [ChatMessage.user("x")]
    )
    assert output.text == "ok"
