"""Test helpers: drive the real provider SDKs against a scripted HTTP transport.

No network and no key are needed::

    transport = ScriptedTransport("openai", [http_json(openai_completion(text="hi"))])
    model = get_model("openai/gpt-4.1-mini", api_key="sk-test", http_client=transport.client())
    output = await model.generate([ChatMessage.user("hello")])
    assert transport.requests[0].json["messages"][0]["content"] == "hello"

:class:`FaultServer` is a real HTTP endpoint (OpenAI-compatible, on 127.0.0.1) that serves
scripted faults - 429s, 5xx, hangs, resets, malformed bodies - for end-to-end tests.

Each SDK version expects its own flavour of ``httpx`` client (recent SDKs use the
``httpx2`` fork); :meth:`ScriptedTransport.client` builds whichever one it accepts.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, TypeAlias

from ._fault_server import Fault, FaultKind, FaultScript, FaultServer, openai_completion

__all__ = [
    "Fault",
    "FaultKind",
    "FaultScript",
    "FaultServer",
    "HTTPReply",
    "RecordedRequest",
    "SDKName",
    "ScriptedTransport",
    "anthropic_message",
    "http_error",
    "http_json",
    "http_raw",
    "http_stream",
    "openai_chunks",
    "openai_completion",
    "sdk_http_module",
]

SDKName: TypeAlias = Literal["openai", "anthropic"]


def sdk_http_module(sdk: SDKName) -> ModuleType:
    """The ``httpx``-like module whose ``AsyncClient`` the SDK ``sdk`` accepts."""
    sdk_module = importlib.import_module(sdk)
    default_client = getattr(sdk_module, "DefaultAsyncHttpxClient", None)
    for base in getattr(default_client, "__mro__", ()):
        package = base.__module__.split(".")[0]
        if package.startswith("httpx"):
            return importlib.import_module(package)
    return importlib.import_module("httpx")


@dataclass(frozen=True)
class HTTPReply:
    """A scripted response; ``error`` names a transport exception to raise instead;
    ``events`` makes it a server-sent event stream (each item one ``data:`` line); ``raw``
    is a body sent as it is (``text/plain``), JSON or not."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    events: tuple[Any, ...] | None = None
    raw: bytes | None = None


def http_raw(content: bytes, status: int = 200) -> HTTPReply:
    """A body that is not (necessarily) JSON, such as a proxy's HTML error page."""
    return HTTPReply(status=status, raw=content)


def http_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> HTTPReply:
    return HTTPReply(status=status, body=body, headers=dict(headers or {}))


def http_stream(events: Sequence[Any], done: bool = True) -> HTTPReply:
    """A streamed answer: each event JSON-encoded on a ``data:`` line, then ``[DONE]``."""
    return HTTPReply(events=(*events, "[DONE]") if done else tuple(events))


def http_error(
    status: int,
    message: str = "error",
    headers: dict[str, str] | None = None,
    error_type: str = "api_error",
) -> HTTPReply:
    """An error response shaped like both providers' error bodies."""
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return HTTPReply(status=status, body=body, headers=dict(headers or {}))


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    url: str
    headers: dict[str, str]
    json: Any


class ScriptedTransport:
    """Answers each request with the next scripted reply (or ``responder(request)``)."""

    def __init__(
        self,
        sdk: SDKName,
        replies: Sequence[HTTPReply] | Callable[[RecordedRequest], HTTPReply],
    ) -> None:
        self.http = sdk_http_module(sdk)
        self.requests: list[RecordedRequest] = []
        self._replies = replies

    def _handle(self, request: Any) -> Any:
        content = request.content
        recorded = RecordedRequest(
            method=request.method,
            url=str(request.url),
            headers={key.lower(): value for key, value in request.headers.items()},
            json=json.loads(content) if content else None,
        )
        self.requests.append(recorded)
        if callable(self._replies):
            reply = self._replies(recorded)
        else:
            index = len(self.requests) - 1
            if index >= len(self._replies):
                raise AssertionError(f"request {index + 1} was not scripted: {recorded.url}")
            reply = self._replies[index]
        if reply.error is not None:
            raise getattr(self.http, reply.error)("scripted transport error", request=request)
        if reply.events is not None:
            lines = [
                f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n"
                for event in reply.events
            ]
            return self.http.Response(
                reply.status,
                content="".join(lines).encode("utf-8"),
                headers={"content-type": "text/event-stream", **reply.headers},
            )
        if reply.raw is not None:
            return self.http.Response(
                reply.status,
                content=reply.raw,
                headers={"content-type": "text/plain", **reply.headers},
            )
        return self.http.Response(
            reply.status,
            content=json.dumps(reply.body).encode("utf-8"),
            headers={"content-type": "application/json", **reply.headers},
        )

    def client(self) -> Any:
        """An async HTTP client of the kind the SDK accepts, routed to this script."""
        return self.http.AsyncClient(transport=self.http.MockTransport(self._handle))


def openai_chunks(
    pieces: Sequence[str] = (),
    tool_call: tuple[str, str, Sequence[str]] | None = None,
    *,
    finish_reason: str | None = "stop",
    model: str = "gpt-test-2025-01-01",
    usage: tuple[int, int] | None = None,
) -> list[dict[str, Any]]:
    """The chunks of a streamed chat completion: one per text piece, or a tool call
    ``(id, name, argument_pieces)`` sent as a header chunk and one chunk per piece; then the
    finish reason (``None``: the stream ends without one), then ``usage`` if given."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": piece}) for piece in pieces]
    if tool_call is not None:
        call_id, name, arguments = tool_call
        header = {"index": 0, "id": call_id, "type": "function",
                  "function": {"name": name, "arguments": ""}}  # fmt: skip
        chunks.append(chunk({"tool_calls": [header]}))
        chunks += [
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in arguments
        ]
    if finish_reason is not None:
        chunks.append(chunk({}, finish_reason))
    if usage is not None:
        prompt, completion = usage
        chunks.append(
            {**chunk({}), "choices": [],
             "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                       "total_tokens": prompt + completion}}
        )  # fmt: skip
    return chunks


def anthropic_message(
    text: str | None = None,
    tool_uses: Sequence[tuple[str, str, dict[str, Any]]] = (),
    *,
    stop_reason: str | None = None,
    model: str = "claude-test-20250101",
    input_tokens: int = 13,
    output_tokens: int = 5,
) -> dict[str, Any]:
    """A Messages API body; ``tool_uses`` are ``(id, name, input_object)``."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    content.extend(
        {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        for call_id, name, arguments in tool_uses
    )
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
