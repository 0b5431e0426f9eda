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
   fewer; ``--breakdown`` breaks that one down too), ``--bench-passes`` times (3), each in a
   fresh interpreter: the figure is their median, each run reported beside it (a shared
   machine only ever slows a run: in round 41's four runs of the README's command, minutes
   apart, the same code's figure was 0.152 to 0.173 ms).
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
256] [--workers 1 2] [--bench DIR [--bench-passes 3] [--memory-workers N]] [--breakdown]
[--json]``.

This script parses the options, plays the runner alone in this process and prints the
figures; the replayed passes (the cost per round in fresh interpreters, its breakdown, the
built-in agents) are in ``_eval_passes.py``, the throughput and memory runs in
``_eval_throughput.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, in_fresh_process, machine, non_negative
from _eval_passes import (
    PARTS,
    MemoKey,
    Recorded,
    ReplayAgent,
    _agent_passes,
    agent_figures,
    breakdown_table,
    builtin_maker,
    example_groups,
    first_pass_over,
    fresh_passes,
    memo_key,
    pass_groups,
    play_all,
    record,
    recorded_examples,
    say_breakdown,
)
from _eval_throughput import (
    SlowAgent,
    ThroughputFigures,
    ThroughputRun,
    cold_run,
    ideal_makespan,
    peak_memory,
    sleeps_alone,
    throughput_figures,
    tree_pss_mb,
)

from uncobench_z3._eventloop import event_loop_name
from uncobench_z3._gc import fewer_collections
from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ConfigError, InputError
from uncobench_z3.evaluation import (
    AnswerAction,
    PreparedGroup,
    SampleJob,
    check_agent_name,
    group_digest,
    make_config,
    plan_jobs,
    run_sample,
)
from uncobench_z3.settings import TaskGroup

# what other code takes from this script (the scratch scripts of the rounds: ``import
# eval_overhead as eo``): the names it defined before the passes and the throughput runs
# went to modules of their own, and the runner's functions those scripts use
__all__ = [
    "PARTS",
    "MemoKey",
    "PreparedGroup",
    "ReplayAgent",
    "SlowAgent",
    "ThroughputFigures",
    "ThroughputRun",
    "agent_figures",
    "breakdown_table",
    "builtin_maker",
    "cold_run",
    "example_groups",
    "first_pass_over",
    "fresh_passes",
    "ideal_makespan",
    "in_fresh_process",
    "load_groups",
    "main",
    "make_config",
    "memo_key",
    "pass_groups",
    "peak_memory",
    "plan_jobs",
    "play_all",
    "record",
    "say_breakdown",
    "sleeps_alone",
    "tree_pss_mb",
]


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[TaskGroup]]:
    """The options, and the groups of ``--bench`` (none without it), checked before any work:
    a bad one stops the script with one line, not a traceback later."""
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
    parser.add_argument(
        "--bench-passes",
        type=at_least(1),
        default=3,
        help="fresh interpreters that each play the first pass over --bench (the median is "
        "the figure)",
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
    return args, bench_groups


class InProcess(NamedTuple):
    """The runner alone in this process, replaying the recorded decisions (seconds)."""

    hash_s: float
    """a group's content hash"""
    preparation_s: float
    """a group's preparation"""
    wall: float
    """every sample once (after a warm-up), the groups prepared before"""
    cpu: float
    again_cpu: float
    """the same samples again (per-group work known)"""
    wrong_wall: float
    """``wrong_samples`` samples answered "nobody" at once"""
    wrong_cpu: float
    wrong_samples: int


async def _timed_pass(
    selected: list[SampleJob], agent: ReplayAgent, prepared: dict[int, PreparedGroup]
) -> tuple[float, float]:
    """Every job of ``selected`` in turn, answered by ``agent``: wall and CPU seconds."""
    # a full collection of the previous pass's garbage is not charged to this one (where
    # the collector's passes fall shifted a pass's CPU by up to a tenth)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    with fewer_collections():  # the garbage collector's pace in evaluate()
        for job in selected:
            await run_sample(job, agent.for_sample, prepared[id(job.group)])
    return time.perf_counter() - started, time.process_time() - cpu


def in_process(examples: Recorded, say: Callable[[str], None]) -> InProcess:
    """The examples' groups hashed and prepared, then every sample replayed in this process
    (after the recording: the texts' readings are known process-wide), twice, and the first
    100 answered "nobody" at once."""
    groups, jobs, total_rounds = examples.groups, examples.jobs, sum(examples.rounds)
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

    quick = ReplayAgent(examples.memo, 0.0)
    asyncio.run(_timed_pass(jobs[:50], quick, prepared))  # warm-up: imports, caches
    elapsed, elapsed_cpu = asyncio.run(_timed_pass(jobs, quick, prepared))
    # the same samples again: what each group computes once per process (the readings of its
    # questions) is now known; verdicts are decided again
    # where the group's judge was let go (the last 256 are kept: with more groups than that,
    # played in order, every judge is made again)
    _, warm_cpu = asyncio.run(_timed_pass(jobs, quick, prepared))
    say(
        f"per sample (episode, scoring, trace, record; group prepared): "
        f"{1e3 * elapsed / len(jobs):.3f} ms = {1e3 * elapsed / total_rounds:.3f} ms per round"
    )
    wrong = {key: AnswerAction(decision="none") for key in examples.memo}
    sample = jobs[:100]
    wrong_wall, wrong_cpu = asyncio.run(_timed_pass(sample, ReplayAgent(wrong, 0.0), prepared))
    say(
        f"an answer of nobody at once (1 round; wrong ones attributed): "
        f"{1e3 * wrong_wall / len(sample):.2f} ms"
    )
    return InProcess(
        per_digest, per_prepare, elapsed, elapsed_cpu, warm_cpu, wrong_wall, wrong_cpu, len(sample)
    )


def fresh_first_pass(
    copies: int,
    examples: Recorded,
    alone: InProcess,
    breakdown: bool,
    say: Callable[[str], None],
) -> tuple[float, dict[str, dict[str, float]] | None]:
    """The examples' first pass in a fresh interpreter (CPU s), said beside the in-process
    passes (``alone``), and with ``breakdown`` where it spends its CPU, a group."""
    total_rounds = sum(examples.rounds)
    fresh_cpu, parts = fresh_passes(copies, examples.memo, None, breakdown)
    say(
        f"CPU per round, runner alone: {1e3 * alone.cpu / total_rounds:.3f} ms "
        f"(target <= 0.15 ms); in a fresh process {1e3 * fresh_cpu / total_rounds:.3f} ms; "
        f"the same samples again (per-group work known): "
        f"{1e3 * alone.again_cpu / total_rounds:.3f} ms"
    )
    table: dict[str, dict[str, float]] | None = None
    if parts is not None:
        table = breakdown_table(parts[0], parts[1], len(examples.groups))
        say_breakdown(say, table, f"{len(examples.groups)} groups")
    return fresh_cpu, table


def builtin_agents(
    names: list[str], copies: int, say: Callable[[str], None]
) -> dict[str, dict[str, float]]:
    """Each built-in agent's passes over the examples, each in a fresh interpreter."""
    builtin: dict[str, dict[str, float]] = {}
    for name in names:
        builtin[name] = agent_figures(in_fresh_process(_agent_passes, copies, name))
        say(
            f"CPU per round, {name} (its thinking included): first pass "
            f"{builtin[name]['round_cpu_ms']:.3f} ms in a fresh process, the same samples "
            f"again {builtin[name]['round_cpu_ms_again']:.3f} ms "
            f"({builtin[name]['rounds']:.0f} rounds)"
        )
    return builtin


def memory_figure(
    args: argparse.Namespace, groups: int, say: Callable[[str], None]
) -> dict[str, object]:
    """The peak memory of every sample of ``--bench`` (``groups`` groups) played; the script
    stops if that run failed (its peak is not the figure)."""
    memory = peak_memory(
        args.bench, groups, args.memory_concurrency, args.latency_ms / 1000, args.memory_workers
    )
    if memory["exit_code"] != 0:  # a peak of a run that failed is not the figure
        sys.exit(f"memory: the run over {args.bench} failed (exit code {memory['exit_code']})")
    say(
        f"\nmemory: every sample of {memory['groups']} groups, builtin/careful "
        f"({args.latency_ms:g} ms a call), concurrency {memory['concurrency']}, "
        f"{memory['workers']} worker(s): peak PSS {memory['peak_pss_mb']} MB "
        f"(process tree; {memory['wall_s']} s wall; target <= 400 MB)"
    )
    return memory


def main(argv: list[str] | None = None) -> None:
    args, bench_groups = parse_args(argv)
    say = (lambda text: None) if args.json else print
    examples = recorded_examples(args.copies)
    groups, jobs, total_rounds = examples.groups, examples.jobs, sum(examples.rounds)
    say(
        f"{len(groups)} groups, {len(jobs)} samples, {total_rounds} rounds "
        f"({total_rounds / len(jobs):.2f} per sample)"
    )
    alone = in_process(examples, say)
    fresh_cpu, breakdown = fresh_first_pass(args.copies, examples, alone, args.breakdown, say)
    bench_pass = (
        None if args.bench is None else first_pass_over(args.bench, bench_groups, args, say)
    )
    builtin = builtin_agents(args.agents, args.copies, say)
    concurrency = throughput_figures(
        examples, args.copies, args.concurrency, args.workers, args.latency_ms, say
    )
    figures: dict[str, object] = {
        "groups": len(groups),
        "samples": len(jobs),
        "rounds": total_rounds,
        "group_hash_ms": round(1e3 * alone.hash_s, 3),
        "group_preparation_ms": round(1e3 * alone.preparation_s, 3),
        "sample_ms": round(1e3 * alone.wall / len(jobs), 3),
        "round_ms": round(1e3 * alone.wall / total_rounds, 3),
        "round_cpu_ms": round(1e3 * alone.cpu / total_rounds, 3),
        "round_cpu_ms_fresh_process": round(1e3 * fresh_cpu / total_rounds, 3),
        "round_cpu_ms_again": round(1e3 * alone.again_cpu / total_rounds, 3),
        "first_pass_breakdown": breakdown,
        "bench_first_pass": bench_pass,
        "wrong_answer_ms": round(1e3 * alone.wrong_wall / alone.wrong_samples, 3),
        "wrong_answer_cpu_ms": round(1e3 * alone.wrong_cpu / alone.wrong_samples, 3),
        "builtin_agents": builtin,
        "latency_ms": args.latency_ms,
        "workers_event_loop": event_loop_name(),  # (with --workers > 1; and their sleeps alone)
        "concurrency": concurrency,
    }
    if args.bench is not None:
        figures["memory"] = memory_figure(args, len(bench_groups), say)
    speed = machine()
    say(f"\nmachine: {speed['additions']:,} Python additions in {speed['additions_cpu_s']} CPU-s")
    if args.json:
        print(json.dumps({"benchmark": "eval overhead", "machine": speed, **figures}, indent=2))


if __name__ == "__main__":
    main()
