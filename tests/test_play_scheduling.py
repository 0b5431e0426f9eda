"""The player's schedule: a slot goes on with its next episode before the last one is scored,
and a played episode is kept (on disk) however the run is interrupted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    Action,
    Agent,
    Conversation,
    SampleJob,
    SampleOutcome,
    example_benchmark,
    make_agent,
)
from uncobench_z3.evaluation._play import Player
from uncobench_z3.evaluation._runlog import SampleLog
from uncobench_z3.settings import TaskGroup


@pytest.fixture(scope="module")
def groups(tmp_path_factory: pytest.TempPathFactory) -> list[TaskGroup]:
    return load_groups(example_benchmark(tmp_path_factory.mktemp("bench") / "bench"))


def careful_jobs(groups: list[TaskGroup], count: int) -> list[SampleJob]:
    settings = ("reliable", "misaligned", "incomplete", "missed")
    jobs = [SampleJob.make(g, s, "builtin/careful") for g in groups for s in settings]
    return jobs[:count]


class Watched:
    """Makes careful agents and notes each one's first move in ``events``."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.made = 0

    def __call__(self, name: str, seed: int) -> Agent:
        self.made += 1
        return _FirstMove(make_agent(name, seed), self.events, self.made)


class _FirstMove:
    def __init__(self, agent: Agent, events: list[str], number: int) -> None:
        self.agent, self.events, self.number, self.moved = agent, events, number, False

    async def act(self, conversation: Conversation) -> Action:
        if not self.moved:
            self.moved = True
            self.events.append(f"episode {self.number} starts")
        return await self.agent.act(conversation)


def test_a_slot_starts_its_next_episode_before_the_last_is_scored(
    groups: list[TaskGroup],
) -> None:
    jobs = careful_jobs(groups, 3)
    events: list[str] = []
    player = Player(Watched(events), concurrency=1)

    async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
        events.append(f"episode {jobs.index(job) + 1} kept")

    asyncio.run(player.play(jobs, sink))
    assert not player.failures
    # one episode at a time, in order; each kept after the next has begun
    assert events == [
        "episode 1 starts",
        "episode 2 starts",
        "episode 1 kept",
        "episode 3 starts",
        "episode 2 kept",
        "episode 3 kept",
    ]


class _CancelsTheRun:
    """An agent that interrupts the whole run as Ctrl-C does (the main task is cancelled)."""

    def __init__(self, main: asyncio.Task[None]) -> None:
        self.main = main

    async def act(self, conversation: Conversation) -> Action:
        self.main.cancel()
        await asyncio.sleep(3600)  # cancelled with the run
        raise AssertionError("not reached")


@pytest.mark.parametrize("concurrency", [1, 3])
def test_every_played_episode_is_on_disk_after_an_interruption(
    groups: list[TaskGroup], tmp_path: Path, concurrency: int
) -> None:
    jobs = careful_jobs(groups, 12)
    path = tmp_path / "samples.jsonl"
    played: list[str] = []

    async def run() -> None:
        main = asyncio.current_task()
        assert main is not None
        made = 0

        def agents(name: str, seed: int) -> Agent:
            nonlocal made
            made += 1
            return make_agent(name, seed) if made <= 6 else _CancelsTheRun(main)

        log = SampleLog(path)
        player = Player(agents, concurrency)

        async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
            played.append(job.key)
            await log.append_line(line)  # the run is cancelled while lines wait here

        try:
            await player.play(jobs, sink)
        finally:
            log.close()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run())
    on_disk = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(played) >= 6 - concurrency + 1  # episodes played before the interruption
    assert sorted(on_disk) == sorted(played)  # every one of them kept, once


@pytest.mark.parametrize("when", ["before it starts", "while it writes"])
def test_the_log_writes_every_line_when_its_writer_is_cancelled(
    groups: list[TaskGroup], tmp_path: Path, when: str
) -> None:
    path = tmp_path / "samples.jsonl"

    async def run() -> None:
        log = SampleLog(path)
        first = [asyncio.create_task(log.append_line(f"line {i}")) for i in range(3)]
        await asyncio.sleep(0)  # the appends have queued their lines and made a writer
        assert log._flusher is not None
        if when == "while it writes":
            await asyncio.sleep(0)  # the writer has handed its batch to the thread
        log._flusher.cancel()
        later = [asyncio.create_task(log.append_line(f"line {i}")) for i in range(3, 5)]
        # every append returns, its line written (the bound turns a lost line into a failure
        # instead of a hang; it is no timing assertion)
        await asyncio.wait_for(asyncio.gather(*first, *later), 60)
        log.close()

    asyncio.run(run())
    assert path.read_text().splitlines() == [f"line {i}" for i in range(5)]


def test_the_log_writes_lines_appended_together_in_order(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"

    async def run() -> None:
        log = SampleLog(path)
        await asyncio.gather(
            log.append_lines(["line 0", "line 1", "line 2"]), log.append_line("line 3")
        )
        await log.append_lines(["line 4"])
        log.close()

    asyncio.run(run())
    assert path.read_text().splitlines() == [f"line {i}" for i in range(5)]
