"""The local executor and eval shards (no Ray): tasks, streams that stop and die, shards that
give the same samples as one process, a killed worker that loses and duplicates nothing, the
hot path's memos that change no record, and a core that runs without Ray or uvloop installed."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

import uncobench_z3._executor as executor_module
from tests.sample_helpers import Killer, comparable, feeds_noted, jobs_planned, typed_tasks_noted
from uncobench_z3._executor import (
    Channel,
    ExecutorOptions,
    LocalExecutor,
    StreamFailed,
    WorkerLost,
    open_executor,
)
from uncobench_z3.errors import ConfigError, ModelAPIError
from uncobench_z3.evaluation import (
    EvalOptions,
    connection_share,
    evaluate,
    example_groups,
    make_agent,
    make_config,
    plan_jobs,
    read_log,
)
from uncobench_z3.evaluation._models import CallPolicy
from uncobench_z3.evaluation._shards import plan_shards

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ["builtin/naive", "builtin/careful", "builtin/patient"]


def square(x: int) -> int:
    return x * x


# -- the executor ----------------------------------------------------------------------------
def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="--executor must be local or ray"):
        ExecutorOptions(kind="spark")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--workers must be at least 1"):
        ExecutorOptions(workers=0)
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        ExecutorOptions(address="ray://head:10001")
    assert ExecutorOptions(workers=3).with_workers(None).workers == 3
    assert ExecutorOptions().with_workers(2).workers == 2


@pytest.mark.parametrize("workers", [1, 2])
def test_local_tasks_keep_their_order(workers: int) -> None:
    with open_executor(ExecutorOptions(workers=workers)) as executor:
        assert isinstance(executor, LocalExecutor) and executor.slots == workers
        assert list(executor.map(square, range(7))) == [x * x for x in range(7)]
        assert executor.submit(square, 9).result() == 81


async def counting(payload: dict[str, Any], channel: Channel) -> None:
    """Sends 0, 1, 2, ... until told to stop (or ``payload["upto"]``); dies or raises on
    request."""
    stopped = asyncio.Event()
    channel.on_stop(stopped.set)
    for number in range(payload["upto"]):
        if stopped.is_set():
            return
        if number == payload.get("die_at"):
            os.kill(os.getpid(), signal.SIGKILL)
        if number == payload.get("raise_at"):
            raise ValueError(f"broken at {number}")
        channel.send(number)
        await asyncio.sleep(payload.get("pause", 0))


async def collect(payload: dict[str, Any], stop_after: int | None = None) -> list[Any]:
    stream = LocalExecutor(2).stream(counting, payload)
    seen: list[Any] = []
    try:
        async for batch in stream.batches():
            seen += batch
            if stop_after is not None and len(seen) >= stop_after:
                stream.stop()
    finally:
        await stream.close()
    return seen


async def test_a_stream_sends_everything_in_order() -> None:
    assert await collect({"upto": 50}) == list(range(50))


async def test_a_stream_gathers_what_it_sends_within_its_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (the worker is forked: it inherits the window) items sent within one window travel as
    # one message, and the end of the stream sends what was gathered, not waiting for it
    monkeypatch.setattr(executor_module, "SEND_WINDOW_S", 3600.0)
    stream = LocalExecutor(2).stream(counting, {"upto": 20, "pause": 0.001})
    try:
        batches = [batch async for batch in stream.batches()]
    finally:
        await stream.close()
    assert batches == [list(range(20))]


async def sending_large_items(payload: dict[str, Any], channel: Channel) -> None:
    for number in range(payload["count"]):
        channel.send(f"{number}:" + "x" * payload["size"])


async def test_a_batch_larger_than_the_sockets_buffer_arrives_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one window's items make a message of 3 MB, far more than the socket's buffer holds: the
    # worker writes it in pieces as the driver reads, without blocking its event loop
    monkeypatch.setattr(executor_module, "SEND_WINDOW_S", 3600.0)
    payload = {"count": 30, "size": 100_000}
    stream = LocalExecutor(2).stream(sending_large_items, payload)

    async def received() -> list[list[Any]]:
        return [batch async for batch in stream.batches()]

    try:
        # (the bound turns a message never finished into a failure instead of a hang; it is
        # no timing assertion)
        batches = await asyncio.wait_for(received(), 60)
    except TimeoutError:
        stream.process.kill()  # (what the stream's reader waits for ends with it)
        raise
    finally:
        await stream.close()
    assert batches == [[f"{n}:" + "x" * 100_000 for n in range(30)]]


async def test_a_streams_last_message_waits_for_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's last message ("done", or "error") is sent on a blocking descriptor: the
    event loop (uvloop's add_reader) left it non-blocking, and a full socket buffer then
    failed the send, and the run, at its end. (The worker is a fork: it inherits the spy.)"""
    from multiprocessing.connection import Connection

    seen = tmp_path / "last.txt"
    real = Connection.send

    def spied(conn: Connection, obj: Any) -> None:
        if isinstance(obj, tuple) and obj[0] in ("done", "error"):
            with seen.open("a") as handle:
                handle.write(f"{obj[0]} {os.get_blocking(conn.fileno())}\n")
        real(conn, obj)

    monkeypatch.setattr(Connection, "send", spied)
    assert await collect({"upto": 3}) == [0, 1, 2]
    if LocalExecutor(2).forks:
        assert seen.read_text() == "done True\n"


async def test_a_stopped_stream_starts_nothing_new() -> None:
    seen = await collect({"upto": 10_000, "pause": 0.002}, stop_after=5)
    assert 5 <= len(seen) < 10_000
    assert seen == list(range(len(seen)))


async def test_a_killed_stream_is_a_lost_worker() -> None:
    with pytest.raises(WorkerLost, match="ended"):
        await collect({"upto": 100, "die_at": 20, "pause": 0.001})


async def test_an_exception_in_a_stream_reaches_the_driver() -> None:
    with pytest.raises(StreamFailed, match="ValueError: broken at 3") as caught:
        await collect({"upto": 100, "raise_at": 3})
    assert "Traceback" in caught.value.text


# -- shards ------------------------------------------------------------------------------------
def test_shards_split_by_group_and_share_the_concurrency() -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=2)
    jobs, _ = plan_jobs(groups, config)
    works = plan_shards(jobs, 3, 10, CallPolicy(), make_agent)
    assert [w.concurrency for w in works] == [4, 3, 3]
    assert sorted(j.key for w in works for j in w.jobs) == sorted(j.key for j in jobs)
    for work in works:  # every sample of a group in one shard, in the run's order
        others = [j.group.id for w in works if w is not work for j in w.jobs]
        assert not {j.group.id for j in work.jobs} & set(others)
        positions = [jobs.index(j) for j in work.jobs]
        assert positions == sorted(positions)
    assert len(plan_shards(jobs, 8, 2, CallPolicy(), make_agent)) == 2  # never idle shards
    assert len(plan_shards(jobs[:3], 8, 64, CallPolicy(), make_agent)) == 1  # one group


def test_the_driver_hashes_no_job_key_and_workers_make_no_typed_task_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard sends each sample with its job's place, so the driver finds the job without
    hashing any job's key (thousands of hashes held the workers back); forked workers prepare
    their groups with the typed tasks the driver's input check made."""
    from uncobench_z3.evaluation import _prepared

    planned = jobs_planned(monkeypatch)
    made_again = tmp_path / "made-again.txt"  # the workers write here (their own processes)
    typed_tasks_noted(monkeypatch, _prepared, made_again)
    feeds = feeds_noted(monkeypatch)
    groups = example_groups()
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    summary = evaluate(groups, make_config("ex", groups, AGENTS), tmp_path / "run", options)
    assert summary.ran == len(planned) > 0
    assert not any("key" in job.__dict__ for job in planned)  # (a key is remembered once made)
    assert {o.key for o in summary.outcomes} == {job.key for job in planned}
    assert LocalExecutor(2).forks == ("fork" in multiprocessing.get_all_start_methods())
    if LocalExecutor(2).forks:  # but for a group a worker took from the other's share
        taken_over = {group.id for group in groups if id(group) in feeds[0].taken_over}
        again = made_again.read_text().split() if made_again.exists() else []
        assert set(again[1::2]) <= taken_over


def test_workers_start_while_run_json_is_written_and_end_if_it_cannot_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shards' workers are started before run.json is written (the write and their
    start overlap); the log is opened only after it. A write that fails ends the workers
    and leaves no log (a log without run.json would be refused on resuming)."""
    from uncobench_z3.evaluation import _runner

    real = _runner._Run._write_run_file
    seen: list[list[str]] = []

    def write(run: Any, fail: bool) -> None:
        seen.append([p.name for p in multiprocessing.active_children()])
        assert not (run.target / "samples.jsonl").exists()
        if fail:
            raise OSError("no space left on the device")
        real(run)

    groups = example_groups()
    config = make_config("ex", groups, ["builtin/careful"])
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    monkeypatch.setattr(_runner._Run, "_write_run_file", lambda run: write(run, True))
    with pytest.raises(OSError, match="no space left"):
        evaluate(groups, config, tmp_path / "failed", options)
    assert not (tmp_path / "failed" / "samples.jsonl").exists()
    assert "uncobench-stream" not in [p.name for p in multiprocessing.active_children()]
    monkeypatch.setattr(_runner._Run, "_write_run_file", lambda run: write(run, False))
    summary = evaluate(groups, config, tmp_path / "run", options)
    assert summary.ran == len(read_log(tmp_path / "run" / "samples.jsonl")[0]) > 0
    if LocalExecutor(2).forks:
        assert [names.count("uncobench-stream") for names in seen] == [2, 2]


def test_a_shards_failure_crosses_a_process_boundary_with_its_traceback() -> None:
    """``evaluate`` run in another process (a process pool, as eval_overhead.py runs it)
    raises what a shard raised, its traceback kept."""
    import pickle

    from uncobench_z3.evaluation._shards import RemoteFailure

    again = pickle.loads(pickle.dumps(RemoteFailure("boom", "Traceback: in the worker")))
    assert isinstance(again, RemoteFailure)
    assert (str(again), again.remote_traceback) == ("boom", "Traceback: in the worker")


@pytest.mark.parametrize("limit", [1, 5, 8, 13])
def test_connection_shares_add_up_to_the_limit(limit: int) -> None:
    for shards in range(1, limit + 1):
        shares = [connection_share(limit, i, shards) for i in range(shards)]
        assert sum(shares) == limit and min(shares) >= 1


@pytest.mark.parametrize(
    ("name", "slots"), [("mock/echo,max_connections=5", None), ("mock/echo", 5)]
)
def test_a_shards_model_calls_with_its_share_of_the_connections(
    name: str, slots: int | None
) -> None:
    """The shards of a run together keep a model's limit: ``,max_connections=N`` or the
    server's slots (each shard used to call with the whole limit, the run with N x shards)."""
    from uncobench_z3.construct import ModelRef
    from uncobench_z3.evaluation._models import CONNECTION_SHARE, close_models, shared_model

    async def limit_of(shard: int) -> int:
        token = CONNECTION_SHARE.set((shard, 2))
        try:
            model = shared_model(ModelRef.parse(name, cache=False))

            async def parallel_slots() -> int | None:
                return slots

            model.provider.parallel_slots = parallel_slots  # type: ignore[method-assign]
            return await model.connection_limit()
        finally:
            CONNECTION_SHARE.reset(token)
            await close_models()

    assert [asyncio.run(limit_of(shard)) for shard in (0, 1)] == [3, 2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every built-in agent on the example groups, two epochs, in one process."""
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=2)
    summary = evaluate(groups, config, tmp_path_factory.mktemp("ref"), concurrency=4)
    return comparable(summary.records)


def test_workers_give_the_same_samples_as_one_process(reference: list[str], tmp_path: Path) -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=2)
    options = EvalOptions(concurrency=6, executor=ExecutorOptions(workers=3))
    summary = evaluate(groups, config, tmp_path, options)
    assert comparable(summary.records) == reference
    logged, _ = read_log(tmp_path / "samples.jsonl")
    assert comparable(logged) == reference


def test_a_killed_worker_loses_and_duplicates_nothing(reference: list[str], tmp_path: Path) -> None:
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=2)
    marker = tmp_path / "killed"
    options = EvalOptions(concurrency=4, executor=ExecutorOptions(workers=2))
    summary = evaluate(groups, config, tmp_path / "run", options, agents=Killer(marker, 9))
    assert marker.exists()  # a worker did die
    assert comparable(summary.records) == reference
    logged, damaged = read_log(tmp_path / "run" / "samples.jsonl")
    assert not damaged
    assert len({r.key for r in logged}) == len(logged) == len(reference)


def test_the_memos_change_no_record(reference: list[str], tmp_path: Path, monkeypatch: Any) -> None:
    """Without the hot path's memos (readings, labels by evidence, prepared groups), every
    record is the same."""
    from uncobench_z3.evaluation import _attribution, _colleagues, _min_rounds, _play
    from uncobench_z3.settings import read_request

    monkeypatch.setattr(_attribution, "_group_memo", lambda group_hash, budget: None)
    monkeypatch.setattr(_attribution, "_shared", OrderedDict())
    monkeypatch.setattr(_attribution, "_SHARED_LIMIT", 0)
    monkeypatch.setattr(
        _colleagues.RecordBook,
        "read",
        lambda self, role, question, focus=None: read_request(
            self.vocabulary, question, role, focus
        ),
    )
    monkeypatch.setattr(_play, "PREPARED_GROUPS", 0)
    monkeypatch.setattr(_min_rounds, "_cache", {})
    groups = example_groups()
    config = make_config("ex", groups, AGENTS, epochs=2)
    summary = evaluate(groups, config, tmp_path, concurrency=4)
    assert comparable(summary.records) == reference


# -- the core without Ray or uvloop -----------------------------------------------------------
NO_EXTRAS = """
import sys
# "import ray" and "import uvloop" now fail, as where the extras [ray] and [fast] are not
# installed
sys.modules["ray"] = sys.modules["uvloop"] = None
from uncobench_z3.cli import main
main(sys.argv[1:])
"""


def test_the_core_runs_without_ray_or_uvloop(tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(g.model_dump_json() + "\n" for g in example_groups()))

    def run(*args: str, loop: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", NO_EXTRAS, *args], capture_output=True, text=True,
            timeout=300, env={**os.environ, "UNCOBENCH_EVENT_LOOP": loop},
        )  # fmt: skip

    done = run("eval", str(bench), "--agent", "builtin/careful", "--out", str(tmp_path / "run"),
               "--workers", "2", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(read_log(tmp_path / "run" / "samples.jsonl")[0]) == 24
    refused = run("eval", str(bench), "--agent", "builtin/careful",
                  "--out", str(tmp_path / "other"), "--executor", "ray")  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        'error: --executor ray needs Ray: pip install "uncobench-z3[ray]"'
    ]
    no_uvloop = run("eval", str(bench), "--agent", "builtin/careful",
                    "--out", str(tmp_path / "other"), loop="uvloop")  # fmt: skip
    assert no_uvloop.returncode == 2
    assert no_uvloop.stderr.strip().splitlines() == [
        "error: UNCOBENCH_EVENT_LOOP=uvloop, but uvloop is not installed "
        '(pip install "uncobench-z3[fast]", Linux and macOS)'
    ]
    assert not (tmp_path / "other").exists()  # refused before any file was written


def test_an_unreachable_ray_address_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ray.init would retry such an address for minutes; the command says why in one line
    ray = pytest.importorskip(
        "ray", reason='Ray is not installed (pip install "uncobench-z3[ray]")'
    )
    if ray.is_initialized():
        pytest.skip("Ray is already connected in this process")
    from uncobench_z3.cli import main

    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        for address in (f"--ray-address=127.0.0.1:{port}", None):
            if address is None:  # the same address from the environment
                monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
            args = ["build", "--groups", "1", "--out", str(tmp_path / "bench"), "--executor", "ray"]
            with pytest.raises(SystemExit) as stopped:
                main([*args, *([address] if address else [])])
            assert stopped.value.code == 2
            error = capsys.readouterr().err.strip().splitlines()
            assert error == [f"error: cannot reach Ray at 127.0.0.1:{port}: Connection refused"]
            assert not ray.is_initialized()
            assert not (tmp_path / "bench").exists()  # refused before any file was written
    # nor an address of no form Ray knows: Ray's own notices came before its refusal
    monkeypatch.setenv("RAY_ADDRESS", "garbage")
    with pytest.raises(SystemExit) as stopped:
        main(["build", "--groups", "1", "--out", str(tmp_path / "bench"), "--executor", "ray"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: not a Ray address: 'garbage' (expected host:port, ray://host:port, auto or local)"
    ]
    assert not ray.is_initialized() and not (tmp_path / "bench").exists()


class _Broken:
    """An agent whose provider fails (after its retries) on every call."""

    async def act(self, conversation: Any) -> Any:
        raise ModelAPIError("the provider broke <badly>", status_code=500, attempts=2)


def test_workers_stop_at_the_error_budget_with_the_error_message(tmp_path: Path) -> None:
    # shards send each sample's outcome with its line: the driver counts error samples and
    # names the last one's message without parsing the line again
    groups = example_groups()
    config = make_config("ex", groups, ["builtin/careful"])
    options = EvalOptions(concurrency=2, executor=ExecutorOptions(workers=2), max_errors=1)
    summary = evaluate(groups, config, tmp_path, options, agents=lambda name, seed: _Broken())
    assert summary.errors >= 2 and summary.errors == len(summary.outcomes)
    assert summary.stopped is not None and "2 error sample(s)" in summary.stopped
    assert "the provider broke <badly>" in summary.stopped
    assert all(o.error is not None and "broke" in o.error for o in summary.outcomes)
    logged, damaged = read_log(tmp_path / "samples.jsonl")
    assert not damaged and [r.key for r in logged] == [o.key for o in summary.outcomes]
    assert all(r.result == "error" for r in logged)
