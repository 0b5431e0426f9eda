"""Caps on text that is stored (logs, traces), keeping a digest and the length of the whole.

A model (or a hostile server) can send megabytes where a sentence was expected; stored as it
is, a 10 MB tool argument became a 30 MB log line (it sits in the answer, the trace and the
score). Every string of a stored record is capped instead: a text longer than the limit keeps
its first ``limit`` characters followed by a marker that records the original length and the
SHA-256 of the whole text, so the stored line is bounded and the original can still be
recognised (or matched against a copy kept elsewhere)::

    <first limit characters>
    [... cut: 10000000 characters in all, sha256 4f2a...e1]

Capping happens when a record is *stored*, after the episode: what the agent and the
colleagues saw, and the score, are computed on the full text.

:func:`one_line` is for the other way such text leaves: printed on a terminal.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

__all__ = [
    "STORED_TEXT_LIMIT",
    "cap_strings",
    "cap_text",
    "cut_info",
    "one_line",
    "text_digest",
]

STORED_TEXT_LIMIT = 20_000
"""characters kept of any one stored string (a long colleague reply is a few thousand)"""

_MARKER = "\n[... cut: {chars} characters in all, sha256 {digest}]"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SPACED = frozenset("\r\n\t")
_MARKER_PATTERN = re.compile(r"\n\[\.\.\. cut: (\d+) characters in all, sha256 ([0-9a-f]{64})\]\Z")


def text_digest(text: str) -> tuple[int, str]:
    """``(length in characters, hex SHA-256 of the UTF-8 text)``."""
    return len(text), hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cap_text(text: str, limit: int = STORED_TEXT_LIMIT) -> str:
    """``text`` unchanged when it has at most ``limit`` characters; otherwise its first
    ``limit`` characters and the marker with the whole text's length and digest."""
    if len(text) <= limit:
        return text
    chars, digest = text_digest(text)
    return text[:limit] + _MARKER.format(chars=chars, digest=digest)


def cut_info(stored: str) -> tuple[int, str] | None:
    """``(original length, sha256)`` of a capped text, or ``None`` if it was not cut."""
    match = _MARKER_PATTERN.search(stored)
    return (int(match[1]), match[2]) if match else None


def cap_strings(data: Any, limit: int = STORED_TEXT_LIMIT) -> Any:
    """``data`` (JSON-like: dicts, lists, strings, scalars) with every string capped."""
    if isinstance(data, str):
        return cap_text(data, limit)
    if isinstance(data, dict):
        return {key: cap_strings(value, limit) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [cap_strings(value, limit) for value in data]
    return data


def one_line(text: str) -> str:
    """``text`` as one line of printable characters, for a terminal.

    An error's text can come from a server or a model (an HTTP error body, a value a
    validation error quotes): its escape sequences would reach the terminal raw (a colour, a
    window title, a cleared screen, an unterminated sequence that swallows what follows) and
    its line breaks would make one error several lines. Line breaks and tabs become spaces;
    every other control character is shown as its escape (``\\x1b``)."""
    return _CONTROL.sub(lambda m: " " if m[0] in _SPACED else f"\\x{ord(m[0]):02x}", text)
