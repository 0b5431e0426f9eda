"""A fault-injection OpenAI-compatible server on 127.0.0.1, for tests and soak runs.

It answers ``POST /v1/chat/completions`` like a chat completions endpoint, so anything that
talks to ``openai-api/<service>/<model>`` can be pointed at it (``<SERVICE>_BASE_URL`` =
:attr:`FaultServer.base_url`). Each request gets a :class:`Fault` from a script (a list,
request by request, then ``ok``; or a function of the request number and body):

======================  ==========================================================
``ok``                  a valid completion from the responder
``rate_limit``          429 with ``Retry-After`` (seconds, may be fractional)
``server_error``        ``status`` (503 unless given; a 4xx is not retried) with an error body
                        (``body``, when given: any JSON, as a proxy may send)
``hang``                no answer for ``seconds`` (released when the server stops)
``reset``               the connection is closed with a TCP reset, no answer
``malformed``           200 whose body is not JSON
``empty_choices``       200 with ``"choices": []``
``invalid_tool_json``   200 with a tool call whose arguments are not JSON
``huge``                200 with a tool call of ``size`` characters of arguments
``context_length``      400 ``context_length_exceeded`` (what OpenAI sends)
======================  ==========================================================

The default responder answers every request that offers a ``submit_answer`` tool with a
call to it (``decision`` from :attr:`FaultServer.decision`, no candidate, no number), and
any other with the text ``ok``: deterministic, so a run against it has fixed results.
Standard library only (``http.server`` in a thread); :meth:`FaultServer.stop` (or leaving
the ``with`` block) shuts it down and releases hanging requests.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, TypeAlias

__all__ = ["Fault", "FaultKind", "FaultScript", "FaultServer", "openai_completion"]

FaultKind: TypeAlias = Literal[
    "ok",
    "rate_limit",
    "server_error",
    "hang",
    "reset",
    "malformed",
    "empty_choices",
    "invalid_tool_json",
    "huge",
    "context_length",
]


@dataclass(frozen=True)
class Fault:
    """What the server does with one request (see the module's table)."""

    kind: FaultKind = "ok"
    status: int = 503
    retry_after: float = 0.05
    seconds: float = 30.0
    size: int = 10_000_000
    body: Any = None


FaultScript: TypeAlias = Sequence[Fault] | Callable[[int, dict[str, Any]], Fault]
"""Faults request by request (then ``ok``), or ``script(request_number, body)`` (from 1)."""


def openai_completion(
    text: str | None = None,
    tool_calls: Sequence[tuple[str, str, str]] = (),
    *,
    finish_reason: str | None = None,
    model: str = "gpt-test-2025-01-01",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> dict[str, Any]:
    """A chat.completions body; ``tool_calls`` are ``(id, name, arguments_json_text)``."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in tool_calls
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _answer_call(arguments: str) -> dict[str, Any]:
    """A completion calling ``submit_answer`` with ``arguments`` (JSON text, or not)."""
    return openai_completion(tool_calls=[("call_1", "submit_answer", arguments)])


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


class FaultServer:
    """An OpenAI-compatible endpoint that misbehaves on cue; see the module docstring."""

    def __init__(
        self,
        script: FaultScript = (),
        responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        decision: str = "Reject",
    ) -> None:
        self.script = script
        self.decision = decision
        self.responder = responder or self._answer
        self.requests: list[dict[str, Any]] = []
        """the JSON body of every request, in arrival order"""
        self.faults: list[FaultKind] = []
        """the fault served to each request"""
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what to send ------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if "submit_answer" in _tool_names(body):
            arguments = {"decision": self.decision, "candidate": None, "number": None}
            return openai_completion(
                tool_calls=[("call_1", "submit_answer", json.dumps(arguments))]
            )
        return openai_completion(text="ok")

    def _fault_for(self, body: dict[str, Any]) -> Fault:
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            if callable(self.script):
                fault = self.script(number, body)
            else:
                fault = self.script[number - 1] if number <= len(self.script) else Fault()
            self.faults.append(fault.kind)
        return fault

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        if self._server is None:
            raise RuntimeError("the fault server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> str:
        """Listen on a free port of 127.0.0.1; returns :attr:`base_url`."""
        server = _QuietServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="fault-server", daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FaultServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-request (a killed run, a timeout) is routine here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode("utf-8"), headers)

        def _error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
            return {"error": {"message": message, "type": "fault", "code": code}}

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            fault = server._fault_for(body if isinstance(body, dict) else {})
            kind = fault.kind
            if kind == "ok":
                self._json(200, server.responder(body))
            elif kind == "rate_limit":
                self._json(429, self._error(429, "rate limited"),
                           {"retry-after": f"{fault.retry_after:g}"})  # fmt: skip
            elif kind == "server_error":
                error = self._error(fault.status, "the server broke")
                self._json(fault.status, error if fault.body is None else fault.body)
            elif kind == "hang":
                server._released.wait(fault.seconds)
                self.close_connection = True
            elif kind == "reset":
                # SO_LINGER with a zero timeout: close() sends a TCP reset, not a FIN
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()
            elif kind == "malformed":
                self._send(200, b"<html>this is not JSON {")
            elif kind == "empty_choices":
                data = openai_completion(text="x")
                data["choices"] = []
                self._json(200, data)
            elif kind == "invalid_tool_json":
                self._json(
                    200, openai_completion(tool_calls=[("call_1", "submit_answer", "{not json")])
                )
            elif kind == "huge":
                arguments = json.dumps({"decision": "x" * fault.size, "candidate": None,
                                        "number": None})  # fmt: skip
                self._json(
                    200, openai_completion(tool_calls=[("call_1", "submit_answer", arguments)])
                )
            elif kind == "context_length":
                self._json(400, self._error(
                    400,
                    "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 9000 tokens.",
                    "context_length_exceeded",
                ))  # fmt: skip

    return Handler
