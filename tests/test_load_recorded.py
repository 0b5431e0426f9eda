"""Reading a group line gives the recorded outcome on mutated groups (tests/data/loading): the
same groups read, the same refused with the same one line, whatever the reader does to be
quick (the settings' reference checks run a fast pass first, and walk a group again to say
what is wrong only when it doubts it)."""

from __future__ import annotations

import functools
import json
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/loading/record_refusals.py"))


@functools.cache
def _recorded() -> dict[str, str]:
    return json.loads(Path(RECORDER["OUTCOMES"]).read_text(encoding="utf-8"))


def test_every_mutant_has_its_recorded_outcome() -> None:
    mutants = RECORDER["mutants"]()
    recorded = _recorded()
    assert [name for name, _ in mutants] == list(recorded)
    differing = [
        (name, found)
        for name, line in mutants
        if (found := RECORDER["outcome"](line)) != recorded[name]
    ]
    assert not differing, differing[:3]


def test_the_recorded_outcomes_are_varied() -> None:
    outcomes = list(_recorded().values())
    read = [found for found in outcomes if found.startswith("read ")]
    assert len(read) >= 50 and len(outcomes) - len(read) >= 500
    for message in (
        "is not a candidate of the task",
        "is not a role of the task",
        "is not a fact of the task",
        "is not a fact of the role",
        "is not a context of the fact",
        "not a value of the fact",
        "a stated value has exactly one form",
        "a range needs both low and high",
        "no options",
        "appears twice",
    ):
        assert sum(message in found for found in outcomes) >= 3, message
