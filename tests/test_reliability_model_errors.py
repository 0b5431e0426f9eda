"""Item 6 of issue 12, end to end against the fault-injection server: a failed model call
makes an *error sample* (recorded, never scored, counted apart), the run goes on within
``--max-errors``, malformed 200s are retried like 5xx, and ``--timeout`` bounds a call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    ERROR_SAMPLES_FILE,
    SAMPLES_FILE,
    compute_metrics,
    example_benchmark,
    read_log,
)
from uncobench_z3.models import ChatMessage, GenerateConfig, get_model
from uncobench_z3.models.testing import Fault, FaultServer
from uncobench_z3.settings import SETTING_NAMES

from .cli_helpers import run_cli

AGENT = "openai-api/fault/m,cache=false"
FAST = ["--max-retry-wait", "0.01", "--max-attempts", "3"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("faults") / "bench", groups=2)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    with FaultServer() as running:
        monkeypatch.setenv("FAULT_BASE_URL", running.base_url)
        yield running


def eval_args(bench: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(bench), "--agent", AGENT, "--out", str(out), "--no-progress",
            "--concurrency", "1", *FAST, *extra]  # fmt: skip


def group_title(bench: Path, index: int) -> str:
    line = (bench / "groups.jsonl").read_text(encoding="utf-8").splitlines()[index]
    return str(json.loads(line)["spec"]["title"])


def failing_for(title: str, fault: Fault) -> Any:
    """Every request about the group titled ``title`` gets ``fault``; the others are fine."""

    def script(number: int, body: dict[str, Any]) -> Fault:
        return fault if title in json.dumps(body) else Fault()

    return script


# -- the model layer -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["malformed", "empty_choices", "server_error", "reset"])
async def test_a_bad_answer_is_retried_and_the_next_one_used(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer([Fault(kind)]) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        model = get_model("openai-api/fault/m", max_retry_wait=0.01)
        output = await model.generate([ChatMessage.user("hello")])
        await model.aclose()
    assert output.text == "ok" and server.faults == [kind, "ok"]


async def test_a_malformed_answer_that_persists_is_a_model_error_with_its_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from uncobench_z3.errors import ModelAPIError

    with FaultServer([Fault("malformed")] * 3) as server:
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        model = get_model("openai-api/fault/m", max_retry_wait=0.01, max_attempts=3)
        with pytest.raises(ModelAPIError, match="malformed response") as caught:
            await model.generate([ChatMessage.user("hello")])
        await model.aclose()
    assert caught.value.attempts == 3


async def test_a_hanging_server_is_bounded_by_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from uncobench_z3.errors import ModelAPIError

    with FaultServer([Fault("hang", seconds=20)] * 2) as server:
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        model = get_model("openai-api/fault/m", GenerateConfig(timeout=0.3),
                          max_retry_wait=0.01, max_attempts=2)  # fmt: skip
        with pytest.raises(ModelAPIError, match=r"no answer within 0\.3 s"):
            await model.generate([ChatMessage.user("hello")])
        await model.aclose()


# -- eval end to end -------------------------------------------------------------------------
def test_the_run_goes_on_past_error_samples_within_max_errors(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = failing_for(group_title(bench, 0), Fault("server_error", status=502))
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out, "--max-errors", "100%"))
    assert result.code == 0, result.err
    records, _ = read_log(out / SAMPLES_FILE)
    errors = [r for r in records if r.result == "error"]
    assert len(records) == 9 and len(errors) == 5  # the first group's five settings
    for record in errors:
        assert record.status == "error" and not record.correct and record.score is None
        assert record.error is not None and record.error.type == "ModelAPIError"
        assert record.error.attempts == 3 and record.error.status_code == 502
        assert "HTTP 502" in record.error.message
    metrics = compute_metrics(records)
    assert sum(m.samples for m in metrics) == 4  # error samples are not scored
    assert "5 error sample(s)" in result.out
    report = run_cli(capsys, "report", str(out), "--out", str(tmp_path / "rep"), "--no-plots")
    assert report.code == 0, report.err
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    runs = text.split("## Runs", 1)[1].split("\n## ", 1)[0]  # error samples are counted there
    assert "*Error samples:" in runs and f"| {AGENT} | Mixed (stress test) | 1 |" in runs
    wrong = text.split("wrong answers*", 1)[1].split("\n## ", 1)[0]
    assert "HTTP 502" not in wrong and "ModelAPIError" not in wrong  # not listed as wrong


def test_max_errors_zero_stops_at_the_first_error_and_resume_retries_it(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = failing_for(group_title(bench, 1), Fault("server_error"))
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out))
    assert result.code == 1 and "Traceback" not in result.err
    assert "stopped" in result.err and "--max-errors" in result.err
    records, _ = read_log(out / SAMPLES_FILE)
    # one sample at a time in plan order: the first group's samples, then the failing one,
    # and nothing started after it
    first, failing = load_groups(bench)[:2]
    before = [s for s in SETTING_NAMES if first.setting(s).available]
    assert [r.group_id for r in records] == [first.id] * len(before) + [failing.id]
    assert [r.result == "error" for r in records] == [False] * len(before) + [True]
    server.script = ()  # the server recovers
    again = run_cli(capsys, *eval_args(bench, out))
    assert again.code == 0, again.err
    records, _ = read_log(out / SAMPLES_FILE)
    assert len(records) == 9 and all(r.result != "error" for r in records)
    assert len({r.key for r in records}) == 9
    moved = (out / ERROR_SAMPLES_FILE).read_text(encoding="utf-8").splitlines()
    assert len(moved) == 1 and json.loads(moved[0])["result"] == "error"


def test_an_error_body_is_printed_as_one_line_without_its_escape_sequences(
    bench: Path,
    tmp_path: Path,
    server: FaultServer,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server's error text reaches the terminal in the retry notices and the error line:
    its escape sequences (a colour, a window title, a cleared screen) are shown, not obeyed,
    and its line breaks do not make the one error line several."""
    hostile = "\x1b[31mred\x1b]0;title\x07\x1b[2J\nsecond line\rback"
    body = {"error": {"message": hostile}}
    server.script = lambda number, request: Fault("server_error", status=503, body=body)
    result = run_cli(capsys, *eval_args(bench, tmp_path / "run"))
    assert result.code == 1 and "stopped" in result.err
    shown = "\\x1b[31mred\\x1b]0;title\\x07\\x1b[2J second line back"
    notices = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
    said = [line for line in result.err.splitlines() if "title" in line]
    assert len(notices) == 2 and len(said) == 1 and said[0].startswith("error: stopped")
    assert all(shown in line for line in notices + said), notices + said
    assert "\x1b" not in result.err and "\x07" not in result.err


def test_max_errors_as_a_count_stops_after_that_many(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = lambda number, body: Fault("server_error", status=400)
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out, "--max-errors", "2"))
    assert result.code == 1 and "3 error sample(s)" in result.err
    records, _ = read_log(out / SAMPLES_FILE)
    assert len(records) == 3 and all(r.result == "error" for r in records)
    assert all(r.error is not None and r.error.attempts == 1 for r in records)  # not retried
    assert all(r.error is not None and "the server broke" in r.error.message for r in records)


def test_a_context_length_error_is_an_outcome_not_an_error_sample(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = lambda number, body: Fault("context_length")
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out))  # --max-errors 0: an error would stop it
    assert result.code == 0, result.err
    records, _ = read_log(out / SAMPLES_FILE)
    assert len(records) == len(server.requests) == 9  # one attempt each, never retried
    assert all(r.result == r.status == "context_exhausted" and r.error is None for r in records)
    assert all(r.end_detail and "maximum context length" in r.end_detail for r in records)


def test_rate_limits_and_malformed_answers_are_retried_within_a_run(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    faults = [Fault("rate_limit", retry_after=0.01), Fault("malformed"), Fault("empty_choices"),
              Fault("reset"), Fault("invalid_tool_json")]  # fmt: skip
    server.script = faults
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out, "--max-attempts", "5"))
    assert result.code == 0, result.err
    records, _ = read_log(out / SAMPLES_FILE)
    assert len(records) == 9 and all(r.result != "error" for r in records)
    # the invalid tool JSON cost its sample a round, not the run
    assert sum(r.behaviour.invalid_actions for r in records) == 1


def test_timeout_bounds_every_call_of_a_run(
    bench: Path, tmp_path: Path, server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = failing_for(group_title(bench, 0), Fault("hang", seconds=30))
    out = tmp_path / "run"
    result = run_cli(capsys, *eval_args(bench, out, "--timeout", "0.2", "--max-errors", "60%",
                                        "--max-attempts", "1"))  # fmt: skip
    assert result.code == 0, result.err
    records, _ = read_log(out / SAMPLES_FILE)
    errors = [r for r in records if r.result == "error"]
    assert len(errors) == 5
    assert all(r.error is not None and "no answer within 0.2 s" in r.error.message for r in errors)
