"""Offline construction end to end: build, determinism, resume, re-verification, loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import (
    GROUPS_FILE,
    MANIFEST_FILE,
    build_benchmark,
    load_groups,
    render_task,
    rendered_of,
    validate_rendering,
    verify_benchmark,
)
from uncobench_z3.errors import ResumeError
from uncobench_z3.solver import SolverBudget, Verdict
from uncobench_z3.spec import check_structure

GROUPS = 24


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "bench"
    build_benchmark(out, groups=GROUPS, seed=11, workers=2)
    return out


def test_build_writes_groups_and_manifest(bench: Path) -> None:
    lines = (bench / GROUPS_FILE).read_text().splitlines()
    assert len(lines) == GROUPS
    manifest = json.loads((bench / MANIFEST_FILE).read_text())
    assert manifest["kind"] == "uncobench-benchmark"
    assert manifest["config"]["groups"] == GROUPS and manifest["config"]["seed"] == 11
    rates = manifest["stats"]["pass_rates"]
    assert rates["retained"] == GROUPS
    assert rates["candidates"] == GROUPS + sum(rates["rejected"].values())
    assert not (bench / ".work").exists()
    for line in lines:
        group = json.loads(line)
        assert group["kind"] == "uncobench-task-group"
        assert {s["name"] for s in group["settings"]} == {
            "reliable",
            "misaligned",
            "incomplete",
            "missed",
            "mixed",
        }
        assert group["rendered"]["task_text"] and group["rendered"]["records"]
        # the gold answer never appears in what the agent is shown
        if group["gold"]["eligible"]:
            assert (
                f"{group['gold']['decision']} {group['gold']['candidate_name']}"
                not in (group["rendered"]["task_text"])
            )


def test_every_group_reverifies(bench: Path) -> None:
    reports = verify_benchmark(bench, SolverBudget(), workers=1)
    assert len(reports) == GROUPS + 1  # one per group and the content hash
    assert all(r.verdict == Verdict.PROVED for r in reports), [
        (r.task_id, [c.summary for c in r.checks if c.verdict != Verdict.PROVED])
        for r in reports
        if r.verdict != Verdict.PROVED
    ]


def test_same_seed_same_bytes_any_workers(bench: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    build_benchmark(other, groups=GROUPS, seed=11, workers=1)
    assert (other / GROUPS_FILE).read_bytes() == (bench / GROUPS_FILE).read_bytes()
    assert (other / MANIFEST_FILE).read_bytes() == (bench / MANIFEST_FILE).read_bytes()


def test_resume_after_interruption_gives_the_same_bytes(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    calls = {"n": 0}

    def stop_after_first_chunk(done: int, retained: int, wanted: int) -> None:
        calls["n"] += 1
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_benchmark(out, groups=GROUPS, seed=11, workers=1, progress=stop_after_first_chunk)
    finished = sorted((out / ".work").glob("chunk-*.jsonl"))
    assert finished and not (out / GROUPS_FILE).exists()
    result = build_benchmark(out, groups=GROUPS, seed=11, workers=2)
    assert result.resumed_chunks == len(finished)
    assert (out / GROUPS_FILE).read_bytes() == (bench / GROUPS_FILE).read_bytes()
    again = build_benchmark(out, groups=GROUPS, seed=11)
    assert again.reused


def test_changed_configuration_refuses(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    out.mkdir()
    for name in (GROUPS_FILE, MANIFEST_FILE):
        (out / name).write_bytes((bench / name).read_bytes())
    with pytest.raises(ResumeError):
        build_benchmark(out, groups=GROUPS + 1, seed=11)


def test_loadable_with_plain_json_and_datasets(bench: Path) -> None:
    rows = [json.loads(line) for line in (bench / GROUPS_FILE).read_text().splitlines()]
    assert len(rows) == GROUPS
    datasets = pytest.importorskip("datasets")
    dataset = datasets.load_dataset("json", data_files=str(bench / GROUPS_FILE), split="train")
    assert dataset.num_rows == GROUPS
    assert dataset[0]["gold"]["decision"] == rows[0]["gold"]["decision"]


def test_reader_rejects_dropped_or_altered_facts(bench: Path) -> None:
    group = load_groups(bench)[0]
    task = check_structure(group.spec).task
    assert task is not None
    rendered = rendered_of(group)
    gold = task.outcome()
    assert validate_rendering(task, rendered, gold, seed=1) == []
    role, lines = next((r, ls) for r, ls in rendered.records.items() if ls)
    required = [
        line
        for line in lines
        if any(f"({task.facts[f].context})" in line for f in task.facts_of(role))
    ]
    dropped = rendered.model_copy(
        update={
            "records": {**rendered.records, role: [line for line in lines if line != required[0]]}
        }
    )
    problems = validate_rendering(task, dropped, gold, seed=1)
    assert problems and problems[0].startswith("fact lost")
    altered_line = _alter(required[0])
    altered = rendered.model_copy(
        update={
            "records": {
                **rendered.records,
                role: [altered_line if line == required[0] else line for line in lines],
            }
        }
    )
    problems = validate_rendering(task, altered, gold, seed=1)
    assert problems, "an altered value must be caught"


def _alter(line: str) -> str:
    """Change the value at the end of a record line (a number, a date, a word)."""
    for old, new in (("yes", "no"), ("no", "yes")):
        if line.rstrip(".").endswith(old):
            return line.rstrip(".")[: -len(old)] + new
    digits = [i for i, ch in enumerate(line) if ch.isdigit()]
    if digits:
        i = digits[-1]
        return line[:i] + str((int(line[i]) + 3) % 10) + line[i + 1 :]
    return line + "x"


def test_template_rendering_is_deterministic(bench: Path) -> None:
    group = load_groups(bench)[0]
    task = check_structure(group.spec).task
    assert task is not None
    assert render_task(task, group.seed) == rendered_of(group)


def test_cli_build_stats_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-bench"
    assert run_cli(capsys, "build", "--groups", "6", "--seed", "5", "--out", str(out)).code == 0
    stats = run_cli(capsys, "stats", str(out))
    assert (
        stats.code == 0 and "pass rates by stage" in stats.out and "domain x operation" in stats.out
    )
    as_json = json.loads(run_cli(capsys, "stats", str(out), "--json").out)
    assert as_json["groups"] == 6
    verified = run_cli(capsys, "verify", str(out))
    assert verified.code == 0
    changed = run_cli(capsys, "build", "--groups", "7", "--seed", "5", "--out", str(out))
    assert changed.code == 2 and "--force" in changed.err
