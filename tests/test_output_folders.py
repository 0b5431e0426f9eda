"""Output folders: one lock per folder whatever the writer, taken before any work and the
folder checked again under it; nothing left behind by a refused writer; a report replaced
in part is marked; ``verify --emit-smt2`` writes only into its own folder, only when every
input was read."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3._outdir import HOLDER_FILE, LOCK_FILE, lock_output
from uncobench_z3.errors import ConfigError, InputError
from uncobench_z3.evaluation import example_benchmark
from uncobench_z3.report import _build, _leaderboard

from .cli_helpers import one_line, reliable_run, run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mining_supervisor.json"


def assert_locked(folder: Path) -> None:
    """The folder's lock is held (by this process, through another descriptor)."""
    with pytest.raises(InputError, match="in use by pid"), lock_output(folder, "probe"):
        pass


def probing(folder: Path, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, checking first that ``folder`` is locked: the writer's work happens under
    its lock, not only the writing."""

    def probe(*args: Any, **kwargs: Any) -> Any:
        assert_locked(folder)
        return real(*args, **kwargs)

    return probe


@pytest.mark.parametrize("holder", ["eval", "build", "judge", "demo"])
@pytest.mark.parametrize("command", ["report", "leaderboard"])
def test_a_writer_of_any_kind_keeps_a_report_or_leaderboard_out(
    report_runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    holder: str,
    command: str,
) -> None:
    out = tmp_path / "out"
    with lock_output(out, holder):
        result = run_cli(capsys, command, str(report_runs / "first"), "--out", str(out),
                         "--no-figures" if command == "report" else "--format=plain")  # fmt: skip
        assert result.code == 2
        assert result.err.count("\n") == 1  # one line
        assert "in use by pid" in result.err and "one writer per folder" in result.err
        assert {p.name for p in out.iterdir()} == {LOCK_FILE, LOCK_FILE + ".json"}


def test_eval_and_report_exclude_each_other(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit's mix: a report and an eval in one folder, both exiting 0."""
    bench = report_runs.parent / "bench"
    out = tmp_path / "X"
    with lock_output(out, "report"):
        result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out",
                         str(out), "--no-progress")  # fmt: skip
        assert result.code == 2 and "in use by pid" in result.err
    assert not out.exists()  # neither wrote anything
    with lock_output(out, "eval"):
        result = run_cli(capsys, "report", str(report_runs / "first"), "--out", str(out))
        assert result.code == 2 and "in use by pid" in result.err


def test_report_and_leaderboard_compute_under_the_lock(
    report_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock is taken before the seconds of computing, not only around the writing: a
    second writer arriving meanwhile is refused, not left to overwrite the first."""
    report, board = tmp_path / "report", tmp_path / "board"
    monkeypatch.setattr(_build, "open_report_data", probing(report, _build.open_report_data))
    monkeypatch.setattr(_build, "metrics_document", probing(report, _build.metrics_document))
    _build.write_report(report_runs / "first", report, figures=False)
    monkeypatch.setattr(
        _leaderboard, "build_leaderboard", probing(board, _leaderboard.build_leaderboard)
    )
    from uncobench_z3.stats import BootstrapConfig

    _leaderboard.rank_into_folder([report_runs / "first"], BootstrapConfig(samples=50), board)
    assert (report / "report.md").is_file() and (board / "leaderboard.md").is_file()


def test_eval_works_under_the_lock(
    report_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uncobench_z3.evaluation import _runner

    out = tmp_path / "run"
    monkeypatch.setattr(_runner, "plan_jobs", probing(out, _runner.plan_jobs))
    from uncobench_z3.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["eval", str(report_runs.parent / "bench"), "--agent", "builtin/naive", "--out",
              str(out), "--no-progress", "--setting", "reliable", "--limit", "1"])  # fmt: skip
    assert stopped.value.code == 0


def test_the_folder_is_checked_again_under_the_lock(tmp_path: Path) -> None:
    """Between the first look and the lock another writer may have filled the folder: the
    second look, under the lock, refuses it, and what this writer created goes."""
    looks = []

    def check() -> None:
        looks.append(1)
        if len(looks) == 2:
            raise ConfigError("out is not a report folder (it holds run.json)")

    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=r"run\.json"), lock_output(out, "report", check=check):
        pass
    assert len(looks) == 2 and not out.exists()
    (tmp_path / "mine").mkdir()
    looks.clear()
    with pytest.raises(ConfigError), lock_output(tmp_path / "mine", "report", check=check):
        pass
    assert list((tmp_path / "mine").iterdir()) == []  # the lock file it made went too


def test_a_refused_judge_leaves_no_lock_file(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    result = run_cli(capsys, "judge", str(report_runs / "first"), "--bench",
                     str(report_runs.parent / "bench"), "--judge-model", "mock/echo",
                     "--out", str(notes))  # fmt: skip
    assert result.code == 2 and "not a judgement line" in result.err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert notes.read_text() == "my notes\n"


@pytest.mark.parametrize("command", ["report", "leaderboard"])
def test_a_file_as_out_is_named_once(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = tmp_path / "FILE"
    target.write_text("x")
    result = run_cli(capsys, command, str(report_runs / "first"), "--out", str(target))
    assert result.code == 2
    assert (
        f"is a file, not a {command} folder\n" in result.err and "folder folder" not in result.err
    )


def test_import_inspect_refuses_a_folder_that_is_not_a_folder_of_runs(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai")
    log = tmp_path / "some.eval"
    log.write_text("not read: the folder is refused first")
    for folder in (report_runs / "first", report_runs.parent / "bench", tmp_path / "papers"):
        if folder.name == "papers":
            folder.mkdir()
            (folder / "thesis.tex").write_text("mine")
        before = sorted(p.name for p in folder.iterdir())
        result = run_cli(capsys, "import-inspect", str(log), "--out", str(folder))
        assert result.code == 2 and "is not a folder of runs" in result.err, result.err
        assert sorted(p.name for p in folder.iterdir()) == before  # no lock file either
    result = run_cli(capsys, "import-inspect", str(log), "--out", str(tmp_path / "new"))
    assert result.code == 2 and not (tmp_path / "new").exists()  # a bad log: nothing made


# -- a report replaced in part ----------------------------------------------------------------


def test_an_interrupted_report_is_marked_refused_by_view_and_replaced(
    report_runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "report"
    result = run_cli(capsys, "report", str(report_runs / "first"), "--out", str(out),
                     "--no-figures", "--title", "FIRST")  # fmt: skip
    assert result.code == 0 and not (out / _build.INCOMPLETE_FILE).exists()
    real = _build.write_text_atomic

    def killed_before_the_pages(path: Path, text: str) -> None:
        if path.name == _build.MARKDOWN_FILE:  # metrics.json of the new run is written
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(_build, "write_text_atomic", killed_before_the_pages)
    with pytest.raises(KeyboardInterrupt):
        _build.write_report(report_runs / "arms", out, title="SECOND", figures=False)
    monkeypatch.undo()
    # the mix the audit found: the new metrics beside the old pages, and it says so
    assert "FIRST" in (out / "report.md").read_text()
    assert "incomplete" in (out / _build.INCOMPLETE_FILE).read_text()
    result = run_cli(capsys, "view", str(out), "--no-browser")
    assert result.code == 2 and "incomplete report" in result.err
    result = run_cli(capsys, "report", str(report_runs / "arms"), "--out", str(out),
                     "--no-figures", "--title", "SECOND")  # fmt: skip
    assert result.code == 0 and "held an incomplete report" in result.out
    assert not (out / _build.INCOMPLETE_FILE).exists()
    assert "SECOND" in (out / "report.md").read_text()


# -- verify --emit-smt2 -----------------------------------------------------------------------


def test_emit_smt2_never_writes_over_someone_elses_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "d" / "mining_supervisor" / "gold.smt2"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n")
    result = run_cli(capsys, "verify", str(EXAMPLE), "--emit-smt2", str(tmp_path / "d"))
    assert result.code == 2 and "not a certificate folder" in result.err
    assert "--emit-smt2" in result.err
    assert mine.read_text() == "mine\n"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["mining_supervisor"]


def test_emit_smt2_writes_nothing_when_an_input_is_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"bad": 1}')
    out = tmp_path / "o"
    result = run_cli(capsys, "verify", str(EXAMPLE), str(bad), "--emit-smt2", str(out))
    assert result.code == 2 and "no certificate written" in result.out
    assert not out.exists()


def test_emit_smt2_writes_again_into_its_own_folder_under_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    for _ in range(2):  # the second time: a folder verify made (its marker)
        result = run_cli(capsys, "verify", str(EXAMPLE), "--emit-smt2", str(out))
        assert result.code == 0 and "certificate file(s) written" in result.out
    assert (out / "smt2.json").is_file() and (out / "mining_supervisor" / "gold.smt2").is_file()
    with lock_output(out, "eval"):
        result = run_cli(capsys, "verify", str(EXAMPLE), "--emit-smt2", str(out))
        assert result.code == 2 and "in use by pid" in result.err


# -- demo ------------------------------------------------------------------------------------


@pytest.mark.parametrize("force", [True, False])
def test_demo_refuses_user_files_in_bench_before_writing_its_marker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    out = tmp_path / "dm"
    (out / "bench").mkdir(parents=True)
    (out / "bench" / "notes.txt").write_text("mine")
    result = run_cli(capsys, "demo", "--out", str(out), "--no-progress",
                     *(["--force"] if force else []))  # fmt: skip
    assert result.code == 2 and "holds notes.txt" in result.err
    assert "holds a benchmark" not in result.err
    assert sorted(p.name for p in out.iterdir()) == ["bench"]  # no demo.json, no lock


def test_a_lock_on_a_lock_file_removed_meanwhile_is_refused(tmp_path: Path) -> None:
    # a failed writer removes the lock file it made; a contender that had opened it just
    # before holds a lock on a removed file: a third writer could lock a new one beside it
    out = tmp_path / "out"
    out.mkdir()
    lock = lock_output(out, "report")
    real_acquire = lock._lock.acquire

    def acquire_then_lose_the_file(*args: Any, **kwargs: Any) -> Any:
        taken = real_acquire(*args, **kwargs)
        (out / LOCK_FILE).unlink()
        (out / LOCK_FILE).write_text("")  # the third writer's new lock file
        return taken

    lock._lock.acquire = acquire_then_lose_the_file  # type: ignore[method-assign]
    with pytest.raises(InputError, match="changed hands"), lock:
        pass
    assert not lock._lock.is_locked
    with lock_output(out, "report"):  # the folder is free again
        pass


# -- perturb --out ----------------------------------------------------------------------------


def test_perturb_writes_no_group_file_into_a_folder_the_package_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``perturb --out bench/groups.jsonl`` replaced a built benchmark's groups (which its
    manifest then refused); a group file is refused in a benchmark, a run or a report folder
    (one line, before any work, nothing changed), and copied without its lock file too. Any
    other file is replaced as before."""
    bench = example_benchmark(tmp_path / "bench", groups=1)
    run = reliable_run(bench, tmp_path / "run")
    assert (
        run_cli(capsys, "report", str(run), "--out", str(tmp_path / "rep"), "--no-plots").code == 0
    )
    copied = tmp_path / "copied"
    copied.mkdir()
    for name in ("manifest.json", "groups.jsonl"):  # a benchmark copied without its lock
        (copied / name).write_bytes((bench / name).read_bytes())
    demo = tmp_path / "demo"  # a folder of another kind: its lock file says it is one
    demo.mkdir()
    (demo / "demo.json").write_text("{}\n")
    with lock_output(demo, "demo"):
        pass
    targets = [(bench / "groups.jsonl", "a benchmark"), (bench / "g.json", "a benchmark"),
               (run / "samples.jsonl", "a run"), (tmp_path / "rep" / "metrics.json", "a report"),
               (copied / "groups.jsonl", "a benchmark"),
               (demo / "g.json", "an output")]  # fmt: skip
    for out, kind in targets:
        before = {p: p.read_bytes() for p in out.parent.iterdir() if p.is_file()}
        result = run_cli(capsys, "perturb", str(EXAMPLE), "--missed", "finance", "--out", str(out))
        line = one_line(result)
        assert f"{out} is inside {out.parent}, {kind} folder" in line and "--out" in line
        assert {p: p.read_bytes() for p in out.parent.iterdir() if p.is_file()} == before
    mine = tmp_path / "mine" / "group.json"  # someone's folder: the file is replaced
    mine.parent.mkdir()
    mine.write_text("old\n")
    (mine.parent / "manifest.json").write_text("{}\n")  # (a manifest alone is not a benchmark)
    result = run_cli(capsys, "perturb", str(EXAMPLE), "--out", str(mine), "--quiet")
    assert result.code == 0, result.err
    assert json.loads(mine.read_text())["id"]


def test_a_writer_that_cannot_write_its_holder_file_names_it_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk full when a writer takes its folder: the holder file cannot be written. The
    line said ``error: No space left on device`` (the write's error names no file), and the
    folder and its lock file stayed (a writer that fails leaves nothing it created)."""
    bench = example_benchmark(tmp_path / "bench", groups=1)

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    out = tmp_path / "run"
    result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out", str(out),
                     "--no-progress")  # fmt: skip
    assert f"{out / HOLDER_FILE}: No space left on device" in one_line(result)
    assert not out.exists()
