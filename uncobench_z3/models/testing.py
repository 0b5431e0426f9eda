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
    """A scripted response; ``error`` names a transport exception to raise instead."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def http_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> HTTPReply:
    return HTTPReply(status=status, body=body, headers=dict(headers or {}))


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
        return self.http.Response(
            reply.status,
            content=json.dumps(reply.body).encode("utf-8"),
            headers={"content-type": "application/json", **reply.headers},
        )

    def client(self) -> Any:
        """An async HTTP client of the kind the SDK accepts, routed to this script."""
        return self.http.AsyncClient(transport=self.http.MockTransport(self._handle))


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
