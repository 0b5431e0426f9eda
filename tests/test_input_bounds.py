"""Numbers too large to mean anything are refused when the options are read (one line, exit
2), and the library refuses them too: nothing runs away in memory or processes, and nothing
wraps around silently in the solver."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import z3

from uncobench_z3 import _executor
from uncobench_z3._executor import MAX_WORKERS, ExecutorOptions
from uncobench_z3.construct import build_benchmark
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import MAX_EPOCHS, example_benchmark, make_config, plan_jobs
from uncobench_z3.settings import TaskGroup
from uncobench_z3.solver import SolverBudget
from uncobench_z3.solver._factory import MAX_RLIMIT, MAX_SOLVER_SEED, MAX_TIMEOUT_MS
from uncobench_z3.solver._watchdog import Watchdog
from uncobench_z3.stats import MAX_SAMPLES, BootstrapConfig

from .cli_helpers import reliable_run, run_cli

SPEC = str(Path(__file__).resolve().parent.parent / "examples" / "mining_supervisor.json")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("bounds") / "bench", groups=1)


@pytest.fixture(scope="module")
def run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reliable_run(bench, tmp_path_factory.mktemp("bounds-run") / "run")


HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["eval", "{bench}", "--agent", "builtin/naive", "--out", "{tmp}/r", "--epochs", HUGE],
         "--epochs"),
        (["eval", "{bench}", "--agent", "builtin/naive", "--out", "{tmp}/r", "--workers", "5000"],
         "--workers"),
        (["report", "{run}", "--out", "{tmp}/rep", "--bootstrap-samples", HUGE],
         "--bootstrap-samples"),
        (["compare", "{run}", "--bootstrap-samples", HUGE], "--bootstrap-samples"),
        (["leaderboard", "{run}", "--bootstrap-samples", HUGE], "--bootstrap-samples"),
        (["judge", "{run}", "--bootstrap-samples", HUGE], "--bootstrap-samples"),
        (["build", "--groups", "2", "--out", "{tmp}/b", "--workers", "5000"], "--workers"),
        (["build", "--groups", "2", "--out", "{tmp}/b", "--timeout-ms", "9999999999999"],
         "--timeout-ms"),
        (["build", "--groups", "2", "--out", "{tmp}/b", "--rlimit", "4294967296"], "--rlimit"),
        (["build", "--groups", "2", "--out", "{tmp}/b", "--solver-seed", "4294967296"],
         "--solver-seed"),
        (["verify", SPEC, "--timeout-ms", "9999999999999"], "--timeout-ms"),
        (["verify", SPEC, "--rlimit", "4294967297"], "--rlimit"),
        (["verify", SPEC, "--seed", "-1"], "--seed"),
        (["perturb", SPEC, "--timeout-ms", "9999999999999"], "--timeout-ms"),
    ],
)  # fmt: skip
def test_absurd_numbers_are_refused_when_the_options_are_read(
    bench: Path,
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    option: str,
) -> None:
    args = [a.format(bench=bench, run=run, tmp=tmp_path) for a in command]
    result = run_cli(capsys, *args)
    assert result.code == 2, (result.out, result.err)
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and option in lines[0], result.err
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(
    "changes",
    [
        {"rlimit": MAX_RLIMIT + 1},
        {"rlimit": -1},
        {"seed": -1},
        {"seed": MAX_SOLVER_SEED + 1},
        {"timeout_ms": MAX_TIMEOUT_MS + 1},
        {"timeout_ms": -1},
    ],
)
def test_a_solver_budget_z3_would_read_wrapped_around_is_refused(changes: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        SolverBudget(**changes)


def test_the_largest_budget_is_accepted() -> None:
    SolverBudget(rlimit=MAX_RLIMIT, seed=MAX_SOLVER_SEED, timeout_ms=MAX_TIMEOUT_MS)


def test_the_watchdog_survives_a_timeout_longer_than_the_platform_can_wait() -> None:
    watchdog = Watchdog()
    token = watchdog.arm(z3.Context(), int(threading.TIMEOUT_MAX * 1000) * 4)
    assert watchdog._thread is not None
    watchdog._thread.join(1.0)  # a thread that died of the wait would have ended by now
    assert watchdog._thread.is_alive()
    assert watchdog.disarm(token) is False


def test_bootstrap_samples_are_bounded() -> None:
    BootstrapConfig(samples=MAX_SAMPLES)
    with pytest.raises(ValueError, match="resamples"):
        BootstrapConfig(samples=MAX_SAMPLES + 1)


def test_epochs_are_bounded_before_any_job_is_planned(bench: Path) -> None:
    from uncobench_z3.construct import load_groups

    groups: list[TaskGroup] = load_groups(bench)
    config = make_config(bench, groups, ["builtin/naive"], epochs=MAX_EPOCHS + 1)
    with pytest.raises(ConfigError, match="--epochs"):
        plan_jobs(groups, config)


def test_workers_are_bounded_and_never_more_than_the_work() -> None:
    with pytest.raises(ConfigError, match="--workers"):
        ExecutorOptions(workers=MAX_WORKERS + 1)
    assert ExecutorOptions(workers=32).for_items(2).workers == 2
    assert ExecutorOptions(workers=3).for_items(10).workers == 3
    assert ExecutorOptions(workers=32).for_items(0).workers == 1
    assert ExecutorOptions("ray").for_items(2).workers is None  # the cluster's CPUs: capped there


def test_a_build_of_two_groups_forks_no_pool_of_32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(workers: int) -> None:
        raise AssertionError(f"a pool of {workers} workers was made for one chunk of work")

    monkeypatch.setattr(_executor, "worker_pool", no_pool)
    result = build_benchmark(tmp_path / "b", groups=2, seed=3, workers=32)
    assert result.manifest["stats"]["groups"] == 2
