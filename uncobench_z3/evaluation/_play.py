"""Playing samples in one event loop: ``concurrency`` episodes at once.

:class:`Player` is the runner's engine, in the driver (``--workers 1``) and in every eval
shard (:mod:`._shards`). It takes jobs from its queue in order, plays each with
:func:`~._run_sample.run_sample` and hands the sample's outcome (what the run's summary and
error budget keep of it) and its log line to a *sink* (the driver writes the log; a shard
sends both to the driver, which then need not parse the line again). Each group's derived
data (:class:`~._prepared.PreparedGroup`: typed task, rendering, the colleagues' record
book with its remembered readings) is made once and shared by every sample of the group.
When a group's last queued sample has finished, the player lets it go, with what the process
remembers of the group elsewhere (its vocabulary, solver labels and judge, minimum rounds):
a run over a large benchmark then holds only the groups in play, not every group it played.

A sample that raises (a bug, not a model error: those become error samples) stops the
player: samples in flight finish, nothing new starts, and :attr:`Player.failures` says what
failed. :meth:`Player.stop` ends the queue the same way (``--max-errors``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable, MutableMapping
from typing import Any

from ..settings import TaskGroup, forget_vocabulary, group_digest
from ..spec import TypedTask
from ._attribution import forget_group
from ._environment import PreparedGroup
from ._errors import cap_record
from ._min_rounds import forget_minimum_rounds
from ._run_sample import PlayedSample, play_sample
from ._sample import AgentMaker, SampleJob
from ._summary import SampleOutcome

Sink = Callable[[SampleJob, SampleOutcome, str], Awaitable[None]]
"""``sink(job, outcome, line)``: where a finished sample goes (awaited by the task that scores
the sample, while its slot plays the next one; see :meth:`Player.play`)."""
PREPARED_GROUPS = 4096
"""groups whose prepared data a player keeps (the least recently used go first)"""
PASSED_ON = (asyncio.CancelledError, KeyboardInterrupt, SystemExit, GeneratorExit)
"""what a sample may raise that goes up as it is (a cancel, an interrupt, a closed
coroutine); anything else it raises is the run's failure. Catching only ``Exception`` let
another ``BaseException`` (``pytest.fail`` in a patched test, an agent's own kind) end its
slot quietly: the slot's task kept it, its done callback dropped it, and the run went on
without the sample and without a failure."""


def _nothing() -> None:
    pass


def let_group_go(
    prepared: MutableMapping[int, PreparedGroup], group: TaskGroup, group_hash: str = ""
) -> None:
    """Let ``group`` go once its last sample has finished: its prepared data in ``prepared``
    (by ``id(group)``), and what the process remembers of it elsewhere (its vocabulary,
    solver labels and judge, minimum rounds). ``group_hash``: its digest, if known. What
    :class:`Player` does after a group's last sample; benchmarks/eval_overhead.py's first
    passes do the same, so that they keep alive what a run keeps."""
    found = prepared.get(id(group))
    if found is not None and found.group is group:
        del prepared[id(group)]
        forget_vocabulary(found.task)
    digest = group_hash or group_digest(group)
    forget_group(digest)
    forget_minimum_rounds(digest)


class Player:
    """Plays queued jobs, ``concurrency`` at once (see the module docstring)."""

    def __init__(
        self, agents: AgentMaker, concurrency: int, tasks: dict[int, TypedTask] | None = None
    ) -> None:
        """``tasks``: groups' typed tasks made already (by ``id(group)``; each is used once)."""
        self.agents = agents
        self.concurrency = max(1, concurrency)
        self._tasks = tasks or {}
        self.queue: deque[SampleJob] = deque()
        self.failures: list[tuple[SampleJob, BaseException]] = []
        self._prepared: OrderedDict[int, PreparedGroup] = OrderedDict()
        self._left: dict[int, int] = {}
        """id of a group -> its samples queued or in play (the jobs hold the group alive)"""
        self._fed = False
        """more jobs may still be added while playing (:meth:`expect_more`)"""
        self._ask: Callable[[], None] = _nothing
        self._waiting: Callable[[], None] = _nothing
        self._low = 0
        self._asked = False
        self._idle = 0
        """slots that ended for want of a job while more may come"""
        self._start: Callable[[Coroutine[Any, Any, None]], None] | None = None
        self._slot: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._arrived = asyncio.Event()

    def prepared(self, group: TaskGroup) -> PreparedGroup:
        """The group's prepared data, made on first use."""
        found = self._prepared.get(id(group))
        if found is None or found.group is not group:
            task = self._tasks.pop(id(group), None)
            found = self._prepared[id(group)] = PreparedGroup.of(group, task)
            while len(self._prepared) > PREPARED_GROUPS:
                self._prepared.popitem(last=False)
        else:
            self._prepared.move_to_end(id(group))
        return found

    def _finished(self, job: SampleJob) -> None:
        """One sample of ``job.group`` is done: after its last, let the group go."""
        key = id(job.group)
        left = self._left.get(key, 0) - 1
        if left > 0:
            self._left[key] = left
            return
        self._left.pop(key, None)
        let_group_go(self._prepared, job.group, job.group_hash)

    def stop(self) -> None:
        """Start nothing new; samples in flight finish."""
        self.queue.clear()
        self.no_more()

    def expect_more(
        self, low: int, ask: Callable[[], None], waiting: Callable[[], None] = _nothing
    ) -> None:
        """Play on when the queue is empty, until :meth:`no_more`: jobs are added while
        playing (:meth:`add`; an eval shard fed by the driver as it frees up, see
        :mod:`._shards`). ``ask`` is called once the queue holds fewer than ``low`` jobs,
        and again once an addition has filled it to ``low`` or more (an addition that left
        it short, as the last ones of a run do, is not asked after again: an eval shard then
        sent a message, and its driver committed the log, every few samples). ``waiting``
        is called each time every slot has ended for want of a job (every sample played was
        handed to the sink) and the player waits for more: an eval shard reports it, so
        that its driver sees a count of the jobs the shard holds that is wrong (the shard
        would wait for ever) instead of waiting for it too."""
        self._fed, self._low, self._ask, self._asked = True, low, ask, False
        self._waiting = waiting

    def add(self, jobs: Iterable[SampleJob]) -> None:
        """Queue ``jobs``; slots idle for want of one take them at once."""
        if not self._fed:
            return  # stopped (or no more expected): nothing new starts
        self._count(jobs)
        self._asked = len(self.queue) < self._low
        if self._start is not None and self._slot is not None:
            woken = min(self._idle, len(self.queue))
            self._idle -= woken
            for _ in range(woken):
                self._start(self._slot())
        self._arrived.set()

    def no_more(self) -> None:
        """No job will be added: the play ends once the queue is played."""
        self._fed = False
        self._arrived.set()

    def _count(self, jobs: Iterable[SampleJob]) -> None:
        queued = list(jobs)
        for job in queued:
            self._left[id(job.group)] = self._left.get(id(job.group), 0) + 1
        self.queue.extend(queued)

    async def play(self, jobs: Iterable[SampleJob], sink: Sink) -> None:
        """Play ``jobs`` (and whatever else is queued meanwhile) until the queue is empty, a
        sample fails, or :meth:`stop`.

        Each of the ``concurrency`` slots plays one episode at a time. When an episode ends,
        its slot goes on with the next job at once, and the played episode is scored and
        handed to the sink in a task of its own, after the episode steps that are ready by
        then: scoring a new group's episode (its minimum rounds, attribution, notes) costs
        milliseconds, and when many episodes end together, scoring each in its slot held up
        every episode waiting behind it (and the next job waited for the log's fsync). A
        played episode is always scored and kept, even when the run is interrupted while it
        waits; an episode still being played when the run stops is dropped, as before. An
        error sample is kept before its slot goes on, so that ``--max-errors`` (which stops
        the queue from the sink) starts nothing after it.
        """
        self._count(jobs)
        tasks: set[asyncio.Task[None]] = set()

        def start(coroutine: Coroutine[Any, Any, None]) -> None:
            task = asyncio.create_task(coroutine)
            tasks.add(task)
            task.add_done_callback(ended)

        def ended(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            if not task.cancelled():
                task.exception()  # retrieved: an interrupt raised in it has gone up already

        async def slot() -> None:
            if not self.queue or self.failures:
                if self._fed and not self.failures:
                    self._idle += 1  # (started again by add)
                return
            job = self.queue.popleft()
            if self._fed and not self._asked and len(self.queue) < self._low:
                self._asked = True
                self._ask()
            try:
                played = await play_sample(job, self.agents, self.prepared(job.group))
            except PASSED_ON:
                raise
            except BaseException as exc:  # a bug, not a model error: stop
                self.failures.append((job, exc))
                return
            failed = played.error is not None
            keeping = self._keep(played, sink)
            del played  # (held by the keeping alone, which lets it go once scored: see _keep)
            if failed:
                # an error sample may stop the run (--max-errors, a broken server): it is
                # kept before the slot starts anything else. Errors are rare: no cost.
                await keeping
                start(slot())
                return
            start(slot())  # the slot's next episode
            try:
                await asyncio.sleep(0)  # the episode steps ready now go first
            finally:  # a played episode is kept, even when the run is interrupted here
                await keeping

        self._start, self._slot = start, slot
        first = min(self.concurrency, len(self.queue)) or 1
        if self._fed:
            self._idle += self.concurrency - first
        for _ in range(first):
            start(slot())
        try:
            # slots start one another (and add() idle ones): wait until the last has ended
            # and no job can come
            while tasks or (self._fed and not self.failures):
                if tasks:
                    await asyncio.wait(set(tasks))
                else:
                    self._arrived.clear()
                    self._waiting()
                    await self._arrived.wait()
        finally:
            self._start = self._slot = None
            self._idle = 0
            # interrupted: episodes in play are dropped, played ones are still kept
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # nothing is in play any more (stopped, or a sample failed): let all go
            for prepared in list(self._prepared.values()):
                let_group_go(self._prepared, prepared.group)
            self._left.clear()

    async def _keep(self, played: PlayedSample, sink: Sink) -> None:
        """Score a played episode and hand its record to ``sink``."""
        job = played.job
        try:
            stored, line = cap_record(await played.score())
            outcome = SampleOutcome.of(stored)
            # The episode (its environment, trace, readings), its record and, after its
            # group's last sample, the group's prepared data are let go before the sink is
            # awaited: the driver's sink waits for the log's fsync, and while the event loop
            # is busy, hundreds of samples wait there at once (876 of the 1,132 episodes
            # alive at a middle-generation collection of a run over 320 groups at
            # concurrency 256), each holding a few hundred objects that every collection
            # walked, and that added to the run's memory.
            del played, stored
            self._finished(job)
            await sink(job, outcome, line)
        except PASSED_ON:
            raise
        except BaseException as exc:  # a bug, not a model error: stop
            self.failures.append((job, exc))
