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

A crash can leave at most a partial last line; it is dropped on resume.

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
import os
import traceback
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import __version__
from ..construct import ModelRef
from ..errors import ConfigError, ResumeError, UncobenchError
from ..settings import SETTING_NAMES, SettingName, TaskGroup
from ..spec import dump_json, load_json, write_text_atomic
from ._colleagues import FollowUpReader
from ._environment import PreparedGroup
from ._interventions import INTERVENTION_ARMS, InterventionArm
from ._llm_agent import agent_models
from ._models import close_models, shared_model
from ._protocol import DEFAULT_BUDGET, default_instructions
from ._registry import check_agent_name, configuration_name, make_agent
from ._sample import JOB_IDENTITY, AgentMaker, SampleJob, SampleRecord, group_digest, run_sample

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
ERRORS_FILE = "errors.log"
RUN_KIND = "uncobench-run"
DEFAULT_CONCURRENCY = 8


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
        for name, default in (("missed_wait", None), ("followup_reader", "rules")):
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
) -> RunConfig:
    """The configuration of a run (``digests``: the groups' content hashes, if computed).

    ``colleague`` is ``scripted`` or a model that phrases the replies; ``interventions`` are
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
    )


def _check_colleague(colleague: str) -> str:
    if colleague == "scripted":
        return colleague
    return ModelRef.parse(colleague).describe()  # normalised, and bad options fail early


def plan_jobs(
    groups: Sequence[TaskGroup], config: RunConfig, digests: Sequence[str] | None = None
) -> tuple[list[SampleJob], dict[str, list[str]]]:
    """Every sample of the run in a fixed order (epoch by epoch), and setting -> groups that
    lack it.

    ``digests`` may pass the groups' content hashes when they are already computed.
    """
    chosen = groups[: config.limit] if config.limit is not None else groups
    jobs: list[SampleJob] = []
    unavailable: dict[str, list[str]] = {}
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
                    jobs.append(
                        SampleJob.make(
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
                        )
                    )
    # every epoch repeats the same plan; all of epoch 1 comes first
    epochs = range(2, config.epochs + 1)
    jobs += [job.model_copy(update={"epoch": epoch}) for epoch in epochs for job in jobs]
    return jobs, unavailable


@dataclass(repr=False)
class RunSummary:
    """What a run did. (Its repr is short on purpose: ``asyncio.run`` may format the result
    of its main task, and the records can be megabytes.)"""

    out: Path
    config: RunConfig
    records: list[SampleRecord]
    ran: int
    reused: int
    unavailable: dict[str, list[str]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"RunSummary({str(self.out)!r}, records={len(self.records)}, ran={self.ran})"


# -- the log ----------------------------------------------------------------------------------
def read_log(path: Path) -> tuple[list[SampleRecord], bool]:
    """The records of a log, and whether a partial last line (a crash) had to be dropped."""
    if not path.exists():
        return [], False
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    records = []
    truncated = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(SampleRecord.model_validate_json(line))
        except ValidationError:
            if number == len(lines) and not text.endswith("\n"):
                truncated = True  # the write of the last line was cut off
                continue
            raise ResumeError(
                f"{path}: line {number} is not a sample record; use --restart to set the log "
                "aside and start over"
            ) from None
    return records, truncated


def _set_aside(path: Path) -> Path | None:
    if not path.exists():
        return None
    number = 1
    while (target := path.with_name(f"samples.discarded-{number}.jsonl")).exists():
        number += 1
    path.rename(target)
    return target


def _rewrite(path: Path, records: Sequence[SampleRecord]) -> None:
    write_text_atomic(path, "".join(r.model_dump_json() + "\n" for r in records))


def prepare_run_dir(
    out: Path, config: RunConfig, job_keys: set[str], restart: bool, force: bool
) -> list[SampleRecord]:
    """Check the directory against ``config``; returns the samples that are already done."""
    run_file, log = out / RUN_FILE, out / SAMPLES_FILE
    if restart:
        _set_aside(log)
        return []
    previous = load_json(run_file) if run_file.exists() else None
    same = isinstance(previous, dict) and previous.get("config_hash") == config.digest()
    if not same and (run_file.exists() or log.exists()) and not force:
        raise ResumeError(_mismatch(out, previous, config))
    held = _epochs_held(previous) if same else 0
    if held > config.epochs and not force:
        raise ResumeError(
            f"{out} holds {held} epochs; --epochs {config.epochs} would set epochs "
            f"{config.epochs + 1}-{held} aside: pass --epochs {held} (or more) to resume, or "
            "--force to set them aside"
        )
    records, truncated = read_log(log)
    keep: dict[str, SampleRecord] = {}
    for record in records:
        if record.key in job_keys and record.key not in keep:
            keep[record.key] = record
    if truncated or len(keep) != len(records):
        if len(keep) != len(records):
            _set_aside(log)
        _rewrite(log, list(keep.values()))
    return list(keep.values())


def _epochs_held(previous: Any) -> int:
    config = previous.get("config") if isinstance(previous, dict) else None
    epochs = config.get("epochs", 1) if isinstance(config, dict) else 1
    return epochs if isinstance(epochs, int) else 1


def _mismatch(out: Path, previous: Any, config: RunConfig) -> str:
    if not isinstance(previous, dict):
        return (
            f"{out} holds samples of an unknown run (no {RUN_FILE}); use --restart to "
            "set them aside or choose another --out"
        )
    old = previous.get("config", {})
    new = config.model_dump(mode="json")
    changed = [k for k in new if k not in ("benchmark", "epochs") and old.get(k) != new[k]]
    if not changed and isinstance(old, dict) and "epochs" not in old:
        changed = ["sample identity (written before epochs existed)"]
    return (
        f"{out} holds a run with another configuration (changed: {', '.join(changed) or 'hash'})"
        "; use --restart to start over or --force to keep the samples that still apply"
    )


class _SampleLog:
    """Appends whole lines, flushed and fsynced, from one writer thread.

    Lines that finish while a write is in progress are written together by the next one
    (group commit), so the fsync cost does not grow with the concurrency. ``append``
    returns once its line is on disk; ``close`` waits for a write in progress, even when the
    run is being interrupted.
    """

    def __init__(self, path: Path) -> None:
        self._handle: IO[str] = path.open("a", encoding="utf-8", newline="\n")
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uncobench-log")
        self._pending: list[tuple[str, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    def _write(self, text: str) -> None:
        self._handle.write(text)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            text = "".join(line for line, _ in batch)
            try:
                await asyncio.wrap_future(self._executor.submit(self._write, text))
            except Exception as exc:
                for _, done in batch:
                    done.set_exception(exc)
                continue
            for _, done in batch:
                done.set_result(None)

    async def append(self, record: SampleRecord) -> None:
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((record.model_dump_json() + "\n", written))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await written

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self._handle.close()


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


async def default_concurrency(config: RunConfig) -> int:
    """:data:`DEFAULT_CONCURRENCY`, or the smallest connection limit of the models the run
    calls (agents and colleagues), if smaller."""
    refs = [ref for agent in config.agents for ref in agent_models(agent)]
    if config.colleague != "scripted":
        refs.append(ModelRef.parse(config.colleague))
    limits = [await shared_model(ref).connection_limit() for ref in refs]
    return min([DEFAULT_CONCURRENCY, *limits])


async def run_evaluation(
    groups: Sequence[TaskGroup],
    config: RunConfig,
    out: str | Path,
    *,
    concurrency: int | None = None,
    restart: bool = False,
    force: bool = False,
    progress: bool = False,
    agents: AgentMaker = make_agent,
    digests: Sequence[str] | None = None,
) -> RunSummary:
    """Run (or resume) every sample of ``config`` over ``groups``, logging to ``out``.

    ``concurrency`` (samples at once) defaults to :func:`default_concurrency`. ``digests`` may
    pass the groups' content hashes (:func:`group_digest`) when the caller
    has them already; hashing a large benchmark twice is not free.
    """
    if concurrency is not None and concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, not {concurrency}")
    if agents is make_agent:
        for name in config.agents:
            check_agent_name(name)
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file, not a run directory")
    if digests is None or len(digests) != len(groups):
        digests = [group_digest(g) for g in groups]
    if benchmark_digest(groups, digests) != config.benchmark_hash:
        raise ConfigError("the run configuration was made for other task groups (content hash)")
    if concurrency is None:  # before any file is written: a model that cannot be made fails here
        try:
            concurrency = await default_concurrency(config)
        except BaseException:
            await close_models()
            raise
    jobs, unavailable = plan_jobs(groups, config, digests)
    done = prepare_run_dir(target, config, {job.key for job in jobs}, restart, force)
    write_text_atomic(
        target / RUN_FILE,
        dump_json(
            {
                "kind": RUN_KIND,
                "version": __version__,
                "config": config.model_dump(mode="json"),
                "config_hash": config.digest(),
                "samples": len(jobs),
                "unavailable": unavailable,
                "generation": generation_record(config),
            }
        ),
    )
    finished = {record.key for record in done}
    queue = deque(job for job in jobs if job.key not in finished)
    # The loaded benchmark is large and lives for the whole run: moving it out of the
    # collector's reach keeps every garbage collection from scanning it again (the runner
    # is CPU-bound at high concurrency, see benchmarks/eval_overhead.py).
    gc.collect()
    gc.freeze()
    records = list(done)
    prepared: dict[int, PreparedGroup] = {}
    log = _SampleLog(target / SAMPLES_FILE)
    failures: list[tuple[SampleJob, BaseException]] = []

    async def worker(bar: Progress, task_id: Any) -> None:
        while queue and not failures:
            job = queue.popleft()
            try:
                shared = prepared.get(id(job.group))
                if shared is None:
                    shared = prepared[id(job.group)] = PreparedGroup.of(job.group)
                record = await run_sample(job, agents, shared)
                await log.append(record)
            except Exception as exc:  # recorded, the run stops, finished samples are kept
                failures.append((job, exc))
                return
            records.append(record)
            if not bar.disable:
                bar.update(task_id, advance=1, description=f"{job.group.id} {job.setting}")

    try:
        with _progress(progress) as bar:
            task_id = bar.add_task("", total=len(jobs), completed=len(done))
            workers = [worker(bar, task_id) for _ in range(min(concurrency, len(queue)) or 1)]
            await asyncio.gather(*workers)
    finally:
        log.close()
        gc.unfreeze()
        await close_models()
    if failures:
        raise _failure(target, failures)
    return RunSummary(
        target,
        config,
        records,
        ran=len(records) - len(done),
        reused=len(done),
        unavailable=unavailable,
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
        record[f"colleague:{config.colleague}"] = model_generation(ModelRef.parse(config.colleague))
    return record


def _failure(out: Path, failures: list[tuple[SampleJob, BaseException]]) -> UncobenchError:
    job, exc = failures[0]
    if isinstance(exc, UncobenchError):
        return exc
    text = "".join(traceback.format_exception(exc))
    with (out / ERRORS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(f"sample {job.group.id} / {job.setting} / {job.agent}:\n{text}\n")
    return UncobenchError(
        f"sample {job.group.id} / {job.setting} / {job.agent} failed: "
        f"{type(exc).__name__}: {exc} (traceback in {out / ERRORS_FILE}); finished samples "
        "are kept, run the same command to resume"
    )


def evaluate(
    groups: Sequence[TaskGroup],
    config: RunConfig,
    out: str | Path,
    **options: Any,
) -> RunSummary:
    """:func:`run_evaluation` from synchronous code."""
    return asyncio.run(run_evaluation(groups, config, out, **options))
