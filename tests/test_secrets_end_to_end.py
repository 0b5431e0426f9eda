"""A key never reaches a record, a cache entry, a log or a message, end to end: a server that
echoes it in a long error body, in a value that fails validation, or a model that writes it.

The fault server stands in for an OpenAI-compatible endpoint that quotes the bearer key back;
every file the command leaves (the run folder, the response cache, a kept traceback) and
everything it prints is searched for the key and for its first characters.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.evaluation import example_benchmark
from uncobench_z3.models.testing import Fault, FaultServer, openai_completion

from .cli_helpers import CliResult, run_cli

KEY = "ZQXAUDITKEY9f8e7d6c5b4a"
# what a key cut in two leaves: any of these in a file is a leak
FRAGMENTS = (KEY, KEY[:6], KEY[-6:])


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("secrets") / "bench", groups=1)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FaultServer]:
    with FaultServer() as running:
        monkeypatch.setenv("FAKE_BASE_URL", running.base_url)
        monkeypatch.setenv("FAKE_API_KEY", KEY)
        monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
        (tmp_path / "tmp").mkdir()
        yield running


def evaluate(capsys: pytest.CaptureFixture[str], bench: Path, out: Path) -> CliResult:
    return run_cli(capsys, "eval", str(bench), "--agent", "openai-api/fake/m",
                   "--setting", "reliable", "--limit", "1", "--max-attempts", "1",
                   "--budget", "2", "--max-errors", "100%", "--out", str(out),
                   "--no-progress")  # fmt: skip


def assert_no_key(tmp_path: Path, result: CliResult) -> None:
    said = result.out + result.err
    files = {path: path.read_text(encoding="utf-8") for path in tmp_path.rglob("*")
             if path.is_file()}  # fmt: skip
    for fragment in FRAGMENTS:
        assert fragment not in said, said
        for path, text in files.items():
            assert fragment not in text, path


def test_a_key_echoed_in_an_error_body_cut_short_is_masked_whole(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # no "message" field: the body itself is the detail, cut to 500 characters inside the key
    body = {"detail": "A" * 462, "received": KEY}
    server.script = lambda number, request: Fault("server_error", status=400, body=body)
    result = evaluate(capsys, bench, tmp_path / "run")
    assert result.code == 0, result.err
    sample = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert "HTTP 400" in sample["error"]["message"]
    assert "[REDACTED]" in sample["error"]["message"]
    assert_no_key(tmp_path, result)


def test_a_key_in_a_value_that_fails_validation_is_masked_in_every_message_and_traceback(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def usage_is_the_key(request: dict[str, Any]) -> dict[str, Any]:
        answer = openai_completion(text="ok")
        answer["usage"]["completion_tokens"] = KEY
        return answer

    server.responder = usage_is_the_key
    result = evaluate(capsys, bench, tmp_path / "run")
    assert result.code == 1, result.err
    assert "ValidationError" in result.err
    errors = (tmp_path / "run" / "errors.log").read_text(encoding="utf-8")
    assert "Traceback" in errors and "[REDACTED]" in errors
    assert_no_key(tmp_path, result)


def test_an_internal_error_of_the_judge_keeps_its_traceback_without_the_key(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    made = run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out", str(run),
                   "--no-progress", "--setting", "reliable")  # fmt: skip
    assert made.code == 0, made.err
    server.responder = lambda request: {**openai_completion(text="ok"),
                                        "usage": {"prompt_tokens": KEY}}  # fmt: skip
    result = run_cli(capsys, "judge", str(run), "--bench", str(bench),
                     "--judge-model", "openai-api/fake/judge", "--limit", "1")  # fmt: skip
    assert result.code == 4, result.err
    assert "internal error" in result.err
    kept = list((tmp_path / "tmp").glob("uncobench-traceback-*.txt"))
    assert len(kept) == 1 and "Traceback" in kept[0].read_text(encoding="utf-8")
    assert_no_key(tmp_path, result)


def test_a_key_the_model_writes_is_masked_in_the_trace_and_the_cache(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def leaky(request: dict[str, Any]) -> dict[str, Any]:
        arguments = {"decision": "Reject", "candidate": f"{KEY} sk-live0123456789", "number": None}
        answer = openai_completion(
            text=f"the key is {KEY}",
            tool_calls=[("call_1", "submit_answer", json.dumps(arguments))],
        )
        return answer

    server.responder = leaky
    first = evaluate(capsys, bench, tmp_path / "run")
    assert first.code == 0, first.err
    assert list((tmp_path / "cache").rglob("*.json")), "the answer was cached"
    assert_no_key(tmp_path, first)
    samples = (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8")
    assert "sk-live0123456789" not in samples and "[REDACTED]" in samples
    # answered from the cache, the run records the same (redacted) text
    again = evaluate(capsys, bench, tmp_path / "again")
    assert again.code == 0, again.err
    assert len(server.requests) == 1
    replayed = (tmp_path / "again" / "samples.jsonl").read_text(encoding="utf-8")
    assert replayed.count("[REDACTED]") == samples.count("[REDACTED]")
