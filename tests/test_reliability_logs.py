"""Item 1 of issue 12: the append-only logs (``samples.jsonl``, ``judge.jsonl``) survive a
last record without its newline, a torn last line and garbage, and never offer to throw
valid records away."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import uncobench_z3
from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ResumeError
from uncobench_z3.evaluation import (
    JUDGE_FILE,
    SAMPLES_FILE,
    evaluate,
    example_benchmark,
    judge_run,
    make_config,
    read_judgements,
    read_log,
    run_evaluation,
)
from uncobench_z3.models import ModelOutput, ToolCall, get_model
from uncobench_z3.settings import TaskGroup

from .cli_helpers import run_cli


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("logs") / "bench", groups=2)


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def untimed(rows: list[str]) -> list[dict[str, object]]:
    """Records as compared across runs: every field but the time taken."""
    return [{k: v for k, v in json.loads(r).items() if k != "elapsed_seconds"} for r in rows]


def test_a_last_record_without_its_newline_is_kept_and_terminated(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"])
    first = evaluate(groups, config, tmp_path)
    log = tmp_path / SAMPLES_FILE
    lines = lines_of(log)
    log.write_text("\n".join(lines[:4]), encoding="utf-8")  # whole records, no final newline
    again = evaluate(groups, config, tmp_path)
    assert again.reused == 4 and again.ran == len(lines) - 4
    rows = lines_of(log)
    assert len(rows) == len(lines) == len({json.loads(r)["key"] for r in rows})
    assert log.read_text(encoding="utf-8").endswith("\n")
    third = evaluate(groups, config, tmp_path)  # and the run stays usable
    assert third.ran == 0 and third.reused == len(first.records)


def test_a_torn_last_line_is_dropped_kept_aside_and_redone(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    log = tmp_path / SAMPLES_FILE
    lines = lines_of(log)
    log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:60], encoding="utf-8")
    summary = evaluate(groups, config, tmp_path)
    assert summary.ran == 1 and summary.reused == len(lines) - 1
    assert len(lines_of(log)) == len(lines)
    kept = list(tmp_path.glob("samples.torn*"))
    assert kept and kept[0].read_text(encoding="utf-8") == lines[-1][:60]


def test_a_last_line_torn_inside_a_character_is_kept_aside_byte_for_byte_and_redone(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crash can cut a record inside a character of its text (a dash, a name, a model's
    reply): the last line is torn, not a log that is not UTF-8; the run resumes and every
    reader skips it."""
    out = tmp_path / "run"
    args = ["eval", str(bench), "--agent", "builtin/naive", "--out", str(out), "--no-progress",
            "--limit", "1"]  # fmt: skip
    assert run_cli(capsys, *args).code == 0
    log = out / SAMPLES_FILE
    lines = lines_of(log)
    torn = lines[-1][:60].encode() + "\u2014".encode()[:2]  # cut inside its key, in a dash
    log.write_bytes("".join(line + "\n" for line in lines[:-1]).encode() + torn)
    for command in (["report", str(out), "--out", str(tmp_path / "rep"), "--no-plots"],
                    ["judge", str(out), "--bench", str(bench)]):  # fmt: skip
        result = run_cli(capsys, *command)
        assert result.code == 0, (command, result.err)
    assert run_cli(capsys, *args).code == 0
    assert untimed(lines_of(log)) == untimed(lines)  # the torn sample is done again, the same
    kept = list(out.glob("samples.torn*"))
    assert kept and kept[0].read_bytes() == torn


def test_a_one_line_garbage_log_is_refused_not_dropped(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    (tmp_path / SAMPLES_FILE).write_text("hello, I am not a record", encoding="utf-8")
    with pytest.raises(ResumeError, match="line 1"):
        evaluate(groups, config, tmp_path)
    assert (tmp_path / SAMPLES_FILE).read_text(encoding="utf-8") == "hello, I am not a record"


def test_a_bad_line_in_the_middle_never_offers_to_discard_the_valid_records(
    groups: list[TaskGroup], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(str(tmp_path / "b"), groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path / "run")
    log = tmp_path / "run" / SAMPLES_FILE
    lines = lines_of(log)
    lines[1] = "{not a record"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ResumeError) as caught:
        evaluate(groups, config, tmp_path / "run")
    message = str(caught.value)
    assert "line 2" in message and "--restart" not in message and "--force" in message
    assert "(Invalid JSON: " in message  # why, in a word
    lines[1] = json.dumps({**json.loads(lines[0]), "setting": "bogus"})
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ResumeError, match=r"line 2 is not a sample record \(setting: Input"):
        evaluate(groups, config, tmp_path / "run")  # a schema violation names its field
    lines[1] = "{not a record"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # --force sets the bad line aside, keeps the valid records and redoes only the lost one
    summary = evaluate(groups, config, tmp_path / "run", force=True)
    assert summary.reused == len(lines) - 1 and summary.ran == 1
    aside = list((tmp_path / "run").glob("samples.bad-*"))
    assert aside and "{not a record" in aside[0].read_text(encoding="utf-8")


# -- judge.jsonl ---------------------------------------------------------------------------------
def _judge_model(count: int):  # type: ignore[no-untyped-def]
    verdict = ModelOutput(
        tool_calls=(
            ToolCall(
                id="j",
                function="submit_judgement",
                arguments={"fidelity": True, "coverage": 1.0, "notes": ""},
            ),
        )
    )
    return get_model("mock/judge", outputs=[verdict] * count)


async def test_judge_log_without_final_newline_is_terminated_before_appending(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1, settings=["reliable"])
    await run_evaluation(groups, config, tmp_path)
    samples, _ = read_log(tmp_path / SAMPLES_FILE)
    replies = sum(len(r.replies) for s in samples for r in s.trace)
    assert replies >= 3
    first = await judge_run(tmp_path, _judge_model(2), groups, limit=2)
    assert first.judged == 2
    path = tmp_path / JUDGE_FILE
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n"), encoding="utf-8")
    second = await judge_run(tmp_path, _judge_model(replies), groups)
    assert second.reused == 2 and second.judged == replies - 2
    rows = read_judgements(path)
    assert len(rows) == replies == len(lines_of(path))


def test_a_non_utf8_log_is_one_line_with_its_line_number(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["eval", str(bench), "--agent", "builtin/naive", "--out", str(out), "--no-progress",
            "--limit", "1"]  # fmt: skip
    assert run_cli(capsys, *args).code == 0
    with (out / SAMPLES_FILE).open("ab") as handle:
        handle.write(b'{"key": "\xff\xfe"}\n')
    count = len(lines_of_bytes(out / SAMPLES_FILE))
    for command in (args, ["report", str(out), "--out", str(tmp_path / "rep"), "--no-plots"],
                    ["judge", str(out), "--bench", str(bench)]):  # fmt: skip
        result = run_cli(capsys, *command)
        assert result.code == 2, (command, result.err)
        assert "Traceback" not in result.err and f"samples.jsonl:{count}" in result.err
        assert "UTF-8" in result.err


def lines_of_bytes(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _on_a_full_disk(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """``uncobench ARGS`` (this tree's code) in a child whose files stop growing at ``limit``
    bytes, as on a full disk (a write past it fails with ``EFBIG`` after writing what fits,
    instead of a signal)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    root = str(Path(uncobench_z3.__file__).parents[1])
    return subprocess.run(
        [sys.executable, "-c", "from uncobench_z3.cli import main; main()", *args],
        capture_output=True, text=True, timeout=300, preexec_fn=limited,
        env={**os.environ, "PYTHONPATH": root},
    )  # fmt: skip


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_log_that_cannot_be_written_is_one_line_naming_it_and_the_run_resumes(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    """A full disk while eval writes its log: one line naming ``samples.jsonl`` that says what
    is kept, played here and in worker processes. It said ``error: File too large`` (no file)
    with workers, and blamed the sample here, its traceback in ``errors.log`` (on a full
    disk that write failed too: ``error: No space left on device`` and an empty
    ``errors.log``). Run again with room, it resumes to the uninterrupted run's records."""
    out = tmp_path / "run"
    run = ["eval", str(bench), "--agent", "builtin/naive", "--agent", "builtin/careful",
           "--no-progress", "--workers", workers]  # fmt: skip
    args = [*run, "--out", str(out)]
    child = _on_a_full_disk(args, 30_000)
    assert child.returncode == 2, child.stderr
    assert "Traceback" not in child.stderr
    lines = child.stderr.strip().splitlines()
    assert len(lines) == 1, child.stderr
    assert f"{out / SAMPLES_FILE}: File too large" in lines[0]
    assert "the samples it holds are kept, run the same command to resume" in lines[0]
    assert sorted(path.name for path in out.iterdir()) == ["run.json", SAMPLES_FILE]
    assert 0 < (out / SAMPLES_FILE).stat().st_size <= 30_000
    resumed_run = run_cli(capsys, *args)  # with room
    assert resumed_run.code == 0
    assert re.search(r"[1-9]\d* reused from an earlier run", resumed_run.out), resumed_run.out
    assert run_cli(capsys, *run, "--out", str(tmp_path / "whole")).code == 0
    resumed = sorted(untimed(lines_of(out / SAMPLES_FILE)), key=lambda r: str(r["key"]))
    whole = sorted(
        untimed(lines_of(tmp_path / "whole" / SAMPLES_FILE)), key=lambda r: str(r["key"])
    )
    assert resumed == whole


def test_a_judge_log_that_cannot_be_written_is_one_line_naming_it_and_the_judge_resumes(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge's log on a full disk: it said ``error: File too large`` (no file)."""
    run = tmp_path / "run"
    assert run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out", str(run),
                   "--no-progress").code == 0  # fmt: skip
    args = ["judge", str(run), "--judge-model", "mock/echo", "--no-cache"]
    child = _on_a_full_disk(args, 20_000)
    assert child.returncode == 2, child.stderr
    lines = child.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in child.stderr, child.stderr
    assert f"{run / JUDGE_FILE}: File too large; the judgements it holds are kept" in lines[0]
    assert 0 < (run / JUDGE_FILE).stat().st_size <= 20_000
    resumed = run_cli(capsys, *args)  # with room
    assert resumed.code == 0, resumed.err
    assert re.search(r"judged now, [1-9]\d* reused", " ".join(resumed.out.split()))
    whole = tmp_path / "whole.jsonl"
    assert run_cli(capsys, *args, "--out", str(whole)).code == 0
    keys = [json.loads(line)["key"] for line in lines_of(run / JUDGE_FILE)]
    assert sorted(keys) == sorted(json.loads(line)["key"] for line in lines_of(whole))
