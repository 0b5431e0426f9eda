"""Build throughput: groups per second end to end, per stage, with 1 worker and all cores.

    python benchmarks/build_throughput.py [--groups 1000] [--seed 7] [--stage-sample 100]

Two end-to-end builds of the same benchmark (``uncobench build``'s code path, every proof
included): one worker, then all cores; the ratio is the speed-up from the extra cores. Per-stage
figures come from running the stages one by one on a sample of drafts in this process.

Target (from the issue): 1,000 groups with all proofs in under 60 s on a 2-core machine, with
>= 1.8x speed-up from the second core.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from uncobench_z3.construct import (
    InstantiationError,
    SpecGenerator,
    build_benchmark,
    instantiate,
    load_library,
    render_task,
    validate_rendering,
)
from uncobench_z3.settings import DefectBalance, perturb
from uncobench_z3.spec import check_structure


def stage_times(seed: int, sample: int) -> dict[str, float]:
    generator = SpecGenerator(load_library(), seed)
    times: dict[str, list[float]] = {
        k: [] for k in ("draft", "instantiate", "prove+settings", "render", "read x3")
    }
    for index in range(sample):
        start = time.perf_counter()
        draft = generator.draft(index, random.Random(index).random() < 0.2)
        times["draft"].append(time.perf_counter() - start)
        start = time.perf_counter()
        try:
            spec = instantiate(draft, seed)
        except InstantiationError:
            continue
        times["instantiate"].append(time.perf_counter() - start)
        start = time.perf_counter()
        result = perturb(spec, seed=seed, balance=DefectBalance.rotating(index))
        times["prove+settings"].append(time.perf_counter() - start)
        if result.group is None:
            continue
        task = check_structure(spec).task
        assert task is not None
        start = time.perf_counter()
        rendered = render_task(task, seed)
        times["render"].append(time.perf_counter() - start)
        start = time.perf_counter()
        validate_rendering(task, rendered, task.outcome(), seed)
        times["read x3"].append(time.perf_counter() - start)
    return {name: statistics.mean(values) for name, values in times.items() if values}


def timed_build(out: Path, groups: int, seed: int, workers: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    build_benchmark(out, groups=groups, seed=seed, workers=workers)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--stage-sample", type=int, default=100)
    args = parser.parse_args(argv)

    stages = stage_times(args.seed, args.stage_sample)
    with tempfile.TemporaryDirectory() as tmp:
        one = timed_build(Path(tmp) / "one", args.groups, args.seed, 1)
        many = timed_build(Path(tmp) / "many", args.groups, args.seed, args.workers)
        same = (Path(tmp) / "one" / "groups.jsonl").read_bytes() == (
            Path(tmp) / "many" / "groups.jsonl"
        ).read_bytes()

    print(f"build throughput ({args.groups} groups, seed {args.seed}, {os.cpu_count()} cores)")
    print("  per stage, one process (mean per candidate):")
    for name, seconds in stages.items():
        print(f"    {name:<16} {seconds * 1000:7.1f} ms")
    print(f"  1 worker:   {one:7.1f} s  {args.groups / one:6.1f} groups/s")
    print(f"  {args.workers} workers:  {many:7.1f} s  {args.groups / many:6.1f} groups/s")
    print(f"  speed-up from workers: {one / many:.2f}x; identical output: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
