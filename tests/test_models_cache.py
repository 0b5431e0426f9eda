"""The on-disk response cache: hits, keys, atomic writes, damaged entries."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from uncobench_z3.models import (
    CACHE_DIR_ENV,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseCache,
    ToolCall,
    ToolDef,
    ToolFunction,
    cache_key,
    default_cache_dir,
    get_model,
)
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.models.testing import ScriptedTransport, http_json, openai_completion

KEY = "sk-test-SECRET-1234"
OTHER_KEY = "sk-test-OTHER-9876"
TOOL = ToolDef(name="lookup", description="Look up.")
MESSAGES = [ChatMessage.system("sys"), ChatMessage.user("question")]


def key_for(**changes: object) -> str:
    arguments: dict[str, object] = {
        "model_name": "openai/gpt-4.1-mini",
        "endpoint": "https://api.openai.com/v1",
        "messages": MESSAGES,
        "tools": [TOOL],
        "tool_choice": "auto",
        "config": GenerateConfig(temperature=0.0),
    }
    arguments.update(changes)
    return cache_key(**arguments)  # type: ignore[arg-type]


def test_key_changes_with_every_ingredient_of_the_answer() -> None:
    base = key_for()
    assert key_for() == base
    variants = [
        key_for(model_name="openai/gpt-4o"),
        key_for(endpoint="http://127.0.0.1:8000/v1"),
        key_for(messages=[*MESSAGES, ChatMessage.user("more")]),
        key_for(tools=[]),
        key_for(tool_choice=ToolFunction(name="lookup")),
        key_for(config=GenerateConfig(temperature=0.5)),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_the_trial_scopes_the_key() -> None:
    """An evaluation's epoch seed is part of the key; calls without one keep their old key."""
    assert key_for(trial=None) == key_for()
    assert len({key_for(), key_for(trial=1), key_for(trial=2)}) == 3


async def test_a_repeat_is_served_from_the_cache_within_its_trial_only(tmp_path: Path) -> None:
    provider = MockProvider("mock/same", lambda messages, tools: "the same answer")
    model = Model(provider, cache=ResponseCache(tmp_path))
    await model.generate(MESSAGES, trial=7)
    again = await model.generate(MESSAGES, trial=7)
    assert again.from_cache and len(provider.calls) == 1
    other = await model.generate(MESSAGES, trial=8)
    assert not other.from_cache and len(provider.calls) == 2


async def test_identical_calls_at_once_ask_the_model_once(tmp_path: Path) -> None:
    """A request already being asked is waited for, then served from the cache: a sampling
    model answered each of two concurrent identical calls anew, so the intervention arms of
    one sample, played at once, began from different histories (docs/interventions.md)."""
    drawn = iter(range(100))

    async def sampling(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        await asyncio.sleep(0.01)  # a provider call takes time
        return f"draw {next(drawn)}"  # another call, another sample

    provider = MockProvider("mock/sampling", sampling)
    model = Model(provider, cache=ResponseCache(tmp_path))
    answers = await asyncio.gather(*(model.generate(MESSAGES, trial=3) for _ in range(5)))
    assert len(provider.calls) == 1 and {a.text for a in answers} == {"draw 0"}
    assert [a.from_cache for a in answers] == [False, True, True, True, True]
    assert model.cache_hits == 4
    # other requests are not held up by one another
    apart = await asyncio.gather(*(model.generate(MESSAGES, trial=t) for t in (4, 5)))
    assert {a.text for a in apart} == {"draw 1", "draw 2"} and len(provider.calls) == 3


async def test_a_failed_call_leaves_the_waiting_one_to_ask(tmp_path: Path) -> None:
    calls = iter([RuntimeError("down"), "second answer"])

    async def flaky(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
        await asyncio.sleep(0.01)
        outcome = next(calls)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    model = Model(MockProvider("mock/flaky", flaky), cache=ResponseCache(tmp_path), max_attempts=1)
    first, second = await asyncio.gather(
        model.generate(MESSAGES), model.generate(MESSAGES), return_exceptions=True
    )
    assert isinstance(first, Exception)
    assert isinstance(second, ModelOutput) and second.text == "second answer"


def test_timeout_does_not_change_the_key() -> None:
    assert key_for(config=GenerateConfig(temperature=0.0, timeout=5)) == key_for()


async def test_second_identical_call_is_served_from_the_cache(tmp_path: Path) -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="cached answer"))])
    model = get_model(
        "openai/gpt-4.1-mini",
        api_key=KEY,
        http_client=transport.client(),
        cache=ResponseCache(tmp_path),
    )
    first = await model.generate(MESSAGES, tools=[TOOL])
    second = await model.generate(MESSAGES, tools=[TOOL])
    assert len(transport.requests) == 1
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.text == first.text and second.usage == first.usage
    assert model.cache_hits == 1 and model.provider_calls == 1
    # A cache hit spends no tokens.
    assert model.usage == first.usage


async def test_key_survives_a_new_api_key_but_not_a_new_base_url(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    transport = ScriptedTransport(
        "openai", lambda request: http_json(openai_completion(text=request.url))
    )

    def model(api_key: str, base_url: str | None = None) -> Model:
        return get_model(
            "openai/gpt-4.1-mini",
            cache=cache,
            api_key=api_key,
            http_client=transport.client(),
            base_url=base_url,
        )

    first = await model(KEY).generate(MESSAGES)
    rotated = await model(OTHER_KEY).generate(MESSAGES)
    assert rotated.from_cache and rotated.text == first.text
    moved = await model(KEY, "http://127.0.0.1:9/v1").generate(MESSAGES)
    assert not moved.from_cache
    other_question = await model(KEY).generate([ChatMessage.user("another")])
    assert not other_question.from_cache
    assert len(transport.requests) == 3


async def test_cache_files_hold_no_key_and_no_temporary_leftovers(tmp_path: Path) -> None:
    transport = ScriptedTransport("openai", [http_json(openai_completion(text="x"))])
    model = get_model(
        "openai/gpt-4.1-mini",
        api_key=KEY,
        http_client=transport.client(),
        cache=ResponseCache(tmp_path),
    )
    await model.generate(MESSAGES)
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(files) == 1 and files[0].suffix == ".json"
    assert KEY not in files[0].read_text()
    assert "SECRET" not in files[0].read_text()


async def test_cache_false_never_touches_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    model = get_model("mock/echo", cache=False)
    await model.generate(MESSAGES)
    await model.generate(MESSAGES)
    assert list(tmp_path.iterdir()) == []
    assert model.provider_calls == 2


async def test_cache_true_uses_the_env_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    model = get_model("mock/echo", cache=True)
    await model.generate(MESSAGES)
    assert (await model.generate(MESSAGES)).from_cache
    assert any((tmp_path / "c").rglob("*.json"))


def test_default_directory_is_under_the_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    assert default_cache_dir() == Path.home() / ".cache" / "uncobench-z3" / "models"


def test_a_cached_tool_call_keeps_its_arguments_order(tmp_path: Path) -> None:
    """The arguments come back as the model wrote them: a sample's trace from the cache is
    the trace first written (the entry was stored with its keys sorted)."""
    arguments = {"roles": ["hr"], "message": "hi", "answer": {"number": 1, "decision": "x"}}
    output = ModelOutput(tool_calls=(ToolCall(id="c1", function="ask", arguments=arguments),))
    cache = ResponseCache(tmp_path)
    cache.put("ab" * 32, "mock/m", output)
    again = cache.get("ab" * 32)
    assert again is not None and again.from_cache
    read = again.tool_calls[0].arguments
    assert list(read) == ["roles", "message", "answer"]
    assert list(read["answer"]) == ["number", "decision"]


def test_damaged_entry_is_a_miss_and_is_overwritten(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = key_for()
    cache.put(key, "openai/gpt-4.1-mini", ModelOutput(text="good"))
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{ not json")
    assert cache.get(key) is None
    cache.put(key, "openai/gpt-4.1-mini", ModelOutput(text="again"))
    hit = cache.get(key)
    assert hit is not None and hit.text == "again" and hit.from_cache


def test_unwritable_cache_directory_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ResponseCache(blocker)
    cache.put(key_for(), "m", ModelOutput(text="x"))
    assert cache.get(key_for()) is None
    assert "could not write cache entry" in caplog.text
