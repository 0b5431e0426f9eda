"""The evaluation runner's own cost, and its throughput against a slow agent.

1. **Cost per round**: every sample of a small benchmark is first played by
   ``builtin/careful`` while its decisions are memorised (conversation -> action); a replay
   agent then answers from that memo with no thinking, so the measured time is the runner's
   alone (environment, scripted colleagues, scoring, trace). Reported per round and per
   sample, plus the cost of an answer of "nobody" given at once (one round; where gold names
   a candidate it is wrong and attributed: by exact evaluation where that proves the label,
   else by the solver), and the CPU per round of each built-in agent (``--agents``) playing
   the same samples itself (its own thinking included), each agent in a fresh interpreter of
   its own: a first pass, then the same samples again. The groups store each setting's
   minimum rounds, as a built benchmark's do (``uncobench build`` computes them): the runner
   reads them instead of playing an ideal agent's episode. The first pass is measured twice:
   in this process, after the recording (so the task texts' readings, the reply lines'
   statements and the messages' tokens are already known process-wide), and in a fresh
   interpreter, where nothing is (what a user's ``uncobench eval`` pays). ``--breakdown``
   plays that fresh first pass once more with the CPU time of its parts measured (the
   colleagues' readings of the agent's messages, reading the minimum rounds, the evidence,
   justification, attribution and round notes, the record; a part called inside another is
   that one's). The copies share their messages, and the reader keeps what depends on a
   message's text alone (its tokens, the phrases found in its tagged words) across groups: so
   with ``--bench DIR`` the fresh first pass is also measured over the first ``5 x --copies``
   groups of a built benchmark (all different, as a user's run; all of them when it has
   fewer; ``--breakdown`` breaks that one down too).
2. **Throughput**: the same replay agent sleeps 50 ms per call (``asyncio.sleep``, like a
   model API call) and the full runner (JSON Lines log with fsync, resumable) runs at each
   ``--concurrency`` and with each ``--workers`` count, from the groups' content hashes on
   (stored, as a built benchmark's manifest stores them, and spot-checked as ``uncobench
   eval`` does) (episodes sharded by group over
   worker processes, one log written by the driver), over 5 groups per slot (``--copies``
   is raised to one copy of the examples per slot). The *ideal* time is the makespan of
   the same schedule (each sample to the first free slot, in job order) if only the latency
   counted; the table reports measured / ideal. CPU per round counts the worker processes.
   The same schedule is also run as sleeps alone (every sample a slot, every round one
   ``asyncio.sleep`` of the latency, nothing else): timers wake late (the loop waits whole
   milliseconds, rounded up), so even that takes longer than the ideal; measured /
   sleeps-alone is what the runner itself adds to a timer-simulated agent. Both run on the
   event loop ``uncobench eval`` takes (uvloop where installed, ``UNCOBENCH_EVENT_LOOP``:
   ``uncobench_z3/_eventloop.py``); the JSON's ``event_loop`` names it.
   Each configuration runs in a fresh interpreter, as ``uncobench eval`` starts: what this
   script played before (remembered readings, minimum rounds, vocabularies) would otherwise
   make a later run look cheaper than a user's (measured: 1.18-1.20x at concurrency 64 in a
   process that had played the same groups before, 1.43x in one that had not).
3. **Memory** (``--bench DIR``, which also gives the first pass over it, above):
   ``builtin/careful`` sleeping ``--latency-ms`` per call plays every sample of a built
   benchmark at ``--memory-concurrency`` (256) in a process of its own; the peak of the
   process tree's proportional set size (PSS: a page shared by k processes counts 1/k, so
   shared pages count once), sampled every 50 ms.

Targets (issue #13): <= 0.15 ms CPU per round for scripted colleagues and built-in agents;
within 5% of the ideal at concurrency 64 and 10% at 256 (50 ms latency); <= 400 MB peak at
concurrency 256 over 1,000 groups.

Run: ``python benchmarks/eval_overhead.py [--copies N] [--latency-ms 50] [--concurrency 64
256] [--workers 1 2] [--bench DIR [--memory-workers N]] [--breakdown] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import glob
import heapq
import json
import multiprocessing
import pickle
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, descendants, machine, non_negative, own_cpu, tree_cpu

from uncobench_z3._eventloop import event_loop_name
from uncobench_z3._eventloop import run as run_loop
from uncobench_z3._executor import ExecutorOptions
from uncobench_z3._gc import fewer_collections
from uncobench_z3.construct import (
    DIGESTS_KEY,
    digests_entry,
    group_digests,
    load_benchmark,
    load_groups,
    render_task,
)
from uncobench_z3.errors import ConfigError, InputError
from uncobench_z3.evaluation import (
    Action,
    AgentMaker,
    AnswerAction,
    Conversation,
    Environment,
    EvalOptions,
    PreparedGroup,
    SampleJob,
    check_agent_name,
    evaluate,
    group_digest,
    let_group_go,
    make_agent,
    make_config,
    plan_jobs,
    run_sample,
    settings_stored_proofs,
)
from uncobench_z3.settings import DefectBalance, TaskGroup, perturb
from uncobench_z3.spec import check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
MemoKey = tuple[str, tuple[str, ...]]
T = TypeVar("T")


def memo_key(conversation: Conversation) -> MemoKey:
    """A deterministic agent's next action depends only on the task and what it observed."""
    seen = [
        f"{reply.role}:{reply.text}"
        for turn in conversation.turns
        for reply in turn.observation.replies
    ]
    seen.append(str(len(conversation.turns)))
    return conversation.briefing.task_text, tuple(seen)


class ReplayAgent:
    """Answers from a memo of a recorded agent, after a simulated latency per call.

    ``first_call``: shared memory (inherited by forked eval workers) where the agent notes
    when the run's first call began (``time.perf_counter``; negative until then)."""

    def __init__(
        self, memo: Mapping[MemoKey, Action], latency: float, first_call: Any = None
    ) -> None:
        self.memo = memo
        self.latency = latency
        self.first_call = first_call

    async def act(self, conversation: Conversation) -> Action:
        if self.first_call is not None and self.first_call.value < 0:
            with self.first_call.get_lock():
                if self.first_call.value < 0:
                    self.first_call.value = time.perf_counter()
        if self.latency:
            await asyncio.sleep(self.latency)
        return self.memo[memo_key(conversation)]


def example_groups(copies: int) -> list[TaskGroup]:
    balance = DefectBalance()
    base = []
    for path in sorted(glob.glob(str(ROOT / "examples" / "*.json"))):
        found = perturb(load_spec(path), seed=0, balance=balance).group
        assert found is not None
        # a built benchmark stores the rendered text with each group, each setting's minimum
        # rounds and its decision records' first changes (`uncobench build` computes them,
        # `uncobench verify` checks them); so do these
        task = check_structure(found.spec).task
        assert task is not None and found.proofs is not None
        rendered = render_task(task, found.seed).model_dump(mode="json")
        group = found.model_copy(update={"rendered": rendered})
        stored = settings_stored_proofs(group, task).computed()
        proofs = found.proofs.model_copy(update=stored)
        base.append(group.model_copy(update={"proofs": proofs}))
    # distinct ids, so distinct content hashes and job keys, for every copy
    return [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(copies) for g in base]


async def play_all(
    jobs: list[SampleJob],
    agents: AgentMaker,
    prepared: dict[int, PreparedGroup],
    let_go: bool = False,
) -> list[int]:
    """Every job in turn with ``agents``, collecting at the runner's pace; each sample's
    rounds (its record is dropped, as a run drops it once its line is written). With
    ``let_go``, each group is let go after its last sample, as a run lets it go (see
    :func:`_first_pass`)."""
    left = Counter(id(job.group) for job in jobs)
    rounds = []
    with fewer_collections():
        for job in jobs:
            rounds.append((await run_sample(job, agents, prepared[id(job.group)])).rounds)
            left[id(job.group)] -= 1
            if let_go and not left[id(job.group)]:
                let_group_go(prepared, job.group, job.group_hash)
    return rounds


def builtin_maker(name: str) -> AgentMaker:
    """Makes built-in agent ``name`` whatever name a job gives (the jobs were planned for
    the replay agent)."""
    return lambda _, seed: make_agent(name, seed)


async def record(jobs: list[SampleJob]) -> tuple[dict[MemoKey, Action], list[int]]:
    """Memorise builtin/careful's decisions on every job; returns the memo and rounds/job."""
    memo: dict[MemoKey, Action] = {}
    rounds = []
    for job in jobs:
        env = Environment(job.group, job.setting, job.budget)
        agent = make_agent("builtin/careful", job.seed)
        while not env.finished:
            conversation = env.conversation
            action = await agent.act(conversation)
            memo[memo_key(conversation)] = action
            env.step(action)
        rounds.append(env.rounds)
    return memo, rounds


class SlowAgent:
    """A built-in agent that waits ``latency`` seconds before each decision."""

    def __init__(self, name: str, seed: int, latency: float) -> None:
        self.agent = make_agent(name, seed)
        self.latency = latency

    async def act(self, conversation: Conversation) -> Action:
        await asyncio.sleep(self.latency)
        return await self.agent.act(conversation)


def tree_pss_mb(pid: int) -> float:
    """Proportional set size of ``pid`` and its descendants, in MB (Linux)."""
    total = 0
    for member in [pid, *descendants(pid)]:
        try:
            text = Path(f"/proc/{member}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
                break
    return total / 1024


def _memory_run(bench: str, concurrency: int, latency: float, workers: int) -> None:
    groups, digests = load_benchmark(bench)  # as `uncobench eval` reads a built benchmark
    config = make_config(bench, groups, ["builtin/careful"], digests=digests)
    options = EvalOptions(concurrency=concurrency, executor=ExecutorOptions(workers=workers))
    with tempfile.TemporaryDirectory() as out:
        evaluate(groups, config, out, options, digests=digests,
                 agents=lambda n, s: SlowAgent(n, s, latency))  # fmt: skip


def peak_memory(
    bench: Path, groups: int, concurrency: int, latency: float, workers: int
) -> dict[str, object]:
    """Play every sample of ``bench`` (``groups`` groups) in a new process; the peak PSS of
    its process tree."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing inherited
    process = context.Process(target=_memory_run, args=(str(bench), concurrency, latency, workers))
    started = time.perf_counter()
    process.start()
    assert process.pid is not None
    peak = 0.0
    while process.is_alive():
        peak = max(peak, tree_pss_mb(process.pid))
        time.sleep(0.05)
    process.join()
    return {
        "groups": groups,
        "concurrency": concurrency,
        "workers": workers,
        "exit_code": process.exitcode,
        "wall_s": round(time.perf_counter() - started, 2),
        "peak_pss_mb": round(peak, 1),
    }


@dataclass(frozen=True)
class ThroughputRun:
    """One throughput configuration, played in a fresh interpreter (:func:`cold_run`)."""

    copies: int
    limit: int
    concurrency: int
    workers: int
    latency: float
    memo_path: str


class ThroughputFigures(NamedTuple):
    """What a throughput run measured (seconds)."""

    wall: float
    cpu: float
    """the process tree's CPU time"""
    driver_cpu: float
    """the part of it spent in the driver (with workers: receiving and logging the samples)"""
    first_call: float
    """from the start (the stored content hashes spot-checked) to the first call of the agent"""


def _throughput(run: ThroughputRun) -> tuple[float, float, float, float]:
    """In a new interpreter: the full runner over the first ``limit`` groups with the replay
    agent sleeping ``latency`` a call: the fields of :class:`ThroughputFigures` (a plain
    tuple crosses the process boundary whatever module runs this script)."""
    groups = example_groups(run.copies)
    memo = pickle.loads(Path(run.memo_path).read_bytes())
    first_call = multiprocessing.Value("d", -1.0)  # (shared with the workers the run starts)
    slow = ReplayAgent(memo, run.latency, first_call)
    options = EvalOptions(
        concurrency=run.concurrency, executor=ExecutorOptions(workers=run.workers)
    )
    # A built benchmark's manifest stores the groups' content hashes (``uncobench build``);
    # `uncobench eval` reads them and computes four again (spot checks) instead of hashing
    # every group before the first sample. These groups are made in memory: their hashes
    # are made before the clock starts, and the spot checks are timed.
    stored = {DIGESTS_KEY: digests_entry([group_digest(group) for group in groups])}
    with tempfile.TemporaryDirectory() as out:
        started, cpu, driver = time.perf_counter(), tree_cpu(), own_cpu()
        digests = group_digests(groups, stored)
        limited = make_config("examples", groups, ["bench/replay"], limit=run.limit,
                              digests=digests)  # fmt: skip
        evaluate(groups, limited, out, options, agents=lambda n, s: slow, digests=digests)
        return (
            time.perf_counter() - started,
            tree_cpu() - cpu,
            own_cpu() - driver,
            first_call.value - started,
        )


def cold_run(run: ThroughputRun) -> ThroughputFigures:
    """:func:`_throughput` in a fresh interpreter, as ``uncobench eval`` starts: nothing this
    script played before (remembered readings, minimum rounds, vocabularies) is known."""
    return ThroughputFigures(*in_fresh_process(_throughput, run))


def in_fresh_process(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in a new interpreter (spawned: nothing of this process inherited)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(fn, *args).result()


def pass_groups(copies: int, bench: str | None) -> list[TaskGroup]:
    """A first pass's groups: ``copies`` copies of the examples, or with ``bench`` the first
    ``5 * copies`` groups of that built benchmark (as many groups, all different; all of
    them when it has fewer)."""
    return example_groups(copies) if bench is None else load_groups(bench)[: 5 * copies]


def _first_pass(
    copies: int,
    memo_path: str,
    instrument: Callable[[], None] | None = None,
    bench: str | None = None,
) -> float:
    """In a new interpreter: every sample of :func:`pass_groups` played once by the replay
    agent with no latency, as the in-process first pass of :func:`main` (groups prepared
    first, not counted), but with no process-wide memory warmed by having played the same
    groups before (the in-process pass follows the recording of the decisions: the task
    texts' readings, the reply lines' statements, the messages' tokens are known), and each
    group let go after its last sample, as a run lets it go. CPU s."""
    groups = pass_groups(copies, bench)
    agent = ReplayAgent(pickle.loads(Path(memo_path).read_bytes()), 0.0)
    jobs, _ = plan_jobs(groups, make_config("examples", groups, ["bench/replay"]))
    prepared = {id(g): PreparedGroup.of(g) for g in groups}
    if instrument is not None:  # only the pass itself is measured (not the groups' making)
        instrument()

    gc.collect()
    cpu = time.process_time()
    # each group is let go after its last sample, as the runner's Player does: a pass that
    # kept every group's readings, judge and labels gave the collector that much more to walk
    # (over the first 80 groups of a built benchmark, its instructions halved when they went:
    # 43.9 to 21.2 M of 1,363 M)
    asyncio.run(play_all(jobs, lambda name, seed: agent, prepared, let_go=True))
    return time.process_time() - cpu


def _agent_passes(copies: int, name: str) -> tuple[float, float, int, int]:
    """In a new interpreter: every sample of :func:`example_groups` played by built-in agent
    ``name`` (groups prepared first, not counted), twice: the first pass (nothing of these
    groups known, what a user's run pays; the agent's own questions are read for the first
    time, whichever agent it is; each group let go after its last sample, as a run lets it
    go) and the same samples again (their groups prepared afresh and played once before,
    neither counted). CPU s of each, rounds, samples.

    Each agent in a process of its own, so that no agent plays after another: in one
    process the agents measured later would find the readings of the questions they share
    with the earlier ones already made (measured: builtin/naive, whose questions differ from
    the recorded agent's, looked 2.3 times as costly as the others that way)."""
    groups = example_groups(copies)
    jobs, _ = plan_jobs(groups, make_config("examples", groups, ["bench/replay"]))
    agents = builtin_maker(name)
    cpu: list[float] = []
    # the first pass lets each group go after its last sample, as a run does (see
    # :func:`_first_pass`); "again" plays groups prepared afresh once, not counted, then again
    for first in (True, False):
        prepared = {id(g): PreparedGroup.of(g) for g in groups}
        if not first:
            asyncio.run(play_all(jobs, agents, prepared))
        gc.collect()  # a pass is not charged for the previous one's garbage
        started = time.process_time()
        rounds = asyncio.run(play_all(jobs, agents, prepared, let_go=first))
        cpu.append(time.process_time() - started)
    return cpu[0], cpu[1], sum(rounds), len(rounds)


def agent_figures(passes: tuple[float, float, int, int]) -> dict[str, float]:
    """:func:`_agent_passes`' figures, per round and per sample."""
    first, again, rounds, samples = passes
    return {
        "rounds": rounds,
        "round_cpu_ms": round(1e3 * first / rounds, 3),
        "sample_cpu_ms": round(1e3 * first / samples, 3),
        "round_cpu_ms_again": round(1e3 * again / rounds, 3),
    }


PARTS: tuple[tuple[str, str, str | None, str], ...] = (
    # (label, module, class or None, attribute): where a first pass spends its CPU
    ("colleagues' readings of the agent's messages", "_colleagues", "RecordBook", "read"),
    # stored in the groups, as a built benchmark's: read, not searched for (an ideal agent's
    # episode; see the module docstring)
    ("minimum rounds (stored in the group)", "_sample", None, "minimum_rounds"),
    ("face-value evidence of each round", "_sample", None, "evidence_by_round"),
    ("justification of a right answer", "_sample", None, "justify_answer"),
    ("attribution of a wrong answer", "_sample", None, "attribute_error"),
    ("round notes", "_sample", None, "round_notes"),
    ("the record", "_sample", None, "_record"),
)


def _timed(
    fn: Callable[..., object], label: str, spent: dict[str, float], depth: list[int]
) -> Callable[..., object]:
    """``fn`` charging its CPU time to ``label`` - unless another timed part called it (a
    reading inside the minimum-rounds search, for a group that stores none, is the search's)."""
    if asyncio.iscoroutinefunction(fn):

        async def timed_coroutine(*args: object, **kwargs: object) -> object:
            if depth[0]:
                return await fn(*args, **kwargs)  # type: ignore[misc]
            depth[0] += 1
            started = time.process_time()
            try:
                return await fn(*args, **kwargs)  # type: ignore[misc]
            finally:
                depth[0] -= 1
                spent[label] += time.process_time() - started

        return timed_coroutine

    def timed(*args: object, **kwargs: object) -> object:
        if depth[0]:
            return fn(*args, **kwargs)
        depth[0] += 1
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            depth[0] -= 1
            spent[label] += time.process_time() - started

    return timed


def _breakdown(
    copies: int, memo_path: str, bench: str | None = None
) -> tuple[float, dict[str, float]]:
    """In a new interpreter: the first pass of :func:`_first_pass`, with the CPU time of each
    of :data:`PARTS` measured (the outermost part called is charged); (total, by part)."""
    import importlib

    spent = dict.fromkeys((label for label, *_ in PARTS), 0.0)
    depth = [0]

    def instrument() -> None:
        for label, module_name, class_name, attribute in PARTS:
            module = importlib.import_module(f"uncobench_z3.evaluation.{module_name}")
            owner = getattr(module, class_name) if class_name else module
            setattr(owner, attribute, _timed(getattr(owner, attribute), label, spent, depth))

    total = _first_pass(copies, memo_path, instrument, bench)
    return total, spent


def fresh_passes(
    copies: int, memo: Mapping[MemoKey, Action], bench: str | None, breakdown: bool
) -> tuple[float, tuple[float, dict[str, float]] | None]:
    """:func:`_first_pass` in a new interpreter, and :func:`_breakdown` in another when
    ``breakdown``, over :func:`pass_groups`, replaying ``memo``."""
    with tempfile.TemporaryDirectory() as scratch:
        memo_file = Path(scratch) / "memo.pickle"
        memo_file.write_bytes(pickle.dumps(memo))
        cpu = in_fresh_process(_first_pass, copies, str(memo_file), None, bench)
        parts = in_fresh_process(_breakdown, copies, str(memo_file), bench) if breakdown else None
    return cpu, parts


def breakdown_table(
    total: float, by_part: dict[str, float], groups: int
) -> dict[str, dict[str, float]]:
    """:func:`_breakdown`'s figures a group, the rest of the pass included."""
    rest = total - sum(by_part.values())
    parts = {**by_part, "the rest: the episode's own work, scoring the answer, the runner": rest}
    return {
        label: {
            "cpu_ms_per_group": round(1e3 * spent / groups, 3),
            "share": round(spent / total, 3),
        }
        for label, spent in parts.items()
    }


def say_breakdown(
    say: Callable[[str], None], breakdown: dict[str, dict[str, float]], what: str
) -> None:
    say(f"where a first pass spends its CPU (fresh interpreter, {what}):")
    for label, figures_of in breakdown.items():
        say(
            f"  {label}: {figures_of['cpu_ms_per_group']:.3f} ms a group "
            f"({100 * figures_of['share']:.0f}%)"
        )


def first_pass_over(
    bench: Path, bench_groups: list[TaskGroup], args: argparse.Namespace, say: Callable[[str], None]
) -> dict[str, object]:
    """The fresh first pass over the first ``5 * copies`` groups of a built benchmark (its
    groups, loaded: ``bench_groups``): the copies of the examples share their messages and
    tagged words, which the reader keeps across groups, so they flatter a first pass; a
    benchmark's groups share only some."""
    groups = bench_groups[: 5 * args.copies]  # what pass_groups loads in the fresh processes
    jobs, _ = plan_jobs(groups, make_config(str(bench), groups, ["bench/replay"]))
    memo, rounds = asyncio.run(record(jobs))
    cpu, parts = fresh_passes(args.copies, memo, str(bench), args.breakdown)
    total_rounds = sum(rounds)
    say(
        f"first pass over {len(groups)} groups of {bench} ({len(jobs)} samples, "
        f"{total_rounds} rounds), fresh process: {1e3 * cpu / total_rounds:.3f} ms CPU a round"
    )
    breakdown = None
    if parts is not None:
        breakdown = breakdown_table(parts[0], parts[1], len(groups))
        say_breakdown(say, breakdown, f"{len(groups)} groups of {bench}")
    return {
        "groups": len(groups),
        "samples": len(jobs),
        "rounds": total_rounds,
        "round_cpu_ms_fresh_process": round(1e3 * cpu / total_rounds, 3),
        "breakdown": breakdown,
    }


async def _sleeps_alone(job_rounds: list[int], slots: int, latency: float) -> float:
    """Wall seconds of the ideal's schedule played with nothing but the simulated latency:
    each sample, in job order, to the first free slot, one ``asyncio.sleep`` a round."""
    free = asyncio.Semaphore(slots)  # waiters are served first come, first served

    async def sample(rounds: int) -> None:
        async with free:
            for _ in range(rounds):
                await asyncio.sleep(latency)

    started = time.perf_counter()
    await asyncio.gather(*(sample(rounds) for rounds in job_rounds))
    return time.perf_counter() - started


def sleeps_alone(job_rounds: list[int], slots: int, latency: float, workers: int) -> float:
    """:func:`_sleeps_alone` in a fresh interpreter (an idle event loop, as the runs'), on
    the loop that plays the samples: asyncio's in the driver (one worker), the eval workers'
    with more (uvloop where installed: uncobench_z3/_eventloop.py)."""
    return in_fresh_process(_run_sleeps_alone, job_rounds, slots, latency, workers > 1)


def _run_sleeps_alone(job_rounds: list[int], slots: int, latency: float, workers: bool) -> float:
    run = run_loop if workers else asyncio.run
    return run(_sleeps_alone(job_rounds, slots, latency))


def ideal_makespan(latencies: list[float], workers: int) -> float:
    """Zero-overhead makespan: each job, in order, to the first free worker."""
    free = [0.0] * min(workers, len(latencies))
    end = 0.0
    for latency in latencies:
        start = heapq.heappop(free)
        end = max(end, start + latency)
        heapq.heappush(free, start + latency)
    return end


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="evaluation runner overhead")
    parser.add_argument(
        "--copies",
        type=at_least(1),
        default=64,
        help="copies of the 5 example groups (a throughput run has at least one per slot)",
    )
    parser.add_argument("--latency-ms", type=non_negative, default=50.0)
    parser.add_argument(
        "--concurrency",
        type=at_least(1),
        nargs="*",
        default=[1, 16, 64],
        help="slots of the throughput runs (the flag alone: no throughput run)",
    )
    parser.add_argument(
        "--workers", type=at_least(1), nargs="+", default=[1], help="shard processes"
    )
    parser.add_argument(
        "--agents",
        nargs="*",
        default=["builtin/careful", "builtin/naive", "builtin/patient"],
        help="built-in agents whose CPU per round is measured (the flag alone: none)",
    )
    parser.add_argument(
        "--bench",
        type=Path,
        help="a built benchmark: the memory figure, and a first pass over its first "
        "5 x --copies groups (all different, as a user's run; all, if it has fewer)",
    )
    parser.add_argument("--memory-concurrency", type=at_least(1), default=256)
    parser.add_argument("--memory-workers", type=at_least(1), default=1)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also measure where a first pass spends its CPU (a fresh interpreter)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    for name in args.agents:  # checked before any work: one line, not a traceback later
        try:
            check_agent_name(name)
        except ConfigError as exc:
            parser.error(f"--agents: {exc}")
        if not name.startswith("builtin/"):
            parser.error(f"--agents: {name!r} is not a built-in agent (builtin/NAME)")
    bench_groups: list[TaskGroup] = []
    if args.bench is not None:
        try:
            bench_groups = load_groups(args.bench)
        except InputError as exc:  # missing, not a benchmark, unreadable: one line
            parser.error(f"--bench: {exc}")
        if not bench_groups:
            parser.error(f"--bench: {args.bench} has no groups")
    say = (lambda text: None) if args.json else print
    groups = example_groups(args.copies)
    config = make_config("examples", groups, ["bench/replay"])
    jobs, _ = plan_jobs(groups, config)
    memo, rounds = asyncio.run(record(jobs))
    total_rounds = sum(rounds)
    say(
        f"{len(groups)} groups, {len(jobs)} samples, {total_rounds} rounds "
        f"({total_rounds / len(jobs):.2f} per sample)"
    )

    started = time.perf_counter()
    for group in groups:
        group_digest(group)
    per_digest = (time.perf_counter() - started) / len(groups)
    started = time.perf_counter()
    prepared = {id(g): PreparedGroup.of(g) for g in groups}
    per_prepare = (time.perf_counter() - started) / len(groups)
    say(
        f"per group: content hash {1e3 * per_digest:.2f} ms, preparation (typed task, "
        f"rendering, record book) {1e3 * per_prepare:.2f} ms"
    )

    async def direct(selected: list[SampleJob], agent: ReplayAgent) -> tuple[float, float]:
        # a full collection of the previous pass's garbage is not charged to this one (where
        # the collector's passes fall shifted a pass's CPU by up to a tenth)
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        with fewer_collections():  # the garbage collector's pace in evaluate()
            for job in selected:
                await run_sample(job, lambda name, seed: agent, prepared[id(job.group)])
        return time.perf_counter() - started, time.process_time() - cpu

    quick = ReplayAgent(memo, 0.0)
    asyncio.run(direct(jobs[:50], quick))  # warm-up: imports, caches
    elapsed, elapsed_cpu = asyncio.run(direct(jobs, quick))
    # the same samples again: what each group computes once per process (the readings of its
    # questions) is now known; verdicts are decided again
    # where the group's judge was let go (the last 256 are kept: with more groups than that,
    # played in order, every judge is made again)
    _, warm_cpu = asyncio.run(direct(jobs, quick))
    say(
        f"per sample (episode, scoring, trace, record; group prepared): "
        f"{1e3 * elapsed / len(jobs):.3f} ms = {1e3 * elapsed / total_rounds:.3f} ms per round"
    )
    wrong = {key: AnswerAction(decision="none") for key in memo}
    sample = jobs[:100]
    wrong_wall, wrong_cpu = asyncio.run(direct(sample, ReplayAgent(wrong, 0.0)))
    say(
        f"an answer of nobody at once (1 round; wrong ones attributed): "
        f"{1e3 * wrong_wall / len(sample):.2f} ms"
    )
    fresh_cpu, parts = fresh_passes(args.copies, memo, None, args.breakdown)
    say(
        f"CPU per round, runner alone: {1e3 * elapsed_cpu / total_rounds:.3f} ms "
        f"(target <= 0.15 ms); in a fresh process {1e3 * fresh_cpu / total_rounds:.3f} ms; "
        f"the same samples again (per-group work known): {1e3 * warm_cpu / total_rounds:.3f} ms"
    )
    breakdown: dict[str, dict[str, float]] | None = None
    if parts is not None:
        breakdown = breakdown_table(parts[0], parts[1], len(groups))
        say_breakdown(say, breakdown, f"{len(groups)} groups")
    bench_pass = (
        None if args.bench is None else first_pass_over(args.bench, bench_groups, args, say)
    )
    builtin: dict[str, dict[str, float]] = {}
    for name in args.agents:
        builtin[name] = agent_figures(in_fresh_process(_agent_passes, args.copies, name))
        say(
            f"CPU per round, {name} (its thinking included): first pass "
            f"{builtin[name]['round_cpu_ms']:.3f} ms in a fresh process, the same samples "
            f"again {builtin[name]['round_cpu_ms_again']:.3f} ms "
            f"({builtin[name]['rounds']:.0f} rounds)"
        )
    figures: dict[str, object] = {
        "groups": len(groups),
        "samples": len(jobs),
        "rounds": total_rounds,
        "group_hash_ms": round(1e3 * per_digest, 3),
        "group_preparation_ms": round(1e3 * per_prepare, 3),
        "sample_ms": round(1e3 * elapsed / len(jobs), 3),
        "round_ms": round(1e3 * elapsed / total_rounds, 3),
        "round_cpu_ms": round(1e3 * elapsed_cpu / total_rounds, 3),
        "round_cpu_ms_fresh_process": round(1e3 * fresh_cpu / total_rounds, 3),
        "round_cpu_ms_again": round(1e3 * warm_cpu / total_rounds, 3),
        "first_pass_breakdown": breakdown,
        "bench_first_pass": bench_pass,
        "wrong_answer_ms": round(1e3 * wrong_wall / len(sample), 3),
        "wrong_answer_cpu_ms": round(1e3 * wrong_cpu / len(sample), 3),
        "builtin_agents": builtin,
        "latency_ms": args.latency_ms,
        "workers_event_loop": event_loop_name(),  # (with --workers > 1; and their sleeps alone)
        "concurrency": {},
    }

    latency = args.latency_ms / 1000
    say(
        f"\nagent latency {args.latency_ms:g} ms per call; full runner (stored content hashes "
        f"spot-checked, preparation, log with fsync), workers' event loop: {event_loop_name()}"
    )
    say(
        f"{'concurrency':>11} {'workers':>7} {'samples':>8} {'samples/s':>10} "
        f"{'measured s':>11} {'ideal s':>9} {'ratio':>7} {'sleeps s':>9} {'ratio':>7} "
        f"{'CPU ms/round':>13} {'first call s':>13} {'driver CPU s':>13}"
    )
    rounds_of = {job.key: r for job, r in zip(jobs, rounds, strict=True)}
    with tempfile.TemporaryDirectory() as scratch:
        memo_path = Path(scratch) / "memo.pickle"
        memo_path.write_bytes(pickle.dumps(memo))
        for slots in args.concurrency:
            # about the same ideal time at every concurrency: 5 groups (a copy of the examples)
            # per slot, so that a high concurrency is measured running, not mostly starting
            # (with 64 copies, 256 slots had 1.25 groups each: an ideal time of 0.9 s, and
            # the start-up of the first 256 groups at once a large part of the measured time)
            run_copies = max(args.copies, slots)
            run_groups = groups if run_copies == args.copies else example_groups(run_copies)
            limit = min(len(run_groups), 5 * slots)
            limited = make_config("examples", run_groups, ["bench/replay"], limit=limit)
            run_jobs, _ = plan_jobs(run_groups, limited)
            run_memo = memo_path
            if run_groups is groups:
                job_rounds = [rounds_of[job.key] for job in run_jobs]
            else:  # the decisions on these groups' samples too (same texts: mostly known)
                more, job_rounds = asyncio.run(record(run_jobs))
                run_memo = Path(scratch) / f"memo-{slots}.pickle"
                run_memo.write_bytes(pickle.dumps({**memo, **more}))
            ideal = ideal_makespan([latency * r for r in job_rounds], slots)
            alone_on: dict[bool, float] = {}  # sleeps alone on the driver's loop or the workers'
            run_rounds = sum(job_rounds)
            for workers in args.workers:
                on_workers = workers > 1
                if on_workers not in alone_on:
                    alone_on[on_workers] = sleeps_alone(job_rounds, slots, latency, workers)
                alone = alone_on[on_workers]
                measured, cpu, driver_cpu, first_call = cold_run(
                    ThroughputRun(run_copies, limit, slots, workers, latency, str(run_memo))
                )
                name = str(slots) if workers == 1 else f"{slots}/{workers} workers"
                figures["concurrency"][name] = {  # type: ignore[index]
                    "workers": workers,
                    "groups": limit,
                    "samples": len(run_jobs),
                    "measured_s": round(measured, 3),
                    "ideal_s": round(ideal, 3),
                    "ratio": round(measured / ideal, 3),
                    # the same schedule as sleeps alone, and what the runner adds to it
                    "sleeps_alone_s": round(alone, 3),
                    "ratio_to_sleeps_alone": round(measured / alone, 3),
                    "cpu_ms_per_round": round(1e3 * cpu / run_rounds, 3),
                    "cpu_s": round(cpu, 3),
                    # where the rest goes: the start (spot checks, planning, workers, the first
                    # group prepared) and the driver's share of the CPU
                    "first_call_s": round(first_call, 3),
                    "driver_cpu_s": round(driver_cpu, 3),
                }
                rate = len(run_jobs) / measured
                say(
                    f"{slots:>11} {workers:>7} {len(run_jobs):>8} {rate:>10.1f} "
                    f"{measured:>11.2f} {ideal:>9.2f} {measured / ideal:>7.3f} {alone:>9.2f} "
                    f"{measured / alone:>7.3f} {1e3 * cpu / run_rounds:>13.3f} "
                    f"{first_call:>13.3f} {driver_cpu:>13.2f}"
                )
    if args.bench is not None:
        memory = peak_memory(
            args.bench, len(bench_groups), args.memory_concurrency, latency, args.memory_workers
        )
        figures["memory"] = memory
        if memory["exit_code"] != 0:  # a peak of a run that failed is not the figure
            sys.exit(f"memory: the run over {args.bench} failed (exit code {memory['exit_code']})")
        say(
            f"\nmemory: every sample of {memory['groups']} groups, builtin/careful "
            f"({args.latency_ms:g} ms a call), concurrency {memory['concurrency']}, "
            f"{memory['workers']} worker(s): peak PSS {memory['peak_pss_mb']} MB "
            f"(process tree; {memory['wall_s']} s wall; target <= 400 MB)"
        )
    speed = machine()
    say(f"\nmachine: {speed['additions']:,} Python additions in {speed['additions_cpu_s']} CPU-s")
    if args.json:
        print(json.dumps({"benchmark": "eval overhead", "machine": speed, **figures}, indent=2))


if __name__ == "__main__":
    main()
