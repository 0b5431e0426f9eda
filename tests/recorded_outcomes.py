"""Recorded outcomes of mutated inputs (tests/data/*/record_*.py): each recorder script makes
its mutants and their outcomes with the code of the day it was recorded; the tests check
that today's code gives every mutant the outcome recorded."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def read_outcomes(recorder: dict[str, Any]) -> dict[str, Any]:
    """The outcomes the recorder script (run with ``runpy.run_path``) wrote, by mutant name."""
    return dict(json.loads(Path(recorder["OUTCOMES"]).read_text(encoding="utf-8")))


def assert_outcomes_as_recorded(
    mutants: Sequence[tuple[str, Any]],
    recorded: dict[str, Any],
    outcome: Callable[[Any], Any],
) -> None:
    """Every mutant, in the recorded order, has the outcome recorded for it."""
    assert [name for name, _ in mutants] == list(recorded)
    differing = [
        (name, found) for name, item in mutants if (found := outcome(item)) != recorded[name]
    ]
    assert not differing, differing[:3]
