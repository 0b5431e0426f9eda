"""Running an evaluation: concurrency, an append-only JSON Lines log, and safe resumption.

A run directory holds ``run.json`` (the configuration, its SHA-256, and which groups lack
which setting) and ``samples.jsonl`` (one :class:`SampleRecord` a line, appended as each
sample finishes: the whole line in one write, then flush and fsync). Running the same
command again resumes: samples already in the log are not redone. The configuration hash
covers the benchmark's content, the agents, the settings, the seed, the budget, the limit
and the main agent's instructions;
a directory written with another configuration is refused (:class:`ResumeError`) unless
``restart`` (the old log is set aside as ``samples.discarded-<n>.jsonl`` and everything
runs again) or ``force`` (samples whose job key - group content, setting, agent, seed,
budget - belongs to the new configuration are kept; the others are set aside).

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
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import __version__
from .._executor import Executor, open_executor
from .._gc import fewer_collections
from .._outdir import check_output_folder, lock_output
from .._secrets import redact, redacted_error, redacted_traceback
from .._textcap import cap_text
from ..construct import ModelRef, model_with_defaults
from ..errors import ConfigError, UncobenchError
from ..settings import SETTING_NAMES, SettingName, TaskGroup, group_digest
from ..spec import TypedTask, dump_json, write_text_atomic
from ._colleagues import FollowUpReader
from ._environment import ColleagueMode
from ._inputs import check_groups
from ._interventions import INTERVENTION_ARMS, InterventionArm
from ._models import CALL_POLICY, close_models
from ._options import DEFAULT_CONCURRENCY, EvalOptions
from ._play import Player
from ._protocol import DEFAULT_BUDGET, default_instructions
from ._registry import check_agent_name, configuration_name, is_model_agent, make_agent
from ._runlog import (
    RUN_FILE,
    SAMPLES_FILE,
    SampleLog,
    prepare_run_dir,
    remove_stale_run_temps,
)
from ._sample import JOB_IDENTITY, AgentMaker, SampleJob
from ._shards import RemoteFailure, ShardedPlayer, plan_shards
from ._summary import RunSummary, SampleOutcome

ERRORS_FILE = "errors.log"
RUN_KIND = "uncobench-run"


class RunConfig(BaseModel):
    """What a run's results depend on (the benchmark's path is kept for the report only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    benchmark_hash: str
    agents: tuple[str, ...]
    settings: tuple[SettingName, ...] = SETTING_NAMES
    seed: int = 0
    budget: int = DEFAULT_BUDGET
    limit: int | None = None
    instructions_hash: str = ""
    """SHA-256 of the main agent's instructions (what an LLM agent is told changes results)"""
    colleague: str = "scripted"
    interventions: tuple[InterventionArm, ...] = ("none",)
    epochs: int = 1
    """trials per (group, setting, agent, arm); not hashed: a run grows by epochs"""
    missed_wait: int | None = None
    """overrides the groups' Missed policy (wait rounds before a missed reply arrives)"""
    followup_reader: FollowUpReader = "rules"
    colleague_mode: ColleagueMode = "phrase"
    """with a colleague model: ``phrase`` the scripted replies, or write them (``policy``)"""

    def digest(self) -> str:
        # fields left at their defaults stay out of the hash, so earlier runs still resume;
        # options that cannot change a result (max_connections) stay out too
        fields = self.model_dump(mode="json", exclude={"benchmark", "epochs"})
        fields["job_identity"] = JOB_IDENTITY
        fields["agents"] = [configuration_name(a) for a in self.agents]
        fields["colleague"] = configuration_name(self.colleague)
        if self.colleague == "scripted":
            fields.pop("colleague")
        if self.interventions == ("none",):
            fields.pop("interventions")
        for name, default in (
            ("missed_wait", None),
            ("followup_reader", "rules"),
            ("colleague_mode", "phrase"),
        ):
            if fields.get(name) == default:
                fields.pop(name)
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def benchmark_digest(groups: Sequence[TaskGroup], digests: Sequence[str] | None = None) -> str:
    """SHA-256 over the groups' content hashes (``digests``, if already computed), in order."""
    joined = "\n".join(digests if digests is not None else [group_digest(g) for g in groups])
    return hashlib.sha256(joined.encode()).hexdigest()


def make_config(
    benchmark: str | Path,
    groups: Sequence[TaskGroup],
    agents: Sequence[str],
    settings: Sequence[SettingName] | None = None,
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    limit: int | None = None,
    digests: Sequence[str] | None = None,
    colleague: str = "scripted",
    interventions: Sequence[InterventionArm] = ("none",),
    epochs: int = 1,
    missed_wait: int | None = None,
    followup_reader: FollowUpReader = "rules",
    colleague_mode: ColleagueMode = "phrase",
) -> RunConfig:
    """The configuration of a run (``digests``: the groups' content hashes, if computed).

    ``colleague`` is ``scripted`` or a model that phrases the replies (``colleague_mode``
    ``phrase``) or writes them under the policy (``policy``); ``interventions`` are
    the arms each defective setting runs in (``none`` is the plain evaluation); ``epochs``
    the independent trials of each sample.
    """
    if not agents:
        raise ConfigError("name at least one agent (--agent builtin/careful)")
    if epochs < 1:
        raise ConfigError(f"--epochs must be at least 1, not {epochs}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, not {limit}")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, not {budget}")
    if missed_wait is not None and missed_wait < 0:
        raise ConfigError(f"--missed-wait must be 0 or more, not {missed_wait}")
    if followup_reader not in ("rules", "model"):
        raise ConfigError(f"--followup-reader must be rules or model, not {followup_reader!r}")
    if followup_reader == "model" and colleague == "scripted":
        raise ConfigError("--followup-reader model needs a --colleague-model to read with")
    if colleague_mode not in ("phrase", "policy"):
        raise ConfigError(f"--colleague-mode must be phrase or policy, not {colleague_mode!r}")
    if colleague_mode == "policy" and colleague == "scripted":
        raise ConfigError("--colleague-mode policy needs a --colleague-model to play the roles")
    chosen = tuple(dict.fromkeys(settings or SETTING_NAMES))
    unknown = [s for s in chosen if s not in SETTING_NAMES]
    if unknown:
        raise ConfigError(f"unknown setting(s) {unknown}; choose from {list(SETTING_NAMES)}")
    return RunConfig(
        benchmark=str(benchmark),
        benchmark_hash=benchmark_digest(groups, digests),
        agents=tuple(dict.fromkeys(agents)),
        settings=tuple(s for s in SETTING_NAMES if s in chosen),
        seed=seed,
        budget=budget,
        limit=limit,
        instructions_hash=hashlib.sha256(default_instructions().encode()).hexdigest()[:16],
        colleague=_check_colleague(colleague),
        interventions=tuple(a for a in INTERVENTION_ARMS if a in set(interventions or ("none",)))
        or ("none",),
        epochs=epochs,
        missed_wait=missed_wait,
        followup_reader=followup_reader,
        colleague_mode=colleague_mode,
    )


def _check_colleague(colleague: str) -> str:
    if colleague == "scripted":
        return colleague
    return ModelRef.parse(colleague).describe()  # normalised, and bad options fail early


def _models_called(config: RunConfig) -> list[ModelRef]:
    """Every model the run will call: LLM agents and an LLM colleague."""
    from ._llm_agent import parse_agent_options

    refs = [parse_agent_options(name)[0] for name in config.agents if is_model_agent(name)]
    if config.colleague != "scripted":
        refs.append(model_with_defaults(config.colleague))
    return refs


async def check_models(config: RunConfig) -> None:
    """Create (and close) every model the run will call, so an unknown provider, a missing
    key or a bad setting fails before any file is written."""
    for ref in _models_called(config):
        await ref.create().aclose()


MAX_EPOCHS = 1000
"""the most epochs a run may have: every job of every epoch is planned in memory at once"""


def plan_jobs(
    groups: Sequence[TaskGroup], config: RunConfig, digests: Sequence[str] | None = None
) -> tuple[list[SampleJob], dict[str, list[str]]]:
    """Every sample of the run in a fixed order (epoch by epoch), and setting -> groups that
    lack it.

    ``digests`` may pass the groups' content hashes when they are already computed.
    """
    if not 1 <= config.epochs <= MAX_EPOCHS:
        raise ConfigError(f"--epochs must lie between 1 and {MAX_EPOCHS}, not {config.epochs}")
    chosen = groups[: config.limit] if config.limit is not None else groups
    jobs: list[SampleJob] = []
    unavailable: dict[str, list[str]] = {}
    # The first job is validated; the others are copies of it with the group, setting, agent
    # and arm changed (values of the same types, checked already: the groups when made, the
    # rest in ``config``). Validating each job ran the group's reference checks again: 0.32 s
    # of a run's start at 6,144 jobs, before any sample could begin.
    first: SampleJob | None = None
    for index, group in enumerate(chosen):
        digest = digests[index] if digests is not None else group_digest(group)
        for setting in config.settings:
            if not group.setting(setting).available:
                unavailable.setdefault(setting, []).append(group.id)
                continue
            # interventions only mean something where a defect can show
            arms = config.interventions if setting != "reliable" else ("none",)
            for agent in config.agents:
                for arm in arms:
                    if first is None:
                        first = SampleJob.make(
                            group,
                            setting,
                            agent,
                            config.seed,
                            config.budget,
                            digest,
                            config.colleague,
                            arm,
                            missed_wait=config.missed_wait,
                            followup_reader=config.followup_reader,
                            colleague_mode=config.colleague_mode,
                        )
                        jobs.append(first)
                        continue
                    update = {
                        "group": group,
                        "setting": setting,
                        "agent": agent,
                        "intervention": arm,
                        "group_hash": digest,
                    }
                    jobs.append(first.model_copy(update=update))
    # every epoch repeats the same plan; all of epoch 1 comes first
    epochs = range(2, config.epochs + 1)
    jobs += [job.model_copy(update={"epoch": epoch}) for epoch in epochs for job in jobs]
    return jobs, unavailable


# -- running ----------------------------------------------------------------------------------
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
    for ref in _models_called(config):
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
    if agents is make_agent:
        for name in config.agents:
            check_agent_name(name)
        await check_models(config)
    # before the folder is touched: every group the run plays can be played
    tasks = check_groups(groups[: config.limit] if config.limit is not None else groups)
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
        # workers are reached (a Ray cluster connected to) before any file is written
        engine = _executor(options, limits)
        run = _Run(target, config, jobs, unavailable, agents, budget.allowed(len(jobs)),
                   budget.describe(), engine, limits, tasks)  # fmt: skip
        try:
            _note(lock.stale_note())
            remove_stale_run_temps(target)
            prepared = prepare_run_dir(target, config, lambda: {job.key for job in jobs},
                                       options.restart, options.force)  # fmt: skip
            if prepared.copy is not None:  # nothing leaves the log unsaid
                _note(f"{prepared.what_left(options.restart)}; the whole earlier log is "
                      f"kept in {prepared.copy}")  # fmt: skip
            # the records stay in the log (see RunSummary)
            done = [SampleOutcome.of(record) for record in prepared.done]
            token = CALL_POLICY.set(options.calls)
            try:
                return await run.execute(done, options)
            finally:
                CALL_POLICY.reset(token)
        finally:
            if engine is not None:
                engine.close()


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
        works = plan_shards(queue, wanted, concurrency, options.calls, self.agents, shared)
        if self.executor.kind == "local" and len(works) == 1:
            return Player(self.agents, concurrency, tasks)
        return ShardedPlayer(self.executor, works)

    async def execute(self, done: list[SampleOutcome], options: EvalOptions) -> RunSummary:
        self._write_run_file()
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
        gc.collect(0)
        gc.freeze()
        outcomes = list(done)
        player = self._player(queue, options)
        log: SampleLog | None = None
        try:
            log = SampleLog(self.target / SAMPLES_FILE)
            # playing, collect less often too (see uncobench_z3/_gc.py)
            with _progress(options.progress) as bar, fewer_collections():
                task_id = bar.add_task("", total=len(self.jobs), completed=len(done))

                async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
                    assert log is not None
                    await log.append_line(line)
                    outcomes.append(outcome)
                    self._count(outcome, player.stop)
                    if not bar.disable:
                        bar.update(task_id, advance=1, description=f"{job.group.id} {job.setting}")

                if isinstance(player, ShardedPlayer):
                    await player.play(sink)
                else:
                    await player.play(queue, sink)
        finally:
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


def generation_record(config: RunConfig) -> dict[str, dict[str, object]]:
    """What decides each agent's (and an LLM colleague's) sampling, for ``run.json``: the
    generation settings its name gives (temperatures stay the provider's default unless set)
    and the seed, which is the epoch seed unless the name pins one."""
    from ._llm_agent import generation_settings, model_generation
    from ._registry import BUILTIN_AGENTS

    record: dict[str, dict[str, object]] = {}
    for name in config.agents:
        if name in BUILTIN_AGENTS:
            record[name] = {"kind": "builtin", "seed": "per epoch"}
            continue
        try:
            record[name] = generation_settings(name)
        except ConfigError:
            record[name] = {"kind": "registered", "seed": "per epoch"}
    if config.colleague != "scripted":
        colleague = model_with_defaults(config.colleague)
        record[f"colleague:{config.colleague}"] = model_generation(colleague)
    return record


def _failure(out: Path, failures: list[tuple[SampleJob, BaseException]]) -> UncobenchError:
    job, exc = failures[0]
    if isinstance(exc, UncobenchError) and not isinstance(exc, RemoteFailure):
        return exc
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
