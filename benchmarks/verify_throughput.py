"""Verification throughput: specs verified per second, all checks, against two baselines.

    python benchmarks/verify_throughput.py [--specs 200] [--seed 7] [--workers 2]

Specs come from the offline generator (instantiated, with records). Measured in one run:

* **engine**: ``verify_spec`` - one incremental solver per task, every query an assumption set;
* **engine, all cores**: the same over a process pool (throughput ratio to one process);
* **fresh solver** baseline: the same checks and queries, but every query re-encodes the task
  and parses it into a new solver (what the engine avoids);
* **brute force** baseline: role necessity by enumerating completions of the hidden facts
  (capped; the share it could not decide is reported).

Targets (from the issue): median <= 10 ms for all checks of a 6-role task on one core; >= 5x
faster than the fresh-solver baseline; >= 1.8x with two workers; zero unknowns at a 2 s
per-query timeout. Timing is never asserted in tests; this script reports figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.solver import (
    Checker,
    QueryResult,
    SolverBudget,
    TaskSolver,
    Verdict,
    brute_force_differs,
    verify_spec,
)
from uncobench_z3.solver._verify import prove_task
from uncobench_z3.spec import Slot, TaskSpec, check_structure

BUDGET = SolverBudget(timeout_ms=2000)


def make_specs(count: int, seed: int) -> list[TaskSpec]:
    generator = SpecGenerator(load_library(), seed)
    specs: list[TaskSpec] = []
    index = 0
    while len(specs) < count:
        plan_none = random.Random(f"bench:{seed}:{index}").random() < 0.2
        draft = generator.draft(index, plan_none)
        index += 1
        try:
            specs.append(instantiate(draft, seed))
        except InstantiationError:
            continue
    return specs


class FreshTaskSolver(TaskSolver):
    """The baseline: a new encoding and a new solver for every query."""

    def query(
        self,
        name: str,
        pinned: Iterable[Slot],
        goal: str | None = None,
        extras: Sequence[str] = (),
        want_core: bool = True,
        want_model: bool = True,
    ) -> QueryResult:
        TaskSolver.__init__(self, self.task, self.gold, BUDGET)
        return super().query(name, pinned, goal, extras, want_core, want_model)


def verify_fresh(spec: TaskSpec) -> None:
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    checker = Checker(FreshTaskSolver(task, gold if gold.kind != "ambiguous" else None, BUDGET))
    if gold.kind == "ambiguous":
        checker.uniqueness_check()
        return
    checker.gold_check(gold)
    checker.uniqueness_check()
    for role in task.roles:
        checker.necessity_check(role, gold)


def verify_brute(spec: TaskSpec, cap: int) -> tuple[int, int]:
    """Role necessity by enumeration: (roles decided, roles undecided)."""
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    decided = undecided = 0
    for role in task.roles:
        result = brute_force_differs(task, gold, task.slots_of(role), cap=cap)
        if result.status == "undecided":
            undecided += 1
        else:
            decided += 1
    return decided, undecided


def _timed(function, items):  # type: ignore[no-untyped-def]
    times = []
    for item in items:
        start = time.perf_counter()
        function(item)
        times.append(time.perf_counter() - start)
    return times


def _verify_many(specs: list[TaskSpec]) -> list[int]:
    return [int(verify_spec(spec, budget=BUDGET).verdict) for spec in specs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--specs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--brute-cap", type=int, default=20_000)
    parser.add_argument("--brute-specs", type=int, default=20)
    args = parser.parse_args(argv)

    specs = make_specs(args.specs, args.seed)
    for spec in specs[:5]:
        verify_spec(spec, budget=BUDGET)  # warm up imports and caches

    engine = _timed(lambda s: verify_spec(s, budget=BUDGET), specs)
    unknowns = 0
    query_count = 0
    for spec in specs:
        proof = prove_task(spec, budget=BUDGET)
        unknowns += sum(c.verdict == Verdict.UNKNOWN for c in proof.report.checks)
        query_count += proof.checker.ts.queries if proof.checker else 0
    six = [t for t, s in zip(engine, specs, strict=True) if len(s.roles) == 6]

    fresh = _timed(verify_fresh, specs)

    chunks = [specs[i :: args.workers * 4] for i in range(args.workers * 4)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(_verify_many, chunks))
    parallel_wall = time.perf_counter() - start
    start = time.perf_counter()
    for chunk in chunks:
        _verify_many(chunk)
    serial_wall = time.perf_counter() - start

    brute_specs = specs[: args.brute_specs]
    start = time.perf_counter()
    decided = undecided = 0
    for spec in brute_specs:
        d, u = verify_brute(spec, args.brute_cap)
        decided += d
        undecided += u
    brute_time = (time.perf_counter() - start) / len(brute_specs)
    engine_mean = statistics.mean(engine)

    ms = 1000.0
    rows = [
        (
            "specs (mean roles)",
            f"{len(specs)} ({statistics.mean(len(s.roles) for s in specs):.1f})",
        ),
        ("solver queries per spec", f"{query_count / len(specs):.1f}"),
        (
            "engine median / p90 per spec",
            f"{statistics.median(engine) * ms:.1f} ms / "
            f"{sorted(engine)[int(0.9 * len(engine))] * ms:.1f} ms",
        ),
        (
            "engine median, 6-role specs",
            f"{statistics.median(six) * ms:.1f} ms ({len(six)} specs)" if six else "-",
        ),
        ("engine throughput, 1 process", f"{len(specs) / serial_wall:.1f} specs/s"),
        (f"engine throughput, {args.workers} workers", f"{len(specs) / parallel_wall:.1f} specs/s"),
        ("  speed-up from workers", f"{serial_wall / parallel_wall:.2f}x"),
        ("fresh-solver baseline mean per spec", f"{statistics.mean(fresh) * ms:.1f} ms"),
        ("  engine speed-up over fresh solver", f"{statistics.mean(fresh) / engine_mean:.1f}x"),
        (f"brute force mean per spec (cap {args.brute_cap:,})", f"{brute_time * ms:.1f} ms"),
        (
            "  brute force undecided share of roles",
            f"{100 * undecided / max(1, decided + undecided):.1f}%",
        ),
        (
            "  engine speed-up over brute force",
            f"{brute_time / engine_mean:.1f}x (and decides all)",
        ),
        ("unknown verdicts at 2 s timeout", str(unknowns)),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"verify throughput (python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
