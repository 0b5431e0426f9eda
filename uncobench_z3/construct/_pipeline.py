"""``uncobench build``: candidate groups through every stage, in parallel, resumably.

Candidates are drafted in order (drafting balances domains and operations over the batch, so
it is sequential and cheap), then processed in chunks by worker processes. Each finished chunk
is written atomically to ``<out>/.work/``; an interrupted build resumes by skipping finished
chunks. The output keeps the first ``groups`` retained candidates in index order, so a
resumed build writes the same bytes as an uninterrupted one, with any number of workers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from .. import __version__
from .._assets import asset_path
from .._executor import Executor, ExecutorOptions, open_executor
from .._outdir import check_output_folder, lock_output
from ..errors import ConfigError, ResumeError, SpecReadError, UncobenchError
from ..solver import SolverBudget, SolverContext
from ..spec import dump_json, load_json, read_utf8, write_text_atomic
from ._audit import REJECTED_FILE, rejected_text
from ._benchfile import DIGESTS_KEY, GROUPS_FILE, MANIFEST_FILE, digests_entry
from ._candidate import CandidateOutcome, MinimumRounds, process_candidate, stores_decision_changes
from ._generate import Draft, SpecGenerator
from ._library import load_library
from ._llm_stages import LLMStages
from ._stats import benchmark_stats
from ._workdir import (
    CHUNK_GLOB,
    STAMP_FILE,
    WORK_DIR,
    config_differences,
    create_work,
    discard_work,
    groups_problem,
    remove_leftovers,
    stamp_hash,
)

RECENT_SUMMARIES = 10
BENCHMARK_KIND = "uncobench-benchmark"


@dataclass(frozen=True)
class BuildConfig:
    """Everything that determines the output bytes (workers do not)."""

    groups: int = 1000
    seed: int = 7
    none_share: float = 0.2
    attempts: int = 3
    chunk: int = 20
    timeout_ms: int = 2000
    rlimit: int = 50_000_000
    solver_seed: int = 0
    library: str = ""
    generator: str = "offline"
    renderer: str = "template"
    validator: str = "reader"
    minimum_rounds: bool = False
    """whether each group stores its settings' minimum rounds (``proofs.minimum_rounds``)"""
    decision_changes: bool = False
    """whether each group stores its decision records' first changes
    (``proofs.decision_changes``)"""
    faithful_places: bool = True
    """whether a template-rendered group stores the places of its faithful lines
    (``rendered.faithful``): always, since they were stored; in the configuration so that a
    build does not reuse or resume an earlier build's groups, which have none"""
    shared_defects: bool = True
    """whether each group stores which of its defects are the same (``proofs.shared_defects``):
    always, since it was stored; in the configuration for the same reason"""

    def digest(self) -> str:
        options = asdict(self)
        for flag in ("minimum_rounds", "decision_changes", "faithful_places", "shared_defects"):
            if not options[flag]:  # a configuration from before it existed keeps its hash
                del options[flag]
        text = json.dumps({**options, "version": __version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class BuildResult:
    out: Path
    manifest: dict[str, object]
    resumed_chunks: int
    reused: bool
    stale_lock: str | None = None
    """a note when a lock left by a killed build was taken over"""


ProgressHook = Callable[[int, int, int], None]
"""``(candidates done, groups retained, groups wanted)``."""


def library_digest(path: Path | None = None) -> str:
    """A hash of the scenario library's files: a changed library is a changed build."""
    root = path or asset_path("generators")
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.json")):
        digest.update(file.relative_to(root).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def plan_none(seed: int, index: int, share: float) -> bool:
    return random.Random(f"plan:{seed}:{index}").random() < share


Drafted = tuple[int, Draft | None, str | None, tuple[str, ...], tuple[str, ...]]
"""(index, draft or None, drafting error, recent task summaries, redrawn problem codes)"""


def _process_chunk(
    drafts: list[Drafted],
    config: BuildConfig,
    stages: LLMStages,
    minimum_rounds: MinimumRounds | None = None,
) -> list[CandidateOutcome]:
    """One chunk, on one Z3 context of its own: what its models give depends on the chunk's
    content alone, whichever worker runs it and whatever that worker ran before."""
    budget = SolverBudget(
        timeout_ms=config.timeout_ms, rlimit=config.rlimit, seed=config.solver_seed
    )
    out = []
    with SolverContext() as context:
        for index, draft, error, recent, redrawn in drafts:
            if draft is None:
                out.append(CandidateOutcome(
                    index=index, domain="?", operation="?", scenario="?", plan_none=False,
                    retained=False, stage="spec_validation", reason=error,
                ))  # fmt: skip
                continue
            outcome = process_candidate(
                draft, config.seed, index, config.attempts, budget, stages, recent, context,
                minimum_rounds
            )  # fmt: skip
            out.append(outcome.model_copy(update={"redrawn": redrawn}) if redrawn else outcome)
    return out


class _Drafter:
    """Drafts candidates strictly in index order (the generator's balance is sequential)."""

    def __init__(self, config: BuildConfig) -> None:
        from ._generate import DraftError

        self.config = config
        self.generator = SpecGenerator(load_library(), config.seed)
        self.next_index = 0
        self._error = DraftError
        self.recent: deque[str] = deque(maxlen=RECENT_SUMMARIES)

    def chunk(self, number: int) -> list[Drafted]:
        start = number * self.config.chunk
        assert start == self.next_index, "chunks are drafted in order"
        out: list[Drafted] = []
        for index in range(start, start + self.config.chunk):
            none = plan_none(self.config.seed, index, self.config.none_share)
            recent = tuple(self.recent)
            before = Counter(self.generator.rejections)
            try:
                draft = self.generator.draft(index, none)
            except self._error as exc:
                redrawn = tuple(sorted((self.generator.rejections - before).elements()))
                out.append((index, None, str(exc), recent, redrawn))
                continue
            redrawn = tuple(sorted((self.generator.rejections - before).elements()))
            out.append((index, draft, None, recent, redrawn))
            self.recent.append(f"{draft.domain} / {draft.operation}: {draft.spec.title}")
        self.next_index = start + self.config.chunk
        return out


def _chunk_path(out: Path, number: int) -> Path:
    return out / WORK_DIR / f"chunk-{number:05d}.jsonl"


def _read_chunk(path: Path) -> list[CandidateOutcome]:
    try:
        return [
            CandidateOutcome.model_validate_json(line)
            for line in read_utf8(path).splitlines()
            if line
        ]
    except ValidationError:  # chunks are written atomically: this one was edited
        raise SpecReadError(str(path), "not a finished chunk; delete it to redo it") from None


def _prepare(out: Path, config: BuildConfig, force: bool) -> dict[int, list[CandidateOutcome]]:
    """Check the output folder against the configuration; return finished chunks.

    Called inside the folder's lock. Whatever a killed build left is settled first: its
    temporary files go, and so does a work folder that holds nothing yet (killed before its
    stamp) or whose benchmark is finished (killed while removing it)."""
    work = out / WORK_DIR
    stamp = work / STAMP_FILE
    digest = config.digest()
    remove_leftovers(out)
    if work.is_dir() and not stamp.exists() and not any(work.glob(CHUNK_GLOB)):
        discard_work(work)  # nothing was done in it yet
    if (out / MANIFEST_FILE).exists():
        manifest = load_json(out / MANIFEST_FILE)
        if isinstance(manifest, dict) and manifest.get("config_hash") == digest:
            problem = groups_problem(out, manifest)
            if problem is None:
                if work.exists():  # the finished build's work folder, part removed
                    if stamp.exists() and stamp_hash(stamp) != digest and not force:
                        raise ResumeError(
                            f"{out} holds this benchmark, finished, and an interrupted build "
                            f"with another configuration in {work}; use --force to discard "
                            "the interrupted build"
                        )
                    discard_work(work)
                return {}
            resumable = stamp.exists() and stamp_hash(stamp) == digest
            if not resumable and not force:  # (a resumable one rebuilds the output from it)
                raise ResumeError(
                    f"{out / GROUPS_FILE} {problem}; run the same command with --force "
                    "to build the benchmark again"
                )
        elif not work.exists() and not force:
            raise ResumeError(
                f"{out} holds a benchmark built with another configuration"
                f"{config_differences(manifest, config)}; "
                "use --force to rebuild it or choose another --out"
            )
    if work.exists():
        previous = load_json(stamp) if stamp.exists() else None
        if not isinstance(previous, dict) or previous.get("config_hash") != digest:
            if not force:
                which = (
                    f"another configuration{config_differences(previous, config)}"
                    if previous is not None
                    else f"an unknown configuration (no {WORK_DIR}/{STAMP_FILE})"
                )
                raise ResumeError(
                    f"{out} holds an interrupted build with {which}; use --force to discard it"
                )
            discard_work(work)
    if force and (out / MANIFEST_FILE).exists():
        (out / MANIFEST_FILE).unlink()
    if not work.exists():
        create_work(work, config)
    done = {}
    for path in sorted(work.glob(CHUNK_GLOB)):
        done[int(path.stem.split("-")[1])] = _read_chunk(path)
    return done


def _retained(chunks: dict[int, list[CandidateOutcome]]) -> tuple[int, int]:
    """Groups retained in the contiguous finished prefix of chunks, and its length."""
    count = prefix = 0
    while prefix in chunks:
        count += sum(o.retained for o in chunks[prefix])
        prefix += 1
    return count, prefix


def build_config(
    groups: int = 1000,
    seed: int = 7,
    none_share: float = 0.2,
    timeout_ms: int = 2000,
    stages: LLMStages | None = None,
    *,
    rlimit: int = 50_000_000,
    solver_seed: int = 0,
    minimum_rounds: bool = False,
    decision_changes: bool = False,
) -> BuildConfig:
    """The configuration :func:`build_benchmark` builds with (and hashes) for these options
    (``minimum_rounds``: whether it is given a :data:`MinimumRounds` to store;
    ``decision_changes``: whether that also gives the decision records' first changes)."""
    llm = stages or LLMStages()
    validator = llm.validator or llm.renderer
    return BuildConfig(
        groups=groups,
        seed=seed,
        none_share=none_share,
        timeout_ms=timeout_ms,
        rlimit=rlimit,
        solver_seed=solver_seed,
        library=library_digest(),
        generator=llm.generator.describe() if llm.generator else "offline",
        renderer=llm.renderer.describe() if llm.renderer else "template",
        validator=validator.describe() if validator else "reader",
        minimum_rounds=minimum_rounds,
        decision_changes=decision_changes,
    )


def reusable_groups(out: str | Path, config: BuildConfig) -> int | None:
    """The number of groups of the finished benchmark in ``out`` if it was built by this
    version with ``config`` apart from its size and holds at least ``config.groups`` groups.

    Its first ``config.groups`` groups are then exactly what a build of that size keeps
    (candidates are drafted and kept in index order whatever the size), so they can be used
    instead of building again. ``None`` when there is no such benchmark.
    """
    target = Path(out)
    if not (target / MANIFEST_FILE).is_file() or (target / WORK_DIR).exists():
        return None
    try:
        manifest = load_json(target / MANIFEST_FILE)
    except UncobenchError:
        return None
    if not isinstance(manifest, dict):
        return None
    built, stats = manifest.get("config"), manifest.get("stats")
    if not isinstance(built, dict) or not isinstance(stats, dict):
        return None
    size, held = built.get("groups"), stats.get("groups")
    if not isinstance(size, int) or not isinstance(held, int) or held < config.groups:
        return None
    # the hash covers the version and every option: equal apart from the size
    return held if replace(config, groups=size).digest() == manifest.get("config_hash") else None


def build_benchmark(
    out: str | Path,
    groups: int = 1000,
    seed: int = 7,
    none_share: float = 0.2,
    workers: int | None = None,
    force: bool = False,
    progress: ProgressHook | None = None,
    timeout_ms: int = 2000,
    stages: LLMStages | None = None,
    rlimit: int = 50_000_000,
    solver_seed: int = 0,
    executor: ExecutorOptions | None = None,
    minimum_rounds: MinimumRounds | None = None,
) -> BuildResult:
    """Build (or resume, or reuse) a verified benchmark of ``groups`` task groups.

    ``stages`` replaces the offline generator, renderer or validator by language models.
    ``timeout_ms``, ``rlimit`` and ``solver_seed`` bound and seed every solver query.
    ``executor`` says where chunks are processed (local worker processes, the default, or a
    Ray cluster: each chunk a Ray task); ``workers`` is the shorthand for local workers. The
    bytes written do not depend on either.
    ``minimum_rounds`` (the command line passes
    :func:`uncobench_z3.evaluation.settings_minimum_rounds`) computes what each group stores
    in ``proofs.minimum_rounds``; without it groups store none, and an evaluation computes
    them when it needs them.
    ``progress`` hears of every finished chunk, and once more at the end with the candidates
    the statistics count (chunks that ran past the last kept group are not counted); a build
    that is already done reports nothing.
    """
    if groups < 1:
        raise ConfigError("--groups must be at least 1")
    if not 0 <= none_share <= 1:
        raise ConfigError("--none-share must lie between 0 and 1")
    target = Path(out)
    llm = stages or LLMStages()
    config = build_config(
        groups, seed, none_share, timeout_ms, stages, rlimit=rlimit, solver_seed=solver_seed,
        minimum_rounds=minimum_rounds is not None,
        decision_changes=stores_decision_changes(minimum_rounds),
    )  # fmt: skip
    for ref in (llm.generator, llm.renderer, llm.validator):
        if ref is not None:  # a missing key or unknown provider fails now, not in every worker
            asyncio.run(ref.create().aclose())
    # before any work: one writer of any kind in ``out``, which must be a benchmark (or new);
    # an unreachable cluster is bad input too, and fails before any file is written
    needed = -(-groups // config.chunk)  # chunks the groups fill: more workers would idle
    where = (executor or ExecutorOptions()).with_workers(workers).for_items(needed)
    with (
        lock_output(target, "build", check=lambda: check_benchmark_folder(target)) as lock,
        open_executor(where) as engine,
    ):
        result = _build(target, config, llm, engine, force, progress, minimum_rounds)
    result.stale_lock = lock.stale_note()
    return result


def check_benchmark_folder(out: str | Path) -> None:
    """Refuse ``out`` unless it is new, empty or a benchmark's folder."""
    check_output_folder(out, (MANIFEST_FILE, GROUPS_FILE, WORK_DIR), "benchmark folder")


def _build(
    target: Path,
    config: BuildConfig,
    llm: LLMStages,
    executor: Executor,
    force: bool,
    progress: ProgressHook | None,
    minimum_rounds: MinimumRounds | None = None,
) -> BuildResult:
    """The build itself, inside the folder's lock."""
    groups = config.groups
    chunks = _prepare(target, config, force)
    if not (target / WORK_DIR).exists():
        manifest = load_json(target / MANIFEST_FILE)
        assert isinstance(manifest, dict)
        return BuildResult(target, manifest, 0, reused=True)
    resumed = len(chunks)
    workers = executor.slots
    drafter = _Drafter(config)

    def report() -> None:
        if progress is not None:
            done = sum(len(c) for c in chunks.values())
            progress(done, min(groups, sum(o.retained for c in chunks.values() for o in c)), groups)

    report()
    # one local worker processes each chunk here, as soon as it is drafted
    inline = executor.kind == "local" and workers == 1
    pending: dict[Future[list[CandidateOutcome]], int] = {}
    number = 0

    def projected() -> float:
        # retained so far plus what the chunks in flight will probably add
        done = sum(o.retained for c in chunks.values() for o in c)
        return done + 0.9 * config.chunk * len(pending)

    try:
        while _retained(chunks)[0] < groups:
            _check_yield(target, chunks, groups)
            while len(pending) < 2 * workers and (projected() < groups or not pending):
                drafts = drafter.chunk(number)
                number += 1
                if number - 1 in chunks:
                    continue  # finished before an interruption: drafted only to replay the order
                if inline:
                    chunks[number - 1] = _process_chunk(drafts, config, llm, minimum_rounds)
                    _store(target, number - 1, chunks[number - 1])
                    report()
                    break
                pending[executor.submit(_process_chunk, drafts, config, llm, minimum_rounds)] = (
                    number - 1
                )
            if pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    done_number = pending.pop(future)
                    chunks[done_number] = future.result()
                    _store(target, done_number, chunks[done_number])
                    report()
    finally:
        for future in pending:
            future.cancel()
    manifest = _assemble(target, config, chunks)
    discard_work(target / WORK_DIR)
    if progress is not None:
        stats = manifest["stats"]
        assert isinstance(stats, dict)
        progress(stats["pass_rates"]["candidates"], stats["groups"], groups)
    return BuildResult(target, manifest, resumed, reused=False)


MAX_CANDIDATES_PER_GROUP = 20
MIN_CANDIDATES = 100
"""a build that has processed ``MAX_CANDIDATES_PER_GROUP`` candidates per wanted group, plus
``MIN_CANDIDATES``, without keeping them stops: (nearly) every candidate is being rejected,
for example because the solver budget is too small, and it would otherwise never end"""


def _check_yield(out: Path, chunks: dict[int, list[CandidateOutcome]], groups: int) -> None:
    outcomes = [o for chunk in chunks.values() for o in chunk]
    kept = sum(o.retained for o in outcomes)
    if len(outcomes) < MAX_CANDIDATES_PER_GROUP * groups + MIN_CANDIDATES or kept >= groups:
        return
    reasons = Counter(f"{o.stage}: {o.reason}" for o in outcomes if not o.retained)
    common, count = reasons.most_common(1)[0] if reasons else ("-", 0)
    # (the solver's budget decides logical verification only: a generator model whose specs
    # all fail their checks is not helped by a larger one)
    budget = (
        "; a solver budget (--timeout-ms, --rlimit) may be too small"
        if common.startswith("logical_verification:")
        else ""
    )
    raise ConfigError(
        f"only {kept} of {groups} groups kept after {len(outcomes)} candidates (most common "
        f"rejection, {count} times: {common}){budget}. The finished work stays in "
        f"{out / WORK_DIR}"
    )


def _store(out: Path, number: int, outcomes: list[CandidateOutcome]) -> None:
    text = "".join(o.model_dump_json() + "\n" for o in outcomes)
    write_text_atomic(_chunk_path(out, number), text)


def _assemble(
    out: Path, config: BuildConfig, chunks: dict[int, list[CandidateOutcome]]
) -> dict[str, object]:
    considered: list[CandidateOutcome] = []
    lines: list[str] = []
    for number in sorted(chunks):
        for outcome in chunks[number]:
            if len(lines) >= config.groups:
                break
            considered.append(outcome)
            if outcome.retained and outcome.group_json is not None:
                lines.append(outcome.group_json)
    text = "".join(line + "\n" for line in lines)
    write_text_atomic(out / GROUPS_FILE, text)
    write_text_atomic(out / REJECTED_FILE, rejected_text(considered))
    groups = [json.loads(line) for line in lines]
    manifest: dict[str, object] = {
        "kind": BENCHMARK_KIND,
        "schema_version": 1,
        "version": __version__,
        "config": asdict(config),
        "config_hash": config.digest(),
        "content_hash": hashlib.sha256(text.encode()).hexdigest(),
        "stats": benchmark_stats(considered, groups),
    }
    digests = [o.group_digest for o in considered if o.retained and o.group_json is not None]
    known = [digest for digest in digests if digest is not None]
    if len(known) == len(digests):  # (work files of an older build hold none)
        manifest[DIGESTS_KEY] = digests_entry(known)
    write_text_atomic(out / MANIFEST_FILE, dump_json(manifest))
    return manifest
