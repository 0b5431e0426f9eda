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


def test_the_content_hash_of_the_bytes_read_is_the_hash_of_the_text(tmp_path: Path) -> None:
    """The reader hashes the bytes it decoded instead of encoding the text again: the same
    digest for any UTF-8 file (a byte order mark, CRLF ends, text beyond Latin-1 included)."""
    import hashlib

    from uncobench_z3.construct._benchfile import manifest_problems
    from uncobench_z3.spec import read_utf8_bytes

    (tmp_path / "manifest.json").write_text('{"content_hash": "x", "stats": {"groups": 2}}')
    file = tmp_path / "groups.jsonl"
    file.write_bytes('\ufeff{}\r\n\r\n  \n{"é": "日本 😀"}\n'.encode())
    data, text = read_utf8_bytes(file)
    assert data == file.read_bytes() and text == data.decode("utf-8")
    sha256 = hashlib.sha256(data).hexdigest()
    assert sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert manifest_problems(tmp_path, text, sha256=sha256, count=2) == manifest_problems(
        tmp_path, text
    )
    assert [name for name, _ in manifest_problems(tmp_path, text)[1]] == ["content-hash"]
