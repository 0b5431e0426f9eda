"""Build cost: ``uncobench build`` end to end with 1, 2 and 4 workers, and per stage.

    python benchmarks/build_throughput.py [--groups 1000] [--seed 7] [--workers 1 2 4]
        [--stage-sample 100] [--keep DIR] [--json]

Each build runs the real command in a new process (every proof included) and is measured in
CPU time of the whole process tree (the parent and its workers) and wall time; the outputs
(``groups.jsonl`` and ``manifest.json``) must be byte-identical for every worker count. The
per-stage figures come from running the stages one by one on a sample of drafts in this
process, one Z3 context per 20 candidates as the build's chunks do. ``--keep DIR`` keeps the
first build (for ``verify_throughput.py --bench DIR``).

Target (issue #13): ``uncobench build --groups 1000`` <= 25 CPU-s with byte-identical output
for 1, 2 and 4 workers. Timing is never asserted in tests; this script reports figures.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, ms, run_cli

from uncobench_z3.construct import (
    InstantiationError,
    SpecGenerator,
    instantiate,
    load_library,
    render_task,
    validate_rendering,
)
from uncobench_z3.settings import DefectBalance, perturb
from uncobench_z3.solver import SolverContext

CHUNK = 20
STAGES = ("draft", "instantiate", "prove+settings", "render", "read x3")


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
    return {name: ms(statistics.mean(values)) for name, values in times.items() if values}


def builds(groups: int, seed: int, workers: list[int], keep: Path | None) -> dict[str, object]:
    runs: dict[str, object] = {}
    outputs: list[bytes] = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in workers:
            out = Path(tmp) / f"workers-{count}"
            args = ["build", "--groups", str(groups), "--seed", str(seed)]
            run = run_cli([*args, "--workers", str(count), "--out", str(out)])
            runs[str(count)] = {
                "exit_code": run.code,
                "wall_s": round(run.wall, 2),
                "cpu_s": round(run.cpu, 2),
                "groups_per_s": round(groups / run.wall, 1),
            }
            files = [out / "groups.jsonl", out / "manifest.json"]
            outputs.append(b"".join(f.read_bytes() for f in files if f.exists()))
            if keep is not None and count == workers[0]:
                shutil.rmtree(keep, ignore_errors=True)
                shutil.copytree(out, keep)
    return {"runs": runs, "identical_output": len(set(outputs)) == 1 and bool(outputs[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--stage-sample", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="keep the first build in this folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    figures: dict[str, object] = {
        "groups": args.groups,
        "seed": args.seed,
        "stage_cpu_ms_per_candidate": stage_times(args.seed, args.stage_sample),
        **builds(args.groups, args.seed, args.workers, args.keep),
    }
    rows = [
        (f"stage {name} (CPU per candidate)", f"{value} ms")
        for name, value in figures["stage_cpu_ms_per_candidate"].items()  # type: ignore[attr-defined]
    ]
    for count, run in figures["runs"].items():  # type: ignore[attr-defined]
        rows.append(
            (
                f"build {args.groups} groups, {count} worker(s)",
                f"{run['cpu_s']} CPU-s, {run['wall_s']} s wall ({run['groups_per_s']} groups/s)"
                + ("" if run["exit_code"] == 0 else f", exit {run['exit_code']}"),
            )
        )
    rows.append(("identical output for every worker count", str(figures["identical_output"])))
    emit("build throughput", figures, rows, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
