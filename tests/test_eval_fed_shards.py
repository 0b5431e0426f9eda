"""Eval shards fed by the driver as they free up (forked local workers: ``_shards.Feed``):
every job handed once, by group (each group played in one worker), a shard's own share first;
the cursors that find the next unit against the plain scan they shortcut; a slow worker's
groups taken over by the other, with the same records as one process; a fed player that
waits for more and ends when told; a fed shard out of jobs that the driver counts it as
holding stops the run (it waited for ever)."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.sample_helpers import Killer, comparable, feeds_noted, typed_tasks_noted
from uncobench_z3._executor import ExecutorOptions
from uncobench_z3.errors import ConsistencyError
from uncobench_z3.evaluation import EvalOptions, evaluate, make_config, plan_jobs
from uncobench_z3.evaluation._examples import example_groups
from uncobench_z3.evaluation._models import CONNECTION_SHARE, CallPolicy
from uncobench_z3.evaluation._play import Player
from uncobench_z3.evaluation._registry import make_agent
from uncobench_z3.evaluation._runlog import read_log
from uncobench_z3.evaluation._shards import Feed, ShardedPlayer, StalledShard, plan_shards
from uncobench_z3.evaluation._summary import SampleOutcome

AGENTS = ["builtin/naive", "builtin/careful"]
FORKS = "fork" in multiprocessing.get_all_start_methods()


def plain_next(feed: Feed, shard: int) -> int | None:
    """The unit ``shard`` takes next, by definition: the first not taken whose group it plays
    or, unplayed, its split holds; else the first not taken whose group no other shard plays."""
    units = range(len(feed.units))
    for at in units:
        if not feed._taken[at] and feed._owner.get(feed._groups[at], feed._share[at]) == shard:
            return at
    for at in units:
        if not feed._taken[at] and feed._owner.get(feed._groups[at], shard) == shard:
            return at
    return None


@pytest.mark.parametrize("shards", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_a_feed_hands_every_job_once_by_group_as_its_definition(shards: int, seed: int) -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=3)
    jobs, _ = plan_jobs(groups, config)
    works = plan_shards(jobs, shards, 2 * shards, CallPolicy(), make_agent, fed=True)
    pool = works[0].pool
    assert pool == jobs and all(work.pool is pool for work in works)  # one list, shared
    feed = Feed(pool, works)
    assert [p for start, end in feed.units for p in range(start, end)] == list(range(len(jobs)))
    rng = random.Random(seed)
    given: dict[int, int] = {}  # place -> shard
    while not all(feed.drained(shard) for shard in range(shards)):
        shard = rng.randrange(shards)
        assert feed._next(shard) == plain_next(feed, shard)
        held = rng.randint(0, 12)
        before = len(feed.handed[shard])
        places = feed.take(shard, held)
        assert len(feed.handed[shard]) == before + len(places)
        assert places or feed.drained(shard) or before >= held
        for place in places:
            assert place not in given
            given[place] = shard
        for place in rng.sample(sorted(feed.handed[shard]), len(feed.handed[shard]) // 2):
            feed.handed[shard].discard(place)  # (its sample came back)
    assert sorted(given) == list(range(len(jobs)))  # every job once
    player: dict[int, int] = {}
    for place, shard in given.items():  # a group in one shard
        assert player.setdefault(id(jobs[place].group), shard) == shard
    share = {id(job.group): work.shard for work in works for job in work.jobs}
    taken_over = {group for group, shard in player.items() if share[group] != shard}
    assert feed.taken_over == taken_over


def test_a_shard_takes_its_own_share_first_and_then_the_oldest_unplayed_group() -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    jobs, _ = plan_jobs(groups, config)
    works = plan_shards(jobs, 2, 4, CallPolicy(), make_agent, fed=True)
    feed = Feed(jobs, works)
    own = [place for place, job in enumerate(jobs) if any(job is j for j in works[0].jobs)]
    assert feed.take(0, len(own)) == own and not feed.taken_over  # its share, in order
    other = [place for place, job in enumerate(jobs) if any(job is j for j in works[1].jobs)]
    first = [p for p in other if jobs[p].group is jobs[other[0]].group]
    feed.handed[0].clear()
    assert feed.take(0, 1) == first  # the other share's first group, whole
    assert feed.taken_over == {id(jobs[other[0]].group)}
    rest = feed.take(1, len(jobs))
    assert rest == [p for p in other if p not in first]
    assert feed.drained(0) and feed.drained(1)


class _SlowFirstShard:
    """Built-in agents; those of shard 0 think 30 ms longer a decision (a worker with less
    of the cores), so the other worker frees up first and takes its groups over."""

    def __call__(self, name: str, seed: int) -> Any:
        agent = make_agent(name, seed)
        shard = CONNECTION_SHARE.get()
        return _Sleepy(agent) if shard is not None and shard[0] == 0 else agent


class _Sleepy:
    def __init__(self, agent: Any) -> None:
        self.agent = agent

    async def act(self, conversation: Any) -> Any:
        await asyncio.sleep(0.03)
        return await self.agent.act(conversation)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


@pytest.mark.skipif(not FORKS, reason="shards are fed where workers are forked")
def test_a_slow_workers_groups_are_taken_over_with_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uncobench_z3.evaluation import _prepared

    feeds = feeds_noted(monkeypatch)
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    reference = comparable(evaluate(groups, config, tmp_path / "one", concurrency=4).records)
    made_again = tmp_path / "made-again.txt"  # the workers write here
    typed_tasks_noted(monkeypatch, _prepared, made_again)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    summary = evaluate(groups, config, tmp_path / "run", options, agents=_SlowFirstShard())
    assert comparable(summary.records) == reference
    logged, damaged = read_log(tmp_path / "run" / "samples.jsonl")
    assert not damaged and comparable(logged) == reference
    assert len(feeds) == 1 and feeds[0].taken_over  # the fast worker took groups over
    # a worker makes a typed task again only for a group it took over (it checked its own)
    ids = {id(group): group.id for group in groups}
    again = made_again.read_text().split() if made_again.exists() else []
    assert set(again[1::2]) <= {ids[group] for group in feeds[0].taken_over}


def test_a_fed_player_waits_for_more_and_ends_when_told() -> None:
    groups = example_groups()
    config = make_config("ex", groups, ["builtin/careful"])
    jobs, _ = plan_jobs(groups, config)
    played: list[str] = []
    asked: list[int] = []

    async def sink(job: Any, outcome: Any, line: str) -> None:
        played.append(job.key)

    async def feed(player: Player) -> None:
        for start in range(2, len(jobs), 5):
            await asyncio.sleep(0.01)  # every slot idle by now
            player.add(jobs[start : start + 5])
        await asyncio.sleep(0.01)
        player.no_more()

    async def run() -> None:
        player = Player(make_agent, 3)
        player.expect_more(2, lambda: asked.append(len(player.queue)))
        fed = asyncio.create_task(feed(player))
        started = time.perf_counter()
        await player.play(jobs[:2], sink)
        assert fed.done() and time.perf_counter() - started >= 0.01 * (len(jobs) // 5)
        await fed

    asyncio.run(run())
    assert sorted(played) == sorted(job.key for job in jobs)  # each once
    assert asked and all(queued < 2 for queued in asked)


def test_a_fixed_split_still_loses_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards of workers that are not forks (Ray's, or where the platform has no fork) keep a
    fixed split: with the local executor taken for one, a killed worker's samples not sent
    are played again, none twice, and no feed is made."""
    from uncobench_z3 import _executor

    real = _executor.LocalExecutor.__init__

    def not_forks(self: Any, workers: int) -> None:
        real(self, workers)
        self.forks = False

    monkeypatch.setattr(_executor.LocalExecutor, "__init__", not_forks)
    feeds = feeds_noted(monkeypatch)
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    reference = comparable(evaluate(groups, config, tmp_path / "one", concurrency=4).records)
    marker = tmp_path / "killed"
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    summary = evaluate(groups, config, tmp_path / "run", options, agents=Killer(marker, 5))
    assert marker.exists() and not feeds
    assert comparable(summary.records) == reference
    logged, damaged = read_log(tmp_path / "run" / "samples.jsonl")
    assert not damaged and len({r.key for r in logged}) == len(logged) == len(reference)


class _Stream:
    """The driver's end of a fed stream, as :meth:`ShardedPlayer._receive` uses it."""

    def __init__(self) -> None:
        self.sent: list[list[int] | None] = []

    def more(self, body: list[int] | None) -> None:
        self.sent.append(body)


def test_an_idle_shard_counted_as_holding_jobs_stops_the_run_unless_a_hand_out_crossed() -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    jobs, _ = plan_jobs(groups, config)
    works = plan_shards(jobs, 2, 2, CallPolicy(), make_agent, fed=True)
    logged: list[list[Any]] = []

    async def sink(kept: list[Any]) -> None:
        logged.append(kept)

    def sample(place: int) -> tuple[str, Any]:
        outcome = SampleOutcome(f"key-{place}", "g", "s", "a", "solved")
        return "sample", (place, outcome, f"line {place}")

    async def run() -> None:
        player = ShardedPlayer(Any, works)  # (no stream started: the executor is not used)
        feed, work, stream = player.feed, player.works[0], _Stream()
        assert feed is not None
        first = list(work.first)  # a group's jobs (more than it may hold: 3)
        back, rest = first[:-2], first[-2:]
        await player._receive([*map(sample, back)], work, set(), sink, stream)
        assert len(stream.sent) == 1 and stream.sent[0]  # a hand-out: it holds 2 of 3
        # idle before the hand-out reached it (it had taken none): no stop, nothing more
        await player._receive([("idle", 0)], work, set(), sink, stream)
        assert len(stream.sent) == 1
        # the rest of its first jobs back, then idle having taken the hand-out, whose jobs
        # the driver counts as held
        with pytest.raises(StalledShard, match="shard 1 of 2 ran out of jobs"):
            await player._receive([*map(sample, rest), ("idle", 1)], work, set(), sink, stream)
        assert [line for _, _, line in logged[-1]] == [f"line {p}" for p in rest]
        # the count exact (every job handed came back): handed more, not stopped
        given = stream.sent[0]
        assert given is not None
        await player._receive([*map(sample, given), ("idle", 1)], work, set(), sink, stream)
        assert len(stream.sent) == 2 and feed.handed[0] == set(stream.sent[1] or ())

    asyncio.run(run())


class _Hung(Exception):
    pass


def _hung(signum: int, frame: Any) -> None:
    raise _Hung("the run is still waiting")


@pytest.mark.skipif(not FORKS, reason="shards are fed where workers are forked")
def test_a_shard_left_idle_by_a_miscount_stops_the_run_which_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's count of the jobs the second shard holds is made too high once (jobs
    it never handed), as it is handed its second group (the first shard slowed: it has not
    taken that group over): the shard plays what it was handed, is handed nothing more and
    waits; the run stops (it hung) with the samples logged so far, and the same command
    resumes it."""
    from uncobench_z3.evaluation import _shards

    class Miscounting(_shards.Feed):
        given = 0

        def take(self, shard: int, jobs: int) -> list[int]:
            places = super().take(shard, jobs)
            if shard == 1 and places:
                self.given += 1
                if self.given == 2:  # (the first: its first jobs, at the start)
                    self.handed[1].update(range(-1, -1001, -1))  # (no job's place)
            return places

    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    reference = comparable(evaluate(groups, config, tmp_path / "one", concurrency=4).records)
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    with monkeypatch.context() as patched:
        patched.setattr(_shards, "Feed", Miscounting)
        before = signal.signal(signal.SIGALRM, _hung)
        signal.setitimer(signal.ITIMER_REAL, 60)
        try:
            with pytest.raises(StalledShard, match="shard 2 of 2 ran out of jobs") as stalled:
                evaluate(groups, config, tmp_path / "run", options, agents=_SlowFirstShard())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, before)
    assert isinstance(stalled.value, ConsistencyError)  # a bug: the CLI's exit code 4
    logged, damaged = read_log(tmp_path / "run" / "samples.jsonl")
    assert not damaged and 0 < len(logged) < len(reference)
    summary = evaluate(groups, config, tmp_path / "run", options)
    assert comparable(summary.records) == reference
