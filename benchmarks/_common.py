"""What the benchmark scripts share: CPU clocks, running the CLI, printing figures."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

CLI = [sys.executable, "-c", "from uncobench_z3.cli import main; main()"]


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Run:
    """One command: exit code, wall seconds, CPU seconds of its whole process tree."""

    code: int
    wall: float
    cpu: float


def run_cli(args: Sequence[str]) -> Run:
    """``uncobench ARGS`` in a new process (imports included, as a user would run it)."""
    before = children_cpu()
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.stderr.write(done.stderr.decode(errors="replace"))
    return Run(done.returncode, wall, children_cpu() - before)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median, p90 and mean of per-item seconds, in milliseconds."""
    return {
        "median_ms": ms(statistics.median(values)),
        "p90_ms": ms(percentile(values, 0.9)),
        "mean_ms": ms(statistics.mean(values)),
    }


def machine() -> dict[str, object]:
    return {
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def emit(
    title: str, figures: dict[str, object], rows: list[tuple[str, str]], as_json: bool
) -> None:
    """The figures as JSON, or as a two-column table."""
    if as_json:
        print(json.dumps({"benchmark": title, "machine": machine(), **figures}, indent=2))
        return
    width = max(len(name) for name, _ in rows)
    info = machine()
    load = info["load_average_1min"]
    print(f"{title} (python {info['python']}, {info['cores']} cores, load average {load})")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
