"""The evaluation runner's own cost, and its throughput against a slow agent.

1. **Cost per round**: every sample of a small benchmark is first played by
   ``builtin/careful`` while its decisions are memorised (conversation -> action); a replay
   agent then answers from that memo with no thinking, so the measured time is the runner's
   alone (environment, scripted colleagues, scoring, trace). Reported per round and per
   sample, plus the cost of one wrong answer (which adds the solver attribution).
2. **Throughput**: the same replay agent sleeps 50 ms per call (``asyncio.sleep``, like a
   model API call) and the full runner (JSON Lines log with fsync, resumable) runs at
   concurrency 1, 16 and 64. The *ideal* time is the makespan of the same schedule (each
   sample to the first free worker, in job order) if only the latency counted; the table
   reports measured / ideal (target at 64: within 10%).

Run: ``python benchmarks/eval_overhead.py [--copies N] [--latency-ms 50] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import heapq
import json
import tempfile
import time
from pathlib import Path

from uncobench_z3.construct import render_task
from uncobench_z3.evaluation import (
    Action,
    AnswerAction,
    Conversation,
    Environment,
    PreparedGroup,
    SampleJob,
    evaluate,
    group_digest,
    make_agent,
    make_config,
    plan_jobs,
    run_sample,
)
from uncobench_z3.settings import DefectBalance, TaskGroup, perturb
from uncobench_z3.spec import check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
MemoKey = tuple[str, tuple[str, ...]]


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
    """Answers from a memo of a recorded agent, after a simulated latency per call."""

    def __init__(self, memo: dict[MemoKey, Action], latency: float) -> None:
        self.memo = memo
        self.latency = latency

    async def act(self, conversation: Conversation) -> Action:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self.memo[memo_key(conversation)]


def example_groups(copies: int) -> list[TaskGroup]:
    balance = DefectBalance()
    base = []
    for path in sorted(glob.glob(str(ROOT / "examples" / "*.json"))):
        found = perturb(load_spec(path), seed=0, balance=balance).group
        assert found is not None
        # a built benchmark stores the rendered text with each group; so do these
        task = check_structure(found.spec).task
        assert task is not None
        rendered = render_task(task, found.seed).model_dump(mode="json")
        base.append(found.model_copy(update={"rendered": rendered}))
    # distinct ids, so distinct content hashes and job keys, for every copy
    return [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(copies) for g in base]


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
    parser.add_argument("--copies", type=int, default=64, help="copies of the 5 example groups")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 16, 64])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
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
        started, cpu = time.perf_counter(), time.process_time()
        for job in selected:
            await run_sample(job, lambda name, seed: agent, prepared[id(job.group)])
        return time.perf_counter() - started, time.process_time() - cpu

    quick = ReplayAgent(memo, 0.0)
    asyncio.run(direct(jobs[:50], quick))  # warm-up: imports, caches
    elapsed, elapsed_cpu = asyncio.run(direct(jobs, quick))
    say(
        f"per sample (episode, scoring, trace, record; group prepared): "
        f"{1e3 * elapsed / len(jobs):.3f} ms = {1e3 * elapsed / total_rounds:.3f} ms per round"
    )
    wrong = {key: AnswerAction(decision="none") for key in memo}
    sample = jobs[:100]
    wrong_wall, wrong_cpu = asyncio.run(direct(sample, ReplayAgent(wrong, 0.0)))
    say(f"a wrong answer (1 round + solver attribution): {1e3 * wrong_wall / len(sample):.2f} ms")
    figures: dict[str, object] = {
        "groups": len(groups),
        "samples": len(jobs),
        "rounds": total_rounds,
        "group_hash_ms": round(1e3 * per_digest, 3),
        "group_preparation_ms": round(1e3 * per_prepare, 3),
        "sample_ms": round(1e3 * elapsed / len(jobs), 3),
        "round_ms": round(1e3 * elapsed / total_rounds, 3),
        "round_cpu_ms": round(1e3 * elapsed_cpu / total_rounds, 3),
        "wrong_answer_ms": round(1e3 * wrong_wall / len(sample), 3),
        "wrong_answer_cpu_ms": round(1e3 * wrong_cpu / len(sample), 3),
        "latency_ms": args.latency_ms,
        "concurrency": {},
    }

    latency = args.latency_ms / 1000
    say(
        f"\nagent latency {args.latency_ms:g} ms per call; full runner (hashing, preparation, "
        "log with fsync)"
    )
    say(
        f"{'concurrency':>11} {'samples':>8} {'samples/s':>10} {'measured s':>11} "
        f"{'ideal s':>9} {'ratio':>7} {'CPU ms/round':>13}"
    )
    slow = ReplayAgent(memo, latency)
    rounds_of = {job.key: r for job, r in zip(jobs, rounds, strict=True)}
    for workers in args.concurrency:
        # about the same ideal time at every concurrency: 5 groups per worker
        limited = make_config(
            "examples", groups, ["bench/replay"], limit=min(len(groups), 5 * workers)
        )
        run_jobs, _ = plan_jobs(groups, limited)
        with tempfile.TemporaryDirectory() as out:
            started, cpu = time.perf_counter(), time.process_time()
            evaluate(groups, limited, out, concurrency=workers, agents=lambda n, s: slow)
            measured, cpu = time.perf_counter() - started, time.process_time() - cpu
        ideal = ideal_makespan([latency * rounds_of[job.key] for job in run_jobs], workers)
        run_rounds = sum(rounds_of[job.key] for job in run_jobs)
        figures["concurrency"][str(workers)] = {  # type: ignore[index]
            "samples": len(run_jobs),
            "measured_s": round(measured, 3),
            "ideal_s": round(ideal, 3),
            "ratio": round(measured / ideal, 3),
            "cpu_ms_per_round": round(1e3 * cpu / run_rounds, 3),
        }
        say(
            f"{workers:>11} {len(run_jobs):>8} {len(run_jobs) / measured:>10.1f} "
            f"{measured:>11.2f} {ideal:>9.2f} {measured / ideal:>7.3f} "
            f"{1e3 * cpu / run_rounds:>13.3f}"
        )
    if args.json:
        print(json.dumps({"benchmark": "eval overhead", **figures}, indent=2))


if __name__ == "__main__":
    main()
