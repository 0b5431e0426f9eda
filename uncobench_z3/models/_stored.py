"""Model text as stored in logs and traces: capped, with the whole text's length and digest.

A model can write megabytes in one turn (a server that ignores ``max_tokens``); a log line
must stay small. :func:`stored_text` keeps the first ``limit`` characters and, for the whole
text, its length and SHA-256, so two outputs can still be compared and a cut is visible.
Length and digest are those of :func:`uncobench_z3._textcap.text_digest`, which the cap on
every other stored string writes into its cut marker: the same text has the same digest in
both places.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from .._textcap import text_digest
from ._types import ModelOutput, StopReason

__all__ = [
    "DEFAULT_STORED_CHARACTERS",
    "StoredCall",
    "StoredOutput",
    "StoredText",
    "stored_text",
]

DEFAULT_STORED_CHARACTERS = 4000


class StoredText(BaseModel):
    """The first characters of a text, with the whole text's length and SHA-256 (UTF-8)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    length: int
    sha256: str

    @property
    def truncated(self) -> bool:
        return self.length > len(self.text)


def stored_text(text: str, limit: int = DEFAULT_STORED_CHARACTERS) -> StoredText:
    """``text`` capped at ``limit`` characters, with its length and digest."""
    length, digest = text_digest(text)
    return StoredText(text=text[:limit], length=length, sha256=digest)


class StoredCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    arguments: StoredText
    """the arguments exactly as the model wrote them (even when they are not JSON)"""


class StoredOutput(BaseModel):
    """What a model wrote in one turn, as a trace keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: StoredText | None = None
    tool_calls: tuple[StoredCall, ...] = ()
    stop_reason: StopReason = "stop"
    client_truncated: bool = False
    """the server went past ``max_tokens`` and the client stopped reading"""
    output_tokens: int = 0
    from_cache: bool = False

    @classmethod
    def of(cls, output: ModelOutput, limit: int = DEFAULT_STORED_CHARACTERS) -> StoredOutput:
        calls = tuple(
            StoredCall(
                function=call.function,
                arguments=stored_text(
                    call.raw_arguments
                    if call.raw_arguments is not None
                    else json.dumps(call.arguments),
                    limit,
                ),
            )
            for call in output.tool_calls
        )
        return cls(
            text=stored_text(output.text, limit) if output.text else None,
            tool_calls=calls,
            stop_reason=output.stop_reason,
            client_truncated=output.client_truncated,
            output_tokens=output.usage.output_tokens,
            from_cache=output.from_cache,
        )
