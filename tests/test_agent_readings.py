"""The scripted colleagues read the built-in agents' messages (and mutants of them) as they did
when the readings were recorded (tests/data/readings/record_agent_readings.py): a fast path of
the reader that changes any reading - a match, a value, a phrase, the evidence's order - fails
here with the messages it reads otherwise."""

from __future__ import annotations

import runpy
from pathlib import Path

from tests.recorded_outcomes import assert_outcomes_as_recorded, read_outcomes

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/readings/record_agent_readings.py"))


def test_every_message_has_its_recorded_reading() -> None:
    assert_outcomes_as_recorded(RECORDER["mutants"](), read_outcomes(RECORDER), RECORDER["outcome"])


def test_the_recorded_readings_are_many_and_varied() -> None:
    recorded = read_outcomes(RECORDER)
    agents = [name for name in recorded if name.startswith("agent ")]
    assert len(agents) > 2000 and len(recorded) - len(agents) == RECORDER["MUTANTS"]
    assert len(set(recorded.values())) > 3000
