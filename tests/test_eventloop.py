"""The event loop of ``uncobench eval``'s workers (uncobench_z3/_eventloop.py): uvloop where
installed, asyncio's own where not or where ``UNCOBENCH_EVENT_LOOP=asyncio`` says so; the
driver on asyncio's; the same samples on either. (The core without uvloop installed:
tests/test_executor.py.)"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.sample_helpers import comparable
from uncobench_z3._eventloop import EVENT_LOOP_VARIABLE, event_loop_name, loop_factory, run
from uncobench_z3._executor import ExecutorOptions, LocalExecutor
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    EvalOptions,
    evaluate,
    example_groups,
    make_config,
    read_log,
)

AGENTS = ["builtin/naive", "builtin/careful"]


def loop_kind() -> str:
    """The running loop's kind, by its class's module (uvloop's or asyncio's)."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


async def _kind() -> str:
    return loop_kind()


def test_asyncio_is_chosen_by_the_variable_even_with_uvloop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, " AsyncIO ")
    assert loop_factory() is None
    assert event_loop_name() == "asyncio"
    assert run(_kind()) == "asyncio"


def test_without_uvloop_asyncio_is_used_unless_uvloop_is_demanded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # "import uvloop" fails, as uninstalled
    for value in ("", "auto"):
        monkeypatch.setenv(EVENT_LOOP_VARIABLE, value)
        assert loop_factory() is None
        assert run(_kind()) == "asyncio"
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, "uvloop")
    with pytest.raises(ConfigError, match=r'uvloop is not installed \(pip install "uncobench'):
        loop_factory()


def test_a_value_not_understood_is_refused_and_the_coroutine_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, "trio")
    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    coroutine = work()
    with pytest.raises(ConfigError, match=f"{EVENT_LOOP_VARIABLE} must be one of auto, "):
        run(coroutine)
    assert coroutine.cr_frame is None  # closed (no "never awaited" warning), not run
    assert not started


@pytest.mark.parametrize(("variable", "workers"), [("", "uvloop"), ("asyncio", "asyncio")])
def test_the_workers_run_on_the_chosen_loop_and_the_driver_on_asyncio(
    monkeypatch: pytest.MonkeyPatch, variable: str, workers: str
) -> None:
    """A worker forked from the driver's running (asyncio) loop makes the chosen loop."""
    pytest.importorskip("uvloop")
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, variable)
    assert event_loop_name() == workers

    async def report(payload: object, channel: object) -> None:
        channel.send(loop_kind())  # type: ignore[attr-defined]

    async def main() -> list[str]:
        stream = LocalExecutor(2).stream(report, None)
        kinds = [kind async for batch in stream.batches() for kind in batch]
        await stream.close()
        return [loop_kind(), *kinds]

    assert asyncio.run(main()) == ["asyncio", workers]


def test_a_choice_not_understood_is_refused_before_the_run_folder_is_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, "uv")
    groups = example_groups()
    with pytest.raises(ConfigError, match=f"{EVENT_LOOP_VARIABLE} must be one of"):
        evaluate(groups, make_config("ex", groups, AGENTS), tmp_path / "run", concurrency=4)
    assert not (tmp_path / "run").exists()


def test_either_loop_writes_the_same_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run with its workers on asyncio's loop and on uvloop (and in one process):
    every sample the same but for its wall time; a run made on one is resumed on the other."""
    pytest.importorskip("uvloop")
    groups = example_groups()
    config = make_config("ex", groups, AGENTS)
    lines: dict[str, list[str]] = {}
    for name in ("asyncio", "uvloop"):
        monkeypatch.setenv(EVENT_LOOP_VARIABLE, name)
        for workers in (1, 2):
            out = tmp_path / f"{name}-{workers}"
            options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=workers))
            summary = evaluate(groups, config, out, options)
            assert summary.ran == len(summary.outcomes) > 0
            lines[out.name] = comparable(read_log(out / "samples.jsonl")[0])
    assert len({tuple(found) for found in lines.values()}) == 1
    # a run made on asyncio's loop is the same run on uvloop: resumed, nothing redone
    two = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    resumed = evaluate(groups, config, tmp_path / "asyncio-2", two)
    assert resumed.ran == 0 and resumed.reused == len(lines["asyncio-2"])
