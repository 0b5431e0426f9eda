"""Helpers for tests that compare runs: records without their wall time, and an agent maker
whose worker process dies once mid-run."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from uncobench_z3.evaluation import SampleRecord, make_agent

__all__ = ["Killer", "comparable"]


def comparable(records: Iterable[SampleRecord]) -> list[str]:
    """Records as sorted JSON, without the wall time (the one field re-runs change)."""
    return sorted(
        json.dumps(r.model_dump(mode="json", exclude={"elapsed_seconds"}), sort_keys=True)
        for r in records
    )


class Killer:
    """Makes built-in agents; the worker process (a forked shard or a Ray actor) that makes its
    ``after``-th agent kills itself, once per run (a marker file remembers it did)."""

    def __init__(self, marker: Path, after: int) -> None:
        self.marker = marker
        self.after = after
        self.made = 0

    def __call__(self, name: str, seed: int) -> Any:
        self.made += 1
        if self.made == self.after and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return make_agent(name, seed)
