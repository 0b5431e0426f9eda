"""API keys never reach logs, exception messages or cache files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from uncobench_z3.errors import ModelConfigError, ModelError
from uncobench_z3.models import ChatMessage, ResponseCache, get_model, redact
from uncobench_z3.models.testing import ScriptedTransport, http_error, http_json, openai_completion

KEY = "sk-test-SECRET-1234"


def test_redact_masks_registered_and_key_shaped_values() -> None:
    get_model("openai/gpt-4o", api_key="plain-looking-credential-42")
    text = redact(
        "key plain-looking-credential-42, sk-abcdef123456, Authorization: Bearer abc.def-123,"
        ' "x-api-key": "zzzzzzzzzz", api_key=qwertyuiop'
    )
    for secret in (
        "plain-looking-credential-42",
        "abcdef123456",
        "abc.def-123",
        "zzzzzzzzzz",
        "qwertyuiop",
    ):
        assert secret not in text
    assert redact("no secrets here, temperature=0.5") == "no secrets here, temperature=0.5"


async def test_key_echoed_by_the_server_is_kept_out_of_errors_and_logs(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    # A misbehaving proxy that quotes the key back in its error body.
    transport = ScriptedTransport(
        "openai",
        [
            http_error(503, f"upstream rejected key {KEY}", {"retry-after": "1"}),
            http_error(401, f"Incorrect API key provided: {KEY}"),
        ],
    )

    async def no_sleep(seconds: float) -> None:
        return None

    model = get_model(
        "openai/gpt-4.1-mini",
        api_key=KEY,
        http_client=transport.client(),
        sleep=no_sleep,
        cache=ResponseCache(tmp_path),
    )
    with pytest.raises(ModelError) as caught:
        await model.generate([ChatMessage.user("hello")])
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
    cause = caught.value.__cause__
    assert cause is not None and KEY not in str(cause)
    assert "HTTP 401" in str(caught.value)
    assert "retrying" in caplog.text  # the retry was logged ...
    assert KEY not in caplog.text  # ... without the key
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or KEY not in path.read_text()


async def test_successful_calls_log_nothing_secret(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="hi"))])
    model = get_model(
        "openai/gpt-4.1-mini",
        api_key=KEY,
        http_client=transport.client(),
        cache=ResponseCache(tmp_path),
    )
    await model.generate([ChatMessage.user("hello")])
    await model.generate([ChatMessage.user("hello")])
    assert KEY not in caplog.text
    assert "SECRET" not in caplog.text


def test_missing_key_message_names_the_variable_not_a_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # a key for another provider must not leak
    with pytest.raises(ModelConfigError) as caught:
        get_model("anthropic/claude-sonnet-4-5")
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert KEY not in str(caught.value)


def test_unknown_option_message_does_not_echo_values() -> None:
    with pytest.raises(ModelConfigError) as caught:
        get_model("openai/gpt-4o", api_key=KEY, api_kee=KEY)
    assert KEY not in str(caught.value)
