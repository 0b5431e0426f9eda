"""API keys never reach logs, exception messages or cache files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uncobench_z3 import _secrets as secrets_module
from uncobench_z3._executor import failure_text
from uncobench_z3._secrets import MIN_SECRET_LENGTH, REDACTED, redact_cut, register_secret
from uncobench_z3.errors import ModelConfigError, ModelError
from uncobench_z3.evaluation._shards import RemoteFailure, _portable
from uncobench_z3.models import (
    ChatMessage,
    ModelOutput,
    ResponseCache,
    cache_key,
    get_model,
    redact,
)
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


CUT_KEY = "cutoffkey-0123456789abcdef"


@given(
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    start=st.integers(0, len(CUT_KEY)),
    end=st.integers(0, len(CUT_KEY)),
)
def test_a_key_cut_short_leaves_no_fragment_of_eight_characters(
    before: str, after: str, start: int, end: int
) -> None:
    """A server or a validation error that cut the key (its beginning kept, or its end, or
    both around an ellipsis) must not leak the part it kept."""
    register_secret(CUT_KEY)
    kept = [CUT_KEY[:end], CUT_KEY[start:]]
    text = redact(before + kept[0] + "..." + kept[1] + after)
    for fragment in kept:
        for offset in range(len(fragment) - MIN_SECRET_LENGTH + 1):
            piece = fragment[offset : offset + MIN_SECRET_LENGTH]
            if piece not in before + after:  # (text that was there anyway)
                assert piece not in text or piece in REDACTED


def test_an_error_body_is_redacted_before_it_is_cut() -> None:
    register_secret(CUT_KEY)
    text = redact_cut("A" * 490 + CUT_KEY, 500)
    assert len(text) == 500 and CUT_KEY[:4] not in text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_an_error_message_is_cut_after_its_key_is_masked(provider: str) -> None:
    """The body's own ``error.message`` is cut as a whole body is: a server can send a
    megabyte there, and the error is printed and stored as one line."""
    transport = ScriptedTransport(
        provider, [http_error(400, "A" * 1_000_000 + KEY), http_error(400, "B" * 490 + KEY)]
    )
    name = "openai/gpt-4.1-mini" if provider == "openai" else "anthropic/claude-sonnet-4-5"
    model = get_model(name, api_key=KEY, http_client=transport.client())
    for _ in range(2):
        with pytest.raises(ModelError) as caught:
            await model.generate([ChatMessage.user("hello")])
        message = str(caught.value)
        assert len(message) < 600 and KEY[:4] not in message, message[-80:]


def test_the_placeholder_key_of_local_servers_is_not_a_secret() -> None:
    get_model("openai-api/local/m", base_url="http://127.0.0.1:1/v1")  # key "not-needed"
    assert redact("a flag that is not-needed") == "a flag that is not-needed"


def test_a_key_too_short_to_mask_is_warned_about_once_without_its_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(secrets_module, "_warned_short", False)
    register_secret("k3y")
    register_secret("k4y")
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "shorter than 8" in err
    assert "k3y" not in err and "k4y" not in err
    assert redact("k3y") == "k3y"  # deliberately not masked


async def test_the_model_sees_and_the_cache_keeps_the_same_redacted_answer(
    tmp_path: Path,
) -> None:
    leaky_text = f"here: {KEY} and sk-other0123456789"
    arguments = json.dumps({"note": KEY, "nested": [{"k": KEY}]})
    answer = openai_completion(text=leaky_text, tool_calls=[("call_1", "save", arguments)])
    transport = ScriptedTransport("openai", [http_json(answer)])
    cache = ResponseCache(tmp_path)
    model = get_model(
        "openai/gpt-4.1-mini", api_key=KEY, http_client=transport.client(), cache=cache
    )
    fresh = await model.generate([ChatMessage.user("hello")])
    hit = await model.generate([ChatMessage.user("hello")])
    assert len(transport.requests) == 1 and hit.from_cache
    for output in (fresh, hit):
        assert output.text == "here: [REDACTED] and [REDACTED]"
        call = output.tool_calls[0]
        assert call.arguments == {"note": "[REDACTED]", "nested": [{"k": "[REDACTED]"}]}
        assert call.raw_arguments is not None and KEY not in call.raw_arguments
        assert json.loads(call.raw_arguments) == call.arguments
    assert fresh.model_copy(update={"from_cache": True}) == hit
    for path in tmp_path.rglob("*.json"):
        assert KEY not in path.read_text(encoding="utf-8")


async def test_an_entry_cached_before_answers_were_redacted_is_served_redacted(
    tmp_path: Path,
) -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="fresh"))])
    cache = ResponseCache(tmp_path)
    model = get_model(
        "openai/gpt-4.1-mini", api_key=KEY, http_client=transport.client(), cache=cache
    )
    messages = [ChatMessage.user("hello")]
    key = cache_key(model.name, model.provider.cache_identity, messages, [], None, model.config)
    cache.put(key, model.name, ModelOutput(text=f"old {KEY}"))
    output = await model.generate(messages)
    assert output.from_cache and output.text == "old [REDACTED]"
    assert transport.requests == []


def test_an_exception_sent_between_processes_is_redacted() -> None:
    register_secret(KEY)
    try:
        raise ValueError(f"input_value='{KEY}'")
    except ValueError as error:
        line, trace = failure_text(error)
        remote = _portable(error)
    assert "ValueError" in line and "Traceback" in trace
    assert isinstance(remote, RemoteFailure)
    for text in (line, trace, str(remote), remote.remote_traceback):
        assert KEY not in text and "[REDACTED]" in text


async def test_a_model_writing_a_keys_first_words_is_not_masked_but_an_error_is() -> None:
    # a key's first eight characters can be an ordinary word of a task ("register"): what a
    # model writes is read by the benchmark and keeps it; an error text masks the fragment
    key = "register-4f9c2a7e1b"
    record = "mine rescue certification (current certification register): yes"
    transport = ScriptedTransport("openai", [http_json(openai_completion(text=f"{record}; {key}"))])
    model = get_model("openai/gpt-4.1-mini", api_key=key, http_client=transport.client())
    output = await model.generate([ChatMessage.user("hello")])
    assert output.text == f"{record}; [REDACTED]"
    assert redact(f"body cut at {key[:10]}") == "body cut at [REDACTED]"


def test_model_text_keeps_words_after_key_labels_and_masks_credentials() -> None:
    # what a model writes is read by the benchmark: a record's "Work authorization: approved"
    # or "the bearer certificate" is a fact, not a key (they were masked, changing replies)
    from uncobench_z3._secrets import redact_model_text

    for text in (
        "Work authorization: approved",
        "The bearer certificate was issued 2026-03-01",
        "api_key=not-needed for this server",
    ):
        assert redact_model_text(text) == text
    masked = redact_model_text(
        "Authorization: Bearer abc123def456ghi789, api_key=k3y-0f-s1xteen-chars,"
        " sk-proj1234567890abcdef"
    )
    for secret in ("abc123def456ghi789", "k3y-0f-s1xteen-chars", "proj1234567890abcdef"):
        assert secret not in masked
    # what went wrong is masked as before, shapes alone
    assert "approved" not in redact("Work authorization: approved")
