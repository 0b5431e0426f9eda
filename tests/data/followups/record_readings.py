"""The reader's readings of the follow-up corpus, frozen: ``readings.json`` holds a digest of
every message's reading (``request_json``: every field, the evidence in the order it was
noted), to its role with no candidate in focus and with the group's first candidate in focus
(a pronoun reads as that one).

``tests/test_reader_readings.py`` reads the corpus again and compares. A deliberate change
to the reader changes some readings: look at them, then record the file again with
``python tests/data/followups/record_readings.py`` and say in the commit what changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
READINGS = HERE / "readings.json"


def corpus() -> Iterator[tuple[str, int, dict[str, object]]]:
    """(file name, line number, row) of every message of the corpus, in file order."""
    for path in sorted(HERE.glob("*.jsonl")):
        if path.name == "groups.jsonl":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield path.name, number, json.loads(line)


def reading_digests() -> dict[str, list[list[str]]]:
    """file name -> per line, [the digest with no focus, with the first candidate in focus]."""
    from uncobench_z3.construct import load_groups
    from uncobench_z3.evaluation import typed_task
    from uncobench_z3.settings import Vocabulary, read_request
    from uncobench_z3.settings._request import request_json

    tasks = {group.id: typed_task(group) for group in load_groups(HERE / "groups.jsonl")}
    digests: dict[str, list[list[str]]] = {}
    for name, _, row in corpus():
        task = tasks[str(row["group"])]
        vocabulary = Vocabulary.of(task)
        pair = []
        for focus in (None, next(iter(task.candidates))):
            request = read_request(vocabulary, str(row["message"]), str(row["role"]), focus)
            text = json.dumps(request_json(task, request), ensure_ascii=False)
            pair.append(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
        digests.setdefault(name, []).append(pair)
    return digests


def written(digests: dict[str, list[list[str]]]) -> str:
    """The file's text: one line per message (diffs then name the messages read otherwise)."""
    parts = []
    for name, pairs in digests.items():
        lines = ",\n".join(json.dumps(pair) for pair in pairs)
        parts.append(f"{json.dumps(name)}: [\n{lines}\n]")
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":
    READINGS.write_text(written(reading_digests()), encoding="utf-8")
    print(f"wrote {READINGS}")
