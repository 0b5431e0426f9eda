"""Kill -9 soak: interrupted runs must end exactly where uninterrupted ones do.

Three soaks, each against an uninterrupted reference made first:

1. **build**: ``uncobench build`` is started and killed with SIGKILL at a random moment,
   ``--build-kills`` times, then run to completion; ``groups.jsonl`` and ``manifest.json``
   must be byte-identical to the reference build's.
2. **eval**: ``uncobench eval`` (three built-in agents, every setting) is killed up to
   ``--kills`` times, each time at a random moment within 0.25 s after it appended its first
   new sample (so every kill lands while it is writing, and every run makes progress), then
   run to completion. Compared with the reference run:
   samples lost (a planned key missing), duplicated (a key twice in the log) and differing
   (any field but ``elapsed_seconds``) must all be 0.
3. **model**: the same with an LLM agent (``openai-api/fault/...``) against the
   fault-injection server, which answers a share of requests with 429, 5xx, malformed bodies
   and resets (``--fault-share``); retries absorb them, so the records must equal an
   undisturbed reference run's.

After every kill the log is read as the next resume will read it, counting how often the
kill left a torn last line (kept aside, redone) or an unterminated one (terminated).

Run: ``python benchmarks/soak.py [--kills 30] [--build-kills 8] [--model-kills 10]
[--groups 20] [--seed 0]``. Timing is wall time (the point is correctness, not speed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, share

from uncobench_z3.evaluation import SAMPLES_FILE, SampleRecord
from uncobench_z3.models.testing import Fault, FaultServer
from uncobench_z3.spec import read_jsonl_log

UNCOBENCH = str(Path(sys.executable).parent / "uncobench")
AGENTS = ["builtin/naive", "builtin/careful", "builtin/patient"]


@dataclass
class Soak:
    name: str
    kills: int = 0
    killed_mid_run: int = 0
    torn: int = 0
    unterminated: int = 0
    planned: int = 0
    lost: int = 0
    duplicated: int = 0
    differing: int = 0
    identical: bool | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not (self.lost or self.duplicated or self.differing or self.identical is False)


def run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def kill_at_random(command: list[str], delay: float, env: dict[str, str] | None = None) -> bool:
    """Start ``command``, SIGKILL it after ``delay`` seconds; whether it was still running."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return True


def lines_in(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        return 0


def kill_while_writing(
    command: list[str], log: Path, jitter: float, rng: random.Random,
    env: dict[str, str] | None = None,
) -> bool:  # fmt: skip
    """Start ``command``; once it has appended to ``log`` (it is past its start-up and
    writing), SIGKILL it after a random ``[0, jitter)`` seconds. Whether it was still running
    (False: it finished first, there was nothing left to do)."""
    before = lines_in(log)
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    while process.poll() is None and lines_in(log) <= before:
        time.sleep(0.01)
    try:
        process.wait(timeout=rng.uniform(0, jitter))
        return False
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return True


def log_state(path: Path) -> tuple[bool, bool]:
    """(torn, unterminated) as the next resume will find the log."""
    if not path.exists():
        return False, False
    contents = read_jsonl_log(path, SampleRecord.model_validate_json)
    return contents.torn is not None, contents.unterminated


def comparable(line: str) -> str:
    data = json.loads(line)
    data.pop("elapsed_seconds", None)
    return json.dumps(data, sort_keys=True)


def compare_runs(reference: Path, soaked: Path, soak: Soak) -> None:
    ref_lines = (reference / SAMPLES_FILE).read_text(encoding="utf-8").splitlines()
    lines = (soaked / SAMPLES_FILE).read_text(encoding="utf-8").splitlines()
    expected = {json.loads(line)["key"]: comparable(line) for line in ref_lines}
    keys = Counter(json.loads(line)["key"] for line in lines)
    got = {json.loads(line)["key"]: comparable(line) for line in lines}
    soak.planned = len(expected)
    soak.lost = len(set(expected) - set(got))
    soak.duplicated = sum(count - 1 for count in keys.values() if count > 1)
    soak.differing = sum(1 for key, text in got.items() if expected.get(key) != text)


def timed_reference(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = run(command, env)
    if done.returncode != 0:
        raise SystemExit(f"reference run failed: {done.stderr.strip()}")
    return time.perf_counter() - started


def soak_build(root: Path, groups: int, kills: int, rng: random.Random) -> Soak:
    soak = Soak("build")
    reference, soaked = root / "bench-ref", root / "bench-soak"
    args = ["build", "--groups", str(groups), "--workers", "2", "--seed", "11"]
    duration = timed_reference([UNCOBENCH, *args, "--out", str(reference)])
    started = time.perf_counter()
    for _ in range(kills):
        soak.kills += 1
        delay = rng.uniform(0.3, max(0.4, 0.9 * duration))
        soak.killed_mid_run += kill_at_random([UNCOBENCH, *args, "--out", str(soaked)], delay)
    final = run([UNCOBENCH, *args, "--out", str(soaked)])
    if final.returncode != 0:
        soak.notes.append(final.stderr.strip())
    soak.identical = all(
        (reference / name).read_bytes() == (soaked / name).read_bytes()
        for name in ("groups.jsonl", "manifest.json")
    )
    soak.seconds = time.perf_counter() - started
    return soak


def soak_eval(
    name: str,
    command: list[str],
    reference: Path,
    soaked: Path,
    kills: int,
    rng: random.Random,
    env: dict[str, str] | None = None,
) -> Soak:
    soak = Soak(name)
    timed_reference([*command, "--out", str(reference)], env)
    started = time.perf_counter()
    for _ in range(kills):
        soak.kills += 1
        log = soaked / SAMPLES_FILE
        killed = kill_while_writing([*command, "--out", str(soaked)], log, 0.25, rng, env)
        soak.killed_mid_run += killed
        if not killed:
            break  # the run finished: every further start would find nothing to do
        torn, unterminated = log_state(log)
        soak.torn += torn
        soak.unterminated += unterminated
    final = run([*command, "--out", str(soaked)], env)
    if final.returncode != 0:
        soak.notes.append(final.stderr.strip())
    compare_runs(reference, soaked, soak)
    soak.seconds = time.perf_counter() - started
    return soak


def faulty(share: float, seed: int):  # type: ignore[no-untyped-def]
    """A seeded script: ``share`` of the requests get a retryable fault."""
    rng = random.Random(seed)
    kinds = ["rate_limit", "server_error", "malformed", "empty_choices", "reset"]

    def script(number: int, body: dict[str, object]) -> Fault:
        if rng.random() < share:
            return Fault(rng.choice(kinds), retry_after=0.01)  # type: ignore[arg-type]
        return Fault()

    return script


def soak_model(root: Path, bench: str, options: argparse.Namespace, rng: random.Random) -> Soak:
    """The eval soak with an LLM agent whose server fails a share of the requests, compared
    with a run against an undisturbed server."""
    model = [UNCOBENCH, "eval", bench, "--agent", "openai-api/fault/m,cache=false",
             "--no-progress", "--max-attempts", "20", "--max-retry-wait", "0.01"]  # fmt: skip
    rough_script = faulty(options.fault_share, options.seed)
    with FaultServer() as calm, FaultServer(rough_script) as rough:
        env = {**os.environ, "FAULT_BASE_URL": calm.base_url}
        timed_reference([*model, "--out", str(root / "model-ref")], env)
        env["FAULT_BASE_URL"] = rough.base_url
        soak = soak_eval("model + faults", model, root / "model-ref-2", root / "model-soak",
                         options.model_kills, rng, env)  # fmt: skip
        compare_runs(root / "model-ref", root / "model-soak", soak)
        faults = Counter(rough.faults)
    soak.notes.append("faults served: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    return soak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=at_least(0), default=30, help="kills of the eval soak")
    parser.add_argument("--build-kills", type=at_least(0), default=8)
    parser.add_argument("--model-kills", type=at_least(0), default=10)
    parser.add_argument("--groups", type=at_least(1), default=20, help="groups of the benchmark")
    parser.add_argument("--fault-share", type=share, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    root = Path(tempfile.mkdtemp(prefix="uncobench-soak-"))
    soaks = []
    try:
        soaks.append(soak_build(root, options.groups, options.build_kills, rng))
        bench = str(root / "bench-ref")
        command = [UNCOBENCH, "eval", bench, *(a for agent in AGENTS for a in ("--agent", agent)),
                   "--no-progress"]  # fmt: skip
        soaks.append(soak_eval("eval", command, root / "run-ref", root / "run-soak",
                               options.kills, rng))  # fmt: skip
        if options.model_kills:
            soaks.append(soak_model(root, bench, options, rng))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{'soak':<16}{'kills':>6}{'mid-run':>8}{'torn':>6}{'unterm.':>8}{'samples':>8}"
          f"{'lost':>6}{'dup.':>6}{'differ':>7}{'identical':>10}{'seconds':>9}")  # fmt: skip
    for s in soaks:
        identical = "-" if s.identical is None else ("yes" if s.identical else "NO")
        print(f"{s.name:<16}{s.kills:>6}{s.killed_mid_run:>8}{s.torn:>6}{s.unterminated:>8}"
              f"{s.planned:>8}{s.lost:>6}{s.duplicated:>6}{s.differing:>7}{identical:>10}"
              f"{s.seconds:>9.1f}")  # fmt: skip
        for note in s.notes:
            print(f"  {note}")
    failed = [
        s.name for s in soaks if s.lost or s.duplicated or s.differing or s.identical is False
    ]
    print("result: " + ("FAILED in " + ", ".join(failed) if failed else "0 lost, 0 duplicated, "
                        "identical scores"))  # fmt: skip
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
