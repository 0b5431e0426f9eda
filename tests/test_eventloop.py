"""The event loop of ``uncobench eval`` (uncobench_z3/_eventloop.py): uvloop where installed,
asyncio's own where not or where ``UNCOBENCH_EVENT_LOOP=asyncio`` says so; the same samples
on either, in the driver and in forked workers. (The core without uvloop installed:
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


def test_uvloop_runs_the_driver_and_its_forked_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv(EVENT_LOOP_VARIABLE, raising=False)
    assert event_loop_name() == "uvloop"

    async def report(payload: object, channel: object) -> None:
        channel.send(loop_kind())  # type: ignore[attr-defined]

    async def main() -> list[str]:
        stream = LocalExecutor(2).stream(report, None)
        kinds = [kind async for batch in stream.batches() for kind in batch]
        await stream.close()
        return [loop_kind(), *kinds]

    assert run(main()) == ["uvloop", "uvloop"]


def test_either_loop_writes_the_same_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run on asyncio's loop and on uvloop, in one process and with two workers:
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
    resumed = evaluate(groups, config, tmp_path / "asyncio-1", concurrency=4)
    assert resumed.ran == 0 and resumed.reused == len(lines["asyncio-1"])
