"""Helpers for tests that compare runs: the example groups as stored, records without their
wall time, an agent maker whose worker process dies once mid-run, the groups a module makes
typed tasks of, and the jobs the runs plan."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import SampleJob, SampleRecord, make_agent, plan_jobs
from uncobench_z3.settings import TaskGroup
from uncobench_z3.spec import TypedTask

__all__ = ["Killer", "comparable", "jobs_planned", "stored_example_groups", "typed_tasks_made"]

_EXAMPLE_GROUPS = Path(__file__).resolve().parent.parent / "examples" / "groups"


def stored_example_groups() -> list[TaskGroup]:
    """Every group of ``examples/groups/*.group.json``, the files in name order."""
    return [g for path in sorted(_EXAMPLE_GROUPS.glob("*.group.json")) for g in load_groups(path)]


def comparable(records: Iterable[SampleRecord]) -> list[str]:
    """Records as sorted JSON, without the wall time (the one field re-runs change)."""
    return sorted(
        json.dumps(r.model_dump(mode="json", exclude={"elapsed_seconds"}), sort_keys=True)
        for r in records
    )


def typed_tasks_made(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[str]:
    """The ids of the groups ``module`` makes a typed task of from now on (its
    ``typed_task``, counted; the tasks are still made)."""
    made: list[str] = []
    real = module.typed_task

    def counted(group: TaskGroup) -> TypedTask:
        made.append(group.id)
        task: TypedTask = real(group)
        return task

    monkeypatch.setattr(module, "typed_task", counted)
    return made


def typed_tasks_noted(monkeypatch: pytest.MonkeyPatch, module: Any, path: Path) -> None:
    """Note in ``path`` each typed task ``module`` makes from now on (``pid group-id`` a
    line: forked workers write there too; the tasks are still made)."""
    real = module.typed_task

    def noted(group: TaskGroup) -> TypedTask:
        with path.open("a") as handle:
            handle.write(f"{os.getpid()} {group.id}\n")
        task: TypedTask = real(group)
        return task

    monkeypatch.setattr(module, "typed_task", noted)


def jobs_planned(monkeypatch: pytest.MonkeyPatch) -> list[SampleJob]:
    """The jobs the runs plan from now on (the runner's ``plan_jobs``, kept; the plan is
    the same)."""
    from uncobench_z3.evaluation import _runner

    planned: list[SampleJob] = []

    def keeping(*args: Any, **kwargs: Any) -> Any:
        jobs, unavailable = plan_jobs(*args, **kwargs)
        planned.extend(jobs)
        return jobs, unavailable

    monkeypatch.setattr(_runner, "plan_jobs", keeping)
    return planned


def feeds_noted(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The feeds (``_shards.Feed``) the runs make from now on (fed shards: forked workers)."""
    from uncobench_z3.evaluation import _shards

    feeds: list[Any] = []

    class Noted(_shards.Feed):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            feeds.append(self)

    monkeypatch.setattr(_shards, "Feed", Noted)
    return feeds


class Killer:
    """Makes built-in agents; the worker process (a forked shard or a Ray actor) that makes its
    ``after``-th agent kills itself, once per run (a marker file remembers it did)."""

    def __init__(self, marker: Path, after: int) -> None:
        self.marker = marker
        self.after = after
        self.made = 0

    def __call__(self, name: str, seed: int) -> Any:
        self.made += 1
        if self.made == self.after and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return make_agent(name, seed)
