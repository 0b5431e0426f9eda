"""Build cost: ``uncobench build`` end to end with 1, 2 and 4 workers, and per stage.

    python benchmarks/build_throughput.py [--groups 1000] [--seed 7] [--workers 1 2 4]
        [--stage-sample 100] [--keep DIR] [--ray [--ray-address ADDR]] [--json]

Each build runs the real command in a new process (every proof included) and is measured in
CPU time of the whole process tree (the parent and its workers) and wall time; the outputs
(``groups.jsonl`` and ``manifest.json``) must be byte-identical for every worker count. The
per-stage figures come from running the stages one by one on a sample of drafts in this
process, one Z3 context per 20 candidates as the build's chunks do (the last, each setting's
minimum rounds that a kept group stores, is the evaluation layer's search). ``--keep DIR`` keeps the
first build (for ``verify_throughput.py --bench DIR``).

``--ray`` adds the same build with ``--executor ray`` and as many Ray tasks at once as this
machine has cores, and prints its overhead against the local build with that many workers
(measured in the same run; its output must be the same bytes). Without ``--ray-address`` the
command starts a local Ray and stops it, as a user's first ``--executor ray`` does: the CPU
time then includes Ray's daemons and workers (the script adopts the processes the command
leaves behind and waits for them). With ``--ray-address`` (a running ``ray start --head``)
the cluster's processes are not this script's children: the CPU time is the driver's only.
Ray's fixed cost is measured alone in the same run: a new process that connects as the
command does (starting a local Ray without ``--ray-address``), runs one trivial task and
disconnects; the overhead is also given without it (the build's share of the difference).

Targets: ``uncobench build --groups 1000`` <= 25 CPU-s with byte-identical output for 1, 2
and 4 workers (issue #13); the Ray executor <= 1.3x the local wall time for that build on 2
cores (issue #17). Timing is never asserted in tests; this script reports figures.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, emit, ms, run_cli, run_command

from uncobench_z3.construct import (
    InstantiationError,
    SpecGenerator,
    instantiate,
    load_library,
    render_task,
    validate_rendering,
)
from uncobench_z3.evaluation import settings_stored_proofs
from uncobench_z3.settings import DefectBalance, perturb
from uncobench_z3.solver import SolverContext

CHUNK = 20
STAGES = ("draft", "instantiate", "prove+settings", "render", "read x3", "stored proofs")


def stage_times(seed: int, sample: int) -> dict[str, float]:
    """Mean CPU milliseconds per candidate of each stage."""
    generator = SpecGenerator(load_library(), seed)
    times: dict[str, list[float]] = {name: [] for name in STAGES}

    def timed(name: str, start: float) -> None:
        times[name].append(time.process_time() - start)

    for first in range(0, sample, CHUNK):
        with SolverContext() as context:
            for index in range(first, min(sample, first + CHUNK)):
                start = time.process_time()
                draft = generator.draft(index, random.Random(index).random() < 0.2)
                timed("draft", start)
                start = time.process_time()
                try:
                    spec = instantiate(draft, seed, context=context)
                except InstantiationError:
                    continue
                timed("instantiate", start)
                start = time.process_time()
                balance = DefectBalance.rotating(index)
                result = perturb(spec, seed=seed, balance=balance, context=context)
                timed("prove+settings", start)
                if result.group is None or result.task is None:
                    continue
                start = time.process_time()
                rendered = render_task(result.task, seed)
                timed("render", start)
                start = time.process_time()
                validate_rendering(result.task, rendered, result.task.outcome(), seed)
                timed("read x3", start)
                # what a kept group stores: each setting's minimum rounds (an ideal agent's
                # episodes with scripted colleagues) and its decision records' first changes
                stored = rendered.model_dump(mode="json")
                group = result.group.model_copy(update={"rendered": stored})
                start = time.process_time()
                settings_stored_proofs(group, result.task)  # the task, as the build passes it
                timed("stored proofs", start)
    return {name: ms(statistics.mean(values)) for name, values in times.items() if values}


def builds(
    groups: int, seed: int, workers: list[int], keep: Path | None, ray: list[str] | None
) -> dict[str, object]:
    """Each build in ``workers`` (then with ``ray``'s executor options, if given)."""
    runs: dict[str, dict[str, object]] = {}
    outputs: list[bytes] = []
    plan: list[tuple[str, list[str]]] = [(str(n), ["--workers", str(n)]) for n in workers]
    if ray is not None:
        plan.append(("ray", ray))
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in plan:
            out = Path(tmp) / f"workers-{name}"
            args = ["build", "--groups", str(groups), "--seed", str(seed), "--out", str(out)]
            run = run_cli([*args, *options], adopt=name == "ray")
            runs[name] = {
                "exit_code": run.code,
                "wall_s": round(run.wall, 2),
                "cpu_s": round(run.cpu, 2),
                "groups_per_s": round(groups / run.wall, 1),
            }
            files = [out / "groups.jsonl", out / "manifest.json"]
            outputs.append(b"".join(f.read_bytes() for f in files if f.exists()))
            if keep is not None and name == plan[0][0] and run.code == 0:
                # whole or not at all: copied beside it, then renamed onto the (empty) folder
                partial = keep.with_name(f".{keep.name}.partial-{os.getpid()}")
                shutil.copytree(out, partial)
                os.replace(partial, keep)
    return {"runs": runs, "identical_output": len(set(outputs)) == 1 and bool(outputs[0])}


def ray_alone(workers: int, address: str | None) -> dict[str, float]:
    """Ray's connect, one trivial task and disconnect, in a new process as the command does
    them (a local Ray started and stopped without ``address``): its fixed cost a command."""
    script = (
        "import sys\n"
        "from uncobench_z3._ray import RayExecutor\n"
        "def one() -> int:\n"
        "    return 1\n"
        "executor = RayExecutor(sys.argv[1] or None, int(sys.argv[2]))\n"
        "assert executor.submit(one).result() == 1\n"
        "executor.close()\n"
    )
    run = run_command([sys.executable, "-c", script, address or "", str(workers)], adopt=True)
    if run.code != 0:
        sys.exit(f"build_throughput.py: Ray alone failed (exit code {run.code})")
    return {"wall_s": round(run.wall, 2), "cpu_s": round(run.cpu, 2)}


def ray_overhead(
    runs: dict[str, dict[str, object]], workers: int, alone: dict[str, float]
) -> dict[str, object]:
    """The Ray build against the local build with as many workers, in the same run; and
    without Ray's fixed cost (``alone``: :func:`ray_alone`)."""
    ray, local = runs["ray"], runs[str(workers)]
    ray_wall, local_wall = float(ray["wall_s"]), float(local["wall_s"])  # type: ignore[arg-type]
    return {
        "workers": workers,
        "wall_ratio": round(ray_wall / local_wall, 3),
        "cpu_ratio": round(float(ray["cpu_s"]) / float(local["cpu_s"]), 3),  # type: ignore[arg-type]
        "ray_alone": alone,
        "wall_ratio_without_ray_alone": round((ray_wall - alone["wall_s"]) / local_wall, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--groups", type=at_least(1), default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=at_least(1), nargs="+", default=[1, 2, 4])
    parser.add_argument("--stage-sample", type=at_least(0), default=100)
    parser.add_argument(
        "--keep", type=Path, help="keep the first build in this folder (new, or empty)"
    )
    parser.add_argument("--ray", action="store_true", help="also build with --executor ray")
    parser.add_argument("--ray-address", help="a running Ray cluster for --ray")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    # the build is copied in: a folder holding anything else would be overwritten
    keep = args.keep
    if keep is not None and keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        parser.error(f"--keep: {keep} exists and is not an empty folder")

    cores = os.cpu_count() or 1
    workers = list(args.workers)
    ray: list[str] | None = None
    if args.ray:
        ray = ["--executor", "ray", "--workers", str(cores)]
        ray += ["--ray-address", args.ray_address] if args.ray_address else []
        workers += [] if cores in workers else [cores]
    figures: dict[str, object] = {
        "groups": args.groups,
        "seed": args.seed,
        "stage_cpu_ms_per_candidate": stage_times(args.seed, args.stage_sample),
        **builds(args.groups, args.seed, workers, args.keep, ray),
    }
    runs: dict[str, dict[str, object]] = figures["runs"]  # type: ignore[assignment]
    failed = [f"{name}: exit code {run['exit_code']}" for name, run in runs.items()
              if run["exit_code"] != 0]  # fmt: skip
    if failed:  # the figures of a build that failed are not figures
        sys.exit(f"build_throughput.py: a build failed (workers {'; '.join(failed)})")
    if args.ray:
        figures["ray_overhead"] = ray_overhead(runs, cores, ray_alone(cores, args.ray_address))
        started_here = args.ray_address in (None, "local")  # (``local``: a new local Ray)
        figures["ray_cpu_counts"] = "process tree" if started_here else "driver only"
    rows = [
        (f"stage {name} (CPU per candidate)", f"{value} ms")
        for name, value in figures["stage_cpu_ms_per_candidate"].items()  # type: ignore[attr-defined]
    ]
    for count, run in runs.items():
        rows.append(
            (
                f"build {args.groups} groups, "
                + (f"Ray, {cores} tasks at once" if count == "ray" else f"{count} worker(s)"),
                f"{run['cpu_s']} CPU-s, {run['wall_s']} s wall ({run['groups_per_s']} groups/s)"
                + ("" if run["exit_code"] == 0 else f", exit {run['exit_code']}"),
            )
        )
    rows.append(("identical output for every worker count", str(figures["identical_output"])))
    if args.ray:
        overhead = figures["ray_overhead"]
        rows.append(
            (
                f"Ray / local, {cores} workers",
                f"{overhead['wall_ratio']}x wall, {overhead['cpu_ratio']}x CPU "  # type: ignore[index]
                f"(Ray's CPU: {figures['ray_cpu_counts']}; target <= 1.3x wall)",
            )
        )
        alone = overhead["ray_alone"]  # type: ignore[index]
        rows.append(
            (
                "Ray alone: connect, one task, disconnect",
                f"{alone['wall_s']} s wall, {alone['cpu_s']} CPU-s; Ray / local without it "
                f"{overhead['wall_ratio_without_ray_alone']}x wall",  # type: ignore[index]
            )
        )
    emit("build throughput", figures, rows, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
