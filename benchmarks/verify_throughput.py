"""Verification cost: every check of a spec, in CPU time, against two baselines in the same run.

    python benchmarks/verify_throughput.py [--specs 200] [--seed 7] [--workers 2]
        [--brute-specs 20] [--brute-explore 20000 1000000] [--bench DIR] [--json]

Specs come from the offline generator (instantiated, with records). Batch by batch (25 specs),
interleaved:

* **engine**: ``prove_task`` as ``uncobench verify`` runs it on a benchmark: verdict-first
  queries (evidence only for refuted checks) on one Z3 context per batch of 25 specs;
* **full evidence**: the same checks with every witness and core read, on a context of its
  own (what ``uncobench verify spec.json`` prints, ``--json`` and ``--emit-smt2``);
* **fresh solver** baseline: the engine's queries, but each one re-encodes the task and parses
  it into a new solver on a new context (what one incremental solver per task avoids);
* **brute force** baseline (first ``--brute-specs`` specs): gold and uniqueness by exact
  evaluation, role necessity by enumerating completions of the role's facts, stopping at the
  first that changes the answer; a role still open after the largest ``--brute-explore``
  completions is skipped and listed, and the ratio is taken over the specs whose roles were
  all decided. (It decides necessity *alone*; the engine's joint search for tasks with no
  eligible candidate is extra work the baseline does not do.) Which specs are timed decides
  the ratio: a small limit keeps only the specs the brute force finds easy. So the ratio is
  also given for each smaller ``--brute-explore`` limit (the specs every role of which was
  decided within it; the enumeration stops at the same completion whatever the limit, so one
  run gives them all), and per spec (median and range) beside the ratio of the totals.

Also: solver queries per spec, unknown verdicts, throughput with worker processes, and with
``--bench DIR`` the whole ``uncobench verify DIR`` command (a built benchmark: every group,
every setting) as a user runs it, CPU time of its process tree and wall time.

Targets (issue #13): engine median <= 6 ms and p90 <= 9 ms CPU per spec on one core; >= 12x the
fresh-solver baseline; >= 30x the brute force; 0 unknown verdicts; ``uncobench verify`` of
1,000 groups x 5 settings <= 8 s wall on 2 cores (<= 14 CPU-s). Timing is never asserted in
tests; this script reports figures (``--json`` for a machine-readable copy).
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, benchmark_folder, emit, run_cli, summary

from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.solver import (
    Checker,
    QueryResult,
    SolverBudget,
    SolverContext,
    TaskSolver,
    Verdict,
    brute_force_differs,
    prove_task,
)
from uncobench_z3.spec import Slot, TaskSpec, check_structure

BUDGET = SolverBudget(timeout_ms=2000)
BATCH = 25
NO_CAP = 10**100


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
    """The baseline: a new encoding, context and solver for every query."""

    def query(
        self,
        name: str,
        pinned: Iterable[Slot],
        goal: str | None = None,
        extras: Sequence[str] = (),
        want_core: bool = True,
        want_model: bool = True,
    ) -> QueryResult:
        # The previous query's context lives until this one's is made and loaded, as when
        # making a solver parsed the encoding at once. Freed first, its memory (a new Z3
        # context writes two 8.5 MB tables) was returned to the system and paged in again
        # by every query: up to 16,000 page faults a spec, doubling this baseline's CPU
        # time by an accident of the allocator.
        # A context whose tasks do not share a kernel: the encoding goes into the new solver
        # without the scopes a shared one is loaded in (a solver of its own, as before).
        previous = dict(self.__dict__)
        TaskSolver.__init__(self, self.task, self.gold, BUDGET, SolverContext(shared_solver=False))
        self.solver  # noqa: B018  (loaded now)
        del previous
        return super().query(name, pinned, goal, extras, want_core, want_model)


def verify_fresh(spec: TaskSpec) -> None:
    """The engine's checks (verdict-first, like the engine) on fresh solvers."""
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


def verify_brute(spec: TaskSpec, explore: int) -> tuple[list[str], int]:
    """Every check by exact evaluation and enumeration: the roles left undecided, and the most
    completions a decided role needed (its spec is decided within any limit at least that)."""
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    sum(task.eligible(c, task.values) for c in task.candidates)  # uniqueness
    undecided = []
    needed = 0
    for role in task.roles:
        found = brute_force_differs(task, gold, task.slots_of(role), cap=NO_CAP, explore=explore)
        if found.status == "undecided":
            undecided.append(role)
        else:
            needed = max(needed, found.explored)
    return undecided, needed


def brute_speedups(timed: list[tuple[float, float]]) -> dict[str, object]:
    """The engine's speed-up over the brute force on ``timed`` (brute CPU, engine CPU) specs:
    of the totals, and per spec."""
    if not timed:
        return {"specs_timed": 0, "speedup": None, "speedup_per_spec": None}
    ratios = sorted(brute / engine for brute, engine in timed)
    return {
        "specs_timed": len(timed),
        "speedup": round(sum(b for b, _ in timed) / sum(e for _, e in timed), 2),
        "speedup_per_spec": {
            "median": round(statistics.median(ratios), 2),
            "min": round(ratios[0], 2),
            "max": round(ratios[-1], 2),
        },
    }


def _verify_many(specs: list[TaskSpec]) -> int:
    proved = 0
    for start in range(0, len(specs), BATCH):
        with SolverContext() as context:
            for spec in specs[start : start + BATCH]:
                report = prove_task(spec, budget=BUDGET, context=context).report
                proved += report.verdict == Verdict.PROVED
    return proved


def _clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def measure(specs: list[TaskSpec], brute_specs: int, explore: Sequence[int]) -> dict[str, object]:
    engine_cpu: list[float] = []
    engine_wall: list[float] = []
    full_cpu: list[float] = []
    fresh_cpu: list[float] = []
    queries = unknowns = 0
    # Interleaved by batch: the engine proves a batch as `verify DIR` does (one context, its
    # caches warm), then the baselines take the same specs, so slow phases of a shared
    # machine weigh on every figure alike.
    for start in range(0, len(specs), BATCH):
        batch = specs[start : start + BATCH]
        with SolverContext() as context:
            for spec in batch:
                cpu, wall = _clock()
                proof = prove_task(spec, budget=BUDGET, context=context)
                engine_cpu.append(time.process_time() - cpu)
                engine_wall.append(time.perf_counter() - wall)
                queries += proof.checker.ts.queries if proof.checker else 0
                unknowns += sum(c.verdict == Verdict.UNKNOWN for c in proof.report.checks)
        for spec in batch:
            cpu, _ = _clock()
            full = prove_task(spec, budget=BUDGET, evidence="full").report
            full_cpu.append(time.process_time() - cpu)
            unknowns += sum(c.verdict == Verdict.UNKNOWN for c in full.checks)
        for spec in batch:
            cpu, _ = _clock()
            verify_fresh(spec)
            fresh_cpu.append(time.process_time() - cpu)
    limits = sorted(set(explore))
    decided: list[tuple[float, float, int]] = []  # (brute CPU, engine CPU, completions needed)
    skipped: list[str] = []
    decided_roles = 0
    for spec, engine in zip(specs[:brute_specs], engine_cpu, strict=False):
        cpu, _ = _clock()
        undecided, needed = verify_brute(spec, limits[-1])
        spent = time.process_time() - cpu
        skipped += [f"{spec.id}:{role}" for role in undecided]
        decided_roles += len(spec.roles) - len(undecided)
        if not undecided:
            decided.append((spent, engine, needed))
    brute_cpu = [brute for brute, _, _ in decided]
    by_limit = [
        {"explore_limit": limit}
        | brute_speedups([(b, e) for b, e, needed in decided if needed <= limit])
        for limit in limits
    ]
    engine_mean = statistics.mean(engine_cpu)
    six = [t for t, s in zip(engine_cpu, specs, strict=True) if len(s.roles) == 6]
    return {
        "specs": len(specs),
        "mean_roles": round(statistics.mean(len(s.roles) for s in specs), 2),
        "queries_per_spec": round(queries / len(specs), 2),
        "engine_cpu": summary(engine_cpu),
        "engine_cpu_six_roles": summary(six) if six else None,
        "engine_wall": summary(engine_wall),
        "full_evidence_cpu": summary(full_cpu),
        "full_evidence_over_engine": round(statistics.mean(full_cpu) / engine_mean, 2),
        "fresh_solver_cpu": summary(fresh_cpu),
        "speedup_over_fresh_solver": round(statistics.mean(fresh_cpu) / engine_mean, 2),
        "brute_force": {
            "explore_limit": limits[-1],
            "specs_tried": min(brute_specs, len(specs)),
            "roles_decided": decided_roles,
            "roles_skipped": skipped,
            "cpu_per_decided_spec": summary(brute_cpu) if brute_cpu else None,
            **brute_speedups([(b, e) for b, e, _ in decided]),
            "by_explore_limit": by_limit,
        },
        "unknown_verdicts": unknowns,
    }


def throughput(specs: list[TaskSpec], workers: int) -> dict[str, float]:
    chunks = [specs[i : i + BATCH] for i in range(0, len(specs), BATCH)]
    start = time.perf_counter()
    for chunk in chunks:
        _verify_many(chunk)
    serial = time.perf_counter() - start
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_verify_many, chunks))
    parallel = time.perf_counter() - start
    return {
        "specs_per_s_one_process": round(len(specs) / serial, 1),
        "specs_per_s_workers": round(len(specs) / parallel, 1),
        "speedup_from_workers": round(serial / parallel, 2),
    }


def verify_command(bench: Path) -> dict[str, object]:
    groups = sum(1 for line in (bench / "groups.jsonl").read_text().splitlines() if line)
    run = run_cli(["verify", str(bench)])
    return {
        "path": str(bench),
        "groups": groups,
        "exit_code": run.code,
        "wall_s": round(run.wall, 2),
        "cpu_s": round(run.cpu, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--specs", type=at_least(1), default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=at_least(1), default=os.cpu_count() or 1)
    parser.add_argument("--brute-specs", type=at_least(0), default=20)
    parser.add_argument(
        "--brute-explore",
        type=at_least(1),
        nargs="+",
        default=[20_000, 1_000_000],
        help="completions a role may take (the largest runs; the ratio is given for each)",
    )
    parser.add_argument("--bench", type=benchmark_folder, help="also time `uncobench verify DIR`")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    specs = make_specs(args.specs, args.seed)
    _verify_many(specs[:5])  # warm up imports and caches
    figures = measure(specs, args.brute_specs, args.brute_explore)
    figures["throughput"] = throughput(specs, args.workers)
    if args.bench is not None:
        figures["verify_command"] = verify_command(args.bench)
    emit("verify throughput", figures, table(figures, args.workers), args.json)
    return 0


def table(figures: dict[str, Any], workers: int) -> list[tuple[str, str]]:
    engine, full = figures["engine_cpu"], figures["full_evidence_cpu"]
    six, brute, work = (
        figures["engine_cpu_six_roles"],
        figures["brute_force"],
        figures["throughput"],
    )
    skipped = brute["roles_skipped"]
    listed = ", ".join(skipped[:6]) + (" ..." if len(skipped) > 6 else "")
    timed = brute["cpu_per_decided_spec"]
    rows = [
        ("specs (mean roles)", f"{figures['specs']} ({figures['mean_roles']})"),
        ("solver queries per spec", str(figures["queries_per_spec"])),
        ("engine CPU median / p90 per spec", f"{engine['median_ms']} / {engine['p90_ms']} ms"),
        ("engine CPU median, 6-role specs", f"{six['median_ms']} ms" if six else "-"),
        ("engine wall median per spec", f"{figures['engine_wall']['median_ms']} ms"),
        ("full evidence CPU median per spec", f"{full['median_ms']} ms"),
        ("  full evidence / engine (mean CPU)", f"{figures['full_evidence_over_engine']}x"),
        ("fresh-solver baseline CPU mean per spec", f"{figures['fresh_solver_cpu']['mean_ms']} ms"),
        ("  engine speed-up over fresh solver", f"{figures['speedup_over_fresh_solver']}x"),
        (
            f"brute force CPU mean per timed spec (<= {brute['explore_limit']:,} a role)",
            f"{timed['mean_ms']} ms" if timed else "-",
        ),
        (
            "  specs timed / tried; roles skipped",
            f"{brute['specs_timed']} / {brute['specs_tried']}; {len(skipped)}"
            + (f" ({listed})" if skipped else ""),
        ),
        ("  engine speed-up over brute force", _speedup_text(brute, "on the timed specs")),
        *(
            (
                f"    specs decided within {tier['explore_limit']:,} a role",
                f"{tier['specs_timed']}: " + _speedup_text(tier, "on those"),
            )
            for tier in brute["by_explore_limit"][:-1]
        ),
        ("unknown verdicts", str(figures["unknown_verdicts"])),
        ("throughput, 1 process (wall)", f"{work['specs_per_s_one_process']} specs/s"),
        (
            f"throughput, {workers} workers (wall)",
            f"{work['specs_per_s_workers']} specs/s ({work['speedup_from_workers']}x)",
        ),
    ]
    command = figures.get("verify_command")
    if command:
        rows.append(
            (
                f"uncobench verify ({command['groups']} groups)",
                f"{command['wall_s']} s wall, {command['cpu_s']} CPU-s, "
                f"exit {command['exit_code']}",
            )
        )
    return rows


def _speedup_text(figures: dict[str, Any], which: str) -> str:
    per_spec = figures["speedup_per_spec"]
    if per_spec is None:
        return "-"
    return (
        f"{figures['speedup']}x {which} (their total CPU); per spec median "
        f"{per_spec['median']}x, {per_spec['min']}-{per_spec['max']}x"
    )


if __name__ == "__main__":
    raise SystemExit(main())
