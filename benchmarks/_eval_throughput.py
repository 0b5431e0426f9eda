"""The throughput at concurrency and the memory figure of ``eval_overhead.py`` (parts 2 and 3
of its docstring).

Throughput: the replay agent of ``_eval_passes.py`` sleeps the latency a call and the full
runner plays at each concurrency and worker count in a fresh interpreter (:func:`cold_run`),
against the ideal makespan of the same schedule (:func:`ideal_makespan`) and that schedule
played as sleeps alone (:func:`sleeps_alone`). Memory: ``builtin/careful`` sleeping the
latency a call plays a built benchmark in a process of its own (:func:`peak_memory`), the
peak PSS of its process tree sampled meanwhile.

Not a script: ``eval_overhead.py`` imports it (with this folder on ``sys.path``, as the scripts
import ``_common``), and so does each fresh interpreter that runs one of its functions.
"""

from __future__ import annotations

import asyncio
import heapq
import multiprocessing
import pickle
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from _common import children_cpu, descendants, in_fresh_process, own_cpu
from _eval_passes import Recorded, ReplayAgent, example_groups, record

from uncobench_z3._eventloop import event_loop_name
from uncobench_z3._eventloop import run as run_loop
from uncobench_z3._executor import ExecutorOptions
from uncobench_z3.construct import DIGESTS_KEY, digests_entry, group_digests, load_benchmark
from uncobench_z3.evaluation import (
    Action,
    Conversation,
    EvalOptions,
    evaluate,
    group_digest,
    make_agent,
    make_config,
    plan_jobs,
)


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
        # (the driver's CPU and its children's read at one instant, at each end: the driver's
        # part read apart, after the tree's, could exceed the tree's by a clock tick)
        started, driver, children = time.perf_counter(), own_cpu(), children_cpu()
        digests = group_digests(groups, stored)
        limited = make_config("examples", groups, ["bench/replay"], limit=run.limit,
                              digests=digests)  # fmt: skip
        evaluate(groups, limited, out, options, agents=slow.for_sample, digests=digests)
        driver_cpu = own_cpu() - driver
        return (
            time.perf_counter() - started,
            driver_cpu + children_cpu() - children,
            driver_cpu,
            first_call.value - started,
        )


def cold_run(run: ThroughputRun) -> ThroughputFigures:
    """:func:`_throughput` in a fresh interpreter, as ``uncobench eval`` starts: nothing this
    script played before (remembered readings, minimum rounds, vocabularies) is known."""
    return ThroughputFigures(*in_fresh_process(_throughput, run))


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


class Schedule(NamedTuple):
    """What the throughput runs at one concurrency play."""

    copies: int
    """copies of the examples made (at least one a slot)"""
    groups: int
    """the groups played (the runs' ``limit``)"""
    samples: int
    job_rounds: list[int]
    """a sample's rounds, in job order"""
    memo_path: Path
    """the recorded decisions on every sample played (pickled)"""


def schedule_at(
    slots: int,
    examples: Recorded,
    copies: int,
    rounds_of: dict[str, int],
    memo_path: Path,
    scratch: str,
) -> Schedule:
    """The samples played at concurrency ``slots``: the first ``5 * slots`` groups of at
    least one copy of the examples a slot (``copies``, ``examples``, recorded and pickled at
    ``memo_path``, when they are enough); the decisions on the other copies' samples are
    recorded too and pickled into ``scratch``."""
    # about the same ideal time at every concurrency: 5 groups (a copy of the examples)
    # per slot, so that a high concurrency is measured running, not mostly starting
    # (with 64 copies, 256 slots had 1.25 groups each: an ideal time of 0.9 s, and
    # the start-up of the first 256 groups at once a large part of the measured time)
    run_copies = max(copies, slots)
    run_groups = examples.groups if run_copies == copies else example_groups(run_copies)
    limit = min(len(run_groups), 5 * slots)
    limited = make_config("examples", run_groups, ["bench/replay"], limit=limit)
    run_jobs, _ = plan_jobs(run_groups, limited)
    run_memo = memo_path
    if run_groups is examples.groups:
        job_rounds = [rounds_of[job.key] for job in run_jobs]
    else:  # the decisions on these groups' samples too (same texts: mostly known)
        more, job_rounds = asyncio.run(record(run_jobs))
        run_memo = Path(scratch) / f"memo-{slots}.pickle"
        run_memo.write_bytes(pickle.dumps({**examples.memo, **more}))
    return Schedule(run_copies, limit, len(run_jobs), job_rounds, run_memo)


def run_figures(
    workers: int,
    schedule: Schedule,
    measured: ThroughputFigures,
    ideal: float,
    alone: float,
) -> dict[str, object]:
    """One throughput run's JSON figures: measured against the ideal and the sleeps alone."""
    return {
        "workers": workers,
        "groups": schedule.groups,
        "samples": schedule.samples,
        "measured_s": round(measured.wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(measured.wall / ideal, 3),
        # the same schedule as sleeps alone, and what the runner adds to it
        "sleeps_alone_s": round(alone, 3),
        "ratio_to_sleeps_alone": round(measured.wall / alone, 3),
        "cpu_ms_per_round": round(1e3 * measured.cpu / sum(schedule.job_rounds), 3),
        "cpu_s": round(measured.cpu, 3),
        # where the rest goes: the start (spot checks, planning, workers, the first
        # group prepared) and the driver's share of the CPU
        "first_call_s": round(measured.first_call, 3),
        "driver_cpu_s": round(measured.driver_cpu, 3),
    }


def throughput_figures(
    examples: Recorded,
    copies: int,
    concurrency: list[int],
    workers_counts: list[int],
    latency_ms: float,
    say: Callable[[str], None],
) -> dict[str, dict[str, object]]:
    """The throughput runs, at each of ``concurrency`` with each of ``workers_counts``, the
    replay agent answering from ``examples``' decisions after ``latency_ms`` a call: a table
    row each (``say``), and their figures by name ("SLOTS", or "SLOTS/N workers")."""
    latency = latency_ms / 1000
    say(
        f"\nagent latency {latency_ms:g} ms per call; full runner (stored content hashes "
        f"spot-checked, preparation, log with fsync), workers' event loop: {event_loop_name()}"
    )
    say(
        f"{'concurrency':>11} {'workers':>7} {'samples':>8} {'samples/s':>10} "
        f"{'measured s':>11} {'ideal s':>9} {'ratio':>7} {'sleeps s':>9} {'ratio':>7} "
        f"{'CPU ms/round':>13} {'first call s':>13} {'driver CPU s':>13}"
    )
    figures: dict[str, dict[str, object]] = {}
    rounds_of = {job.key: r for job, r in zip(examples.jobs, examples.rounds, strict=True)}
    with tempfile.TemporaryDirectory() as scratch:
        memo_path = Path(scratch) / "memo.pickle"
        memo_path.write_bytes(pickle.dumps(examples.memo))
        for slots in concurrency:
            schedule = schedule_at(slots, examples, copies, rounds_of, memo_path, scratch)
            rounds, memo = schedule.job_rounds, str(schedule.memo_path)
            ideal = ideal_makespan([latency * r for r in rounds], slots)
            alone_on: dict[bool, float] = {}  # sleeps alone on the driver's loop or the workers'
            for workers in workers_counts:
                on_workers = workers > 1
                if on_workers not in alone_on:
                    alone_on[on_workers] = sleeps_alone(rounds, slots, latency, workers)
                alone = alone_on[on_workers]
                run = ThroughputRun(schedule.copies, schedule.groups, slots, workers, latency, memo)
                measured = cold_run(run)
                name = str(slots) if workers == 1 else f"{slots}/{workers} workers"
                figures[name] = run_figures(workers, schedule, measured, ideal, alone)
                wall, cpu = measured.wall, measured.cpu
                say(
                    f"{slots:>11} {workers:>7} {schedule.samples:>8} "
                    f"{schedule.samples / wall:>10.1f} {wall:>11.2f} {ideal:>9.2f} "
                    f"{wall / ideal:>7.3f} {alone:>9.2f} {wall / alone:>7.3f} "
                    f"{1e3 * cpu / sum(rounds):>13.3f} {measured.first_call:>13.3f} "
                    f"{measured.driver_cpu:>13.2f}"
                )
    return figures
