"""Error samples: how many a run tolerates, how they are counted, and how records are stored.

A sample whose model call fails after its retries (a 5xx that persists, a hang past
``--timeout``, a context-length error) is recorded as an *error sample*: ``status`` and
``result`` are ``error`` and ``error`` says why (class, message, attempts, HTTP status). It is
never scored - accuracy and every other metric leave it out (``SettingMetrics.errors``
counts them) - and :func:`error_counts` tells them apart by error type. The run goes on
until the errors exceed ``--max-errors`` (:class:`ErrorBudget`), then stops cleanly:
samples in flight finish, nothing new starts, and a resumed run tries the error samples
again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from .._textcap import STORED_TEXT_LIMIT, cap_strings
from ..errors import ConfigError
from ._metrics import is_error
from ._sample import SampleRecord

__all__ = ["ErrorBudget", "cap_record", "error_counts"]


@dataclass(frozen=True)
class ErrorBudget:
    """``--max-errors``: a count (``N``) or a share of the planned samples (``P%``)."""

    count: int | None = 0
    percent: Fraction | None = None

    @classmethod
    def parse(cls, text: str | int) -> ErrorBudget:
        raw = str(text).strip()
        try:
            if raw.endswith("%"):
                percent = Fraction(raw[:-1].strip())
                if not 0 <= percent <= 100:
                    raise ValueError
                return cls(count=None, percent=percent)
            count = int(raw)
            if count < 0:
                raise ValueError
            return cls(count=count)
        except (ValueError, ZeroDivisionError):
            raise ConfigError(
                f"--max-errors must be a count (0, 5) or a percentage of the samples (2%), "
                f"not {raw!r}"
            ) from None

    def allowed(self, planned: int) -> int:
        """Error samples tolerated in a run of ``planned`` samples (one more stops it)."""
        if self.percent is not None:
            return math.floor(self.percent * planned / 100)
        return self.count or 0

    def describe(self) -> str:
        return f"{self.percent}%" if self.percent is not None else str(self.count)


def error_counts(records: Iterable[SampleRecord]) -> dict[tuple[str, str], Counter[str]]:
    """``(agent, setting) -> Counter(error type)`` over the error samples."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for record in records:
        if is_error(record):
            kind = record.error.type if record.error is not None else "unknown"
            counts.setdefault((record.agent, record.setting), Counter())[kind] += 1
    return counts


def cap_record(record: SampleRecord) -> tuple[SampleRecord, str]:
    """``record`` as it is stored, with its log line: every string capped
    (:func:`uncobench_z3._textcap.cap_text`) when the line is long, else unchanged."""
    line = record.model_dump_json()
    if len(line) <= STORED_TEXT_LIMIT:  # no string inside can be longer than the line
        return record, line
    capped = SampleRecord.model_validate(cap_strings(record.model_dump(mode="json")))
    return capped, capped.model_dump_json()
