"""Item 4 of issue 12: one writer per output folder. ``eval``, ``build`` and the LLM judge take
an exclusive lock (a lock file, and a holder file with pid, host and command); a second writer
is refused with one line naming the holder; a lock left by a killed process is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from uncobench_z3._outdir import HOLDER_FILE, LOCK_FILE, lock_output
from uncobench_z3.errors import InputError
from uncobench_z3.evaluation import SAMPLES_FILE, example_benchmark

from .cli_helpers import run_cli

HOLD = """
import sys, time
from uncobench_z3._outdir import lock_output
with lock_output(sys.argv[1], sys.argv[2]):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("locks") / "bench", groups=2)


def hold(folder: Path, kind: str = "eval") -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), kind], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    return process


def kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def eval_args(bench: Path, out: Path) -> list[str]:
    return ["eval", str(bench), "--agent", "builtin/naive", "--out", str(out), "--no-progress"]


def test_a_second_eval_is_refused_while_the_first_holds_the_folder(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    holder = hold(out)
    try:
        info = json.loads((out / HOLDER_FILE).read_text(encoding="utf-8"))
        assert info["pid"] == holder.pid and info["host"] and info["kind"] == "eval"
        result = run_cli(capsys, *eval_args(bench, out))
        assert result.code == 2 and "Traceback" not in result.err
        assert f"pid {holder.pid}" in result.err and "in use" in result.err
        assert not (out / SAMPLES_FILE).exists()
    finally:
        kill(holder)
    # the holder was killed: its lock is stale, and the next run takes it over
    again = run_cli(capsys, *eval_args(bench, out))
    assert again.code == 0, again.err
    assert "stale" in again.err and str(holder.pid) in again.err
    assert not (out / HOLDER_FILE).exists()  # released cleanly this time


def test_build_is_refused_while_another_build_holds_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    holder = hold(out, "build")
    try:
        result = run_cli(capsys, "build", "--groups", "1", "--out", str(out), "--workers", "1")
        assert result.code == 2 and f"pid {holder.pid}" in result.err
        assert not (out / "manifest.json").exists()
    finally:
        kill(holder)


def test_two_evals_started_together_never_duplicate_a_sample(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [str(Path(sys.executable).parent / "uncobench"), *eval_args(bench, out)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = [(p.wait(timeout=120), p.communicate()[1]) for p in (first, second)]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    if codes == [0, 2]:
        assert any("in use" in err for code, err in results if code == 2)
    keys = [json.loads(line)["key"] for line in (out / SAMPLES_FILE).read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 9  # 5 + 4 settings of one agent


def test_the_lock_is_released_and_reentry_in_one_process_is_refused(tmp_path: Path) -> None:
    with lock_output(tmp_path / "x", "eval") as held:
        assert (tmp_path / "x" / LOCK_FILE).exists() and held.stale is None
        with pytest.raises(InputError, match="in use"), lock_output(tmp_path / "x", "eval"):
            pass
    with lock_output(tmp_path / "x", "eval"):
        pass


def test_a_lock_whose_holder_file_names_a_live_pid_elsewhere_is_still_stale_if_free(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / HOLDER_FILE).write_text(
        json.dumps(
            {
                "pid": 1,
                "host": "elsewhere",
                "kind": "eval",
                "command": "x",
                "started": "2020-01-01T00:00:00Z",
            }
        )
    )
    with lock_output(folder, "eval") as held:  # non-blocking: a held lock would raise
        assert held.stale is not None and held.stale["host"] == "elsewhere"


@pytest.mark.parametrize("length", [120, 121])
def test_a_long_holder_command_is_cut_and_said_to_be(tmp_path: Path, length: int) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    command = ("uncobench eval big --agent builtin/naive " * 5)[:length]
    holder = {"pid": 1, "host": "h", "kind": "eval", "command": command, "started": "2020"}
    (folder / HOLDER_FILE).write_text(json.dumps(holder))
    with lock_output(folder, "eval") as held:
        note = held.stale_note()
    assert note is not None
    shown = command if length <= 120 else command[:120] + " ..."
    assert f"({shown}) ended without releasing it" in note
