"""Keeping API keys out of every text this package writes or prints.

Every key a provider resolves is registered here, so :func:`redact` can remove it from
any text even when it does not look like a key; well-known key shapes are masked too,
for keys that reached a text without passing through this module. A key cut short before
the text reached :func:`redact` (a server that truncates its error body, a validation error
that abbreviates the value it quotes) no longer matches it: a fragment of a registered key
at least :data:`MIN_SECRET_LENGTH` characters long, its beginning or its end, is masked too.

This module imports nothing of the package, so the process pool, the shards and the CLI
redact an exception's text and traceback (:func:`redacted_error`,
:func:`redacted_traceback`) without importing the model layer.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Sequence

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "redact",
    "redact_cut",
    "redact_model_text",
    "redacted_error",
    "redacted_traceback",
    "register_secret",
]

REDACTED = "[REDACTED]"

# Shapes of credentials that may be echoed by a server or an SDK message.
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{6,}=*"),
    re.compile(
        r"(?i)((?:x-api-key|api[_-]?key|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
    ),
)

MIN_SECRET_LENGTH = 8
"""Values shorter than this are placeholders ("x", "none"), not secrets, and replacing them
everywhere would garble ordinary text: they are never masked (a configured key this short
is warned about once, see :func:`register_secret`)."""

_known_secrets: set[str] = set()
_warned_short = False


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that :func:`redact` removes it wherever it appears.

    A value shorter than :data:`MIN_SECRET_LENGTH` is not masked; the first one
    registered gets a one-line warning on stderr (never the value itself).
    """
    global _warned_short
    if not value:
        return
    if len(value) >= MIN_SECRET_LENGTH:
        _known_secrets.add(value)
    elif not _warned_short:
        _warned_short = True
        print(
            f"warning: an API key shorter than {MIN_SECRET_LENGTH} characters is not masked "
            "in logs, caches or records (too short to tell apart from ordinary text)",
            file=sys.stderr,
        )


def redact(text: str) -> str:
    """Return ``text`` with registered secrets, the fragments of them a cut can leave, and
    key-shaped strings masked: for what went wrong (error bodies, messages, tracebacks)."""
    return _masked(text, model_text=False)


def redact_model_text(text: str) -> str:
    """Return ``text`` with registered secrets and key-shaped strings masked, but not mere
    fragments: for what a model wrote, which the benchmark reads. A key's first or last
    eight characters can be ordinary words (a key "registered-..." and a record's "current
    certification register"), and masking them would change the colleagues' replies and the
    agents' answers; a model that repeats a key repeats it whole. For the same reason a
    key-shaped string ("authorization: ...", "bearer ...") is masked only where its value
    looks like a credential (16 characters or more, letters and digits)."""
    return _masked(text, model_text=True)


def _masked(text: str, model_text: bool) -> str:
    # Longest first, so a key that contains another registered key is masked whole.
    ordered = sorted(_known_secrets, key=len, reverse=True)
    for secret in ordered:
        text = text.replace(secret, REDACTED)
    if not model_text:
        text = _mask_fragments(text, ordered)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda match: _masked_match(match, strict=model_text), text)
    return text


def _masked_match(match: re.Match[str], strict: bool) -> str:
    """A key-shaped match masked (its label, "Bearer ", kept). ``strict`` (what a model
    wrote, which the benchmark reads) masks only a value shaped like a credential: a record's
    "Work authorization: approved" or "the bearer certificate" is a fact to pass on."""
    label = match.group(1) if match.groups() else ""
    value = match.group(0)[len(label) :]
    if strict and not _credential_like(value):
        return match.group(0)
    return label + REDACTED


def _credential_like(value: str) -> bool:
    """Long, with letters and digits: what generated keys and tokens are, and words, dates
    and amounts are not."""
    return len(value) >= 16 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mask_fragments(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every run that is a beginning or an end of one of ``secrets``, at least
    :data:`MIN_SECRET_LENGTH` characters long, masked: each place's longest run of each
    secret is found, and each stretch of text the runs cover, overlapping or adjacent, is
    masked once. All secrets' runs are found before any is masked: masked one secret at a
    time, a secret that begins (or ends) as a longer one does lost its run to the longer
    one's, cut where the two part (a key "register-4f9c..." and a key "registered-..." left
    "[REDACTED]-4" of "register-4", and two keys that start "sk-proj-" alike would leave the
    rest of one's fragment)."""
    runs: list[tuple[int, int]] = []
    for secret in secrets:
        head, tail = secret[:MIN_SECRET_LENGTH], secret[-MIN_SECRET_LENGTH:]
        position = text.find(head)
        while position >= 0:
            runs.append((position, position + _common_prefix(text, position, secret)))
            position = text.find(head, position + 1)
        position = text.find(tail)
        while position >= 0:
            end = position + MIN_SECRET_LENGTH
            runs.append((end - _common_suffix(text[:end], secret), end))
            position = text.find(tail, position + 1)
    if not runs:
        return text
    runs.sort()
    pieces: list[str] = []
    copied = 0  # the text before this is in ``pieces``
    masking_from, masking_to = runs[0]
    for start, end in runs:
        if start <= masking_to:  # (overlapping or adjacent: one stretch)
            masking_to = max(masking_to, end)
            continue
        pieces += [text[copied:masking_from], REDACTED]
        copied = masking_to
        masking_from, masking_to = start, end
    pieces += [text[copied:masking_from], REDACTED, text[masking_to:]]
    return "".join(pieces)


def _common_prefix(text: str, position: int, secret: str) -> int:
    length = 0
    while length < len(secret) and position + length < len(text):
        if text[position + length] != secret[length]:
            break
        length += 1
    return length


def _common_suffix(text: str, secret: str) -> int:
    length = 0
    while length < min(len(text), len(secret)) and text[-1 - length] == secret[-1 - length]:
        length += 1
    return length


def redact_cut(text: str, limit: int) -> str:
    """``text`` redacted, then cut to ``limit`` characters (in that order: a key cut in
    two first would no longer match it, and a short beginning would survive)."""
    return redact(text)[:limit]


def redacted_error(exc: BaseException) -> str:
    """``"<type>: <message>"`` of ``exc``, redacted."""
    return redact(f"{type(exc).__name__}: {exc}")


def redacted_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` (its chained causes too), redacted: a validation error quotes
    the value it rejected, and that value can be a key a server echoed."""
    return redact("".join(traceback.format_exception(exc)))
