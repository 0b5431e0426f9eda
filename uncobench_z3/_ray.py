"""The Ray executor: tasks become Ray tasks, streams become Ray actors.

Imported only when ``--executor ray`` is chosen; Ray is the optional extra ``[ray]``.

**Connecting.** An address (``--ray-address``) is connected to; without one, Ray's own rules
apply: ``RAY_ADDRESS``, else a cluster already running on this machine (``ray start
--head``), else a local Ray started for this command and stopped after it. A program that
initialised Ray itself keeps its connection (and its own runtime environment). A cluster
named by address gets this machine's Ray token only if it asks for one
(:func:`_send_a_token_if_one_exists`); Ctrl-C while Ray starts takes effect once it has.

**Keys.** API keys and endpoints (environment variables named ``*_API_KEY``,
``*_BASE_URL``, ``UNCOBENCH_*``) reach the workers through the job's runtime environment
from the driver's environment: a ``worker_process_setup_hook`` that sets them in each worker
process before it runs anything. The values travel inside that function (Ray keeps it in
its in-memory store), not as ``env_vars``, which Ray writes into its runtime-env log.

**Failures.** A task whose worker or node is lost runs again (``TASK_RETRIES``); an actor
whose process ends raises :class:`~._executor.WorkerLost` on the driver, which starts the
work it did not receive again. An exception raised by the work itself reaches the driver as
that exception (or :class:`~._executor.StreamFailed` for a stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from ._executor import Executor, ExecutorKind, StreamFailed, StreamFunction, WorkerLost
from .errors import ConfigError

__all__ = [
    "TASK_RETRIES",
    "RayExecutor",
    "check_reachable",
    "connect",
    "forwarded_environment",
    "import_ray",
]

T = TypeVar("T")
TASK_RETRIES = 3
"""times Ray runs a task again after its worker (or node) was lost"""
REACH_TIMEOUT = 5.0
"""seconds to wait for a cluster address to accept a connection before Ray is asked"""
FORWARDED_SUFFIXES = ("_API_KEY", "_BASE_URL")
FORWARDED_PREFIXES = ("UNCOBENCH_",)


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError('--executor ray needs Ray: pip install "uncobench-z3[ray]"') from None
    return ray


def forwarded_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's variables that workers need: provider keys and endpoints, and this
    package's own settings (the response cache's folder)."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if name.endswith(FORWARDED_SUFFIXES) or name.startswith(FORWARDED_PREFIXES)
    }


def _environment_hook(values: dict[str, str]) -> Callable[[], None]:
    def uncobench_environment() -> None:
        os.environ.update(values)

    return uncobench_environment


def check_reachable(address: str | None) -> None:
    """A :class:`ConfigError` now if ``address`` (else ``RAY_ADDRESS``), a ``host:port``,
    accepts no connection: ``ray.init`` would wait for minutes, retrying, before it fails;
    also if it is none of Ray's forms. Ray's own forms (``auto``, ``local``, ``ray://``
    client addresses) are left to Ray."""
    target = address or os.environ.get("RAY_ADDRESS") or ""
    host, _, port = target.rpartition(":")
    if target in ("", "auto", "local") or "://" in target:
        return
    if not host or not port.isdigit():
        # Ray would refuse it too, but only after printing its own notices (two lines or
        # more where the command promises one)
        raise ConfigError(
            f"not a Ray address: {target!r} (expected host:port, ray://host:port, auto or local)"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT).close()
    except OSError as exc:
        raise ConfigError(f"cannot reach Ray at {target}: {exc.strerror or exc}") from None


def connect(address: str | None, **init: Any) -> bool:
    """Connect this process to Ray (see the module docstring); whether it connected now
    (and so should disconnect when done). ``init``: more of ``ray.init``'s options (a local
    Ray's ``num_cpus``, for tests)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    check_reachable(address)
    if address != "local":
        _send_a_token_if_one_exists(address)
    environment = forwarded_environment()
    runtime_env = (
        {"worker_process_setup_hook": _environment_hook(environment)} if environment else None
    )
    try:
        with _interrupt_once_started(ray):
            ray.init(
                address=address,
                runtime_env=runtime_env,
                logging_level=logging.WARNING,
                log_to_driver=False,  # one progress bar on the driver; results carry the errors
                include_dashboard=False,
                **init,
            )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "this machine"
        raise ConfigError(f"cannot start or reach Ray ({where}): {exc}") from None
    return True


@contextlib.contextmanager
def _interrupt_once_started(ray: Any) -> Iterator[None]:
    """Ctrl-C while Ray starts or connects takes effect when it has, and disconnects (a Ray
    started for the command stops). Raised inside ``ray.init``, the KeyboardInterrupt left
    a half-started local Ray's agents running after the command (``ray::DashboardAgent``,
    ``ray::RuntimeEnvAgent``) or crashed the interpreter on its way out (exit 139). A
    second Ctrl-C interrupts at once, as before (a ``ray.init`` that retries does not
    return for minutes). Outside the main thread, or where SIGINT is ignored, nothing
    changes."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):
        yield
        return
    interrupted: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        if interrupted:  # a second Ctrl-C: Ray is not starting, it is stuck (retrying)
            raise KeyboardInterrupt
        interrupted.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if interrupted:
            ray.shutdown()
            # not the signal again, to the handler that was in place: asyncio's (eval
            # connects in its event loop) only cancels the task at its next await, and the
            # command went on to ask the Ray just stopped (an internal error, exit 4)
            raise KeyboardInterrupt


def _send_a_token_if_one_exists(address: str | None) -> None:
    """Ray's rule for ``ray start --head``, applied to connecting: token authentication on
    where a token exists (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``, ``~/.ray/auth_token``)
    and ``RAY_AUTH_MODE`` says nothing. Since Ray 2.59 a head started where a token exists
    (a local ``ray.init()``, as a build with ``--executor ray`` and no cluster does, writes
    one) requires it, but ``ray.init(address=...)`` sends it only in token mode: the
    connection failed with ``InvalidAuthToken`` after 20 s of retries (ray-project/ray
    pull 64755's review says so). Token mode is two-way, though: the driver then also
    refuses the cluster's own calls that carry no token, and on a cluster without
    authentication every actor's creation was cancelled ("Missing authorization header";
    eval's shards "lost their worker"). So a cluster named by address (``address``, else
    ``RAY_ADDRESS``) is asked first (:func:`_asks_for_a_token`) and gets the token only if
    it asks for one; a :class:`ConfigError` if it asks and this process has none or
    another. A cluster found on this machine (no address, ``auto``) follows Ray's own
    rule, this one unasked. Ray's own function, not a copy of its rule (it is private
    to Ray: absent before 2.59)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    target = address or os.environ.get("RAY_ADDRESS") or ""
    if target in ("", "auto") or "://" in target:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
        return
    if not _asks_for_a_token(target):
        return
    # (a RAY_AUTH_MODE of yours is obeyed); asked again with the token, the cluster tells
    # a wrong one at once, where ray.init printed Ray's warning every second for 20 s and
    # then said it could not connect
    if not maybe_enable_token_auth_if_token_available(warn_if_disabled=False) or (
        _asks_for_a_token(target)
    ):
        raise ConfigError(
            f"the Ray cluster at {target} requires Ray's token and was given none or another"
            " (give it the head's, from `ray get-auth-token` there, in RAY_AUTH_TOKEN,"
            " RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token)"
        )


def _asks_for_a_token(address: str) -> bool:
    """Whether the Ray cluster at ``address`` (``host:port``) requires Ray's token: its
    GCS is asked without one (unless this process is in token mode already). The request
    names another cluster, so a GCS that lets it through refuses it for that
    (``WrongClusterID``) and nothing is read (asked for its own cluster id, Ray's client
    prints a warning when the token is refused). A :class:`ConfigError` if no GCS answers
    (a port of another service): ``ray.init`` retried for minutes, printing Ray's
    warnings."""
    from ray._raylet import GcsClient  # type: ignore[attr-defined]  # (not in Ray's stub)
    from ray.exceptions import AuthenticationError, RayError

    try:
        GcsClient(address=address, cluster_id="ab" * 28).internal_kv_get(
            b"uncobench", None, timeout=REACH_TIMEOUT
        )
    except AuthenticationError as exc:
        return "InvalidAuthToken" in str(exc)
    except RayError as exc:  # its RpcError: no answer in time
        raise ConfigError(f"no Ray cluster answers at {address}: {exc}") from None
    return False


def _unwrapped(exc: BaseException) -> BaseException:
    """The exception a task raised (Ray wraps it), or :class:`WorkerLost` for a lost worker."""
    import ray.exceptions as rex

    if isinstance(exc, rex.RayTaskError):
        cause = exc.cause
        return cause if isinstance(cause, BaseException) else StreamFailed(str(exc))
    if isinstance(exc, rex.RayActorError | rex.WorkerCrashedError | rex.NodeDiedError):
        return WorkerLost(f"a Ray worker was lost: {type(exc).__name__}")
    if isinstance(exc, rex.ObjectLostError):
        return WorkerLost(f"a result was lost with its Ray worker: {type(exc).__name__}")
    return exc


class RayExecutor(Executor):
    """Tasks as Ray tasks (one CPU each), streams as Ray actors (one CPU each)."""

    kind: ExecutorKind = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self._ray = import_ray()
        self._connected = connect(address)
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        self.slots = max(1, workers or cpus)
        self._remote: dict[Callable[..., Any], Any] = {}
        self._pending: dict[Future[Any], Any] = {}

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(fn).options(
                max_retries=TASK_RETRIES, retry_exceptions=False
            )
        ref = remote.remote(*args)
        outer: Future[T] = Future()
        self._pending[outer] = ref

        def settle(inner: Future[T]) -> None:
            self._pending.pop(outer, None)
            if outer.cancelled():
                return
            error = inner.exception()
            if error is None:
                outer.set_result(inner.result())
            else:
                outer.set_exception(_unwrapped(error))

        ref.future().add_done_callback(settle)
        return outer

    def stream(self, fn: StreamFunction, payload: Any) -> _ActorStream:
        return _ActorStream(self._ray, fn, payload)

    def close(self) -> None:
        for outer, ref in list(self._pending.items()):
            outer.cancel()
            with contextlib.suppress(Exception):  # already finished, or Ray is going away
                self._ray.cancel(ref, force=True)
        self._pending.clear()
        if self._connected and self._ray.is_initialized():
            self._ray.shutdown()
        self._connected = False


# -- streams as actors ------------------------------------------------------------------------
class _End:
    """Marks the end of a stream in an actor's queue."""


class _ActorChannel:
    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self._queue = queue
        self.callbacks: list[Callable[[], None]] = []
        self.stopped = False

    def send(self, item: Any) -> None:
        self._queue.put_nowait(item)

    def on_stop(self, callback: Callable[[], None]) -> None:
        self.callbacks.append(callback)
        if self.stopped:
            callback()

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            for callback in self.callbacks:
                callback()


class StreamActor:
    """Runs one stream function in the actor's event loop and yields what it sends."""

    def __init__(self) -> None:
        self._channel: _ActorChannel | None = None

    async def run(self, fn: StreamFunction, payload: Any) -> AsyncIterator[list[Any]]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        channel = self._channel = _ActorChannel(queue)
        work = asyncio.ensure_future(fn(payload, channel))
        work.add_done_callback(lambda _: queue.put_nowait(_End))
        finished = False
        while not finished:
            batch = [await queue.get()]
            while not queue.empty():
                batch.append(queue.get_nowait())
            finished = batch[-1] is _End
            items = [item for item in batch if item is not _End]
            if items:
                yield items
        work.result()  # the function's own exception, if it raised

    async def stop(self) -> None:
        if self._channel is not None:
            self._channel.stop()


_ACTOR: Any = None


def _actor_class(ray: Any) -> Any:
    global _ACTOR
    if _ACTOR is None:
        _ACTOR = ray.remote(num_cpus=1, max_restarts=0)(StreamActor)
    return _ACTOR


class _ActorStream:
    """The driver's end of a stream run by a :class:`StreamActor`."""

    def __init__(self, ray: Any, fn: StreamFunction, payload: Any) -> None:
        self._ray = ray
        self.actor = _actor_class(ray).remote()
        self._generator = self.actor.run.remote(fn, payload)

    async def batches(self) -> AsyncIterator[list[Any]]:
        import ray.exceptions as rex

        try:
            async for ref in self._generator:
                yield await ref
        except rex.RayError as exc:
            error = _unwrapped(exc)
            if isinstance(error, WorkerLost):
                raise error from None
            raise StreamFailed(f"{type(error).__name__}: {error}", str(exc)) from None

    def stop(self) -> None:
        self.actor.stop.remote()

    async def close(self) -> None:
        with contextlib.suppress(Exception):  # already gone
            self._ray.kill(self.actor)
