"""Keeping API keys out of logs, error messages and cache files.

The registry and :func:`redact` live in :mod:`uncobench_z3._secrets` (also used outside the
model layer); this module adds the package's logger, whose records are redacted too.
"""

from __future__ import annotations

import logging

from .._secrets import REDACTED, redact, redact_cut, register_secret

__all__ = ["REDACTED", "logger", "redact", "redact_cut", "register_secret"]


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
