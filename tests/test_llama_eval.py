"""A real small model, offline: SmolLM2-135M through llama.cpp's OpenAI-compatible server as
the main agent and as the colleagues' phrasing model. Structure is asserted, not wording: a
full evaluation completes with every sample recorded, every model action becomes a valid or an
invalid action (never a crash), and the trace keeps what the model wrote.

The two runs with the defaults (budget, concurrency) are the acceptance test of real models
end to end, through ``local/smollm2`` and through ``openai-api/<service>/smollm2``; each takes
a few minutes on two cores."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.errors import ModelAPIError
from uncobench_z3.evaluation import SampleRecord, evaluate, make_config, read_log
from uncobench_z3.models import ChatMessage, GenerateConfig, ToolDef, find_local_gguf, get_model

pytestmark = pytest.mark.llama

ASK = ToolDef(
    name="ask",
    description="Ask a colleague.",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def _serve(*arguments: str) -> Iterator[str]:
    """Start ``python -m <arguments>`` for SmolLM2 on a free port; yields its ``/v1`` URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", *arguments, "--model", str(find_local_gguf("smollm2")),
         "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None and time.monotonic() < deadline, "no server"
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.25)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="module")
def uncobench_server(llama_server: str) -> Iterator[str]:
    """The server as documented for openai-api/ (``python -m uncobench_z3.models.llama_server``);
    ``llama_server`` only makes the test skip when llama-cpp-python is missing."""
    yield from _serve("uncobench_z3.models.llama_server")


@pytest.fixture(scope="module")
def stock_server(llama_server: str) -> Iterator[str]:
    """llama-cpp-python's own server with the chat format the issue was found with, and a
    context too small for a briefing."""
    yield from _serve(
        "llama_cpp.server", "--chat_format", "chatml-function-calling", "--n_ctx", "1024"
    )


@pytest.fixture(scope="module")
def two_groups(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bench = tmp_path_factory.mktemp("llama") / "bench"
    build_benchmark(bench, groups=2, seed=7, workers=1)
    return bench


def _check_complete(out: Path) -> list[SampleRecord]:
    """Every planned sample is in the log, as an outcome, with what the model wrote."""
    planned = json.loads((out / "run.json").read_text())["samples"]
    records, _ = read_log(out / "samples.jsonl")
    assert len(records) == planned
    for record in records:
        assert record.status in ("answered", "budget_exhausted", "context_exhausted")
        assert record.rounds == len(record.trace) <= record.budget
        if record.status == "answered":
            assert record.answer is not None and record.score is not None
        if record.status == "context_exhausted":
            assert record.end_detail
        for number, rnd in enumerate(record.trace, start=1):
            assert rnd.round == number
            assert rnd.output is not None  # the raw model output of every turn
            if rnd.action == "invalid":
                assert rnd.error  # the model was told what went wrong
        assert record.behaviour.invalid_actions == sum(r.action == "invalid" for r in record.trace)
    return records


def _eval_with_defaults(
    capsys: pytest.CaptureFixture[str], bench: Path, agent: str, out: Path
) -> list[SampleRecord]:
    started = time.monotonic()
    result = run_cli(capsys, "eval", str(bench), "--agent", agent, "--out", str(out),
                     "--no-progress")  # fmt: skip
    assert result.code == 0, result.err
    records = _check_complete(out)
    assert len(records) == 2 * 5 - sum(len(g) for g in _unavailable(out).values())
    with capsys.disabled():  # the table the documentation shows
        print(f"\n{agent}: {time.monotonic() - started:.0f} s\n{result.out}")
    return records


def _unavailable(out: Path) -> dict[str, list[str]]:
    return dict(json.loads((out / "run.json").read_text())["unavailable"])


@pytest.mark.parametrize("route", ["local", "openai-api"])
def test_smollm2_evaluates_two_groups_in_every_setting_with_the_defaults(
    route: str,
    request: pytest.FixtureRequest,
    two_groups: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
    if route == "local":
        request.getfixturevalue("llama_server")
        monkeypatch.delenv("LOCAL_SMOLLM2_BASE_URL", raising=False)
        agent = "local/smollm2"
    else:
        monkeypatch.setenv("LLAMA_BASE_URL", request.getfixturevalue("uncobench_server"))
        # max_tokens as local/ defaults to; the client streams, and would cut a server that ran on
        agent = "openai-api/llama/smollm2,max_tokens=512"
    records = _eval_with_defaults(capsys, two_groups, agent, tmp_path / "run")
    assert any(rnd.output.output_tokens for r in records for rnd in r.trace if rnd.output)


async def test_a_stock_server_rejecting_the_tool_choice_says_what_to_do(
    stock_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLAMA_BASE_URL", stock_server)
    async with get_model("openai-api/llama/smollm2") as model:
        with pytest.raises(ModelAPIError) as caught:
            await model.generate([ChatMessage.user("hi")], tools=[ASK], tool_choice="any",
                                 config=GenerateConfig(max_tokens=16))  # fmt: skip
        assert ",tool_choice=auto" in str(caught.value) and ",protocol=text" in str(caught.value)
        # without tools the same server works, and keeps to max_tokens
        output = await model.generate(
            [ChatMessage.user("Tell a long story.")], config=GenerateConfig(max_tokens=12)
        )
        assert 0 < output.usage.output_tokens <= 12 and output.stop_reason == "max_tokens"


def test_a_context_overflow_ends_the_sample_and_the_run_goes_on(
    stock_server: str, two_groups: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLAMA_BASE_URL", stock_server)
    groups = load_groups(two_groups)
    agent = "openai-api/llama/smollm2,protocol=text,max_tokens=64,cache=false"
    config = make_config(two_groups, groups, [agent], ["reliable"])
    summary = evaluate(groups, config, tmp_path / "run")
    records = _check_complete(tmp_path / "run")
    assert len(records) == len(summary.records) == 2
    # a 1,024-token context cannot hold a briefing: llama.cpp answers HTTP 400
    assert all(r.status == r.result == "context_exhausted" for r in records)
    assert all("context" in (r.end_detail or "") for r in records)


def test_a_real_model_as_agent_and_as_colleague(llama_server: str, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    build_benchmark(bench, groups=1, seed=3, workers=1)
    groups = load_groups(bench)
    # native tools and the plain-text protocol as the main agent, and the colleagues' phrasing
    # model behind the naive agent (which asks every colleague at once); small budgets
    runs = [
        (["local/smollm2,max_tokens=200,cache=false"], "scripted", 2),
        (["local/smollm2,protocol=text,max_tokens=120,cache=false"], "scripted", 1),
        (["builtin/naive"], "local/smollm2,max_tokens=120,cache=false", 2),
    ]
    for number, (agents, colleague, budget) in enumerate(runs):
        config = make_config(
            bench, groups, agents, ["reliable"], budget=budget, colleague=colleague
        )
        out = tmp_path / f"run{number}"
        evaluate(groups, config, out)
        records, _ = read_log(out / "samples.jsonl")
        (record,) = records
        if colleague == "scripted":
            _check_complete(out)
        else:
            phrased = [reply for rnd in record.trace for reply in rnd.replies if reply.text]
            assert phrased and all(reply.fidelity is not None for reply in phrased)
