"""The reader reads the follow-up corpus as it did when its readings were recorded.

``tests/data/followups/readings.json`` holds a digest of each message's reading (every field
of ``request_json``, the evidence in the order it was noted), to its role with no candidate in
focus and with the group's first candidate in focus. A fast path that changes any reading -
a phrase missed, evidence noted in another order, a pronoun read where a name was - fails
here with the messages it reads otherwise. A deliberate change to the reader is recorded
again (``python tests/data/followups/record_readings.py``; see that file).
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/followups/record_readings.py"))


def test_every_reading_of_the_corpus_is_the_recorded_one() -> None:
    recorded = json.loads(Path(RECORDER["READINGS"]).read_text(encoding="utf-8"))
    now = RECORDER["reading_digests"]()
    assert now.keys() == recorded.keys()
    changed = [
        (name, number, which)
        for name, pairs in now.items()
        for number, (pair, was) in enumerate(zip(pairs, recorded[name], strict=True), 1)
        for which in (0, 1)
        if pair[which] != was[which]
    ]
    rows = {(name, number): row for name, number, row in RECORDER["corpus"]()}
    shown = [
        f"{name}:{number} ({'first candidate in focus' if which else 'no focus'}): "
        f"{rows[(name, number)]['message']!r}"
        for name, number, which in changed[:10]
    ]
    assert not changed, f"{len(changed)} readings changed, such as:\n" + "\n".join(shown)
    assert sum(len(pairs) for pairs in now.values()) == len(rows) > 5000
