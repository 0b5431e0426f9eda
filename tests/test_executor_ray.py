"""The Ray executor on a real local Ray (``ray.init(num_cpus=2)``): a build that writes the
same bytes as a local one, verify's verdicts, eval's samples, a killed shard actor that loses
and duplicates nothing, API keys that reach the workers but no file, and Ctrl-C while a local
Ray starts. Skipped, saying why, where Ray is not installed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import sample_helpers
from tests.cli_helpers import run_cli
from tests.sample_helpers import Killer, comparable
from uncobench_z3._executor import ExecutorOptions
from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import (
    EvalOptions,
    evaluate,
    make_config,
    read_log,
    settings_minimum_rounds,
)

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "uncobench-z3[ray]")')
pytestmark = pytest.mark.ray

GROUPS = 40
AGENTS = ["builtin/naive", "builtin/careful", "builtin/patient"]
SECRET_NAME = "UNCOBENCH_TEST_API_KEY"
SECRET = "sk-test-ray-forwarding-5b1e0c"
RAY = ExecutorOptions(kind="ray")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[str]:
    """A local Ray of two CPUs for this module, connected the way the commands connect (with
    the driver's keys in the runtime environment); yields its session folder."""
    from uncobench_z3._ray import connect

    if ray.is_initialized():
        ray.shutdown()
    os.environ[SECRET_NAME] = SECRET
    try:
        connect("local", num_cpus=2, object_store_memory=200 * 1024 * 1024)
    finally:
        del os.environ[SECRET_NAME]
    session = ray._private.worker.global_worker.node.get_session_dir_path()
    yield session
    ray.shutdown()


@pytest.fixture(scope="module")
def local_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ray") / "local"
    # as `uncobench build` builds: each group stores its minimum rounds (and verify checks them)
    build_benchmark(out, groups=GROUPS, seed=11, workers=2, minimum_rounds=settings_minimum_rounds)
    return out


def test_a_build_on_ray_writes_the_same_bytes(
    local_ray: str, local_bench: Path, tmp_path: Path
) -> None:
    result = build_benchmark(
        tmp_path / "ray",
        groups=GROUPS,
        seed=11,
        executor=RAY,
        minimum_rounds=settings_minimum_rounds,
    )
    assert not result.reused
    for name in ("groups.jsonl", "manifest.json", "rejected.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (local_bench / name).read_bytes()


def test_verify_on_ray_gives_the_same_verdicts(
    local_ray: str, local_bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    here = run_cli(capsys, "verify", str(local_bench), "--json", "--workers", "2")
    there = run_cli(capsys, "verify", str(local_bench), "--json", "--executor", "ray")
    assert here.code == there.code == 0
    assert json.loads(here.out) == json.loads(there.out)
    assert json.loads(there.out)["counts"]["proved"] == GROUPS
    checks = {c["name"] for r in json.loads(there.out)["reports"] for c in r["checks"]}
    assert "minimum-rounds" in checks


@pytest.fixture(scope="module")
def local_run(local_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    groups = load_groups(local_bench)[:8]
    config = make_config(str(local_bench), groups, AGENTS)
    summary = evaluate(groups, config, tmp_path_factory.mktemp("ray") / "run", concurrency=4)
    return comparable(summary.records)


def test_eval_on_ray_gives_the_same_samples(
    local_ray: str, local_bench: Path, local_run: list[str], tmp_path: Path
) -> None:
    groups = load_groups(local_bench)[:8]
    config = make_config(str(local_bench), groups, AGENTS)
    summary = evaluate(groups, config, tmp_path, EvalOptions(concurrency=4, executor=RAY))
    assert comparable(summary.records) == local_run
    logged, _ = read_log(tmp_path / "samples.jsonl")
    assert comparable(logged) == local_run


def test_a_killed_actor_loses_and_duplicates_nothing(
    local_ray: str, local_bench: Path, local_run: list[str], tmp_path: Path
) -> None:
    # Ray's workers cannot import the tests: the agent maker travels by value
    ray.cloudpickle.register_pickle_by_value(sample_helpers)
    groups = load_groups(local_bench)[:8]
    config = make_config(str(local_bench), groups, AGENTS)
    marker = tmp_path / "killed"
    options = EvalOptions(concurrency=4, executor=RAY)
    summary = evaluate(groups, config, tmp_path / "run", options, agents=Killer(marker, 10))
    assert marker.exists() and int(marker.read_text()) != os.getpid()
    assert comparable(summary.records) == local_run
    logged, damaged = read_log(tmp_path / "run" / "samples.jsonl")
    assert not damaged
    assert len({r.key for r in logged}) == len(logged) == len(local_run)


def environment_of_worker(name: str) -> str | None:
    return os.environ.get(name)


def test_keys_reach_the_workers_but_no_file(local_ray: str) -> None:
    from uncobench_z3._ray import RayExecutor

    executor = RayExecutor()  # connected already: reuses the module's Ray
    assert executor.submit(environment_of_worker, SECRET_NAME).result() == SECRET
    executor.close()
    assert ray.is_initialized()  # it did not disconnect what it did not connect
    leaks = subprocess.run(
        ["grep", "-rl", SECRET, local_ray], capture_output=True, text=True, check=False
    )
    assert leaks.stdout == ""


INTERRUPTED_WHILE_RAY_STARTS = """
import os, signal, sys
import ray, ray._private.node
from uncobench_z3._ray import connect

started = ray._private.node.Node.start_ray_processes


def start_then_ctrl_c(node):
    started(node)
    os.killpg(0, signal.SIGINT)  # Ctrl-C: to the whole process group, Ray's processes too


ray._private.node.Node.start_ray_processes = start_then_ctrl_c
try:
    connect(None, num_cpus=1)
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="lists processes from /proc")
def test_ctrl_c_while_a_local_ray_starts_leaves_none_of_its_processes(tmp_path: Path) -> None:
    # Raised inside ray.init, the interrupt left the Ray's dashboard and runtime-env agents
    # running after the command (or crashed it: exit 139)
    home = tmp_path / "home"
    home.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    driver = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_WHILE_RAY_STARTS],
        env={**environment, "HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its session: what it started, and only that
    )
    try:
        _, stderr = driver.communicate(timeout=180)
        time.sleep(3)  # (what the driver stopped, given the time to go)
        left = {pid: _command(pid) for pid in _processes() if _session(pid) == driver.pid}
    finally:
        for pid in _processes():
            if _session(pid) == driver.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert driver.returncode == 130, stderr[-2000:]
    assert left == {}


def _processes() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()[:200].decode(errors="replace")
    return "(gone)"


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:  # gone, or not ours to ask
        return None


@pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="SIGINT is not Python's KeyboardInterrupt in this process",
)
def test_ctrl_c_while_ray_starts_in_an_event_loop_ends_the_command() -> None:
    # eval connects inside asyncio.run, whose SIGINT handler only cancels the task at its
    # next await: given the signal again, the command went on to use the Ray it had stopped
    from uncobench_z3._ray import _interrupt_once_started

    starting = StoppedRay()
    used: list[bool] = []

    async def connect_then_use() -> None:
        with _interrupt_once_started(starting):
            signal.raise_signal(signal.SIGINT)  # Ctrl-C while ray.init runs
        used.append(starting.stopped)  # RayExecutor asks the cluster for its CPUs

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(connect_then_use())
    assert starting.stopped
    assert used == []


@pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="SIGINT is not Python's KeyboardInterrupt in this process",
)
def test_a_second_ctrl_c_while_ray_starts_interrupts_at_once() -> None:
    # a ray.init that retries (a cluster that went away) would hold the first for minutes
    from uncobench_z3._ray import _interrupt_once_started

    stuck = StoppedRay()
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt), _interrupt_once_started(stuck):
        signal.raise_signal(signal.SIGINT)
        reached.append("held")
        signal.raise_signal(signal.SIGINT)
        reached.append("went on")
    assert reached == ["held"] and stuck.stopped  # (the Ray it may have started, stopped)


class StoppedRay:
    """Stands for the ``ray`` module while it starts: records its ``shutdown``."""

    stopped = False

    def shutdown(self) -> None:
        self.stopped = True
