"""``uncobench eval``, ``report`` and ``demo`` from the command line: results, files, and one
readable message (never a traceback) for every user error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.evaluation import SAMPLES_FILE, example_benchmark

from .cli_helpers import run_cli


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("cli") / "bench", groups=2)


def test_eval_then_report(bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    result = run_cli(
        capsys,
        "eval",
        str(bench),
        "--agent",
        "builtin/careful",
        "--agent",
        "builtin/naive",
        "--out",
        str(out),
        "--no-progress",
    )
    assert result.code == 0, result.err
    assert "builtin/careful" in result.out and "100.0%" in result.out
    assert "mixed: 1 group(s)" in result.out  # the nurse manager group has no Mixed
    lines = (out / SAMPLES_FILE).read_text().splitlines()
    assert len(lines) == (5 + 4) * 2
    again = run_cli(
        capsys,
        "eval",
        str(bench),
        "--agent",
        "builtin/careful",
        "--agent",
        "builtin/naive",
        "--out",
        str(out),
        "--no-progress",
    )
    assert again.code == 0 and "0 sample(s) run, 18 reused" in again.out
    report = run_cli(capsys, "report", str(out), "--out", str(tmp_path / "report"))
    assert report.code == 0, report.err
    assert (tmp_path / "report" / "report.html").is_file()
    assert (tmp_path / "report" / "report.md").is_file()


def test_epochs_then_compare(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    base = ["eval", str(bench), "--agent", "builtin/careful", "--agent", "builtin/naive",
            "--out", str(out), "--no-progress"]  # fmt: skip
    assert run_cli(capsys, *base, "--epochs", "2").code == 0
    grown = run_cli(capsys, *base, "--epochs", "3")
    assert grown.code == 0 and "18 sample(s) run, 36 reused" in grown.out
    assert "2x3" in grown.out  # groups x epochs
    fewer = run_cli(capsys, *base)
    assert fewer.code == 2 and "holds 3 epochs" in fewer.err

    args = ["compare", str(out), "--a", "builtin/careful", "--b", "builtin/naive",
            "--bootstrap-samples", "200"]  # fmt: skip
    table = run_cli(capsys, *args)
    assert table.code == 0, table.err
    assert "misaligned" in table.out and "Holm" in table.out
    as_json = run_cli(capsys, *args, "--json")
    rows = {row["setting"]: row for row in json.loads(as_json.out)}
    assert rows["misaligned"]["difference"] == "1" and rows["misaligned"]["a_only"] == 2
    assert rows["reliable"]["p_value"] == "1"

    report = run_cli(capsys, "report", str(out), "--out", str(tmp_path / "report"),
                     "--no-plots", "--bootstrap-samples", "100")  # fmt: skip
    assert report.code == 0, report.err
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "pass^3" in markdown and "pass@3" in markdown


def test_compare_agents_with_a_budget_of_their_own(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Samples are compared by configuration (the report's row): an agent run with another
    budget is found by its bare name or by the row label, and a name that two
    configurations share asks for one of them."""
    out = tmp_path / "runs"
    for budget in ("10", "12"):
        code = run_cli(capsys, "eval", str(bench), "--agent", "builtin/careful", "--agent",
                       "builtin/naive", "--out", str(out / budget), "--budget", budget,
                       "--setting", "misaligned", "--no-progress").code  # fmt: skip
        assert code == 0
    one = ["--bootstrap-samples", "50", "--json"]
    by_name = run_cli(capsys, "compare", str(out / "10"), "--a", "builtin/careful", "--b",
                      "builtin/naive", *one)  # fmt: skip
    assert by_name.code == 0, by_name.err
    assert json.loads(by_name.out)[0]["a_only"] == 2
    by_label = run_cli(capsys, "compare", str(out), "--a", "builtin/careful (budget 12)",
                       "--b", "builtin/naive (budget 10)", *one)  # fmt: skip
    assert by_label.code == 0, by_label.err
    assert json.loads(by_label.out)[0]["a"] == "builtin/careful (budget 12)"
    both = run_cli(capsys, "compare", str(out), "--a", "builtin/careful", "--b",
                   "builtin/naive (budget 10)")  # fmt: skip
    assert both.code == 2 and "several configurations" in both.err
    assert "builtin/careful (budget 10), builtin/careful (budget 12)" in both.err


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["--a", "builtin/naive", "--b", "builtin/naive"], "same agent"),
        (["--a", "builtin/naive", "--b", "builtin/nobody"], "no samples of builtin/nobody"),
    ],
)
def test_compare_errors_are_one_message(
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agents: list[str],
    message: str,
) -> None:
    out = tmp_path / "run"
    run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out", str(out),
            "--limit", "1", "--no-progress")  # fmt: skip
    result = run_cli(capsys, "compare", str(out), *agents)
    assert result.code == 2 and message in result.err and "Traceback" not in result.err


def test_eval_options(bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    result = run_cli(
        capsys,
        "eval",
        str(bench),
        "--agent",
        "builtin/naive",
        "--out",
        str(out),
        "--setting",
        "missed",
        "--setting",
        "reliable",
        "--limit",
        "1",
        "--seed",
        "3",
        "--budget",
        "4",
        "--concurrency",
        "2",
        "--no-progress",
    )
    assert result.code == 0, result.err
    records = [json.loads(x) for x in (out / SAMPLES_FILE).read_text().splitlines()]
    assert sorted(r["setting"] for r in records) == ["missed", "reliable"]
    assert {(r["seed"], r["budget"]) for r in records} == {(3, 4)}


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["--agent", "builtin/nobody"], "unknown agent", 2),
        (["--agent", "builtin/naive", "--limit", "0"], "--limit must be at least 1", 2),
        (["--agent", "builtin/naive", "--concurrency", "0"], "--concurrency", 2),
        (["--agent", "builtin/naive", "--setting", "sometimes"], "sometimes", 2),
    ],
)
def test_eval_errors_are_one_message(
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
    code: int,
) -> None:
    result = run_cli(capsys, "eval", str(bench), "--out", str(tmp_path / "r"), *args)
    assert result.code == code
    assert message in result.err and "Traceback" not in result.err


def test_a_changed_configuration_is_refused(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")
    base = ["eval", str(bench), "--out", out, "--limit", "1", "--no-progress"]
    assert run_cli(capsys, *base, "--agent", "builtin/naive").code == 0
    refused = run_cli(capsys, *base, "--agent", "builtin/careful")
    assert refused.code == 2 and "another configuration (changed: agents)" in refused.err
    assert "Traceback" not in refused.err
    forced = run_cli(capsys, *base, "--agent", "builtin/careful", "--force")
    assert forced.code == 0 and "5 sample(s) run, 0 reused" in forced.out
    # the naive agent's 5 samples are not lost, and the user is told where they went
    aside = tmp_path / "run" / "samples.discarded-1.jsonl"
    said = " ".join(forced.err.split())
    assert "5 earlier sample(s) left the log (not of this run's configuration)" in said
    assert f"the whole earlier log is kept in {aside}" in said
    assert len(aside.read_text().splitlines()) == 5
    restarted = run_cli(capsys, *base, "--agent", "builtin/careful", "--restart")
    assert restarted.code == 0 and "5 sample(s) run, 0 reused" in restarted.out
    said = " ".join(restarted.err.split())
    assert "5 earlier sample(s) left the log (--restart)" in said
    assert "samples.discarded-2.jsonl" in said
    resumed = run_cli(capsys, *base, "--agent", "builtin/careful")
    assert resumed.code == 0 and "left the log" not in resumed.err
    # fewer epochs with --force: only the dropped epoch is counted (the log keeps epoch 1)
    two = run_cli(capsys, *base, "--agent", "builtin/careful", "--epochs", "2")
    assert two.code == 0 and "5 sample(s) run, 5 reused" in two.out
    one = run_cli(capsys, *base, "--agent", "builtin/careful", "--epochs", "1", "--force")
    assert one.code == 0 and "0 sample(s) run, 5 reused" in one.out
    assert "5 earlier sample(s) left the log" in " ".join(one.err.split())
    assert len((tmp_path / "run" / SAMPLES_FILE).read_text().splitlines()) == 5


def test_a_broken_benchmark_file_is_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "groups.jsonl"
    broken.write_text('{"kind": "uncobench-task-group", "id": 3}\n')
    result = run_cli(
        capsys, "eval", str(broken), "--agent", "builtin/naive", "--out", str(tmp_path / "r")
    )
    assert result.code == 2 and "groups.jsonl:1" in result.err and "Traceback" not in result.err


def test_report_of_nothing_is_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "report", str(tmp_path), "--out", str(tmp_path / "out"))
    assert result.code == 2 and "no evaluation run" in result.err


def test_demo_builds_verifies_evaluates_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "demo", "--out", str(tmp_path), "--groups", "2", "--no-progress")
    assert result.code == 0, result.err
    for step in ("1. built", "2. verified 2 group(s)", "3. evaluating", "4. report"):
        assert step in result.out
    assert (tmp_path / "bench" / "manifest.json").is_file()
    assert (tmp_path / "report" / "report.html").is_file()
    records = [json.loads(x) for x in (tmp_path / "run" / SAMPLES_FILE).read_text().splitlines()]
    careful = [r for r in records if r["agent"] == "builtin/careful"]
    assert careful and all(r["correct"] for r in careful)


def test_eval_metrics_agent_by_agent_equal_the_whole_runs(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command reads one agent's records at a time; its metrics equal those of every
    record at once, in the same order."""
    from uncobench_z3.evaluation import SAMPLES_FILE, compute_metrics, read_log

    out = tmp_path / "run"
    agents = ["builtin/naive", "builtin/careful", "builtin/optimist"]
    result = run_cli(capsys, "eval", str(bench), *[a for x in agents for a in ("--agent", x)],
                     "--out", str(out), "--no-progress", "--format", "json")  # fmt: skip
    assert result.code == 0, result.err
    shown = json.loads(result.out)["metrics"]
    records, _ = read_log(out / SAMPLES_FILE)
    unavailable = json.loads((out / "run.json").read_text())["unavailable"]
    whole = [m.model_dump(mode="json") for m in compute_metrics(records, unavailable)]
    assert [m["agent"] for m in shown] == [m["agent"] for m in whole]
    assert shown == whole
    assert [m["agent"] for m in shown][:: len(shown) // 3] == agents
