"""Keeping API keys out of logs, error messages and cache files.

Every key a provider resolves is registered here, so :func:`redact` can remove it from
any text even when it does not look like a key; well-known key shapes are masked too,
for keys that reached a message without passing through this module.
"""

from __future__ import annotations

import logging
import re

__all__ = ["REDACTED", "logger", "redact", "register_secret"]

REDACTED = "[REDACTED]"

# Shapes of credentials that may be echoed by a server or an SDK message.
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/]{6,}=*"),
    re.compile(
        r"(?i)((?:x-api-key|api[_-]?key|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
    ),
)

# Values shorter than this are placeholders ("not-needed", "x"), not secrets, and
# replacing them everywhere would garble ordinary text.
_MIN_SECRET_LENGTH = 8

_known_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember ``value`` so that :func:`redact` removes it wherever it appears."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        _known_secrets.add(value)


def redact(text: str) -> str:
    """Return ``text`` with registered secrets and key-shaped strings masked."""
    # Longest first, so a key that contains another registered key is masked whole.
    for secret in sorted(_known_secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(
            lambda match: (match.group(1) if match.groups() else "") + REDACTED,
            text,
        )
    return text


class _RedactingFilter(logging.Filter):
    """Masks secrets in every record logged through this package's logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        return True


logger = logging.getLogger("uncobench_z3.models")
logger.addFilter(_RedactingFilter())
