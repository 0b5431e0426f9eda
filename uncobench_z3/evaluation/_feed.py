"""Eval shards fed by the driver as they free up (forked local workers): which groups go to
which shard, and when (see :class:`Feed`; the messages are :mod:`._shards`')."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._sample import SampleJob

if TYPE_CHECKING:
    from ._shards import ShardWork

AHEAD = 2
"""a fed shard (forked local workers, :class:`Feed`) is handed groups until it holds jobs
not yet sent back for ``1 + AHEAD`` times its concurrency: its slots' episodes, the samples
its last window gathered (:data:`~uncobench_z3._executor.SEND_WINDOW_S`) and a queue, so
that no slot waits for the driver's answer (it asks early, sending what it gathered at once,
when its queue falls below half its concurrency). Towards the end, less: no more than its
share of the jobs not yet handed out beyond its concurrency, so that the shards' queues
are short when the last groups are handed out (with three times its concurrency to the end,
the two workers' last samples still came 0.29-0.49 s apart on a loaded machine)."""


class Feed:
    """The driver's hand-out of a run's jobs to shards fed as they free up (forked local
    workers): by group, so that each group is still prepared in one worker only.

    The jobs (``pool``) are cut into *units*, the runs of consecutive jobs of one group (a
    group's jobs of one epoch). A shard is handed whole units, in the run's order: first
    those of groups it already plays or that its split's share holds (the groups it checked
    and has typed tasks for), then, once those are gone, the first unit of a group no shard
    plays yet (taken from another shard's share: a slower worker's groups go to the one that
    freed up, and the two end together). A group's later units (its next epochs) go to the
    shard that played its first. With a fixed split, the shard whose worker had the smaller
    share of the cores set the wall time: at concurrency 256 over two workers
    (``benchmarks/eval_overhead.py``, a loaded machine) their last samples came 0.01-2.0 s
    apart."""

    def __init__(self, pool: list[SampleJob], works: Sequence[ShardWork]) -> None:
        share: dict[int, int] = {}  # id(group) -> the shard whose split holds it
        for work in works:
            for job in work.jobs:
                share[id(job.group)] = work.shard
        self.units: list[tuple[int, int]] = []  # (start, end) in ``pool``
        self._groups: list[int] = []
        for place, job in enumerate(pool):
            if self._groups and self._groups[-1] == id(job.group):
                self.units[-1] = (self.units[-1][0], place + 1)
            else:
                self.units.append((place, place + 1))
                self._groups.append(id(job.group))
        self._share = [share[group] for group in self._groups]
        self._units_of: dict[int, list[int]] = {}
        for unit, group in enumerate(self._groups):
            self._units_of.setdefault(group, []).append(unit)
        self._taken = [False] * len(self.units)
        self._owner: dict[int, int] = {}  # id(group) -> the shard that plays it
        shards = self.shards = len(works)
        self._own = [0] * shards
        """each shard's cursor for its own units: those before are taken or not its own"""
        self._any = [0] * shards
        """each shard's cursor for units it may take: those before are taken or another's"""
        self._later: list[list[int]] = [[] for _ in range(shards)]
        """each shard's heap of the later units of the groups it took over"""
        self.handed: list[set[int]] = [set() for _ in range(shards)]
        """places in ``pool`` handed to each shard whose sample has not come back"""
        self.untaken = len(pool)
        """jobs not handed out yet"""
        self.taken_over: set[int] = set()
        """ids of the groups a shard took from another's share"""

    def _next(self, shard: int) -> int | None:
        """The unit ``shard`` is to take next, if any (see the class docstring): the first of
        its own (by its cursor, or among the later units of the groups it took over, which
        its cursor may have passed), else the first it may take."""
        units, taken, owner, groups = len(self.units), self._taken, self._owner, self._groups
        at = self._own[shard]
        while at < units and (taken[at] or owner.get(groups[at], self._share[at]) != shard):
            at += 1
        self._own[shard] = at
        later = self._later[shard]
        while later and taken[later[0]]:
            heapq.heappop(later)
        if later and later[0] < at:
            return later[0]
        if at < units:
            return at
        at = self._any[shard]
        while at < units and (taken[at] or owner.get(groups[at], shard) != shard):
            at += 1
        self._any[shard] = at
        return at if at < units else None

    def take(self, shard: int, jobs: int) -> list[int]:
        """Units for ``shard`` until it holds ``jobs`` jobs handed and not sent back (or
        none is left for it): their places in ``pool``, in order."""
        places: list[int] = []
        handed = self.handed[shard]
        while len(handed) + len(places) < jobs:
            unit = self._next(shard)
            if unit is None:
                break
            self._taken[unit] = True
            start, end = self.units[unit]
            self.untaken -= end - start
            group = self._groups[unit]
            if group not in self._owner:
                self._owner[group] = shard
                if self._share[unit] != shard:
                    self.taken_over.add(group)
                    for later in self._units_of[group]:
                        if later > unit:
                            heapq.heappush(self._later[shard], later)
            places.extend(range(start, end))
        handed.update(places)
        return places

    def held(self, concurrency: int) -> int:
        """How many jobs a shard of ``concurrency`` is handed and not yet sent back at most
        (see :data:`AHEAD`)."""
        return concurrency + min(AHEAD * concurrency, self.untaken // self.shards)

    def drained(self, shard: int) -> bool:
        """No unit is left for ``shard`` (nor will be: the others' groups stay theirs)."""
        return self._next(shard) is None
