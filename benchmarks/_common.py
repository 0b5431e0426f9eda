"""What the benchmark scripts share: CPU clocks, running the CLI or a function in a fresh
interpreter, printing figures."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import math
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

# the `uncobench` program as installed (cli.run); the versions before it had cli.main only,
# and compare_versions.py runs those too
CLI = [sys.executable, "-c", "from uncobench_z3 import cli; getattr(cli, 'run', cli.main)()"]
# ``python _common.py CMD...`` runs CMD and measures its whole process tree (see tree_main).
ADOPTING = [sys.executable, __file__]
_PR_SET_CHILD_SUBREAPER = 36
T = TypeVar("T")


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def tree_cpu() -> float:
    """CPU seconds of this process and its finished children (worker processes)."""
    return own_cpu() + children_cpu()


@dataclass
class Run:
    """One command: exit code, wall seconds, CPU seconds of its whole process tree."""

    code: int
    wall: float
    cpu: float


def run_cli(args: Sequence[str], adopt: bool = False) -> Run:
    """``uncobench ARGS`` in a new process (imports included, as a user would run it).
    ``adopt``: also count the CPU of processes the command leaves running (a local Ray's);
    the wall time is still the command's own."""
    return run_command([*CLI, *args], adopt)


def run_command(command: Sequence[str], adopt: bool = False) -> Run:
    """``command`` in a new process, measured as :func:`run_cli` measures the CLI."""
    before = children_cpu()
    start = time.perf_counter()
    if adopt and sys.platform == "linux":
        done = subprocess.run([*ADOPTING, *command], capture_output=True)
        said = json.loads(done.stdout.decode().splitlines()[-1])
        wall, cpu = said["wall_s"], said["cpu_s"]
    else:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall, cpu = time.perf_counter() - start, children_cpu() - before
    if done.returncode not in (0, 1, 3):
        sys.stderr.write(done.stderr.decode(errors="replace"))
    return Run(done.returncode, wall, cpu)


def descendants(pid: int) -> list[int]:
    """``pid``'s living descendants (Linux ``/proc``)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                children = [int(child) for child in task.read_text().split()]
                found.extend(children)
                todo.extend(children)
    return found


def _cpu_ticks(pid: int) -> tuple[tuple[int, int], int] | None:
    """((pid, start time), user + system clock ticks) of a living process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the command name: state is field 3, utime 14, stime 15, starttime 22 (from 1)
    return (pid, int(fields[19])), int(fields[11]) + int(fields[12])


def in_fresh_process(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in a new interpreter (spawned: nothing of this process inherited).

    The child finds ``fn`` by its module and name: a script's own function (``__main__``) or
    one of a module the script imports from this folder (which is on ``sys.path``, inherited)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(fn, *args).result()


def tree_main(command: list[str], period: float = 0.05, linger: float = 120.0) -> None:
    """Run ``command`` and print ``{"code", "wall_s", "cpu_s"}`` as one JSON line: its wall
    time, and the CPU time of every process of its tree, daemons it leaves behind included.

    ``RUSAGE_CHILDREN`` cannot count those: Ray's raylet reaps its workers without waiting
    for them (their CPU is lost to every ancestor's rusage), and its daemons outlive the
    command. So this process becomes the reaper of its orphaned descendants (Linux's
    ``PR_SET_CHILD_SUBREAPER``), reads every descendant's own CPU ticks (not its children's)
    from ``/proc`` each ``period`` seconds until the last has ended, and sums each process's
    last reading: a lower bound that misses at most ``period`` seconds of each process's
    last moments (no rusage is added: a waited-for process would be counted twice).
    """
    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    ticks: dict[tuple[int, int], int] = {}

    def sample() -> bool:
        living = False
        for pid in descendants(os.getpid()):
            reading = _cpu_ticks(pid)
            if reading is not None:
                ticks[reading[0]] = reading[1]
                living = True
        return living

    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    while process.poll() is None:
        sample()
        time.sleep(period)
    wall = time.perf_counter() - start
    deadline = time.monotonic() + linger
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not sample():
            break
        time.sleep(period)
    cpu = sum(ticks.values()) / os.sysconf("SC_CLK_TCK")
    print(json.dumps({"code": process.returncode, "wall_s": wall, "cpu_s": cpu}))
    sys.exit(process.returncode)


if __name__ == "__main__":
    tree_main(sys.argv[1:])


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


SPEED_PROBE_ADDITIONS = 5_000_000


def speed_probe() -> float:
    """CPU seconds this process takes for :data:`SPEED_PROBE_ADDITIONS` Python additions:
    the machine's speed when the figures were taken. The machines these benchmarks run on
    changed speed by up to three times between periods (docs/performance.md), so figures of
    two periods compare only through it."""
    started = time.process_time()
    total = 0
    for number in range(SPEED_PROBE_ADDITIONS):
        total += number
    return round(time.process_time() - started, 3)


def machine() -> dict[str, object]:
    return {
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "additions": SPEED_PROBE_ADDITIONS,
        "additions_cpu_s": speed_probe(),
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
    print(
        f"{title} (python {info['python']}, {info['cores']} cores, load average {load}; "
        f"{info['additions']:,} additions in {info['additions_cpu_s']} CPU-s)"
    )
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


# -- argument types: a bad value is refused by argparse in one line (exit 2) before any work --


def at_least(minimum: int) -> Callable[[str], int]:
    """An ``argparse`` type: a whole number of at least ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"at least {minimum}, not {value}")
        return value

    return whole_number


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def non_negative(text: str) -> float:
    """An ``argparse`` type: a finite number of at least 0 (a latency, a time)."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"a finite number of at least 0, not {text}")
    return value


def share(text: str) -> float:
    """An ``argparse`` type: a share between 0 and 1."""
    value = _number(text)
    if not 0 <= value <= 1:  # (also refuses nan)
        raise argparse.ArgumentTypeError(f"a share from 0 to 1, not {text}")
    return value


def benchmark_folder(text: str) -> Path:
    """An ``argparse`` type: a built benchmark's folder (checked in full when it is read)."""
    path = Path(text)
    if not (path / "groups.jsonl").is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a built benchmark (no groups.jsonl)")
    return path
