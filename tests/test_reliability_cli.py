"""Items 7 and 8 of issue 12: every bad input is one line on stderr and a non-zero exit (2 for
unusable input), never a traceback; settings are validated before any work or any file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from uncobench_z3.evaluation import RUN_FILE, SAMPLES_FILE, example_benchmark
from uncobench_z3.models.testing import Fault, FaultServer

from .cli_helpers import one_line, reliable_run, run_cli


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("cli-errors") / "bench", groups=1)


@pytest.fixture(scope="module")
def run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reliable_run(bench, tmp_path_factory.mktemp("cli-errors-run") / "run")


# -- item 7: one line, never a traceback ---------------------------------------------------
def test_deeply_nested_json_in_an_audit_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    for command in (["audit", "report", str(path)], ["audit", "record", str(path), "x", "accept"]):
        assert "audit.jsonl" in one_line(run_cli(capsys, *command))


@pytest.mark.parametrize(
    "edit",
    [
        {"config": {"agents": 5, "settings": "x"}},
        {"samples": "many"},
        {"unavailable": [1, 2]},
        {"config_hash": {"x": 1}},
        {"config": "nope"},
    ],
)
def test_a_run_file_with_wrong_field_types(
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: dict,  # type: ignore[type-arg]
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    data = json.loads((copy / RUN_FILE).read_text(encoding="utf-8"))
    data.update(edit)
    (copy / RUN_FILE).write_text(json.dumps(data), encoding="utf-8")
    line = one_line(run_cli(capsys, "report", str(copy), "--out", str(tmp_path / "rep"),
                            "--no-plots"))  # fmt: skip
    assert "run.json" in line


def test_output_paths_that_cannot_be_created(
    bench: Path, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad = blocker / "sub"  # a path under a regular file can never be created
    spec = Path(__file__).resolve().parent.parent / "examples" / "mining_supervisor.json"
    commands = [
        ["eval", str(bench), "--agent", "builtin/naive", "--out", str(bad), "--no-progress"],
        ["build", "--groups", "1", "--out", str(bad), "--workers", "1"],
        ["report", str(run), "--out", str(bad), "--no-plots"],
        ["demo", "--out", str(bad), "--groups", "1", "--no-progress"],
        ["audit", "sample", str(bench), "--out", str(bad / "a.jsonl")],
        ["schema", "--out", str(bad / "schema.json")],
        ["perturb", str(spec), "--out", str(bad / "g.json"), "--quiet"],
        ["verify", str(spec), "--emit-smt2", str(bad)],
    ]
    for command in commands:
        line = one_line(run_cli(capsys, *command))
        assert str(blocker) in line, (command, line)


def test_judge_with_a_model_that_answers_garbage(
    run: Path, bench: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer(lambda number, body: Fault("malformed")) as server:
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        monkeypatch.setattr("uncobench_z3.models._model._INITIAL_BACKOFF", 0.001)
        result = run_cli(capsys, "judge", str(run), "--bench", str(bench), "--judge-model",
                         "openai-api/fault/judge,cache=false", "--limit", "1")  # fmt: skip
    assert "malformed response" in one_line(result, code=1)


def test_an_unexpected_error_is_one_line_and_its_traceback_is_kept(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("uncobench_z3.cli._build.build_benchmark", broken)
    line = one_line(run_cli(capsys, "build", "--out", str(tmp_path / "b")), code=4)
    assert "ZeroDivisionError: a bug" in line and "please report" in line
    kept = Path(line.rsplit("traceback in ", 1)[1].rstrip(")"))
    assert "Traceback" in kept.read_text(encoding="utf-8")


# -- item 8: validated before any work or any file -----------------------------------------
@pytest.mark.parametrize(
    "agent",
    [
        "mock/echo,temperature=-1",
        "mock/echo,max_tokens=0",
        "mock/echo,top_p=5",
        "mock/echo,reasoning_effort=huge",
        "openai/gpt-4.1-mini",  # no key
        "nosuch/model",  # unknown provider
    ],
)
def test_bad_model_settings_fail_before_the_run_folder_exists(
    agent: str,
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    result = run_cli(capsys, "eval", str(bench), "--agent", agent, "--out", str(out),
                     "--no-progress")  # fmt: skip
    one_line(result)
    assert not out.exists()


def test_a_bad_colleague_model_fails_before_the_run_folder_exists(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out", str(out),
                     "--colleague-model", "mock/echo,temperature=9", "--no-progress")  # fmt: skip
    assert "temperature" in one_line(result) and not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["build", "--groups", "1", "--workers", "0"],
        ["build", "--groups", "1", "--workers", "-2"],
        ["build", "--groups", "1", "--timeout-ms", "0"],
        ["verify", "{spec}", "--timeout-ms", "0"],
        ["verify", "{spec}", "--rlimit", "-1"],
        ["perturb", "{spec}", "--out", "{out}/g.json", "--timeout-ms", "-5"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--timeout", "0"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--timeout", "nan"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--timeout", "inf"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-retry-wait", "nan"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-retry-wait", "inf"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-retry-wait", "-inf"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-attempts", "0"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-errors", "lots"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--max-errors", "150%"],
        ["eval", "{bench}", "--agent", "builtin/naive", "--concurrency", "0"],
    ],
)
def test_bad_numbers_are_refused_before_any_file(
    command: list[str], bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = Path(__file__).resolve().parent.parent / "examples" / "mining_supervisor.json"
    out = tmp_path / "out"
    args = [a.format(spec=spec, out=out, bench=bench) for a in command]
    if args[0] in ("build", "eval"):
        args += ["--out", str(out)]
    line = one_line(run_cli(capsys, *args))
    assert command[-2] in line  # the option at fault is named
    assert not out.exists()


def broken_groups(tmp_path: Path, bench: Path, kind: str) -> Path:
    """The benchmark's groups and a group of the examples that reads (schema, names) but
    cannot be played: its spec fails the structure checks (an operand in USD in a sum of
    AUD), or the rendering it stores is not one."""
    example = Path(__file__).resolve().parent.parent / "examples" / "groups"
    group = json.loads((example / "mining_supervisor.group.json").read_text(encoding="utf-8"))
    if kind == "structure":
        for fact in group["spec"]["facts"]:
            if fact["key"] == "field_allowance":
                fact["unit"] = "USD"
    else:
        group["rendered"] = {"task_text": 5}
    path = tmp_path / "groups.jsonl"
    lines = (bench / "groups.jsonl").read_text(encoding="utf-8")
    path.write_text(lines + json.dumps(group) + "\n", encoding="utf-8")
    return path


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("kind", ["structure", "rendering"])
def test_a_group_that_cannot_be_played_is_refused_before_any_file(
    kind: str,
    workers: str,
    bench: Path,
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every group of the input is checked before the run folder is touched: a new one is not
    made, and one holding earlier results (resumed with --force, which would rewrite its
    run.json and set samples aside, or with --restart, which would set them all aside) is
    left as it was. With two workers, each checks its group (a new folder, or --restart)."""
    groups = broken_groups(tmp_path, bench, kind)
    out = tmp_path / "run"
    args = ["eval", str(groups), "--agent", "builtin/naive", "--no-progress", "--workers", workers]
    refused = run_cli(capsys, *args, "--out", str(out))
    assert not out.exists()
    said = one_line(refused)
    assert "group mining_supervisor: " in said
    assert ("field_allowance [USD]" if kind == "structure" else "rendered") in said
    earlier = tmp_path / "earlier"
    shutil.copytree(run, earlier)
    before = files_of(earlier)
    for flag in ("--force", "--restart"):
        again = run_cli(capsys, *args, "--out", str(earlier), flag)
        assert files_of(earlier) == before
        assert one_line(again) == said


def test_an_unrelated_folder_is_not_taken_as_out(
    bench: Path, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "thesis.tex").write_text("my thesis")
    for command in (
        ["eval", str(bench), "--agent", "builtin/naive", "--out", str(papers), "--no-progress"],
        ["build", "--groups", "1", "--out", str(papers), "--workers", "1"],
        ["demo", "--out", str(papers), "--groups", "1", "--no-progress"],
        ["report", str(run), "--out", str(papers), "--no-figures"],
        ["leaderboard", str(run), "--out", str(papers)],
    ):
        assert "thesis.tex" in one_line(run_cli(capsys, *command))
    assert sorted(p.name for p in papers.iterdir()) == ["thesis.tex"]
    assert not (papers / SAMPLES_FILE).exists()


def test_a_run_folder_is_not_taken_as_a_report_leaderboard_or_demo_folder(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report written into a run folder would stop that run from resuming (its folder would
    hold files that are not a run's), and a demo would mix a second run into it."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    for command in (
        ["report", str(run), "--out", str(copy), "--no-figures"],
        ["leaderboard", str(run), "--out", str(copy)],
        ["demo", "--out", str(copy), "--groups", "1", "--no-progress"],
    ):
        line = one_line(run_cli(capsys, *command))
        assert "is not a" in line and (SAMPLES_FILE in line or RUN_FILE in line), line
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
    # their own folders are theirs to write again
    report = tmp_path / "report"
    for _ in range(2):
        result = run_cli(capsys, "report", str(run), "--out", str(report), "--no-figures")
        assert result.code == 0, result.err
        board = run_cli(capsys, "leaderboard", str(run), "--out", str(tmp_path / "board"))
        assert board.code == 0, board.err


@pytest.mark.parametrize("fmt", [["--format", "md"], ["--format", "plain"], ["--json"]])
def test_a_reader_that_goes_away_is_exit_141_and_no_message(bench: Path, fmt: list[str]) -> None:
    """`uncobench verify bench/ | head -1`: the closed pipe is neither "a check refuted" (1)
    nor a traceback; the shell's own code for a program ended by SIGPIPE. (Rich's console
    and click.echo each met it their own way: SystemExit(1) and an EPIPE error.)"""
    command = [sys.executable, "-c", "from uncobench_z3.cli import main; main()"]
    process = subprocess.Popen(
        [*command, "verify", str(bench), *fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first line is written
    err = process.stderr.read().decode()
    assert process.wait(timeout=300) == 141, err
    assert err.strip() == ""


def test_non_utf8_bytes_in_a_benchmark(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bench"
    shutil.copytree(bench, bad)
    with (bad / "groups.jsonl").open("ab") as handle:
        handle.write(b"\xff\xfe\n")
    for command in (
        ["eval", str(bad), "--agent", "builtin/naive", "--out", str(tmp_path / "r")],
        ["verify", str(bad)],
        ["stats", str(bad)],
        ["audit", "sample", str(bad), "--out", str(tmp_path / "a.jsonl")],
    ):
        line = one_line(run_cli(capsys, *command))
        assert "groups.jsonl:2" in line and "not UTF-8" in line


def test_stats_of_a_benchmark_with_no_build_statistics_is_one_line(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Groups written as a benchmark folder by the Python API (as the fixture's) have a
    manifest but no build statistics: a clear line, not an internal error."""
    for fmt in ([], ["--json"]):
        line = one_line(run_cli(capsys, "stats", str(bench), *fmt))
        assert "no build statistics" in line and "uncobench build" in line
    assert "does not exist" in one_line(run_cli(capsys, "stats", str(tmp_path / "missing")))
    loose = tmp_path / "loose"  # groups without a manifest: no advice to name another path
    loose.mkdir()
    shutil.copy(bench / "groups.jsonl", loose / "groups.jsonl")
    line = one_line(run_cli(capsys, "stats", str(loose)))
    assert "no manifest.json" in line and "name the file" not in line
