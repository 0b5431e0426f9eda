"""Reading a group line gives the recorded outcome on mutated groups (tests/data/loading): the
same groups read, the same refused with the same one line, whatever the reader does to be
quick (the settings' reference checks run a fast pass first, and walk a group again to say
what is wrong only when it doubts it)."""

from __future__ import annotations

import functools
import gc
import runpy
from pathlib import Path

import pytest

from tests.recorded_outcomes import assert_outcomes_as_recorded, read_outcomes
from uncobench_z3.settings import TaskGroup

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/loading/record_refusals.py"))


@functools.cache
def _recorded() -> dict[str, str]:
    return read_outcomes(RECORDER)


def test_every_mutant_has_its_recorded_outcome() -> None:
    assert_outcomes_as_recorded(RECORDER["mutants"](), _recorded(), RECORDER["outcome"])


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


def test_groups_are_read_with_the_collector_paused_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uncobench_z3.construct import _benchfile, load_groups
    from uncobench_z3.errors import SpecReadError

    corpus = ROOT / "tests" / "data" / "followups" / "groups.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()[:3]
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bad.write_text("\n".join([*lines, "{"]) + "\n", encoding="utf-8")
    collecting: list[bool] = []
    parse = _benchfile.parse_group_line

    def watched(line: str, source: str) -> TaskGroup:
        collecting.append(gc.isenabled())
        return parse(line, source)

    monkeypatch.setattr(_benchfile, "parse_group_line", watched)
    try:
        for paused_before in (False, True):
            gc.enable()
            if paused_before:
                gc.disable()
            collecting.clear()
            assert len(load_groups(good)) == 3
            assert collecting == [False] * 3
            assert gc.isenabled() is not paused_before
            with pytest.raises(SpecReadError, match="not valid JSON"):
                load_groups(bad)
            assert collecting == [False] * 7 and gc.isenabled() is not paused_before
    finally:
        gc.enable()
