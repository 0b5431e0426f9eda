"""Before and after a change: one command of two versions of the code, run alternately.

    python benchmarks/compare_versions.py --before REV [--runs 4] [--json] -- verify bench/
    python benchmarks/compare_versions.py --before REV -- build --groups 1000 --seed 7
    python benchmarks/compare_versions.py --before REV -- eval bench/ --limit 150 \\
        --agent builtin/careful --agent builtin/naive

On these shared machines a command's CPU time moves by a fifth between consecutive runs, and
the machine's speed by half within minutes (docs/performance-rounds.md, ninth round): a figure
taken before a change and one taken after it, minutes apart, do not compare. This script takes
both in one period. ``--before`` names a git revision of this repository; it is exported into a
temporary folder (``git archive``), and each run starts a new interpreter with that version's
package (or this tree's) first on ``sys.path``, the rest of the environment shared. Runs
alternate in the order before, after, after, before, ... so that a drift of the machine's
speed falls on both alike.

For each run: the CPU time of the command's process tree (its worker processes included) and
its wall time; then each version's median, and the ratio after / before of the medians. The
machine's speed probe is printed before and after. The outputs must be the same, and the
script says whether they are:

* ``build``: the bytes of ``groups.jsonl`` and ``manifest.json`` (the command gets ``--out``);
* ``eval``: the samples, in key order, without ``elapsed_seconds`` (the command gets
  ``--out``);
* ``verify``: the reports (the command gets ``--json``).

Both versions run from bytecode: each version's package is compiled first (``compileall``).
Where Python writes no bytecode itself (``PYTHONDONTWRITEBYTECODE``, set on these machines),
the exported revision would otherwise compile every module it imports in every run - 0.3
CPU-s and about 1.1 billion instructions for the commands' imports - while this tree's
modules mostly had bytecode from earlier: runs measured before this step favoured the after
version by that much (thirteenth round, docs/performance-rounds.md).

With ``--instructions`` each run is also counted in machine instructions: it runs under
Valgrind's callgrind tool (``valgrind`` must be on the path; Debian's package), following
every process of the tree, and the instructions of all of them are added up. A count does
not move with the machine's load: the same command of the same code gives the same count
within about 0.1% (hash seeds are fixed at 0 for both versions; what remains is the
allocator and the garbage collector's timing), where CPU time moved by a fifth. So one run
of each version tells a change of a few percent, which alternating CPU timings cannot here.
It is a proxy - an instruction is not a fixed time, and memory stalls are not counted - and
a slow one: a command runs about fifty times slower (an interpreter's start alone is about
five billion instructions), so give it a small workload (``verify`` of a small benchmark,
``build --groups 50``, ``eval --limit 20``) and ``--runs 1``.

Exit code 0 when the command succeeded in every run and the outputs were the same, else 1.
Timing is never asserted in tests; this script reports figures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CLI, children_cpu, emit, speed_probe

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("verify", "build", "eval")
PYTHON = [sys.executable, "-P"]
"""a new interpreter without the current folder first on its path (Python 3.11's ``-P``):
a checkout's own package there would shadow the version asked for"""
VALGRIND = [
    "valgrind",
    "--tool=callgrind",
    "--trace-children=yes",
    "--callgrind-out-file=/dev/null",
]
"""how a run is counted in instructions (``--instructions``): every process of the tree, no
profile file kept (only the totals valgrind prints are read)"""
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)\s*$", re.MULTILINE)
"""callgrind's total for one process, printed on its standard error when the process ends"""
TIMING_FIELDS = ("elapsed_seconds",)
"""fields of a sample that differ from run to run of the same code"""


@dataclass
class Version:
    """One version of the package: a folder that holds ``uncobench_z3``."""

    label: str
    tree: Path
    runs: list[tuple[float, float]] = field(default_factory=list)
    """(CPU seconds of the process tree, wall seconds) of each run"""
    outputs: list[str] = field(default_factory=list)
    """what each run produced, normalised (see the module docstring)"""
    instructions: list[int] = field(default_factory=list)
    """instructions of each run's process tree (``--instructions`` only)"""


def export_revision(revision: str, into: Path) -> Path:
    """The files of ``revision`` (a git revision of this repository), written into ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(into, filter="data")
        else:  # (an archive of this repository's own revision)
            tar.extractall(into)
    return into


def _environment(tree: Path, counted: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH")) if p)
    if counted:  # the same hash seed for both versions: sets and dicts iterate alike
        env["PYTHONHASHSEED"] = "0"
    return env


def collected_instructions(stderr: str) -> int | None:
    """The instructions callgrind counted, summed over the processes it reports on
    ``stderr``; None when it reports none."""
    counts = [int(found) for found in COLLECTED.findall(stderr)]
    return sum(counts) if counts else None


def compile_package(tree: Path) -> None:
    """Write the bytecode of ``tree``'s package (see the module docstring), so that no run
    compiles it again. (``compileall`` writes it whatever ``PYTHONDONTWRITEBYTECODE`` says.)"""
    subprocess.run(
        [*PYTHON, "-m", "compileall", "-q", str(tree / "uncobench_z3")],
        env=_environment(tree),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def imported_from(tree: Path) -> Path:
    """Where a new interpreter with ``tree`` first on its path imports the package from."""
    said = subprocess.run(
        [*PYTHON, "-c", "import uncobench_z3; print(uncobench_z3.__file__)"],
        capture_output=True,
        text=True,
        env=_environment(tree),
        check=True,
    ).stdout.strip()
    return Path(said).resolve().parent.parent


def _normalised_samples(out: Path) -> str:
    records = []
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            for name in TIMING_FIELDS:
                record.pop(name, None)
            records.append(record)
    records.sort(key=lambda record: str(record.get("key")))
    return json.dumps(records, sort_keys=True)


def _output(command: str, out: Path, stdout: bytes) -> str:
    if command == "build":
        return "\n".join(
            (out / name).read_text(encoding="utf-8") for name in ("groups.jsonl", "manifest.json")
        )
    if command == "eval":
        return _normalised_samples(out)
    return stdout.decode("utf-8", errors="replace")


def run_once(version: Version, args: list[str], scratch: Path, counted: bool = False) -> int:
    """The command under ``version`` (under callgrind when ``counted``); its figures and
    output are added to ``version``."""
    command = args[0]
    out = scratch / f"{version.label}-{len(version.runs)}"
    extra = ["--json"] if command == "verify" else ["--out", str(out)]
    before = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [*(VALGRIND if counted else []), *PYTHON, *CLI[1:], *args, *extra],
        capture_output=True,
        env=_environment(version.tree, counted),
    )
    wall = time.perf_counter() - started
    version.runs.append((children_cpu() - before, wall))
    stderr = done.stderr.decode("utf-8", errors="replace")
    instructions = collected_instructions(stderr) if counted else None
    if counted and instructions is None and done.returncode == 0:
        sys.stderr.write(stderr[-2000:])
        sys.stderr.write("compare_versions: valgrind reported no instruction count\n")
        return 1
    if instructions is not None:
        version.instructions.append(instructions)
    if done.returncode == 0:
        version.outputs.append(_output(command, out, done.stdout))
    else:
        sys.stderr.write(stderr[-2000:])
    return done.returncode


def start_instructions(version: Version) -> int | None:
    """Instructions of ``uncobench --help`` under ``version``: an interpreter's start and the
    imports every command makes, which a count of a small workload is mostly made of."""
    done = subprocess.run(
        [*VALGRIND, *PYTHON, *CLI[1:], "--help"],
        capture_output=True,
        env=_environment(version.tree, True),
    )
    return collected_instructions(done.stderr.decode("utf-8", errors="replace"))


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="one command of two versions of the code, run alternately",
        usage="%(prog)s --before REV [--runs N] [--json] -- COMMAND ARGS...",
    )
    parser.add_argument("--before", required=True, help="a git revision of this repository")
    parser.add_argument("--runs", type=int, default=4, help="runs of each version (>= 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each run's instructions under valgrind (callgrind): deterministic "
        "where CPU time is not, about 50 times slower; give it a small workload and --runs 1",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- verify|build|eval ARGS")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    # everything is checked before any work
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs}")
    if not command or command[0] not in COMMANDS:
        parser.error(f"the command must be one of {', '.join(COMMANDS)} (after --)")
    if command[0] != "verify" and "--out" in command:
        parser.error("the script gives each run its own --out; leave it out")
    if args.instructions and shutil.which(VALGRIND[0]) is None:
        parser.error("--instructions needs valgrind on the path (apt-get install -y valgrind)")
    resolved = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{args.before}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if resolved.returncode != 0:
        parser.error(f"--before: {args.before!r} is not a revision of {ROOT}")
    revision = resolved.stdout.strip()

    with tempfile.TemporaryDirectory(prefix="uncobench-compare-") as scratch_name:
        scratch = Path(scratch_name)
        before = Version("before", export_revision(revision, scratch / "before-tree"))
        after = Version("after", ROOT)
        for version in (before, after):
            compile_package(version.tree)
            found = imported_from(version.tree)
            if found != version.tree.resolve():
                sys.exit(f"compare_versions: {version.label} imports the package from {found}")
        probe_before = speed_probe()
        failed = False
        for index in range(args.runs):
            order = (before, after) if index % 2 == 0 else (after, before)
            for version in order:
                failed |= run_once(version, command, scratch, args.instructions) != 0
        probe_after = speed_probe()
        starts = {v.label: start_instructions(v) for v in (before, after) if args.instructions}

    outputs = before.outputs + after.outputs
    same = not failed and len(set(outputs)) == 1
    medians = {v.label: (_median([c for c, _ in v.runs]), _median([w for _, w in v.runs]))
               for v in (before, after)}  # fmt: skip
    ratio_cpu = round(medians["after"][0] / medians["before"][0], 3)
    ratio_wall = round(medians["after"][1] / medians["before"][1], 3)
    figures = {
        "before": revision,
        "command": command,
        "runs": args.runs,
        "speed_probe_cpu_s": [probe_before, probe_after],
        "cpu_s": {v.label: [round(c, 2) for c, _ in v.runs] for v in (before, after)},
        "wall_s": {v.label: [round(w, 2) for _, w in v.runs] for v in (before, after)},
        "median_cpu_s": {label: m[0] for label, m in medians.items()},
        "median_wall_s": {label: m[1] for label, m in medians.items()},
        "after_over_before_cpu": ratio_cpu,
        "after_over_before_wall": ratio_wall,
        "every_run_succeeded": not failed,
        "same_output": same,
    }
    counts = {v.label: v.instructions for v in (before, after)}
    counted_rows: list[tuple[str, str]] = []
    if args.instructions and all(counts.values()):
        middle = {label: statistics.median(found) for label, found in counts.items()}
        ratio = round(middle["after"] / middle["before"], 4)
        figures["instructions"] = counts
        figures["median_instructions"] = {label: round(m) for label, m in middle.items()}
        figures["after_over_before_instructions"] = ratio
        counted_rows = [
            *[
                (f"{v.label}: instructions", ", ".join(f"{n:,}" for n in v.instructions))
                for v in (before, after)
            ],
            ("after / before, instructions", f"{ratio}x"),
        ]
        start_of = {label: n for label, n in starts.items() if n is not None}
        work = {label: middle[label] - start_of.get(label, 0) for label in middle}
        if len(start_of) == 2 and work["before"] > 0:  # the start (uncobench --help) taken off
            without = round(work["after"] / work["before"], 4)
            figures["start_instructions"] = start_of
            figures["after_over_before_instructions_without_start"] = without
            counted_rows += [
                ("start (uncobench --help), instructions",
                 ", ".join(f"{label} {n:,}" for label, n in start_of.items())),
                ("after / before, instructions without the start", f"{without}x"),
            ]  # fmt: skip
    rows = [
        ("command", " ".join(command)),
        ("before", revision[:12]),
        ("speed probe, CPU s (start, end)", f"{probe_before}, {probe_after}"),
        *[
            (f"{v.label}: CPU s / wall s", ", ".join(f"{c:.2f} / {w:.2f}" for c, w in v.runs))
            for v in (before, after)
        ],
        ("median CPU s (before, after)", f"{medians['before'][0]}, {medians['after'][0]}"),
        ("after / before, CPU and wall", f"{ratio_cpu}x, {ratio_wall}x"),
        ("same output", "yes" if same else "NO" if not failed else "a run failed"),
    ]
    rows[-1:-1] = counted_rows
    emit("compare versions", figures, rows, args.json)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
