"""What running UNCOBENCH inside inspect_ai costs, against the project's own runner.

The same samples (the default benchmark's groups, every setting, ``builtin/careful``, one
epoch) are played twice in this process: by ``uncobench eval``'s runner (JSON Lines log) and
by the inspect task (``agent=builtin/careful``, so no model is called: what is measured is the
harness). CPU time (``time.process_time``) is the figure that holds on a shared machine; wall
time is printed beside it. Both runs must give the same records (up to wall time), or the
script stops. Both are timed after an untimed warm-up run, so the caches they share (a
group's solver, its minimum rounds) are warm for both. The default benchmark's build (into a
fresh cache folder) is timed too.

Run: ``python benchmarks/inspect_overhead.py [--groups N] [--setting all]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least
from inspect_ai import eval as inspect_eval

from uncobench_z3.evaluation import SampleRecord, make_config, run_evaluation
from uncobench_z3.integrations.inspect import (
    RECORD_KEY,
    STORE_KEY,
    default_benchmark,
    uncobench,
)
from uncobench_z3.models import CACHE_DIR_ENV
from uncobench_z3.settings import SETTING_NAMES


def timed(label: str, started: tuple[float, float]) -> tuple[float, float]:
    cpu, wall = time.process_time() - started[0], time.perf_counter() - started[1]
    print(f"{label:<34} cpu {cpu:7.2f} s   wall {wall:7.2f} s")
    return cpu, wall


def now() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=at_least(1), default=10)
    parser.add_argument("--setting", default="all", help="all, or settings joined by commas")
    args = parser.parse_args()
    unknown = set(args.setting.split(",")) - set(SETTING_NAMES) if args.setting != "all" else set()
    if unknown:  # refused before the benchmark is built
        parser.error(f"--setting: not a setting: {', '.join(sorted(unknown))}")
    previous = os.environ.get(CACHE_DIR_ENV)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            os.environ[CACHE_DIR_ENV] = str(Path(scratch) / "cache")
            measure(args.groups, args.setting, Path(scratch))
    finally:  # the script also runs inside the test process
        if previous is None:
            os.environ.pop(CACHE_DIR_ENV, None)
        else:
            os.environ[CACHE_DIR_ENV] = previous


def measure(group_count: int, setting: str, scratch: Path) -> None:
    settings = list(SETTING_NAMES) if setting == "all" else setting.split(",")
    started = now()
    bench, groups = default_benchmark(groups=group_count)
    timed(f"default benchmark ({len(groups)} groups)", started)

    config = make_config(bench, groups, ["builtin/careful"], settings)  # type: ignore[arg-type]
    # a first run warms what both harnesses share (per-group solvers, minimum rounds)
    asyncio.run(run_evaluation(groups, config, scratch / "warm-up"))
    started = now()
    summary = asyncio.run(run_evaluation(groups, config, scratch / "run"))
    runner_cpu, _ = timed(f"runner ({len(summary.records)} samples)", started)

    started = now()
    (log,) = inspect_eval(
        uncobench(bench=str(bench), setting=setting, agent="builtin/careful"),
        model="mockllm/model",
        log_dir=str(scratch / "logs"),
        display="none",
    )
    inspect_cpu, _ = timed(f"inspect ({len(log.samples or [])} samples)", started)

    records = []
    for sample in log.samples or []:
        (score,) = (sample.scores or {}).values()
        assert score.metadata is not None
        trace = sample.store[STORE_KEY]["outcome"]["trace"]
        records.append(SampleRecord.model_validate({**score.metadata[RECORD_KEY], "trace": trace}))

    def same(found: list[SampleRecord]) -> list[str]:
        return sorted(r.model_dump_json(exclude={"elapsed_seconds"}) for r in found)

    if same(records) != same(summary.records):
        raise SystemExit("the two runs gave different records")
    samples = len(records)
    print(f"records identical: {samples} samples")
    print(f"cpu per sample: runner {1000 * runner_cpu / samples:.1f} ms, "
          f"inspect {1000 * inspect_cpu / samples:.1f} ms")  # fmt: skip
    print(f"ratio inspect / runner (cpu): {inspect_cpu / runner_cpu:.1f}")


if __name__ == "__main__":
    main()
