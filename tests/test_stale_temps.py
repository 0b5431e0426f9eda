"""The temporary files of killed atomic writes are recognised exactly: what
``write_bytes_atomic`` leaves is removed, a user's file of any other name never is."""

from __future__ import annotations

import os
import re
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uncobench_z3.spec import (
    copy_file_atomic,
    remove_stale_temps,
    write_bytes_atomic,
    write_text_atomic,
)
from uncobench_z3.spec._io import stale_temp_target

NAMES = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=40,
).filter(lambda name: name not in (".", ".."))
RANDOM = st.text(string.ascii_lowercase + string.digits + "_", min_size=8, max_size=8)


@given(NAMES, RANDOM)
def test_a_temporary_name_maps_back_to_its_target(name: str, random: str) -> None:
    assert stale_temp_target(f".{name}.{random}.tmp") == name


@given(NAMES)
def test_names_the_writer_does_not_make_are_not_temporary(name: str) -> None:
    assert stale_temp_target(f".{name}.tmp") != name  # no random part
    assert stale_temp_target(f".{name}.ABCD1234.tmp") is None
    assert stale_temp_target(f".{name}.abcd123.tmp") is None
    assert stale_temp_target(f".{name}.abcd1234.txt") is None
    if not name.startswith("."):
        assert stale_temp_target(f"{name}.abcd1234.tmp") is None


def test_what_a_killed_write_leaves_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Killed(BaseException):
        pass

    def killed(*_: object) -> None:
        raise Killed

    write_text_atomic(tmp_path / "notes.md", "mine\n")
    with monkeypatch.context() as patched:  # killed before the rename; no cleanup ran
        patched.setattr(os, "replace", killed)
        patched.setattr(Path, "unlink", lambda *_, **__: None)
        for _ in range(2):
            with pytest.raises(Killed):
                write_bytes_atomic(tmp_path / "report.md", b"half")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 3 and all(stale_temp_target(n) == "report.md" for n in left[:2])
    assert remove_stale_temps(tmp_path, ["notes.md"]) == []  # another target's are kept
    removed = remove_stale_temps(tmp_path, [re.compile(r"report\.(md|html)")])
    assert len(removed) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_a_missing_folder_has_nothing_to_remove(tmp_path: Path) -> None:
    assert remove_stale_temps(tmp_path / "absent", ["run.json"]) == []


def test_a_copy_is_whole_or_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "samples.jsonl"
    source.write_bytes(b"".join(b'{"n": %d}\n' % n for n in range(50_000)))  # many buffers
    copy_file_atomic(source, tmp_path / "copy.jsonl")
    assert (tmp_path / "copy.jsonl").read_bytes() == source.read_bytes()

    def killed(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        copy_file_atomic(source, tmp_path / "other.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.jsonl", "samples.jsonl"]
