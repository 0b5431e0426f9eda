"""Running an evaluation: concurrency, an append-only JSON Lines log, and safe resumption.

A run directory holds ``run.json`` (the configuration, its SHA-256, and which groups lack
which setting) and ``samples.jsonl`` (one :class:`SampleRecord` a line, appended as each
sample finishes: the whole line in one write, then flush and fsync). Running the same
command again resumes: samples already in the log are not redone. The configuration hash
covers the benchmark's content, the agents, the settings, the seed, the budget, the limit,
the main agent's instructions, the other prompts it reads and the follow-up reader's rules
(:data:`~uncobench_z3.settings.READER_RULES`);
a directory written with another configuration is refused (:class:`ResumeError`) unless
``restart`` (the old log is set aside as ``samples.discarded-<n>.jsonl`` and everything
runs again) or ``force`` (samples whose job key - group content, setting, agent, seed,
budget, epoch, the reader's rules, the prompts it reads (:func:`~._plan.sample_prompts`) -
belongs to the new configuration are kept; the others are set aside).

The log's mechanics (repair after a crash, bad lines, error samples) are in :mod:`._runlog`.

**Epochs.** ``epochs`` K runs every (group, setting, agent, arm) K times, epoch by epoch (all
of epoch 1 first), each with its own seed (:func:`~._sample.epoch_seed`). The epoch count is
not part of the configuration hash: a run made with K epochs is extended to K' > K by running
the same command with ``--epochs K'``, which only adds the new epochs' samples. Asking for
fewer epochs than the directory holds is refused (unless ``force``, which sets the extra
epochs aside), so nothing is dropped by accident.

How many samples run at once (``concurrency``): by default 8, or fewer when a model the run
calls serves fewer calls at once (``Model.connection_limit``: ``,max_connections=N`` in its
name, else the server's parallel slots, 1 for ``local/...``). More samples than the server
has slots only queue for it, and worse: a llama.cpp server keeps one conversation's prompt
in its cache, so interleaved samples make it read every prompt again from the start.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import __version__
from .._eventloop import loop_factory
from .._executor import Executor, StreamFailed, WorkerLost, open_executor
from .._gc import fewer_collections
from .._outdir import check_output_folder, lock_output
from .._secrets import redact, redacted_error, redacted_traceback
from .._textcap import cap_text
from ..errors import ConfigError, UncobenchError
from ..settings import TaskGroup, group_digest
from ..spec import TypedTask, dump_json, write_text_atomic
from ._inputs import check_groups, checked_task
from ._models import CALL_POLICY, close_models
from ._options import DEFAULT_CONCURRENCY, EvalOptions
from ._plan import (
    RunConfig,
    benchmark_digest,
    check_models,
    generation_record,
    models_called,
    plan_jobs,
)
from ._play import Player
from ._registry import check_agent_name, make_agent
from ._runlog import (
    RUN_FILE,
    SAMPLES_FILE,
    LogNotWritten,
    SampleLog,
    prepare_run_dir,
    remove_stale_run_temps,
)
from ._sample import AgentMaker, SampleJob
from ._shards import Kept, RemoteFailure, ShardedPlayer, plan_shards
from ._summary import RunSummary, SampleOutcome

ERRORS_FILE = "errors.log"
RUN_KIND = "uncobench-run"


def _progress(enabled: bool) -> Progress:
    console = Console(stderr=True)
    return Progress(
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        disable=not (enabled and console.is_terminal),  # a log file gets no bar
        transient=False,
    )


async def connection_limits(config: RunConfig) -> list[int]:
    """The connection limit of every model the run calls (agents and colleagues):
    ``,max_connections=N`` or what its server says it serves at once. Each model is made to
    be asked, then closed: the run's samples share handles made under the run's call policy
    (:mod:`._models`)."""
    limits: list[int] = []
    for ref in models_called(config):
        async with ref.create() as model:
            limits.append(await model.connection_limit())
    return limits


async def default_concurrency(config: RunConfig) -> int:
    """:data:`DEFAULT_CONCURRENCY`, or the smallest connection limit of the models the run
    calls (:func:`connection_limits`), if smaller."""
    return min([DEFAULT_CONCURRENCY, *await connection_limits(config)])


async def run_evaluation(
    groups: Sequence[TaskGroup],
    config: RunConfig,
    out: str | Path,
    options: EvalOptions | None = None,
    *,
    agents: AgentMaker = make_agent,
    digests: Sequence[str] | None = None,
    **changes: Any,
) -> RunSummary:
    """Run (or resume) every sample of ``config`` over ``groups``, logging to ``out``.

    ``options`` (:class:`EvalOptions`) say how: concurrency (default
    :func:`default_concurrency`), resumption, the error budget, model-call bounds, and where
    samples are played (this process, local worker processes or a Ray cluster); ``changes``
    override single fields (``concurrency=16``). ``digests`` may pass the groups' content
    hashes (:func:`group_digest`) when the caller has them already; hashing a large
    benchmark twice is not free. A sample whose model calls fail after their retries is
    logged as an error sample; once more than ``max_errors`` (a count, or ``"P%"`` of the
    planned samples) have happened, no new sample starts and the summary says why
    (:attr:`RunSummary.stopped`).
    """
    # The start collects at the pace of the run too (uncobench_z3/_gc.py): at the usual pace,
    # the typed tasks and jobs made before the first sample set off full collections that
    # walk every group (94 ms for one at concurrency 256 with eval_overhead.py's groups).
    with fewer_collections():
        return await _run_evaluation(groups, config, out, options, agents, digests, changes)


async def _run_evaluation(
    groups: Sequence[TaskGroup],
    config: RunConfig,
    out: str | Path,
    options: EvalOptions | None,
    agents: AgentMaker,
    digests: Sequence[str] | None,
    changes: dict[str, Any],
) -> RunSummary:
    options = (options or EvalOptions()).updated(**changes)
    loop_factory()  # the eval workers' event loop can be had (uncobench_z3/_eventloop.py)
    if agents is make_agent:
        for name in config.agents:
            check_agent_name(name)
        await check_models(config)
    selected = groups[: config.limit] if config.limit is not None else groups
    target = Path(out)
    # before any work: one writer of any kind in ``out``, which must be a run folder (or new)
    with lock_output(target, "eval", check=lambda: check_run_folder(target)) as lock:
        if digests is None or len(digests) != len(groups):
            digests = [group_digest(g) for g in groups]
        if benchmark_digest(groups, digests) != config.benchmark_hash:
            raise ConfigError("the run configuration was made for other task groups (content hash)")
        # before any file is written: a model that cannot be made or asked fails here
        limits = await connection_limits(config)
        if options.concurrency is None:
            options = options.updated(concurrency=min([DEFAULT_CONCURRENCY, *limits]))
        jobs, unavailable = plan_jobs(groups, config, digests)
        budget = options.error_budget
        # Before any file is written, every group the run plays is known to be playable:
        # checked by forked workers, each its share (_checked_by_workers), or here. Only
        # local workers may check them: a run on Ray checks them before the cluster is
        # reached (and a local executor starts no process until a shard starts).
        tasks = check_groups(selected) if options.executor.kind != "local" else None
        engine = _executor(options, limits)
        checking: ShardedPlayer | None = None
        try:
            if tasks is None:
                checking = await _checked_by_workers(engine, target, selected, jobs, options,
                                                     limits, agents)  # fmt: skip
                tasks = {} if checking is not None else check_groups(selected)
            run = _Run(target, config, jobs, unavailable, agents, budget.allowed(len(jobs)),
                       budget.describe(), engine, limits, tasks)  # fmt: skip
            _note(lock.stale_note())
            remove_stale_run_temps(target)
            prepared = prepare_run_dir(target, config, lambda: {job.key for job in jobs},
                                       options.restart, options.force)  # fmt: skip
            if prepared.copy is not None:  # nothing leaves the log unsaid
                _note(f"{prepared.what_left(options.restart)}; the whole earlier log is "
                      f"kept in {prepared.copy}")  # fmt: skip
            # the records stay in the log (see RunSummary)
            done = [SampleOutcome.of(record) for record in prepared.done]
            if checking is not None and done:
                # (never under the lock, where a folder without a log has none after
                # prepare_run_dir; were one written by something that takes no lock, the
                # shards play what is left, planned anew)
                await checking.abandon()
                checking = None
            token = CALL_POLICY.set(options.calls)
            try:
                return await run.execute(done, options, checking)
            finally:
                CALL_POLICY.reset(token)
        finally:
            if checking is not None:
                await checking.abandon()  # (nothing when the run's play took its workers over)
            if engine is not None:
                engine.close()


async def _checked_by_workers(
    engine: Executor | None,
    target: Path,
    selected: Sequence[TaskGroup],
    jobs: list[SampleJob],
    options: EvalOptions,
    limits: list[int],
    agents: AgentMaker,
) -> ShardedPlayer | None:
    """The run's shards, started on every job with each worker checking its share of the
    groups first (:attr:`~._shards.ShardWork.check`), once all have passed; None where this
    process checks them instead (:func:`check_groups`): workers that are not forks of this
    process (Ray, or a platform without fork: made in a worker, a typed task would be made
    again for each sample's preparation), a single shard, or a folder holding a log to
    resume (the samples it holds are not played again: the shards are planned once
    :func:`prepare_run_dir` has read it, as before).

    Called holding the folder's lock, once the folder has been checked and found to hold
    no log to resume: a second writer is refused before any worker starts, and every
    sample the plan holds is to be played. A group that cannot be played is refused as
    :func:`check_groups` refuses it (the first in the groups' order), before any file is
    written or any agent made; the workers play only when the driver, having prepared the
    folder, says go (:meth:`_Run.execute`).

    The check is the largest part of the start: 110-130 ms for 1,280 groups at concurrency
    256 with two workers (``benchmarks/eval_overhead.py``), all of it before the first
    sample could start. Each worker checks its groups while the driver waits (the groups no
    job plays, the driver itself): the CPU on the way to the first agent call (the driver's
    until the fork, a worker's until the call) went from 169-172 ms to 100-113 ms (three
    runs each, a machine at load 8-9, the check before the lock in round 27; the wall time
    to it did not move there, the cores being taken)."""
    if engine is None or not engine.forks or len(jobs) == 0:
        return None
    if not options.restart and (target / SAMPLES_FILE).exists():
        return None
    concurrency = options.concurrency or DEFAULT_CONCURRENCY
    wanted = min([engine.slots, *limits])
    works = plan_shards(jobs, wanted, concurrency, options.calls, agents, check=True, fed=True)
    if len(works) == 1:
        return None
    player = ShardedPlayer(engine, works)
    try:
        player.start()
        first = _first_refused(selected, {id(job.group) for job in jobs})
        try:
            verdicts = await player.verdicts()
        except (WorkerLost, StreamFailed):
            await player.abandon()  # this process checks every group, and plays as before
            return None
        refused = [verdict for verdict in verdicts if verdict is not None]
        if refused or first is not None:
            place = {id(group): index for index, group in enumerate(selected)}
            found = [(place[key], message) for key, message in refused]
            if first is not None:
                found.append(first)
            raise ConfigError(min(found)[1])
    except BaseException:
        await player.abandon()
        raise
    return player


def _first_refused(groups: Sequence[TaskGroup], played: set[int]) -> tuple[int, str] | None:
    """The first of ``groups`` that no job plays (``played``: the ids of those some job
    plays) and that cannot be played (its place in ``groups``, the refusal), if any."""
    for index, group in enumerate(groups):
        if id(group) in played:
            continue
        try:
            checked_task(group)
        except ConfigError as exc:
            return index, str(exc)
    return None


def check_run_folder(out: str | Path) -> None:
    """Refuse ``out`` unless it is new, empty or a run folder (a report, a benchmark or
    someone's papers is not)."""
    check_output_folder(out, (RUN_FILE, SAMPLES_FILE), "run folder")


def _executor(options: EvalOptions, limits: list[int]) -> Executor | None:
    """The executor of the run's shards; None to play every sample in this process (one
    local worker, or a model that takes a single connection at a time)."""
    where = options.executor
    if where.kind == "local" and (where.workers or 1) == 1:
        return None
    if where.kind == "local" and min([options.concurrency or 1, *limits]) == 1:
        return None
    return open_executor(where, default_workers=1 if where.kind == "local" else None)


@dataclass
class _Run:
    """One invocation of a run, inside the folder's lock."""

    target: Path
    config: RunConfig
    jobs: list[SampleJob]
    unavailable: dict[str, list[str]]
    agents: AgentMaker
    allowed_errors: int
    max_errors: str
    executor: Executor | None = None
    limits: list[int] = field(default_factory=list)
    """the connection limit of each model the run calls (shards share each out)"""
    tasks: dict[int, TypedTask] = field(default_factory=dict)
    """the groups' typed tasks, made by the input check (by ``id(group)``)"""
    errors: int = 0
    stopped: str | None = None

    def _write_run_file(self) -> None:
        write_text_atomic(
            self.target / RUN_FILE,
            dump_json(
                {
                    "kind": RUN_KIND,
                    "version": __version__,
                    "config": self.config.model_dump(mode="json"),
                    "config_hash": self.config.digest(),
                    "samples": len(self.jobs),
                    "unavailable": self.unavailable,
                    "generation": generation_record(self.config),
                }
            ),
        )

    def _count(self, outcome: SampleOutcome, stop: Callable[[], None]) -> None:
        if outcome.result != "error":
            return
        self.errors += 1
        if self.errors > self.allowed_errors and self.stopped is None:
            stop()  # samples in flight finish; nothing new starts
            error = outcome.error or "unknown error"
            self.stopped = (
                f"stopped after {self.errors} error sample(s) (--max-errors "
                f"{self.max_errors}); the last: {outcome.group_id} / {outcome.setting} / "
                f"{outcome.agent}: {cap_text(error, 300)}"
            )

    def _player(self, queue: list[SampleJob], options: EvalOptions) -> Player | ShardedPlayer:
        """This process's player, or the shards' (``--workers`` > 1, or Ray)."""
        concurrency = options.concurrency or DEFAULT_CONCURRENCY  # resolved by run_evaluation
        # a player here prepares the groups still to play with the tasks the check made
        made, self.tasks = self.tasks, {}
        tasks = {key: made[key] for key in {id(job.group) for job in queue} if key in made}
        if self.executor is None:
            return Player(self.agents, concurrency, tasks)
        wanted = min([self.executor.slots, *self.limits])
        # forked workers prepare their groups with the tasks the check made (as this process
        # would): made again, they cost each worker a structure check a group
        shared = tasks if self.executor.forks else None
        works = plan_shards(queue, wanted, concurrency, options.calls, self.agents, shared,
                            fed=self.executor.forks)  # fmt: skip
        if self.executor.kind == "local" and len(works) == 1:
            return Player(self.agents, concurrency, tasks)
        return ShardedPlayer(self.executor, works)

    async def execute(
        self, done: list[SampleOutcome], options: EvalOptions, checked: ShardedPlayer | None = None
    ) -> RunSummary:
        """Play what is not ``done``; ``checked``: the shards of every job, started already,
        whose workers have checked the groups and wait to be told to go on."""
        finished = {record.key for record in done}
        queue = list(self.jobs)  # (a new run hashes no key here: a sample's record makes it)
        if finished:
            queue = [job for job in queue if job.key not in finished]
        # The loaded benchmark is large and lives for the whole run: moving it out of the
        # collector's reach keeps every garbage collection from scanning it again (the runner
        # is CPU-bound at high concurrency, see benchmarks/eval_overhead.py), and keeps the
        # pages that forked workers share with the driver from being written. Only the
        # youngest generation is collected first: a full collection scans the benchmark too,
        # while every sample waits (172 ms in `uncobench eval` of the 1,000-group benchmark,
        # against 7.6 ms for the two young generations, both finding the same 33 objects), and
        # since the start collects at the run's pace the middle one holds every typed task and
        # job (17.5-25 ms at concurrency 256 with eval_overhead.py's groups, against 1.9-2.3 ms
        # for the youngest, all three finding the same 33 objects); garbage already in the
        # older generations would stay frozen until the run ends.
        if checked is not None:
            # their workers have checked the groups: they play from now on, while this
            # process collects, freezes and writes run.json
            checked.go()
        gc.collect(0)
        gc.freeze()
        outcomes = list(done)
        player = checked if checked is not None else self._player(queue, options)
        log: SampleLog | None = None
        if isinstance(player, ShardedPlayer):
            player.start()  # the workers start while run.json is written (see ShardedPlayer)
        try:
            self._write_run_file()  # on disk before the log is opened (a log alone is refused)
            log = SampleLog(self.target / SAMPLES_FILE)
            # playing, collect less often too (see uncobench_z3/_gc.py)
            with _progress(options.progress) as bar, fewer_collections():
                task_id = bar.add_task("", total=len(self.jobs), completed=len(done))

                def kept(job: SampleJob, outcome: SampleOutcome) -> None:
                    """``job``'s sample is in the log: counted, and shown."""
                    outcomes.append(outcome)
                    self._count(outcome, player.stop)
                    if not bar.disable:
                        bar.update(task_id, advance=1, description=f"{job.group.id} {job.setting}")

                async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
                    assert log is not None
                    await log.append_line(line)
                    kept(job, outcome)

                async def sink_batch(batch: Kept) -> None:
                    assert log is not None
                    await log.append_lines([line for _, _, line in batch])
                    for job, outcome, _ in batch:
                        kept(job, outcome)

                if isinstance(player, ShardedPlayer):
                    await player.play(sink_batch)
                else:
                    await player.play(queue, sink)
        finally:
            if isinstance(player, ShardedPlayer):
                await player.abandon()  # workers that play() never took over (a write failed)
            if log is not None:
                log.close()
            gc.unfreeze()
            await close_models()
        if player.failures:
            raise _failure(self.target, player.failures)
        return RunSummary(
            self.target,
            self.config,
            outcomes,
            ran=len(outcomes) - len(done),
            reused=len(done),
            unavailable=self.unavailable,
            errors=sum(outcome.result == "error" for outcome in outcomes),
            stopped=self.stopped,
        )


def _failure(out: Path, failures: list[tuple[SampleJob, BaseException]]) -> BaseException:
    job, exc = failures[0]
    if isinstance(exc, UncobenchError) and not isinstance(exc, RemoteFailure):
        return exc
    if isinstance(exc, LogNotWritten):
        return exc  # the log's, not the sample's: it names the log and says what is kept
    if not isinstance(exc, Exception):
        return exc  # not an error of the run's (a test's pytest.fail, a kill): as it is
    remote = getattr(exc, "remote_traceback", None)
    text = redact(remote) if remote else redacted_traceback(exc)
    with (out / ERRORS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(f"sample {job.group.id} / {job.setting} / {job.agent}:\n{text}\n")
    return UncobenchError(
        f"sample {job.group.id} / {job.setting} / {job.agent} failed: "
        f"{redacted_error(exc)} (traceback in {out / ERRORS_FILE}); finished samples "
        "are kept, run the same command to resume"
    )


def _note(text: str | None) -> None:
    """One line on stderr about what the run did to the folder (nothing when ``text`` is None)."""
    if text:
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"[yellow]note:[/] {escape(text)}"
        )


def evaluate(
    groups: Sequence[TaskGroup],
    config: RunConfig,
    out: str | Path,
    options: EvalOptions | None = None,
    **changes: Any,
) -> RunSummary:
    """:func:`run_evaluation` from synchronous code."""
    return asyncio.run(run_evaluation(groups, config, out, options, **changes))
