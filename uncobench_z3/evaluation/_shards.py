"""Eval shards: a run's samples played by several workers, logged by the driver alone.

With ``--workers N`` (local processes) or ``--executor ray`` the driver splits the samples
still to run into shards **by group** (every sample of a group goes to one shard, so each
group is prepared, searched for its minimum rounds and judged by the solver in one worker
only) and starts each shard as a stream (:mod:`uncobench_z3._executor`). A shard is a
:class:`~._play.Player` with its share of ``--concurrency`` and of every model's
connections (:func:`~._models.connection_share`); it sends each finished sample's log line
back as it goes, with the sample's outcome (key, result, an error's message: what the
driver needs besides the line, so it does not parse and validate the line again - a tenth
of a millisecond or more per sample in the one process that all shards report to), and its
place in the shard's jobs (so the driver finds the job without hashing every job's key). The
driver drops a sample it already has (a restarted shard may send one again) and hands what
a shard sent together to the run's batch sink, which keeps each sample as an in-process run
does: the log (written by the driver alone, so the lock, resumption and ``--max-errors``
keep their meaning; the batch's lines in one commit), the error budget and the progress bar.

Forked local workers are *fed* (:class:`Feed`): each starts with the first groups of its
share and the driver hands it more, group by group, each time it sends samples back, so a
worker that freed up sooner (more of the cores) plays more groups; with a fixed split the
slower one set the wall time. Ray's shards (and a platform without fork) keep a fixed split.

A new run with forked workers starts its shards once it holds the run folder's lock, before it
writes there: each worker first checks the groups it plays (:attr:`ShardWork.check`; their
typed tasks are made there, once) and reports at once; the driver, having every verdict,
refuses the run as its own check would or prepares the folder and tells the workers to go
(:meth:`ShardedPlayer.verdicts`, :meth:`ShardedPlayer.go`; see ``_checked_by_workers`` in
:mod:`._runner`).

A shard whose worker is lost (a killed process, a lost Ray node) is started again with the
samples it had not sent (a fed one: of those it was handed; at most :data:`RESTARTS` times);
samples in flight are played again, none is logged twice. A sample that raises in a shard
stops every shard, as it stops an in-process run.

A fed shard that runs out of jobs says so (``("idle", handouts)``: how many of the driver's
hand-outs it has taken). The driver hands it more on every message it sends, as long as it
holds fewer jobs than it may (:meth:`Feed.held`): were the driver's count of the jobs it holds
ever too high, a shard that had played them all would wait for ever, and the run with it.
When a shard that has taken every hand-out (none crossed its report in the pipe) is idle while
the driver counts jobs it holds, the run stops with :class:`StalledShard` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import pickle
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from .._executor import Channel, Executor, GatedChannel, StreamFailed, WorkerLost
from .._gc import fewer_collections
from .._secrets import redact, redacted_error, redacted_traceback
from ..errors import ConfigError, ConsistencyError, UncobenchError
from ..spec import TypedTask
from ._feed import Feed
from ._inputs import checked_task
from ._models import CALL_POLICY, CONNECTION_SHARE, CallPolicy, close_models, forget_models
from ._play import Player
from ._sample import AgentMaker, SampleJob
from ._summary import SampleOutcome

RESTARTS = 3
"""times a shard is started again after its worker was lost"""
Kept = list[tuple[SampleJob, SampleOutcome, str]]
"""finished samples, each with its outcome and log line"""
BatchSink = Callable[[Kept], Awaitable[None]]
"""where the samples a shard sent together go (the run's log commits their lines together)"""


@dataclass(frozen=True)
class ShardWork:
    """What one shard plays, and how."""

    jobs: list[SampleJob]
    concurrency: int
    shard: int
    shards: int
    calls: CallPolicy
    agents: AgentMaker
    tasks: dict[int, TypedTask] = field(default_factory=dict)
    """typed tasks of the shard's groups made already (by ``id(group)``), for a worker
    that shares the driver's memory (forked) to prepare its groups with"""
    pool: list[SampleJob] | None = None
    """every job of the run, for a shard fed by the driver (:class:`Feed`: forked workers,
    which share the list): ``jobs`` is then only the share it checks, it plays the jobs of
    ``pool`` at the places ``first`` and those the driver sends, and sends places in ``pool``"""
    first: tuple[int, ...] = ()
    """places in ``pool`` of the jobs a fed shard starts with"""
    check: bool = False
    """the worker checks the shard's groups first (:func:`~._inputs.checked_task`, making
    their typed tasks), reports at once and plays only once the driver says go (a forked
    worker: :class:`~uncobench_z3._executor.GatedChannel`); see :meth:`ShardedPlayer.verdicts`"""


Verdict = tuple[int, str] | None
"""a checking shard's report: ``(id(group), message)`` of the first of its groups that cannot
be played, or None when every one can"""


def check_share(jobs: Sequence[SampleJob], tasks: dict[int, TypedTask]) -> Verdict:
    """Check the groups of ``jobs`` in their order, adding each typed task to ``tasks``; the
    first that cannot be played, if any."""
    for job in jobs:
        key = id(job.group)
        if key not in tasks:
            try:
                tasks[key] = checked_task(job.group)
            except ConfigError as exc:
                return key, str(exc)
    return None


class StalledShard(ConsistencyError):
    """A fed shard ran out of jobs that the driver counts it as holding (a bug: the run would
    otherwise wait for it for ever; the CLI exits 4, as for any inconsistency)."""


class RemoteFailure(UncobenchError):
    """An exception raised in a shard that could not travel as itself."""

    def __init__(self, message: str, remote_traceback: str) -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback

    def __reduce__(self) -> tuple[type[RemoteFailure], tuple[str, str]]:
        # pickled with its traceback (an exception pickles its message alone, and this one
        # could not be made again from it: a caller running ``evaluate`` in another process
        # got "missing 1 required positional argument" instead of the shard's failure)
        return type(self), (str(self), self.remote_traceback)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (so the driver raises the same error), else a
    :class:`RemoteFailure` with its text and traceback."""
    with contextlib.suppress(Exception):  # any pickling problem means: send the text
        if isinstance(exc, UncobenchError):
            copy = pickle.loads(pickle.dumps(exc))
            if type(copy) is type(exc) and str(copy) == str(exc):
                return exc
    return RemoteFailure(redacted_error(exc), redacted_traceback(exc))


async def play_shard(work: ShardWork, channel: Channel) -> None:
    """A shard's stream function, run in a worker: play the jobs, send each sample's line
    (``("sample", (index, outcome, line))``, ``index`` the job's place in ``work.jobs``) and,
    if one raised, ``("failure", (index, exception))``."""
    forget_models()
    gc.freeze()  # the jobs' groups live for the whole shard (see _Run.execute)
    tasks = dict(work.tasks)
    if work.check:
        gated = cast(GatedChannel, channel)
        with fewer_collections():  # (as the driver's check: see _runner.run_evaluation)
            verdict = check_share(work.jobs, tasks)
        gated.send_now(("checked", verdict))
        if verdict is not None or not await gated.gate():
            return  # refused, or the driver did not go on (it ends this worker)
        gc.freeze()  # and so do their typed tasks
    tokens = (CALL_POLICY.set(work.calls), CONNECTION_SHARE.set((work.shard, work.shards)))
    player = Player(work.agents, work.concurrency, tasks)
    channel.on_stop(player.stop)
    jobs = work.jobs
    places = {id(job): index for index, job in enumerate(work.jobs)}
    if work.pool is not None:
        pool, gated = work.pool, cast(GatedChannel, channel)
        jobs = [pool[index] for index in work.first]
        places = {id(pool[index]): index for index in work.first}
        taken = 0  # the driver's hand-outs taken (see ShardedPlayer._receive)

        def more(given: list[int] | None) -> None:
            nonlocal taken
            taken += 1
            if given is None:
                player.no_more()
                return
            places.update((id(pool[index]), index) for index in given)
            player.add([pool[index] for index in given])

        player.expect_more(
            max(1, work.concurrency // 2),
            gated.flush,
            lambda: gated.send_now(("idle", taken)),  # (with the samples gathered)
        )
        gated.on_more(more)

    async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
        channel.send(("sample", (places[id(job)], outcome, line)))

    try:
        with fewer_collections():  # see uncobench_z3/_gc.py
            await player.play(jobs, sink)
    finally:
        await close_models()
        CONNECTION_SHARE.reset(tokens[1])
        CALL_POLICY.reset(tokens[0])
    for job, exc in player.failures[:1]:
        channel.send(("failure", (places[id(job)], _portable(exc))))


def plan_shards(
    jobs: Sequence[SampleJob],
    shards: int,
    concurrency: int,
    calls: CallPolicy,
    agents: AgentMaker,
    tasks: dict[int, TypedTask] | None = None,
    check: bool = False,
    fed: bool = False,
) -> list[ShardWork]:
    """Split ``jobs`` by group over at most ``shards`` shards (fewer when there are fewer
    groups or less concurrency), keeping their order; the concurrency is shared out.
    ``fed``: the shards are fed by the driver as they free up (:class:`Feed`; forked
    workers only), each split's share only the groups it checks and prefers.
    ``tasks``: typed tasks made already (by ``id(group)``), each handed to the shard that
    plays its group (only for workers that share this process's memory: ids are its own).
    ``check``: each shard checks its groups first (:attr:`ShardWork.check`)."""
    groups: dict[str, int] = {}
    for job in jobs:
        groups.setdefault(job.group_hash or job.group.id, len(groups))
    count = max(1, min(shards, concurrency, len(groups)))
    parts: list[list[SampleJob]] = [[] for _ in range(count)]
    for job in jobs:
        parts[groups[job.group_hash or job.group.id] % count].append(job)
    made = tasks or {}
    pool = list(jobs) if fed else None
    return [
        ShardWork(
            jobs=part,
            concurrency=concurrency // count + (1 if index < concurrency % count else 0),
            shard=index,
            shards=count,
            calls=calls,
            agents=agents,
            # (a fed shard may play any group: forked, it has every task made already)
            tasks=dict(made) if fed else _tasks_of(part, made),
            pool=pool,
            check=check,
        )
        for index, part in enumerate(parts)
    ]


class ShardedPlayer:
    """The driver's side: starts the shards, feeds what they send to ``sink`` (a batch at a
    time, as they send it), restarts shards whose worker was lost. Stopped, and its failures
    read, as :class:`~._play.Player`."""

    def __init__(self, executor: Executor, works: list[ShardWork]) -> None:
        self.executor = executor
        pool = works[0].pool if works else None
        self.feed = Feed(pool, works) if pool is not None else None
        if self.feed is not None:
            feed = self.feed
            works = [
                replace(w, first=tuple(feed.take(w.shard, feed.held(w.concurrency)))) for w in works
            ]
        self.works = works
        self._ended: set[int] = set()
        """ids of the fed streams told that no more will come"""
        self._handouts: dict[int, int] = {}
        """id of a fed stream -> the messages sent to it by :meth:`_hand` (hand-outs)"""
        self.failures: list[tuple[SampleJob, BaseException]] = []
        self.restarts = 0
        self._received: set[str] = set()
        """the keys of the samples received (as their outcomes carry them: the driver hashes
        no job's key)"""
        self._streams: set[Any] = set()
        self._started: dict[int, Any] = {}
        """each shard's first stream, started by :meth:`start` before :meth:`play`"""
        self._stopped = False

    def start(self) -> None:
        """Start every shard's worker now, one fork after the other; :meth:`play` takes them
        over. The run starts them before it writes ``run.json`` (fsynced: 7-29 ms), so that
        the workers' start (the fork, the first groups prepared) and that write overlap;
        nothing a worker sends is read, let alone logged, until :meth:`play`. (Started by
        :meth:`play`, each shard's fork waited for the shards before it to start their
        reader threads: the second worker started 13-21 ms after the first fork ended.)
        A run that does not go on to play them calls :meth:`abandon`."""
        for work in self.works:
            if work.shard not in self._started:
                stream = self._started[work.shard] = self._stream(work)
                self._streams.add(stream)

    def _stream(self, work: ShardWork) -> Any:
        """A new stream playing ``work``; a fed one is told at once when nothing more will
        come (its worker takes the word once it plays)."""
        stream: Any = self.executor.stream(play_shard, work)  # (fed: a local stream)
        if self.feed is not None and self.feed.drained(work.shard):
            self._ended.add(id(stream))
            self._hand(stream, None)
        return stream

    def _hand(self, stream: Any, given: list[int] | None) -> None:
        """Send a fed stream ``given`` (None: no more will come), counted."""
        self._handouts[id(stream)] = self._handouts.get(id(stream), 0) + 1
        stream.more(given)

    async def verdicts(self) -> list[Verdict]:
        """Each started shard's verdict on its groups (shards made with ``check``): their
        workers check while the driver waits, each its share (two workers: half the time of
        the driver checking alone). :class:`WorkerLost` or :class:`StreamFailed` if a worker
        ended or its check raised."""
        found: list[Verdict] = []
        for stream in self._started.values():
            batches = stream.batches()
            try:
                batch = await anext(batches)
            except StopAsyncIteration:  # (a stream ends with what it sent: never here)
                raise WorkerLost("a shard ended before it checked its groups") from None
            finally:
                await batches.aclose()
            kind, verdict = batch[0]
            assert kind == "checked", kind
            found.append(verdict)
        return found

    def go(self) -> None:
        """Let the started shards, which have checked their groups, play."""
        for stream in self._started.values():
            stream.go()

    async def abandon(self) -> None:
        """End the workers :meth:`start` started that :meth:`play` did not take over (the run
        failed before playing); nothing when it took them all."""
        started, self._started = list(self._started.values()), {}
        for stream in started:
            stream.stop()
        for stream in started:
            self._streams.discard(stream)
            await stream.close()

    def stop(self) -> None:
        """Start nothing new in any shard; samples in flight finish and are logged."""
        self._stopped = True
        for stream in list(self._streams):
            stream.stop()

    async def play(self, sink: BatchSink) -> None:
        results = await asyncio.gather(
            *(self._shard(work, sink) for work in self.works), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]

    async def _shard(self, work: ShardWork, sink: BatchSink) -> None:
        lost = 0
        while True:
            stream = self._started.pop(work.shard, None) if lost == 0 else None
            if stream is None:
                stream = self._stream(work)
            self._streams.add(stream)
            if self._stopped:
                stream.stop()
            done: set[int] = set()  # places in ``work.jobs`` of the samples received
            try:
                async for batch in stream.batches():
                    await self._receive(batch, work, done, sink, stream)
                return
            except WorkerLost as exc:
                feed = self.feed
                if feed is None:
                    remaining = [index for index in range(len(work.jobs)) if index not in done]
                else:  # what it was handed and did not send back, then what is left for it
                    remaining = sorted(feed.handed[work.shard])
                if self._stopped or not (remaining or (feed and not feed.drained(work.shard))):
                    return
                lost += 1
                if lost > RESTARTS:
                    raise WorkerLost(
                        f"shard {work.shard + 1} of {work.shards} lost its worker {lost} times "
                        f"({redact(str(exc))}); finished samples are kept, run the same command "
                        "to resume"
                    ) from None
                self.restarts += 1
                if feed is None:  # (checked: the run went on)
                    work = replace(work, jobs=[work.jobs[i] for i in remaining], check=False)
                else:
                    given = feed.take(work.shard, feed.held(work.concurrency))
                    work = replace(work, first=(*remaining, *given), check=False)
            except StreamFailed as exc:
                self.stop()
                raise RemoteFailure(redact(str(exc)), redact(exc.text)) from None
            except BaseException:
                self.stop()
                raise
            finally:
                self._streams.discard(stream)
                self._ended.discard(id(stream))
                self._handouts.pop(id(stream), None)
                await stream.close()

    def _feed(self, work: ShardWork, stream: Any) -> None:
        """Hand ``work``'s shard what it lacks (see :class:`Feed`), or tell it that nothing
        more will come."""
        assert self.feed is not None
        given = self.feed.take(work.shard, self.feed.held(work.concurrency))
        if given:
            self._hand(stream, given)
        elif id(stream) not in self._ended and self.feed.drained(work.shard):
            self._ended.add(id(stream))
            self._hand(stream, None)

    async def _receive(
        self,
        batch: list[tuple[str, Any]],
        work: ShardWork,
        done: set[int],
        sink: BatchSink,
        stream: Any,
    ) -> None:
        jobs = work.jobs if work.pool is None else work.pool
        handed = self.feed.handed[work.shard] if self.feed is not None else set()
        kept: Kept = []
        idle: int | None = None  # the hand-outs a fed shard had taken when it ran out of jobs
        for kind, body in batch:
            if kind == "failure":
                index, exc = body
                self.failures.append((jobs[index], exc))
                self.stop()
                continue
            if kind == "idle":
                idle = body
                continue
            index, outcome, line = body
            done.add(index)
            handed.discard(index)
            if outcome.key in self._received:
                continue  # sent again by a restarted shard
            self._received.add(outcome.key)
            kept.append((jobs[index], outcome, line))
        # Idle, having taken every hand-out (one sent since crossed the report: it may hold
        # jobs then), the shard holds no job: were the driver to count some, it would hand it
        # nothing more (the count at its most) or nothing it lacks, and the run would wait.
        stalled = (
            idle is not None
            and not self._stopped
            and idle == self._handouts.get(id(stream), 0)
            and len(handed) > 0
        )
        if self.feed is not None and not self._stopped and not stalled:
            self._feed(work, stream)  # (before the log's commit: the worker waits for it)
        if kept:  # the log commits the batch's lines together (one write and fsync)
            await sink(kept)
        if stalled:
            raise StalledShard(
                f"shard {work.shard + 1} of {work.shards} ran out of jobs while the driver "
                f"counted {len(handed)} it held (an internal error); finished samples are "
                "kept, run the same command to resume"
            )


def _tasks_of(jobs: list[SampleJob], made: dict[int, TypedTask]) -> dict[int, TypedTask]:
    """The typed tasks of ``made`` of the groups of ``jobs``."""
    return {key: made[key] for key in {id(job.group) for job in jobs} if key in made}
