"""The structure check gives the recorded outcome on mutated specs (tests/data/structure)."""

from __future__ import annotations

import functools
import json
import runpy
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/structure/record_outcomes.py"))


@functools.cache
def _mutants() -> list[tuple[str, Any]]:
    return RECORDER["mutants"]()


def test_every_mutant_has_its_recorded_outcome() -> None:
    recorded = json.loads(Path(RECORDER["OUTCOMES"]).read_text(encoding="utf-8"))
    mutants = _mutants()
    assert [name for name, _ in mutants] == list(recorded)
    differing = [
        (name, found)
        for name, spec in mutants
        if (found := RECORDER["outcome"](spec)) != recorded[name]
    ]
    assert not differing, differing[:3]


def test_the_recorded_outcomes_are_varied() -> None:
    recorded = json.loads(Path(RECORDER["OUTCOMES"]).read_text(encoding="utf-8"))
    typed = [found for found in recorded.values() if isinstance(found, str)]
    codes = {
        problem[1] for found in recorded.values() if isinstance(found, list) for problem in found
    }
    bounds = [name for name in recorded if " = " in name]
    assert len(typed) >= 300 and len(recorded) - len(typed) >= 300
    assert len(codes) >= 15 and {"bad_value", "bad_domain", "out_of_domain"} <= codes
    # equal bounds written otherwise: both accepted and refused ones
    assert {isinstance(recorded[name], str) for name in bounds} == {True, False}
