"""Eval with forked workers: once the driver holds the folder's lock (a second writer is
refused before any worker starts or checks anything), each worker checks its share of the
groups and plays only when the driver says go (evaluation/_runner.py, _checked_by_workers).
A refused run names the same group, in the same words, as the driver's own check; nothing is
written and no agent is made; the driver makes no typed task, the workers one per group;
a folder holding a log is resumed as before (the driver checks); the plan's job copies are
pydantic's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import uncobench_z3._executor as executor_module
from tests.sample_helpers import comparable, feeds_noted, jobs_planned, typed_tasks_noted
from tests.test_output_folders import probing
from uncobench_z3._executor import ExecutorOptions, LocalExecutor
from uncobench_z3._outdir import lock_output
from uncobench_z3.errors import ConfigError, InputError
from uncobench_z3.evaluation import (
    EvalOptions,
    evaluate,
    example_groups,
    make_agent,
    make_config,
    plan_jobs,
)
from uncobench_z3.evaluation._inputs import check_groups
from uncobench_z3.evaluation._plan import job_copy
from uncobench_z3.settings import TaskGroup

AGENTS = ["builtin/naive", "builtin/careful"]
FIELDS = ("group", "setting", "agent", "intervention", "group_hash", "epoch")
"""what plan_jobs changes in its copies"""
forks = pytest.mark.skipif(not LocalExecutor(2).forks, reason="workers are not forks here")


class NotedAgents:
    """Makes built-in agents, noting each in ``path`` (written by whichever process makes it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, name: str, seed: int) -> Any:
        with self.path.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        return make_agent(name, seed)


def no_records(group: TaskGroup) -> TaskGroup:
    return group.model_copy(update={"spec": group.spec.model_copy(update={"records": []})})


def bad_rendering(group: TaskGroup) -> TaskGroup:
    return group.model_copy(update={"rendered": {"task_text": 5}})


def copies() -> list[TaskGroup]:
    """Ten groups: the examples twice (groups go to two shards in turn, by their order)."""
    return [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(2) for g in example_groups()]


@forks
def test_a_refused_run_names_the_first_bad_group_and_touches_nothing(tmp_path: Path) -> None:
    groups = copies()
    groups[1] = no_records(groups[1])  # played by the second shard
    groups[2] = bad_rendering(groups[2])  # by the first, which reports first
    with pytest.raises(ConfigError) as expected:
        check_groups(groups)
    assert "holds no records" in str(expected.value)  # the first in the groups' order
    config = make_config("ex", groups, AGENTS)
    made = tmp_path / "agents.txt"
    for workers in (2, 1):
        options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=workers))
        out = tmp_path / f"run-{workers}"
        with pytest.raises(ConfigError) as refused:
            evaluate(groups, config, out, options, agents=NotedAgents(made))
        assert str(refused.value) == str(expected.value)
        assert not out.exists()
    groups = copies()
    groups[7] = bad_rendering(groups[7])
    config = make_config("ex", groups, AGENTS)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    with pytest.raises(ConfigError, match=f"group {groups[7].id}: its stored rendering"):
        evaluate(groups, config, tmp_path / "again", options, agents=NotedAgents(made))
    assert not (tmp_path / "again").exists()
    assert not made.exists()  # no sample started in a refused run


@forks
def test_a_locked_folder_is_refused_before_any_worker_starts_or_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second writer is refused first, with the holder's line (though a group is bad too):
    no job planned, no worker started, no group checked (by a worker or the driver), no agent
    made, the holder's folder as it was. Once the lock is free the same run starts its
    workers, under its own lock, and they check (the probes see them)."""
    from uncobench_z3.evaluation import _inputs, _shards

    checked = tmp_path / "checked.txt"
    typed_tasks_noted(monkeypatch, _inputs, checked)
    started: list[int] = []
    real_stream = executor_module._ProcessStream

    def stream(*args: Any) -> Any:
        started.append(os.getpid())
        return real_stream(*args)

    monkeypatch.setattr(executor_module, "_ProcessStream", stream)
    planned = jobs_planned(monkeypatch)
    groups = copies()
    groups[3] = no_records(groups[3])
    config = make_config("ex", groups, AGENTS)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    made, out = tmp_path / "agents.txt", tmp_path / "run"
    with lock_output(out, "eval"):
        held = sorted(p.name for p in out.iterdir())
        with pytest.raises(InputError, match="in use by pid"):
            evaluate(groups, config, out, options, agents=NotedAgents(made))
        assert sorted(p.name for p in out.iterdir()) == held
    assert (planned, started, checked.exists(), made.exists()) == ([], [], False, False)
    real_start = _shards.ShardedPlayer.start
    monkeypatch.setattr(_shards.ShardedPlayer, "start", probing(out, real_start))
    with pytest.raises(ConfigError, match=f"group {groups[3].id}: .*holds no records"):
        evaluate(groups, config, out, options, agents=NotedAgents(made))
    assert planned and len(started) == 2
    assert {pid for pid, _ in (row.split() for row in checked.read_text().splitlines())} - {
        str(os.getpid())
    }  # the workers checked
    assert not out.exists() and not made.exists()


@forks
def test_the_workers_check_their_groups_and_the_driver_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run's groups are checked by the workers, each its own (their typed tasks made
    once, there, and used to prepare the groups, but for a group a worker took over from the
    other's share: ``_shards.Feed``); the records are those of one process."""
    from uncobench_z3.evaluation import _inputs, _prepared, _runner

    checked = tmp_path / "checked.txt"
    typed_tasks_noted(monkeypatch, _inputs, checked)
    made_again = tmp_path / "made-again.txt"
    typed_tasks_noted(monkeypatch, _prepared, made_again)
    feeds = feeds_noted(monkeypatch)
    monkeypatch.setattr(_runner, "check_groups", lambda groups: pytest.fail("driver checks"))
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    summary = evaluate(groups, config, tmp_path / "run", options)
    rows = [line.split() for line in checked.read_text().splitlines()]
    assert sorted(group for _, group in rows) == sorted(g.id for g in groups)
    assert len({pid for pid, _ in rows}) == 2 and str(os.getpid()) not in {p for p, _ in rows}
    again = made_again.read_text().split() if made_again.exists() else []
    assert set(again[1::2]) <= {g.id for g in groups if id(g) in feeds[0].taken_over}
    monkeypatch.undo()
    alone = evaluate(groups, config, tmp_path / "alone", concurrency=4)
    assert comparable(summary.records) == comparable(alone.records)


@forks
def test_a_folder_with_a_log_is_resumed_with_the_drivers_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The samples a folder holds are not played again: the driver checks the groups (and
    reads the log) before the shards are planned, as before."""
    from uncobench_z3.evaluation import _runner

    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    out = tmp_path / "run"
    evaluate(groups, config, out, options)
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(lines[:7]))
    checks: list[int] = []
    real = _runner.check_groups
    monkeypatch.setattr(_runner, "check_groups", lambda g: checks.append(1) or real(g))
    resumed = evaluate(groups, config, out, options)
    assert checks == [1]
    assert (resumed.reused, resumed.ran) == (7, len(lines) - 7)
    alone = evaluate(groups, config, tmp_path / "alone", concurrency=4)
    assert comparable(resumed.records) == comparable(alone.records)


def test_a_plans_job_copies_are_pydantics() -> None:
    groups = example_groups()
    jobs, _ = plan_jobs(groups, make_config("ex", groups, AGENTS, epochs=2))
    first = jobs[0]
    assert first.key and first.epoch_seed is not None  # remembered: the copies forget them
    for job in jobs[1:]:
        update = {name: getattr(job, name) for name in FIELDS}
        made, plain = job_copy(first, update), first.model_copy(update=update)
        assert made == plain and made.__dict__ == plain.__dict__
        assert made.model_fields_set == plain.model_fields_set
        assert (
            (made.key, made.epoch_seed)
            == (plain.key, plain.epoch_seed)
            == (job.key, job.epoch_seed)
        )
        assert made.model_dump() == plain.model_dump()


def test_a_group_whose_gold_is_not_its_records_answer_is_refused(tmp_path: Path) -> None:
    """A group stating a gold answer its records do not give (the shipped example, which
    verify refutes) would score every right answer wrong, and its attribution would read
    "the evidence left the answer open" of all the records: refused, one line, nothing
    written, with one worker or two."""
    from uncobench_z3.construct import load_groups

    wrong = load_groups(Path("examples/groups/invalid/wrong_gold.group.json"))
    groups = [*copies()[:3], *wrong]
    with pytest.raises(ConfigError) as expected:
        check_groups(groups)
    assert str(expected.value) == (
        f"group {wrong[0].id}: its gold answer (Appoint Marcus Vance: 55,000 AUD) is not the one"
        " its records give (Appoint Marcus Vance: 60,000 AUD); `uncobench verify` it"
    )
    config = make_config("ex", groups, AGENTS)
    for workers in (1, 2):
        options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=workers))
        out = tmp_path / f"run-{workers}"
        with pytest.raises(ConfigError) as refused:
            evaluate(groups, config, out, options)
        assert str(refused.value) == str(expected.value)
        assert not out.exists()
