"""``uncobench leaderboard`` and ``uncobench view``, and one-line errors for unreadable runs
from ``report``, ``leaderboard`` and ``view``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3._outdir import HOLDER_FILE, LOCK_FILE, lock_output
from uncobench_z3.errors import ConfigError, InputError
from uncobench_z3.evaluation import PolicyKeeping
from uncobench_z3.report import (
    LEADERBOARD_FILES,
    build_leaderboard,
    intervention_panels,
    load_report_data,
    open_report_data,
    rank_rows,
    serve_report,
    write_leaderboard,
    write_report,
)
from uncobench_z3.report._tables import wrong_examples
from uncobench_z3.settings import SETTING_NAMES

from .cli_helpers import INTERRUPTIBLE, run_cli
from .report_runs import AGENTS, EVIL_AGENT


@pytest.fixture(scope="module")
def board_dir(report_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board")
    write_leaderboard(build_leaderboard([report_runs / "first", report_runs / "arms"]), out)
    return out


def test_the_leaderboard_ranks_agents_over_settings_every_agent_has(
    report_runs: Path, board_dir: Path
) -> None:
    board = json.loads((board_dir / "leaderboard.json").read_text())
    assert board["schema"] == "uncobench-leaderboard" and board["runs"]
    assert [row["agent"] for row in board["rows"]] == ["builtin/careful", "builtin/naive",
                                                       EVIL_AGENT]  # fmt: skip
    assert [row["rank"] for row in board["rows"]] == [1, 2, 3]
    assert board["settings"] == board["overall_settings"] == [
        "reliable", "misaligned", "incomplete", "missed", "mixed"]  # fmt: skip
    careful, naive, evil = board["rows"]
    assert careful["accuracy"] == "1" and evil["accuracy"] == "0"
    # overall: the mean over groups of each group's share of correct samples (plain arm)
    samples = [s for s in load_report_data(report_runs).samples
               if s.agent == "builtin/naive" and s.intervention == "none"]  # fmt: skip
    groups = {s.group_id for s in samples}
    shares = [Fraction(sum(s.correct for s in samples if s.group_id == g),
                       sum(s.group_id == g for s in samples)) for g in groups]  # fmt: skip
    assert Fraction(naive["accuracy"]) == sum(shares, Fraction(0)) / len(shares)
    low, high = (Fraction(x) for x in naive["accuracy_ci"])
    assert low <= Fraction(naive["accuracy"]) <= high
    assert naive["settings"]["misaligned"]["n_groups"] == 2


def test_the_leaderboard_files_carry_the_same_table(board_dir: Path) -> None:
    markdown = (board_dir / "leaderboard.md").read_text()
    page = (board_dir / "leaderboard.html").read_text()
    for name in AGENTS:
        assert name.replace("<", "&lt;").replace(">", "&gt;") in markdown
    assert "evil/&lt;img src=x onerror=alert(2)&gt;" in page and "<img" not in page
    assert "<script" not in page and "http:" not in page and "https:" not in page


def test_the_leaderboard_refuses_runs_of_different_benchmarks(
    report_runs: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(report_runs / "first", other)
    meta = json.loads((other / "run.json").read_text())
    meta["config"]["benchmark_hash"] = "f" * 64
    (other / "run.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="different benchmarks"):
        build_leaderboard([report_runs / "first", other])


def _copied_groups(source: Path, target: Path, copies: int, reverse: bool) -> Path:
    """``source``'s run with its samples copied to ``copies`` groups of their own, copy ``n``
    of a group in the first ``1 + n % 5`` settings (so that groups differ), the log's lines in
    reverse order when ``reverse`` (as workers or a resumption may write them)."""
    shutil.copytree(source, target)
    lines = []
    for line in (source / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        for n in range(copies):
            if SETTING_NAMES.index(record["setting"]) > n % 5:
                continue
            lines.append(json.dumps({**record, "key": f"{record['key']}-{n}",
                                     "group_id": f"{record['group_id']}-{n}"}))  # fmt: skip
    (target / "samples.jsonl").write_text("\n".join(lines[::-1] if reverse else lines) + "\n")
    return target


def test_the_leaderboard_does_not_depend_on_the_order_of_the_log(
    report_runs: Path, tmp_path: Path
) -> None:
    ordered = _copied_groups(report_runs / "first", tmp_path / "ordered", 12, reverse=False)
    reversed_ = _copied_groups(report_runs / "first", tmp_path / "reversed", 12, reverse=True)
    assert build_leaderboard([ordered]).rows == build_leaderboard([reversed_]).rows


def test_one_trial_under_two_keys_is_refused_naming_what_can_differ(
    report_runs: Path, tmp_path: Path
) -> None:
    """A run of an earlier version beside one of this version: the same trial under another
    key (the key holds the follow-up reader's rules, the record does not). The message said
    only --missed-wait or --followup-reader, which such runs never used."""
    earlier = tmp_path / "runs" / "earlier"
    shutil.copytree(report_runs / "first", earlier)
    log = earlier / "samples.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        line["key"] = line["key"][::-1]  # another key for the same trial
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    shutil.copytree(report_runs / "first", tmp_path / "runs" / "now")
    with pytest.raises(ConfigError, match="follow-up reader rules differ") as raised:
        build_leaderboard([tmp_path / "runs"])
    assert "\n" not in str(raised.value)


def test_equal_figures_share_a_rank_and_no_figure_comes_last() -> None:
    half, third = Fraction(1, 2), Fraction(1, 3)
    rows: list[dict[str, Any]] = [
        {"agent": agent, "accuracy": accuracy, "justified_accuracy": justified}
        for agent, accuracy, justified in [
            ("none", None, None),
            ("zero", Fraction(0), Fraction(0)),
            ("b", half, third),
            ("a", half, third),
            ("c", half, Fraction(1, 4)),
            ("top", Fraction(1), third),
        ]
    ]
    rank_rows(rows)
    assert [(row["rank"], row["agent"]) for row in rows] == [
        (1, "top"), (2, "a"), (2, "b"), (4, "c"), (5, "zero"), (6, "none"),
    ]  # fmt: skip


def test_leaderboard_command(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "leaderboard", str(report_runs / "first"), str(report_runs / "arms"),
                     "--out", str(tmp_path / "board"), "--format", "plain")  # fmt: skip
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert any(line.startswith("1") and "builtin/careful" in line for line in lines)
    written = {p.name for p in (tmp_path / "board").iterdir()}
    # and the lock of its one writer (the holder's note goes when the lock is released)
    assert written == {*LEADERBOARD_FILES, LOCK_FILE}
    as_json = run_cli(capsys, "leaderboard", str(report_runs), "--out", str(tmp_path / "b2"),
                      "--json")  # fmt: skip
    assert json.loads(as_json.out)["rows"][0]["agent"] == "builtin/careful"


def test_report_leaderboard_and_compare_follow_linked_runs_once(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of links to runs is read through its links (they were passed over without a
    word), each run once: a second link to it, or a link back up (a loop), adds nothing."""
    picked = tmp_path / "picked"
    (picked / "deep").mkdir(parents=True)
    (picked / "first").symlink_to(report_runs / "first")
    (picked / "second").symlink_to(report_runs / "first")
    (picked / "deep" / "up").symlink_to(picked)
    (run,) = open_report_data(picked).runs
    assert run.path == picked / "first"
    board = run_cli(capsys, "leaderboard", str(picked), "--out", str(tmp_path / "b"), "--json")
    assert board.code == 0, board.err
    assert {row["agent"] for row in json.loads(board.out)["rows"]} >= {"builtin/careful"}
    report = run_cli(capsys, "report", str(picked), "--out", str(tmp_path / "r"), "--no-figures")
    assert report.code == 0, report.err
    compared = run_cli(capsys, "compare", str(picked), "--a", AGENTS[0], "--b", AGENTS[1])
    assert compared.code == 0, compared.err


def _broken_runs(report_runs: Path, root: Path) -> Path:
    broken = root / "runs" / "broken"
    broken.mkdir(parents=True)
    (broken / "run.json").write_text((report_runs / "first" / "run.json").read_text())
    (broken / "samples.jsonl").write_text('{"key": "x"}\n{"key": "y"}\n')
    return root / "runs"


def test_a_benchmark_not_found_is_noted_with_advice_the_report_can_follow(
    report_runs: Path, tmp_path: Path
) -> None:
    """report has no --bench (judge's option): its note must not send the reader to one."""
    run = tmp_path / "runs" / "moved"
    run.mkdir(parents=True)
    meta = json.loads((report_runs / "first" / "run.json").read_text())
    meta["config"]["benchmark"] = str(tmp_path / "gone")
    (run / "run.json").write_text(json.dumps(meta))
    notes = open_report_data(tmp_path / "runs").groups.notes
    assert len(notes) == 1 and "which is not found" in notes[0]
    assert "--bench" not in notes[0] and "the folder `uncobench eval` ran in" in notes[0]


@pytest.mark.parametrize("command", ["report", "leaderboard", "view"])
def test_unreadable_runs_are_one_line(
    command: str, report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _broken_runs(report_runs, tmp_path)
    extra = ["--no-browser"] if command == "view" else ["--out", str(tmp_path / "out")]
    result = run_cli(capsys, command, str(runs), *extra)
    assert result.code == 2
    assert "line 1 is not a sample record" in result.err and "samples.jsonl" in result.err
    assert "(group_id: Field required)" in result.err  # the field at fault, not a count
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert not (tmp_path / "out").exists()
    (runs / "broken" / "run.json").write_text("[1, 2")
    result = run_cli(capsys, command, str(runs), *extra)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "run.json" in result.err


@pytest.mark.parametrize("command", ["report", "view"])
def test_a_reply_the_judge_cannot_read_is_one_line(
    command: str, report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reader takes traces loosely; the validity judge validates each reply it judges, and
    a reply it cannot is one line naming the log and the sample, not an internal error."""
    broken = tmp_path / "runs" / "broken"
    broken.mkdir(parents=True)
    (broken / "run.json").write_text((report_runs / "first" / "run.json").read_text())
    record = json.loads((report_runs / "first" / "samples.jsonl").read_text().splitlines()[0])
    reply = next(r for round_ in record["trace"] for r in round_["replies"] if r["stated"])
    reply["stated"][0]["candidate"] = 1
    (broken / "samples.jsonl").write_text(json.dumps(record) + "\n")
    extra = ["--no-browser"] if command == "view" else ["--out", str(tmp_path / "out")]
    result = run_cli(capsys, command, str(tmp_path / "runs"), *extra)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert f"sample {record['key']} has a trace that is not valid" in result.err
    assert "stated.0.candidate" in result.err and "samples.jsonl" in result.err
    assert not (tmp_path / "out").exists()


def test_the_server_serves_the_report_folder_only(tmp_path: Path) -> None:
    (tmp_path / "report.html").write_text("<!DOCTYPE html><p>hello</p>")
    (tmp_path / "figures").mkdir()
    with serve_report(tmp_path) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/report.html")
        with urllib.request.urlopen(server.url, timeout=10) as response:
            assert b"hello" in response.read()
            assert response.headers["Cache-Control"] == "no-store"
        with pytest.raises(urllib.error.HTTPError) as listing:
            urllib.request.urlopen(server.url.rsplit("/", 1)[0] + "/figures/", timeout=10)
        assert listing.value.code == 404
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url.rsplit("/", 1)[0] + "/../../etc/passwd", timeout=10)


def test_the_server_serves_no_other_file_of_the_folder_and_only_to_this_machine(
    tmp_path: Path,
) -> None:
    """A folder served as it is can hold files that are not the report's, or a figure that
    is a symbolic link out of it; a request for another host name (DNS rebinding: a web page
    whose name now resolves to 127.0.0.1) is refused."""
    (tmp_path / "report.html").write_text("<!DOCTYPE html><p>hello</p>")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "mixed.svg").write_text("<svg/>")
    (tmp_path / "notes.txt").write_text("private")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("private")
    (tmp_path / "figures" / "leak.png").symlink_to(outside)

    def status(url: str, host: str | None = None) -> int:
        request = urllib.request.Request(url, headers={"Host": host} if host else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    with serve_report(tmp_path) as server:
        root = server.url.rsplit("/", 1)[0]
        port = root.rsplit(":", 1)[1]
        assert status(server.url) == 200 and status(root + "/figures/mixed.svg") == 200
        assert status(server.url, f"localhost:{port}") == 200
        assert status(root + "/notes.txt") == 404
        assert status(root + "/figures/leak.png") == 404
        assert status(server.url, f"attacker.example:{port}") == 403


def test_view_is_ready_to_clean_up_before_it_prints_the_url(
    report_runs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Ctrl-C as the URL is printed (a script that stops the server once it has read it)
    removes the report written, and a `kill` then is handled too: both are in place before
    the URL is. (They were set after it, and on a loaded machine the test above, which
    stops the server once it has read a page, found the report left behind.)"""
    from uncobench_z3.cli import _report

    monkeypatch.setattr(_report.tempfile, "tempdir", str(tmp_path))
    handled: list[bool] = []
    said = _report.Output.say

    def interrupted_at_the_url(self: object, message: str, *args: object, **kwargs: object) -> None:
        said(self, message, *args, **kwargs)  # type: ignore[arg-type]
        if message.startswith("report at "):
            handled.append(signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None))
            raise KeyboardInterrupt

    monkeypatch.setattr(_report.Output, "say", interrupted_at_the_url)
    result = run_cli(capsys, "view", str(report_runs / "arms"), "--no-browser")
    assert result.code == 0, result.err
    assert "stopped" in result.out
    assert handled == [True]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("uncobench-view-")]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_view_writes_the_report_serves_it_and_prints_the_url(
    report_runs: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    """... and removes the report it wrote when it is stopped, by Ctrl-C or by `kill`."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "COLUMNS": "200", "TMPDIR": str(temporary)}
    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTIBLE + "from uncobench_z3.cli import main; main()", "view",
         str(report_runs / "arms"),
         "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = ""
        for _ in range(4):
            line = process.stdout.readline()
            if "http://127.0.0.1:" in line:
                url = line.split("report at ", 1)[1].split()[0]
                break
        assert url, process.stderr.read() if process.stderr else ""
        with urllib.request.urlopen(url, timeout=10) as response:
            page = response.read().decode()
        assert '<section id="traces">' in page
        assert any(temporary.iterdir())  # the report being served
    finally:
        process.send_signal(stop)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert not [p for p in temporary.iterdir() if p.name.startswith("uncobench-view-")]


def test_a_second_writer_of_a_report_or_leaderboard_is_refused(
    report_runs: Path, tmp_path: Path
) -> None:
    """Two writers would leave one's report.html beside the other's metrics.json; the lock
    is the folder's, whatever the kind of the writer holding it (an eval, a build, ...)."""
    board = build_leaderboard([report_runs / "first"])
    for kind, write in (
        ("report", lambda out: write_report(report_runs / "first", out, figures=False)),
        ("leaderboard", lambda out: write_leaderboard(board, out)),
    ):
        for holder in (kind, "eval", "build"):
            out = tmp_path / kind
            with lock_output(out, holder), pytest.raises(InputError, match="in use by pid"):
                write(out)
            assert not out.exists()  # the holder wrote nothing: its folder went with it
        write(out)  # the lock released, the same folder is written
        assert (out / f"{kind}.md").is_file()


def test_a_report_over_two_benchmarks_says_so(
    report_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The leaderboard refuses runs of different benchmarks; the report pools them, and says
    it does (on the command line and in its Runs section)."""
    runs = tmp_path / "runs"
    shutil.copytree(report_runs / "first", runs / "first")
    shutil.copytree(report_runs / "first", runs / "other")
    meta = json.loads((runs / "other" / "run.json").read_text())
    meta["config"]["benchmark_hash"] = "f" * 64
    (runs / "other" / "run.json").write_text(json.dumps(meta))
    result = run_cli(capsys, "report", str(runs), "--out", str(tmp_path / "r"), "--no-figures")
    assert result.code == 0, result.err
    assert "the runs come from 2 different benchmarks" in " ".join(result.out.split())
    assert "from 2 different benchmarks" in (tmp_path / "r" / "report.md").read_text()
    one = run_cli(capsys, "report", str(runs / "first"), "--out", str(tmp_path / "one"),
                  "--no-figures")  # fmt: skip
    assert one.code == 0 and "different benchmarks" not in one.out


def test_a_report_without_figures_removes_an_earlier_reports_figures(
    report_runs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    write_report(report_runs / "first", out, figures=False)
    (out / "figures").mkdir()
    for name in ("accuracy.png", "accuracy.svg", "notes.txt"):  # as an earlier report left
        (out / "figures" / name).write_text("old")
    files = write_report(report_runs / "first", out, figures=False)
    assert files.figures == []
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["notes.txt"]  # not ours


def test_a_report_or_leaderboard_removes_what_killed_writers_left_and_nothing_else(
    report_runs: Path, tmp_path: Path
) -> None:
    ours = [".report.md.abcd1234.tmp", ".metrics.json.q_w2e3r4.tmp",
            ".report.incomplete.a1b2c3d4.tmp", f".{HOLDER_FILE}.zz9y8x7w.tmp"]  # fmt: skip
    theirs = ["notes.md", ".notes.md.abcd1234.tmp", ".report.md.tmp", "report.md.abcd1234.tmp"]
    out = tmp_path / "report"
    write_report(report_runs / "first", out, figures=False)
    (out / "figures").mkdir()
    for name in [*ours, *theirs]:
        (out / name).write_text("x")
    (out / "figures" / ".accuracy.png.abcd1234.tmp").write_text("x")
    write_report(report_runs / "first", out, figures=False)
    left = {p.name for p in out.iterdir()}
    assert not left & set(ours) and set(theirs) <= left
    assert list((out / "figures").iterdir()) == []
    board = tmp_path / "board"
    write_leaderboard(build_leaderboard([report_runs / "first"]), board)
    stale = [".leaderboard.md.abcd1234.tmp", f".{HOLDER_FILE}.abcd1234.tmp"]
    for name in [*stale, ".notes.md.abcd1234.tmp"]:
        (board / name).write_text("x")
    write_leaderboard(build_leaderboard([report_runs / "first"]), board)
    assert {p.name for p in board.iterdir()} & set(stale) == set()
    assert (board / ".notes.md.abcd1234.tmp").exists()


def test_samples_whose_policy_colleague_broke_its_policy_are_not_ranked_or_listed(
    report_runs: Path, tmp_path: Path
) -> None:
    """Not scored (docs/evaluation.md), so neither in the leaderboard's overall accuracy nor
    among the report's wrong answers nor as an intervention arm's scored group."""
    run = tmp_path / "broken"
    shutil.copytree(report_runs / "first", run)
    lines = []
    for line in (run / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["agent"] == "builtin/naive":
            record["colleague_policy"] = {"replies": 1, "unfaithful": 1, "incomplete": 0}
        lines.append(json.dumps(record))
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n")
    board = build_leaderboard([run])
    assert "builtin/naive" not in [row.agent for row in board.rows]
    samples = load_report_data(run).samples
    listed = wrong_examples(samples).caption
    scored_wrong = sum(not s.correct for s in samples if s.agent != "builtin/naive")
    assert listed.startswith(f"{scored_wrong} wrong answers")
    # the arms other than none scored nowhere: no arm to set beside the plain one
    pooled = load_report_data(report_runs).samples
    assert intervention_panels(pooled)
    broken_arms = [
        s.model_copy(update={"colleague_policy": PolicyKeeping(replies=1, unfaithful=1)})
        if s.intervention != "none" else s
        for s in pooled
    ]  # fmt: skip
    assert intervention_panels(broken_arms) == []
