"""``uncobench followup`` and pinned ``uncobench perturb``: output, JSON, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import load_groups
from uncobench_z3.settings import TaskGroup

ROOT = Path(__file__).resolve().parent.parent
MINING_GROUP = str(ROOT / "examples/groups/mining_supervisor.group.json")
MINING_SPEC = str(ROOT / "examples/mining_supervisor.json")


def test_followup_explains_a_targeted_message(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(
        capsys, "followup", MINING_GROUP, "--setting", "incomplete",
        "--message", "Did Marcus pass or fail the March 2026 check?",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "Security office [security]" in result.out
    assert 'Marcus Vance ("Marcus")' in result.out and "security clearance result" in result.out
    assert "targeted: yes" in result.out


def test_followup_json_one_object_per_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    messages = tmp_path / "messages.jsonl"
    messages.write_text(
        '"Could you double-check your records?"\n'
        '{"message": "Marcus Vance\'s allowance: FY2026 table please", "role": "operations"}\n'
        '{"message": "Marcus Vance\'s allowance: FY2026 table please", "role": "hr"}\n'
    )
    result = run_cli(
        capsys, "followup", MINING_GROUP, "--setting", "misaligned",
        "--messages", str(messages), "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line["targeted"] for line in lines] == [False, True, False]
    assert lines[1]["role"] == "operations" and lines[1]["candidates"] == ["vance"]
    assert lines[1]["facts"] == ["field_allowance"] and lines[2]["defect"] is None
    assert all({"why", "intents", "contexts", "clauses"} <= set(line) for line in lines)


def test_followup_reads_a_group_of_a_benchmark(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    groups = tmp_path / "groups.jsonl"
    group = load_groups(MINING_GROUP)[0]
    groups.write_text(group.model_dump_json() + "\n")
    result = run_cli(
        capsys, "followup", f"{groups}#mining_supervisor", "--setting", "missed",
        "--message", "hello?", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["targeted"] is True


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nowhere.json", "--setting", "misaligned", "--message", "x"], "no such file"),
        ([MINING_GROUP + "#other", "--setting", "misaligned", "--message", "x"], "no group"),
        ([MINING_GROUP, "--setting", "reliable", "--message", "x"], "reliable"),
        (
            [MINING_GROUP, "--setting", "misaligned", "--role", "nobody", "--message", "x"],
            "unknown role",
        ),
        (
            [MINING_GROUP, "--setting", "misaligned", "--focus", "nobody", "--message", "x"],
            "unknown candidate",
        ),
        ([MINING_GROUP, "--setting", "mixed", "--message", "x"], "--role"),
        ([MINING_GROUP, "--setting", "misaligned"], "--message"),
        ([MINING_GROUP, "--setting", "misaligned", "--message", "  "], "empty"),
    ],
)
def test_followup_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    result = run_cli(capsys, "followup", *args)
    assert result.code == 2
    assert fragment in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) <= 2


def test_followup_bad_messages_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"message": "ok"}\nnot json\n')
    result = run_cli(
        capsys, "followup", MINING_GROUP, "--setting", "misaligned", "--messages", str(bad)
    )
    assert result.code == 2 and "bad.jsonl:2" in result.err


# -- pinned perturb ---------------------------------------------------------------------------
def test_perturb_pins_the_papers_defects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "paper.group.json"
    result = run_cli(
        capsys, "perturb", MINING_SPEC, "--misaligned", "security.clearance@vance",
        "--incomplete", "hr.hardrock_years@vance:0-20", "--missed", "finance",
        "--out", str(out), "--quiet",
    )  # fmt: skip
    assert result.code == 0, result.err
    group = TaskGroup.model_validate_json(out.read_text())
    (mis,) = group.setting("misaligned").defects
    wrong = next(s for s in mis.first_reply or [] if s.candidate == "vance")
    assert (mis.role, mis.fact, wrong.context, wrong.value) == (
        "security", "clearance", "April 2026 assessment", "failed",
    )  # fmt: skip
    (inc,) = group.setting("incomplete").defects
    vague = next(s for s in inc.first_reply or [] if s.candidate == "vance")
    assert (inc.fact, vague.low, vague.high) == ("hardrock_years", 0, 20)
    assert group.setting("missed").defects[0].role == "finance"
    # Mixed takes the pinned defects first
    assert {d.role for d in group.setting("mixed").defects} == {"security", "hr", "finance"}


def test_the_shipped_paper_group_matches_the_pins() -> None:
    group = load_groups(ROOT / "examples/groups/paper_appendix.group.json")[0]
    assert group.setting("misaligned").defects[0].fact == "clearance"
    assert group.setting("incomplete").defects[0].fact == "hardrock_years"
    checks = group.proofs.checks if group.proofs else {}
    assert checks["validity-misaligned-security"] == "proved"
    assert checks["validity-incomplete-hr"] == "proved"


@pytest.mark.parametrize(
    ("pin", "fragment"),
    [
        (["--misaligned", "security.clearance@ruiz"], "not decision-relevant"),
        (["--incomplete", "hr.hardrock_years@vance:15-30"], "not decision-relevant"),
    ],
)
def test_a_pin_that_does_not_matter_is_refused_with_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pin: list[str], fragment: str
) -> None:
    out = tmp_path / "group.json"
    result = run_cli(capsys, "perturb", MINING_SPEC, *pin, "--out", str(out), "--quiet")
    assert result.code == 1 and fragment in result.out and not out.exists()


@pytest.mark.parametrize(
    ("pin", "fragment"),
    [
        (["--misaligned", "security.clearance"], "expected ROLE.FACT@CANDIDATE"),
        (["--misaligned", "nobody.clearance@vance"], "unknown role"),
        (["--misaligned", "security.nothing@vance"], "unknown fact"),
        (["--misaligned", "hr.clearance@vance"], "held by 'security'"),
        (["--misaligned", "security.clearance@nobody"], "unknown candidate"),
        (["--misaligned", "security.clearance@vance:May 2026"], "no clearance of vance"),
        (["--incomplete", "hr.hardrock_years@vance:30-5"], "LOW <= HIGH"),
        (["--incomplete", "hr.hardrock_years@vance:ten"], "LOW-HIGH"),
        (["--incomplete", "security.clearance@vance:passed"], "at least two options"),
        (["--missed", "no such role"], "expected a role id"),
    ],
)
def test_a_malformed_pin_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pin: list[str], fragment: str
) -> None:
    out = tmp_path / "group.json"
    result = run_cli(capsys, "perturb", MINING_SPEC, *pin, "--out", str(out), "--quiet")
    assert result.code == 2 and fragment in result.err, result.err
    assert "Traceback" not in result.err and not out.exists()
