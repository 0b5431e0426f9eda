"""Output that fits where it goes: piped output (as in CI, with a narrow ``COLUMNS``) keeps
every table row on one line, whole, with no ellipsis; ``--format md|json``; rich on a
terminal; the commands' summaries (verify, build, demo) say what the docs say."""

from __future__ import annotations

import io
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape

from tests.cli_helpers import run_cli
from uncobench_z3.cli._eval import EvalRequest, run_eval
from uncobench_z3.cli._output import (
    Column,
    Output,
    OutputTable,
    Styled,
    markdown_lines,
    plain_lines,
    rich_table,
)
from uncobench_z3.construct import MANIFEST_FILE, build_benchmark, verify_benchmark
from uncobench_z3.construct import _pipeline as pipeline
from uncobench_z3.errors import ConfigError
from uncobench_z3.solver import SolverBudget
from uncobench_z3.spec import load_json
from uncobench_z3.stats import decimal_text, percent_text

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mining_supervisor.json"
GROUPS = 4
AGENTS = ("builtin/careful", "builtin/naive")


@pytest.fixture(autouse=True)
def piped_to_a_narrow_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """What CI looks like: not a terminal, and a COLUMNS far narrower than any row."""
    monkeypatch.setenv("COLUMNS", "30")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("output") / "bench"
    build_benchmark(out, groups=GROUPS, seed=7, workers=1)
    return out


@pytest.fixture(scope="module")
def run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("output") / "run"
    run_eval(EvalRequest(str(bench), AGENTS, out))
    return out


def table_rows(text: str, title: str) -> list[list[str]]:
    """The rows of the plain table titled ``title``, split into cells (two spaces or more
    separate columns): header first, the dashes line dropped."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    assert set("".join(rows[1])) <= {"-", " "}, "the second line underlines the header"
    return [rows[0], *rows[2:]]


def assert_whole_rows(text: str, title: str, rows: int | None = None) -> list[list[str]]:
    """Every row of the table has one cell per column: nothing wrapped onto a second line."""
    assert "…" not in text
    header, *body = table_rows(text, title)
    assert all(len(row) == len(header) for row in body), (header, body)
    if rows is not None:
        assert len(body) == rows
    return body


# -- the helper itself ------------------------------------------------------------------------
def test_plain_tables_are_never_cut_or_wrapped() -> None:
    long = "a cell far longer than any terminal width " * 5
    table = OutputTable("t", [Column("name"), Column("n", "right")])
    table.add_row(long.strip(), "7")
    table.add_row("x", Styled("1234", "red"))
    title, header, dashes, first, second = plain_lines(table)
    assert title == "t" and first.startswith(long.strip()) and first.endswith("  7")
    assert second.endswith("1234") and len(second) == len(first)  # right-aligned numbers
    assert header.split() == ["name", "n"] and dashes.split() == ["----", "-"]
    assert all(line == line.rstrip() for line in (header, first, second))


def test_markdown_cells_are_escaped() -> None:
    table = OutputTable.of("scores", ["agent", "accuracy"])
    table.add_row("evil|<b>agent</b>", "50.0%")
    lines = markdown_lines(table)
    assert lines[2] == "| agent | accuracy |" and lines[3] == "|---|--:|"
    assert lines[4] == "| evil\\|&lt;b&gt;agent&lt;/b&gt; | 50.0% |"


def test_names_reach_the_terminal_as_text_never_as_escapes_or_markup() -> None:
    """An agent's name is read from a run folder (untrusted): its escape sequences (a window
    title, a cleared screen) are shown escaped, and rich markup in it (a link) stays text, in
    a cell and in a title, in every format."""
    name = "m\x1b]0;PWN\x07\x1b[2J[link=https://evil.example/]x[/link]"
    shown = "m\\x1b]0;PWN\\x07\\x1b[2J[link=https://evil.example/]x[/link]"
    table = OutputTable.of(f"{name} (A) vs b (B)", ["agent", "n"])
    table.add_row(name, Styled(name, "red"))
    title, _, _, row = plain_lines(table)
    assert title == f"{shown} (A) vs b (B)" and row.split() == [shown, shown]
    assert "\x1b" not in "".join(markdown_lines(table))
    console = Console(width=400, color_system=None, record=True, file=io.StringIO())
    console.print(rich_table(table))
    printed = console.export_text()
    assert printed.count(shown) == 3 and "\x1b" not in printed


def test_auto_is_plain_when_piped_and_rich_is_honest_about_no_color(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Output().format == "plain"
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert Output().format == "rich"
    table = OutputTable.of("t", ["verdict"])
    table.add_row(Styled("refuted", "bold red"))
    capsys.readouterr()
    Output().table(table)
    assert re.search(r"\x1b\[[0-9;]*31m", capsys.readouterr().out)  # red, on a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    Output().table(table)
    coloured = capsys.readouterr().out
    assert "refuted" in coloured and "┃" in coloured
    assert not re.search(r"\x1b\[[0-9;]*3[0-9]m", coloured)  # no foreground colour at all


# -- every command, piped ---------------------------------------------------------------------
def test_stats_tables_are_whole(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "stats", str(bench))
    assert result.code == 0
    stats = json.loads(run_cli(capsys, "stats", str(bench), "--format", "json").out)
    operations = sorted(stats["operations"])
    title = next(line for line in result.out.splitlines() if line.startswith("domain x operation"))
    header, *rows = table_rows(result.out, title)
    assert header == ["domain", *operations]  # full names, not "diffe…" or "percen…"
    assert {row[0] for row in rows} == set(stats["domain_operation"])
    for row in assert_whole_rows(result.out, title):
        assert [int(n) for n in row[1:]] == [stats["domain_operation"][row[0]][op]
                                             for op in operations]  # fmt: skip
    assert_whole_rows(result.out, "pass rates by stage", rows=5)
    assert_whole_rows(result.out, "domains", rows=len(stats["domains"]))
    md = run_cli(capsys, "stats", str(bench), "--format", "md").out
    assert "| domain | " + " | ".join(operations) + " |" in md


def test_verify_report_evidence_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(EXAMPLE))
    (report,) = json.loads(run_cli(capsys, "verify", str(EXAMPLE), "--json").out)["reports"]
    assert result.code == 0 and "…" not in result.out
    lines = result.out.splitlines()
    for check in report["checks"]:
        assert any(
            line.split()[:2] == ["proved", check["name"]] and line.endswith(check["summary"])
            for line in lines
        ), check["name"]


def test_verify_many_inputs_prints_failures_then_a_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    invalid = ROOT / "examples" / "invalid" / "two_eligible.json"
    result = run_cli(capsys, "verify", str(EXAMPLE), str(invalid))
    assert result.code == 1
    assert "two_eligible" in result.out and "necessity-hr" not in result.out  # proved: no report
    rows = assert_whole_rows(result.out, "verification summary", rows=2)
    assert [row[:3] for row in rows] == [
        [str(EXAMPLE), "mining_supervisor", "proved"],
        [str(invalid), "two_eligible", "refuted"],
    ]
    verbose = run_cli(capsys, "verify", str(EXAMPLE), str(invalid), "--verbose")
    assert "necessity-hr" in verbose.out and "verification summary" in verbose.out


def test_verify_json_has_one_shape(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = json.loads(run_cli(capsys, "verify", str(EXAMPLE), "--json").out)
    two = json.loads(run_cli(capsys, "verify", str(EXAMPLE), str(EXAMPLE), "--json").out)
    built = json.loads(run_cli(capsys, "verify", str(bench), "--format", "json").out)
    keys = {"verdict", "documents", "counts", "reports", "unreadable"}
    assert set(one) == set(two) == set(built) == keys
    assert (one["documents"], two["documents"]) == (1, 2)
    # the manifest's content-hash check is reported but is not a document
    assert built["documents"] == GROUPS and len(built["reports"]) == GROUPS + 1
    assert built["counts"] == {"proved": GROUPS, "refuted": 0, "unknown": 0}
    assert [r["document"] for r in built["reports"]].count("manifest") == 1
    missing = run_cli(capsys, "verify", "no-such-file.json", "--json")
    nothing = json.loads(missing.out)
    assert missing.code == 2 and set(nothing) == keys and nothing["verdict"] is None
    assert nothing["unreadable"][0]["source"] == "no-such-file.json"


def test_verify_benchmark_summary_counts_groups(
    bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "verify", str(bench))
    assert result.code == 0
    [row] = assert_whole_rows(result.out, "verification summary")
    assert row[:4] == [str(GROUPS), str(GROUPS), "0", "0"]
    assert f"{bench / MANIFEST_FILE}: proved" in result.out


def test_verify_benchmark_reports_progress(bench: Path) -> None:
    seen: list[tuple[int, int]] = []
    verify_benchmark(bench, SolverBudget(), workers=1, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, GROUPS) and seen[-1] == (GROUPS, GROUPS)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_verify_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    text = run_cli(capsys, "verify", "--help").out
    for code in ("0", "1", "2", "3", "4"):
        assert re.search(rf"^\s+{code}\s+\w", text, re.MULTILINE), code
    assert "internal inconsistency" in text


def test_perturb_report_is_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "group.json"
    result = run_cli(capsys, "perturb", str(EXAMPLE), "--out", str(out))
    assert result.code == 0 and "…" not in result.out
    data = json.loads(run_cli(capsys, "perturb", str(EXAMPLE), "--out", str(out), "--json").out)
    assert data["written"] == str(out) and "mixed" in data["available"]
    lines = result.out.splitlines()
    for check in data["report"]["checks"]:
        assert any(line.endswith(check["summary"]) for line in lines), check["name"]


def test_eval_results_are_whole(bench: Path, run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("eval", str(bench), *(a for agent in AGENTS for a in ("--agent", agent)),
            "--out", str(run), "--no-progress")  # fmt: skip
    result = run_cli(capsys, *args)
    assert result.code == 0, result.err
    rows = assert_whole_rows(result.out, "results")
    data = json.loads(run_cli(capsys, *args, "--format", "json").out)
    expected = []
    for m in data["metrics"]:
        low, high = (Fraction(x) for x in m["accuracy_ci"])
        interval = f"{decimal_text(100 * low, 0)}-{decimal_text(100 * high, 0)}"
        accuracy = percent_text(Fraction(m["accuracy"]))
        expected.append([m["agent"], m["setting"], accuracy, interval])
    assert [row[:4] for row in rows] == expected and data["ran"] == 0
    md = run_cli(capsys, *args, "--format", "md").out
    assert "| builtin/careful | reliable | 100.0% |" in md


def test_judge_audit_and_report_lines_are_whole(
    bench: Path, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = run_cli(capsys, "judge", str(run))
    assert judged.code == 0, judged.err
    rows = assert_whole_rows(judged.out, "role-agent validity (programmatic judge, 95% intervals)")
    assert rows and all(row[0] == "scripted" for row in rows)  # one row per agent x setting
    assert len({(row[1], row[2]) for row in rows}) == len(rows)
    assert "nothing to judge" not in judged.out
    empty = tmp_path / "empty-run"
    empty.mkdir()
    (empty / "run.json").write_text((run / "run.json").read_text())
    (empty / "samples.jsonl").write_text("")
    nothing = run_cli(capsys, "judge", str(empty), "--bench", str(bench))
    assert nothing.code == 0 and "holds no finished samples: nothing to judge" in nothing.out
    audit = tmp_path / "audit.jsonl"
    sampled = run_cli(capsys, "audit", "sample", str(bench), "--out", str(audit))
    assert sampled.code == 0 and "…" not in sampled.out
    assert_whole_rows(sampled.out, "audit sample")
    reported = run_cli(capsys, "audit", "report", str(audit))
    header, *_ = table_rows(reported.out, "human vs automated decisions")
    assert header[-2:] == ["auto rejected, human accepted", "auto accepted, human rejected"]
    report = run_cli(capsys, "report", str(run), "--out", str(tmp_path / "r"), "--no-figures")
    assert report.code == 0
    folder = tmp_path / "r"
    whole = (f"wrote {folder / 'report.html'}, {folder / 'report.md'}, "
             f"{folder / 'metrics.json'} and 0 figure file(s)")  # fmt: skip
    assert whole in report.out.splitlines()


# -- build: options, progress that agrees with the summary, a stalled build stops -------------
def test_build_solver_options_and_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "bench"
    args = ("build", "--groups", "2", "--out", str(out), "--workers", "1",
            "--rlimit", "40000000", "--solver-seed", "3")  # fmt: skip
    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr counts as a terminal: the bar is drawn
    monkeypatch.setenv("COLUMNS", "120")
    built = run_cli(capsys, *args)
    assert built.code == 0, built.err
    config = load_json(out / MANIFEST_FILE)["config"]
    assert (config["rlimit"], config["solver_seed"]) == (40_000_000, 3)
    summary = re.search(r"(\d+) groups from (\d+) candidates", built.out)
    assert summary is not None
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", built.err)
    bars = re.findall(r"(\d+)/(\d+) groups kept · (\d+) candidates", drawn)
    assert bars and bars[-1] == ("2", "2", summary.group(2)), drawn  # ends as the summary says
    again = run_cli(capsys, *args)
    assert "already built" in again.out and "groups kept" not in again.err  # no empty bar
    quiet = run_cli(capsys, *args, "--no-progress")
    assert quiet.code == 0 and quiet.err == ""
    other = run_cli(capsys, *args[:-1], "4")
    assert other.code == 2 and "--force" in other.err  # the solver seed is configuration


def test_a_build_that_keeps_nothing_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "MAX_CANDIDATES_PER_GROUP", 1)
    monkeypatch.setattr(pipeline, "MIN_CANDIDATES", 0)
    with pytest.raises(ConfigError, match=r"only 0 of 1 groups kept .* --rlimit"):
        build_benchmark(tmp_path / "b", groups=1, workers=1, rlimit=1)


# -- demo -------------------------------------------------------------------------------------
def test_demo_reuses_rebuilds_and_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = ("demo", "--out", str(tmp_path), "--no-progress")
    first = run_cli(capsys, *demo, "--groups", "2")
    assert first.code == 0 and "1. built" in first.out
    smaller = run_cli(capsys, *demo, "--groups", "1")
    assert smaller.code == 0, smaller.err
    assert "1. reused" in smaller.out and "the demo uses the first 1" in smaller.out
    assert "results" in smaller.out and "0 sample(s) run, 15 reused" in smaller.out  # 3 x 5
    larger = run_cli(capsys, *demo, "--groups", "3")  # the demo's own benchmark: rebuilt
    assert larger.code == 0 and "1. built" in larger.out
    (tmp_path / "demo.json").unlink()  # now it is somebody else's benchmark
    refused = run_cli(capsys, *demo, "--groups", "4")
    assert refused.code == 2 and "--force" in refused.err and "Traceback" not in refused.err
    forced = run_cli(capsys, *demo, "--groups", "3", "--force")
    assert forced.code == 0 and "1. built" in forced.out


def test_demo_run_again_redoes_no_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same demo again (as after Ctrl-C: "run the same command to resume"), or one with
    fewer groups, plays no sample its log holds; it used to set the whole log aside and play
    every sample again. A rebuilt benchmark's first groups are the same groups: theirs stay."""
    demo = ("demo", "--out", str(tmp_path), "--no-progress")
    first = run_cli(capsys, *demo, "--groups", "2")
    assert first.code == 0, first.err
    held = len((tmp_path / "run" / "samples.jsonl").read_text().splitlines())
    again = run_cli(capsys, *demo, "--groups", "2")
    assert again.code == 0 and f"0 sample(s) run, {held} reused" in again.out, again.out
    smaller = run_cli(capsys, *demo, "--groups", "1")
    assert smaller.code == 0 and "0 sample(s) run, 15 reused" in smaller.out  # 3 agents x 5
    larger = run_cli(capsys, *demo, "--groups", "3")  # rebuilt: its first group is the same
    assert larger.code == 0 and "1. built" in larger.out
    assert re.search(r"[1-9]\d* sample\(s\) run, 15 reused", larger.out), larger.out


HOSTILE = "<img src=x onerror=alert(1)> [a](javascript:alert(1)) **b**"


def assert_markdown_safe(text: str) -> None:
    """Nothing of ``HOSTILE`` renders: no HTML tag, no link, no emphasis."""
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "[a](javascript" not in text and "\\[a\\](javascript" in text
    assert "**b**" not in text


def test_markdown_messages_are_escaped_as_cells_are(capsys: pytest.CaptureFixture[str]) -> None:
    output = Output("md")
    output.say(f"[bold]agent:[/] {escape(HOSTILE)}\n  - second line")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("agent: ")  # rich markup is dropped, as in plain text
    assert_markdown_safe(lines[0])
    assert lines[1] == "\\- second line"  # one message line, one Markdown line


def test_verify_md_escapes_a_hostile_gold_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.json"
    text = EXAMPLE.read_text(encoding="utf-8")
    spec.write_text(text.replace("Marcus Vance", f"Marcus {HOSTILE} Vance"), encoding="utf-8")
    result = run_cli(capsys, "verify", str(spec), "--format", "md")
    assert result.code == 0, result.err
    [gold] = [line for line in result.out.splitlines() if "gold answer" in line]
    assert_markdown_safe(gold)


def test_followup_md_escapes_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    group = ROOT / "examples" / "groups" / "mining_supervisor.group.json"
    result = run_cli(capsys, "followup", str(group), "--setting", "missed",
                     "--message", f"x {HOSTILE}", "--format", "md")  # fmt: skip
    assert result.code == 0, result.err
    [message] = [line for line in result.out.splitlines() if "message:" in line]
    assert_markdown_safe(message)


def test_eval_md_escapes_what_it_says(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"run {HOSTILE.replace('/', '')}"
    result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--setting",
                     "reliable", "--limit", "1", "--out", str(out), "--no-progress",
                     "--format", "md")  # fmt: skip
    assert result.code == 0, result.err
    [log_line] = [line for line in result.out.splitlines() if "log in" in line]
    assert_markdown_safe(log_line)
