"""What a run did (:class:`RunSummary`), kept small: the records stay in the run's log.

A finished sample's record (its trace and round notes included) is tens of kilobytes in
memory; a run of thousands of samples that kept them all for its summary grew by hundreds of
megabytes while it ran. The summary keeps each sample's :class:`SampleOutcome` (key, group,
setting, agent, result, an error's message) and reads the full records back from
``samples.jsonl`` when asked (:meth:`RunSummary.iter_records` one at a time,
:attr:`RunSummary.records` all at once).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import UncobenchError
from ._runlog import SAMPLES_FILE
from ._sample import SampleRecord, SampleResult

if TYPE_CHECKING:  # the runner imports this module
    from ._plan import RunConfig


class SampleOutcome(NamedTuple):
    """What a summary keeps of one sample (its record stays in the log)."""

    key: str
    group_id: str
    setting: str
    agent: str
    result: SampleResult
    error: str | None = None
    """an error sample's message (what ``--max-errors`` reports when it stops a run)"""

    @classmethod
    def of(cls, record: SampleRecord) -> SampleOutcome:
        error = record.error.message if record.error is not None else None
        return cls(record.key, record.group_id, record.setting, record.agent, record.result, error)


@dataclass(repr=False)
class RunSummary:
    """What a run did. (Its repr is short on purpose: ``asyncio.run`` may format the result
    of its main task.)

    ``outcomes`` lists the run's samples in log order (those reused from an earlier run
    first); their records are read back from the log (module docstring).
    """

    out: Path
    config: RunConfig
    outcomes: list[SampleOutcome]
    ran: int
    reused: int
    unavailable: dict[str, list[str]] = field(default_factory=dict)
    errors: int = 0
    """error samples among the outcomes (model calls failed after retries; never scored)"""
    stopped: str | None = None
    """why the run stopped before every sample ran (too many error samples), if it did"""

    def __repr__(self) -> str:
        return f"RunSummary({str(self.out)!r}, records={len(self.outcomes)}, ran={self.ran})"

    @property
    def log(self) -> Path:
        return self.out / SAMPLES_FILE

    @property
    def agents(self) -> list[str]:
        """The run's agents, in the order its log first shows them."""
        return list(dict.fromkeys(outcome.agent for outcome in self.outcomes))

    def iter_records(self, traces: bool = True, agent: str | None = None) -> Iterator[SampleRecord]:
        """The run's records, read one at a time from its log, in log order; ``traces=False``
        leaves out each record's trace and round notes (most of its size: the metrics read
        neither); ``agent``: that agent's records only (the other lines are passed over
        without being parsed when their key, which a stored record starts with, says so).

        Raises :class:`UncobenchError` when the log no longer holds one of them (the folder
        was changed since the run: resumed with another configuration, or deleted)."""
        wanted = {o.key for o in self.outcomes if agent is None or o.agent == agent}
        if wanted:
            try:
                handle = self.log.open(encoding="utf-8")
            except OSError as exc:
                raise self._missing(len(wanted), f"cannot be read ({exc.strerror})") from None
            with handle:
                for line in handle:
                    if not wanted:
                        break
                    if not line.strip():
                        continue
                    leading = _LEADING_KEY.match(line)
                    if leading is not None and leading[1] not in wanted:
                        continue
                    try:
                        record = _parse(line, traces)
                    except ValueError:  # a torn last line, written after this run
                        continue
                    if record.key in wanted:
                        wanted.discard(record.key)
                        yield record.with_run_settings(
                            self.config.missed_wait, self.config.followup_reader
                        )
        if wanted:
            raise self._missing(len(wanted), "no longer holds them")

    @property
    def records(self) -> list[SampleRecord]:
        """Every record of the run, read from its log (each access reads it again: keep the
        list rather than asking twice)."""
        return list(self.iter_records())

    def _missing(self, count: int, why: str) -> UncobenchError:
        return UncobenchError(
            f"{self.log}: {count} record(s) of this run are missing: the log {why} (was the "
            "run folder changed since?)"
        )


_LEADING_KEY = re.compile(r'\{"key":"([0-9a-f]+)"')
"""the key a stored record's line starts with (its first field; a key is a hex digest)"""


def _parse(line: str, traces: bool) -> SampleRecord:
    if traces:
        return SampleRecord.model_validate_json(line)
    fields = json.loads(line)
    if not isinstance(fields, dict):
        raise ValueError("not a record")
    fields["trace"], fields["notes"] = [], []
    return SampleRecord.model_validate(fields)
