"""Where parallel work runs: worker processes on this machine, or a Ray cluster.

``build``, ``verify`` and ``eval`` hand their parallel work to an :class:`Executor`, chosen
with ``--executor local|ray`` (:class:`ExecutorOptions`). Two kinds of work:

* a **task** (:meth:`Executor.submit`) is one call on serializable arguments that returns
  one result: a chunk of build candidates, a chunk of groups to re-prove. A task may run more
  than once (Ray runs a task again when its worker is lost), so tasks are pure: the driver
  stores what they return, and its files stay the only record of what is done.
* a **stream** (:meth:`Executor.stream`) is a long-running ``async`` function that sends
  items back while it works and can be asked to stop starting new work: an eval shard sends
  each finished sample. A stream whose worker is lost ends with :class:`WorkerLost` on the
  driver, which knows what it received and starts what is missing again.

The ``local`` executor runs tasks in a process pool (:func:`._workers.worker_pool`, whose
workers die with their parent) and each stream in a process of its own (forked where the
platform can, so the loaded benchmark's pages are shared) that dies with its parent too.
A pool of one worker runs tasks in the calling process. The ``ray`` executor
(:mod:`._ray`, imported only when chosen) runs tasks as Ray tasks and streams as Ray
actors; Ray is an optional extra (``pip install "uncobench-z3[ray]"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import socket
import struct
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from concurrent.futures import Executor as _FuturesExecutor
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any, Literal, Protocol, TypeVar

from ._eventloop import run as run_loop
from ._secrets import redacted_error, redacted_traceback
from ._workers import die_with_parent, worker_pool
from .errors import ConfigError, UncobenchError

__all__ = [
    "EXECUTOR_KINDS",
    "MAX_WORKERS",
    "Channel",
    "Executor",
    "ExecutorKind",
    "ExecutorOptions",
    "GatedChannel",
    "LocalExecutor",
    "Stream",
    "StreamFailed",
    "WorkerLost",
    "open_executor",
]

ExecutorKind = Literal["local", "ray"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("local", "ray")
MAX_WORKERS = 1024
"""the most ``--workers`` accepted: more processes (or Ray tasks at once) than a machine or
cluster this runs on has cores for is a typo, not a plan"""
T = TypeVar("T")


@dataclass(frozen=True)
class ExecutorOptions:
    """``--executor``, ``--workers`` and ``--ray-address``: where parallel work runs.

    ``workers``: local worker processes, or with Ray the tasks (or eval shards) that run at
    once; ``None`` lets each command choose (build and verify: every core, or every CPU of
    the Ray cluster; eval: one process locally, one shard per cluster CPU with Ray).
    ``address``: the Ray cluster (``None``: ``RAY_ADDRESS``, else a cluster already running on
    this machine, else a local Ray started for the command and stopped after it).
    """

    kind: ExecutorKind = "local"
    workers: int | None = None
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTOR_KINDS:
            raise ConfigError(f"--executor must be local or ray, not {self.kind!r}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, not {self.workers}")
        if self.workers is not None and self.workers > MAX_WORKERS:
            raise ConfigError(f"--workers must be at most {MAX_WORKERS}, not {self.workers}")
        if self.address is not None and self.kind != "ray":
            raise ConfigError("--ray-address needs --executor ray")

    def with_workers(self, workers: int | None) -> ExecutorOptions:
        """These options with ``workers``, if given (the Python API's ``workers=``)."""
        return self if workers is None else replace(self, workers=workers)

    def for_items(self, items: int) -> ExecutorOptions:
        """These options for ``items`` pieces of work: never more workers than pieces (a
        worker with nothing to do is a process forked, or a Ray slot held, for nothing)."""
        if self.workers is None and self.kind == "ray":
            return self  # every CPU of a cluster not yet reached: the executor caps it
        workers = self.workers or os.cpu_count() or 1
        return replace(self, workers=max(1, min(workers, items)))


class WorkerLost(UncobenchError):
    """A worker process (or a Ray node or actor) ended before its work was done."""


class StreamFailed(UncobenchError):
    """A stream's function raised; ``text`` holds the worker's traceback."""

    def __init__(self, message: str, text: str = "") -> None:
        super().__init__(message)
        self.text = text


class Channel(Protocol):
    """The worker's end of a stream."""

    def send(self, item: Any) -> None:
        """Send ``item`` to the driver (items sent close together travel together)."""

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the driver asks the stream to start no new work."""


class GatedChannel(Channel, Protocol):
    """The worker's end of a local stream (:class:`LocalExecutor`), which can also report at
    once and wait for the driver's word: a stream whose first work must be answered before
    the driver goes on (an eval shard checking its groups, :mod:`.evaluation._shards`)."""

    def send_now(self, item: Any) -> None:
        """Send ``item`` at once, with what is gathered."""

    async def gate(self) -> bool:
        """Wait for the driver's word: True when it said go (:meth:`_ProcessStream.go`),
        False when it asked the stream to stop first."""

    def flush(self) -> None:
        """Send what is gathered at once (nothing when nothing is)."""

    def on_more(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback`` with what the driver sends (:meth:`_ProcessStream.more`), in
        order; what it sent before is handed over at once."""


StreamFunction = Callable[[Any, Channel], Awaitable[None]]
"""``async fn(payload, channel)``: a stream's work, run in a worker's event loop."""


class Stream(Protocol):
    """The driver's end of a stream: batches of items, as the worker sends them."""

    def batches(self) -> AsyncIterator[list[Any]]:
        """Every batch, until the function returns; :class:`WorkerLost` if the worker ends
        first, :class:`StreamFailed` if the function raises."""

    def stop(self) -> None:
        """Ask the worker to start no new work (work in progress finishes and is sent)."""

    async def close(self) -> None:
        """End the worker (at once, if it is still running) and free what it held."""


class Executor:
    """Runs tasks and streams (see the module docstring); use as a context manager."""

    kind: ExecutorKind = "local"
    slots: int = 1
    """how many tasks (or streams) run at once"""
    forks: bool = False
    """whether a stream's worker is a fork of this process: its payload is not copied, and
    the objects it refers to keep their identity (``id``) there"""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        raise NotImplementedError

    def map(self, fn: Callable[..., T], *iterables: Iterable[Any]) -> Iterator[T]:
        """``fn`` over the arguments as tasks, results in order (all submitted at once)."""
        futures = [self.submit(fn, *args) for args in zip(*iterables, strict=True)]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def stream(self, fn: StreamFunction, payload: Any) -> Stream:
        raise NotImplementedError

    def close(self) -> None:
        """Stop running work and free the workers."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- local ------------------------------------------------------------------------------------
class _Inline(_FuturesExecutor):
    """Runs each task at once, in the calling process (one worker needs no pool)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


class LocalExecutor(Executor):
    """Worker processes on this machine that die with it (see the module docstring)."""

    kind: ExecutorKind = "local"

    def __init__(self, workers: int) -> None:
        self.slots = max(1, workers)
        self.forks = _process_context().get_start_method() == "fork"
        self._pool: _FuturesExecutor | None = None

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        if self._pool is None:
            self._pool = _Inline() if self.slots == 1 else worker_pool(self.slots)
        return self._pool.submit(fn, *args)

    def stream(self, fn: StreamFunction, payload: Any) -> Stream:
        return _ProcessStream(fn, payload)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _process_context() -> Any:
    """Fork where the platform has it: the worker starts at once, shares the driver's loaded
    pages and can run any callable the driver holds (nothing is pickled on the way in)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


class _ProcessStream:
    """A stream in a worker process of its own, talking over a pipe."""

    def __init__(self, fn: StreamFunction, payload: Any) -> None:
        context = _process_context()
        self._conn, child = context.Pipe(duplex=True)
        self.process = context.Process(
            target=_stream_main,
            args=(fn, payload, child, os.getpid()),
            name="uncobench-stream",
            daemon=True,
        )
        self.process.start()
        child.close()  # the worker's end lives in the worker only: its death is an EOF here
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uncobench-stream")

    async def batches(self) -> AsyncIterator[list[Any]]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                kind, body = await loop.run_in_executor(self._reader, self._conn.recv)
            except (EOFError, OSError):
                await loop.run_in_executor(self._reader, self.process.join, 5)
                raise WorkerLost(
                    f"worker process {self.process.pid} ended (exit code "
                    f"{self.process.exitcode}) before its work was done"
                ) from None
            if kind == "items":
                yield body
            elif kind == "done":
                return
            else:
                message, text = body
                raise StreamFailed(message, text)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(("stop", None))

    def go(self) -> None:
        """Tell a worker waiting at :meth:`GatedChannel.gate` to go on."""
        with contextlib.suppress(OSError):  # a lost worker shows as such in batches()
            self._conn.send(("go", None))

    def more(self, body: Any) -> None:
        """Send ``body`` to the worker's :meth:`GatedChannel.on_more` callback."""
        with contextlib.suppress(OSError):  # a lost worker shows as such in batches()
            self._conn.send(("more", body))

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._reader, self.process.join, 5)
        if self.process.is_alive():
            self.process.kill()
            await loop.run_in_executor(self._reader, self.process.join, 5)
        self._conn.close()
        self._reader.shutdown(wait=False)


SEND_WINDOW_S = 0.05
"""how long a worker gathers the items it sends before they travel as one message. Each
message costs the driver a hop through its reader thread, a wake of its event loop and a
commit of the run log (an fsync); at concurrency 64 over two workers, samples finish every
few milliseconds, so a message per sample cost the driver 1.10 CPU-s in a 3.7 s run, against
0.47 CPU-s when a worker gathered 20 ms (``benchmarks/eval_overhead.py``'s throughput run,
three pairs). At concurrency 256 over two workers, 50 ms instead of 20: 200-230 messages and
commits instead of 265-290, the driver's CPU 0.456-0.496 s against 0.523-0.538 s (four
alternate pairs, a loaded machine). A sample reaches the log at most this much later; the
end of the stream sends what is gathered at once."""


class _PipeChannel:
    """The worker's end of a :class:`_ProcessStream`.

    Batches are written without blocking the event loop: what the socket's buffer does not
    take now is written when the driver has read enough (the loop watches the socket). A
    batch (tens of samples of about 10 KB each) is larger than the buffer, and the driver
    reads only when its reader thread runs: a blocking write stopped every episode of the
    shard until then (0.40-0.43 s of a 6.8 s run per worker, at concurrency 256 over two
    workers in ``benchmarks/eval_overhead.py``, against 0.04 CPU-s of pickling and writing;
    a writer thread instead stopped it 0.32-0.40 s, as each hand-over woke the thread).
    Messages keep :class:`~multiprocessing.connection.Connection`'s framing, so the driver
    reads them with ``recv``; :meth:`serve` returns once every batch is written."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._buffer: list[Any] = []
        self._callbacks: list[Callable[[], None]] = []
        self._stopped = False
        self._out = bytearray()
        """framed messages not yet written"""
        self._socket = _nonblocking_socket(conn)
        self._watching = False
        self._drained: asyncio.Future[None] | None = None
        self._word: asyncio.Future[bool] | None = None
        """the driver's word, once a gate is waited for"""
        self._went = False
        self._more: Callable[[Any], None] | None = None
        self._sent_before: list[Any] = []
        """what the driver sent (``more``) before a callback took it"""

    def send(self, item: Any) -> None:
        if not self._buffer:  # one message per window, however many items
            asyncio.get_running_loop().call_later(SEND_WINDOW_S, self._flush)
        self._buffer.append(item)

    def send_now(self, item: Any) -> None:
        self._buffer.append(item)
        self._flush()  # (a window's timer started before finds nothing, or what came later)

    def flush(self) -> None:
        self._flush()

    def on_more(self, callback: Callable[[Any], None]) -> None:
        self._more = callback
        sent, self._sent_before = self._sent_before, []
        for body in sent:
            callback(body)

    async def gate(self) -> bool:
        if self._went or self._stopped:
            return not self._stopped
        self._word = asyncio.get_running_loop().create_future()
        return await self._word

    def _flush(self) -> None:
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        message = ForkingPickler.dumps(("items", batch))
        if self._socket is None:  # (not a socket: a blocking write)
            self._conn.send_bytes(message)
            return
        self._out += _header(len(message))
        self._out += message
        self._write_some()

    def _write_some(self) -> None:
        """Write what the socket takes now; watch it for the rest."""
        assert self._socket is not None
        try:
            sent = self._socket.send(self._out, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:  # the driver is gone: nothing will read our results
            os._exit(1)
        del self._out[:sent]
        loop = asyncio.get_running_loop()
        if self._out and not self._watching:
            loop.add_writer(self._socket.fileno(), self._write_some)
            self._watching = True
        elif not self._out:
            if self._watching:
                loop.remove_writer(self._socket.fileno())
                self._watching = False
            if self._drained is not None and not self._drained.done():
                self._drained.set_result(None)

    async def _written(self) -> None:
        """Wait until every message is written."""
        if self._out:
            self._drained = asyncio.get_running_loop().create_future()
            await self._drained

    def on_stop(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)
        if self._stopped:
            callback()

    def _readable(self) -> None:
        try:
            kind, body = self._conn.recv()
        except (EOFError, OSError):  # the driver is gone: nothing will read our results
            os._exit(1)
        if kind == "more":
            if self._more is None:
                self._sent_before.append(body)
            else:
                self._more(body)
        elif kind == "go":
            self._went = True
        elif kind == "stop" and not self._stopped:
            self._stopped = True
            for callback in self._callbacks:
                callback()
        if self._word is not None and not self._word.done() and (self._went or self._stopped):
            self._word.set_result(not self._stopped)

    async def serve(self, fn: StreamFunction, payload: Any) -> None:
        loop = asyncio.get_running_loop()
        loop.add_reader(self._conn.fileno(), self._readable)
        try:
            await fn(payload, self)
        finally:
            loop.remove_reader(self._conn.fileno())
            self._flush()
            await self._written()  # before the stream's end is sent after them


def _nonblocking_socket(conn: Connection) -> socket.socket | None:
    """A socket object on ``conn``'s descriptor (a duplicate: closing either leaves the
    other open) for writes that never wait, or None where the connection is no socket."""
    duplicate = os.dup(conn.fileno())
    try:
        return socket.socket(fileno=duplicate)
    except (OSError, ValueError):
        os.close(duplicate)
        return None


def _header(size: int) -> bytes:
    """The length header :meth:`Connection.send_bytes` puts before a message of ``size``."""
    if size > 0x7FFFFFFF:
        return struct.pack("!i", -1) + struct.pack("!Q", size)
    return struct.pack("!i", size)


def _stream_main(fn: StreamFunction, payload: Any, conn: Connection, parent: int) -> None:
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what an interrupt ends
    channel = _PipeChannel(conn)
    try:
        run_loop(channel.serve(fn, payload))  # uvloop where installed (_eventloop.py)
        # The last message waits for room, as every message of a blocking connection does:
        # uvloop's add_reader (libuv's uv_poll_init) left the descriptor non-blocking (and
        # the channel's socket with it: one open file), so when the batches written just
        # before filled the socket's buffer while the driver was still writing the log,
        # this send raised BlockingIOError and the whole run failed at its end (seen once
        # in about 16 runs at concurrency 256 with two workers, on a loaded machine).
        os.set_blocking(conn.fileno(), True)
        conn.send(("done", None))
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.set_blocking(conn.fileno(), True)
            conn.send(("error", failure_text(exc)))
    finally:
        conn.close()
        sys.stdout.flush()
        os._exit(0)  # no atexit handlers inherited from the driver (its locks, its logs)


def failure_text(exc: BaseException) -> tuple[str, str]:
    """(one line, traceback) of an exception, to send across processes, redacted (the
    driver may not know the keys this process registered)."""
    return redacted_error(exc), redacted_traceback(exc)


# -- choosing ---------------------------------------------------------------------------------
def open_executor(options: ExecutorOptions, default_workers: int | None = None) -> Executor:
    """The executor ``options`` name. ``default_workers``: the command's default when
    ``--workers`` is not given (``None``: every core here, or every CPU of the Ray cluster)."""
    workers = options.workers or default_workers
    if options.kind == "ray":
        from ._ray import RayExecutor

        return RayExecutor(options.address, workers)
    return LocalExecutor(workers or os.cpu_count() or 1)
