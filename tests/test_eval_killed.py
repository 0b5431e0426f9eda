"""An evaluation killed at any moment while it tidies its log loses no kept sample: the rerun
reuses every one; the temporary files killed writes leave go at the next run. Ctrl-C
(SIGINT) is exit 130 with the README's one line, and the same command resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import INTERRUPTIBLE, run_cli
from tests.kill_helpers import run_killed
from uncobench_z3._outdir import HOLDER_FILE
from uncobench_z3.cli._app import EXIT_INTERRUPTED, INTERRUPTED_MESSAGE
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    RUN_FILE,
    SAMPLES_FILE,
    evaluate,
    example_benchmark,
    make_config,
)
from uncobench_z3.models.testing import Fault, FaultServer
from uncobench_z3.report import load_report_data
from uncobench_z3.settings import TaskGroup

AGENTS = ["builtin/naive", "builtin/careful"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("killed-eval") / "bench", groups=2)


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, groups: list[TaskGroup]) -> Path:
    out = tmp_path_factory.mktemp("finished") / "run"
    evaluate(groups, make_config("bench", groups, AGENTS, limit=1), out)
    return out


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def keys_of(lines: list[str]) -> list[str]:
    return [json.loads(line)["key"] for line in lines]


def with_a_duplicate(finished: Path, out: Path) -> Path:
    shutil.copytree(finished, out)
    log = out / SAMPLES_FILE
    lines = lines_of(log)
    log.write_text("\n".join([*lines, lines[4]]) + "\n", encoding="utf-8")
    return out


def test_a_kill_while_a_duplicate_line_leaves_the_log_loses_no_sample(
    groups: list[TaskGroup], finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config("bench", groups, AGENTS, limit=1)
    held = lines_of(finished / SAMPLES_FILE)
    step = 0
    while True:
        step += 1
        out = with_a_duplicate(finished, tmp_path / f"killed-{step}")
        if not run_killed(monkeypatch, step, evaluate, groups, config, out):
            break
        summary = evaluate(groups, config, out)
        assert (summary.ran, summary.reused) == (0, len(held)), f"killed after step {step}"
        assert sorted(lines_of(out / SAMPLES_FILE)) == sorted(held)
    assert step > 3


def test_a_kill_while_force_sets_samples_aside_loses_no_kept_sample(
    groups: list[TaskGroup], finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    narrower = make_config("bench", groups, ["builtin/careful"], limit=1)
    held = lines_of(finished / SAMPLES_FILE)
    careful = [line for line in held if json.loads(line)["agent"] == "builtin/careful"]
    step = 0
    while True:
        step += 1
        out = tmp_path / f"killed-{step}"
        shutil.copytree(finished, out)
        if not run_killed(monkeypatch, step, evaluate, groups, narrower, out, force=True):
            break
        summary = evaluate(groups, narrower, out, force=True)
        assert (summary.ran, summary.reused) == (0, len(careful)), f"killed after step {step}"
        copies = sorted(out.glob("samples.discarded-*.jsonl"))
        assert copies and all(lines_of(copy) == held for copy in copies)
    assert step > 3


def test_a_kill_while_restart_sets_the_log_aside_loses_no_line(
    groups: list[TaskGroup], finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config("bench", groups, AGENTS, limit=1)
    held = lines_of(finished / SAMPLES_FILE)
    for step in (1, 2, 3):
        out = tmp_path / f"killed-{step}"
        shutil.copytree(finished, out)
        assert run_killed(monkeypatch, step, evaluate, groups, config, out, restart=True)
        kept = [out / SAMPLES_FILE, *out.glob("samples.discarded-*.jsonl")]
        assert any(path.exists() and lines_of(path) == held for path in kept)


def test_a_duplicate_line_is_called_one_and_counted_once(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    base = ["eval", str(bench), "--agent", "builtin/naive", "--out", str(out), "--limit", "1"]
    assert run_cli(capsys, *base, "--no-progress").code == 0
    log = out / SAMPLES_FILE
    lines = lines_of(log)
    log.write_text("\n".join([*lines, lines[2]]) + "\n", encoding="utf-8")
    run = load_report_data(out).runs[0]
    assert (run.samples, run.planned) == (len(lines), len(lines))  # the Runs table's "5/5"
    again = run_cli(capsys, *base, "--no-progress")
    said = " ".join(again.err.split())
    assert again.code == 0 and "1 duplicate line(s)" in said
    assert "configuration" not in said
    assert sorted(keys_of(lines_of(log))) == sorted(keys_of(lines))


def test_a_rerun_removes_the_temporary_files_killed_writes_left_and_nothing_else(
    groups: list[TaskGroup], finished: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    ours = [
        ".run.json.abcd1234.tmp",
        ".samples.jsonl.q_w2e3r4.tmp",
        f".{HOLDER_FILE}.zz9y8x7w.tmp",
        ".samples.discarded-3.jsonl.a1b2c3d4.tmp",
        ".samples.torn-1.txt.a1b2c3d4.tmp",
    ]
    theirs = [".run.json.tmp", "run.json.abcd1234.tmp", ".notes.md.abcd1234.tmp", "notes.md"]
    for name in ours + theirs:
        (out / name).write_text("x")
    before = sorted(path.name for path in out.iterdir() if path.name not in ours)
    summary = evaluate(groups, make_config("bench", groups, AGENTS, limit=1), out)
    assert summary.ran == 0
    assert sorted(path.name for path in out.iterdir()) == before
    assert (out / RUN_FILE).exists()


def test_ctrl_c_is_exit_130_with_the_readmes_line_and_the_same_command_resumes(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real SIGINT to a running ``uncobench eval``: the model agent's calls hang (so the run
    is surely still running) while the built-in agent's samples are logged."""
    out = tmp_path / "run"
    model = "openai-api/fault/m,cache=false"
    args = ["eval", str(bench), "--agent", "builtin/naive", "--agent", model,
            "--out", str(out), "--no-progress"]  # fmt: skip
    hanging = True

    def script(number: int, body: dict[str, Any]) -> Fault:
        return Fault("hang", seconds=120) if hanging else Fault()

    with FaultServer(script) as server:
        env = {**os.environ, "FAULT_BASE_URL": server.base_url}
        command = INTERRUPTIBLE + "from uncobench_z3.cli import main; main()"
        process = subprocess.Popen(
            [sys.executable, "-c", command, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120  # (only a bound on a test gone wrong)
            log = out / SAMPLES_FILE
            while time.monotonic() < deadline and not (
                server.requests and log.exists() and lines_of(log)
            ):
                assert process.poll() is None, process.communicate()
                time.sleep(0.02)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == EXIT_INTERRUPTED, err
        assert err.splitlines() == [INTERRUPTED_MESSAGE]
        kept_lines = lines_of(log)
        kept = keys_of(kept_lines)
        # the loop above waited for a logged sample; the model agent's calls all hang, so
        # every sample kept is builtin/naive's (nine at most: one group has no Mixed)
        assert kept and {json.loads(line)["agent"] for line in kept_lines} == {"builtin/naive"}
        hanging = False
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        again = run_cli(capsys, *args)
    assert again.code == 0, again.err
    said = " ".join(again.out.split())
    assert f"{18 - len(kept)} sample(s) run, {len(kept)} reused from an earlier run" in said
    assert set(kept) < set(keys_of(lines_of(log)))
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"`{INTERRUPTED_MESSAGE}`" in " ".join(readme.split())  # the line the README shows
