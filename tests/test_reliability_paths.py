"""Item 5 of issue 12: ids from data never choose where files go. Group ids are restricted by
the schema, and every output path built from data is checked to stay under its root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from uncobench_z3._outdir import contained
from uncobench_z3.errors import InputError
from uncobench_z3.evaluation import example_groups
from uncobench_z3.settings import TaskGroup

from .cli_helpers import run_cli


@pytest.fixture(scope="module")
def group() -> TaskGroup:
    return example_groups(limit=1)[0]


@pytest.mark.parametrize("bad", ["../../x", "/tmp/evil", "a/b", "..", ".hidden", "", "a\nb"])
def test_a_group_id_that_could_name_a_path_is_refused_with_one_line(
    group: TaskGroup, bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(group.model_dump_json(exclude_none=True))
    data["id"] = bad
    path = tmp_path / "work" / "group.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    emit = tmp_path / "work" / "smt"
    result = run_cli(capsys, "verify", str(path), "--emit-smt2", str(emit))
    assert result.code == 2 and "$.id" in result.err and "Traceback" not in result.err
    written = [p for p in tmp_path.rglob("*.smt2")]
    assert written == []


def test_a_good_group_id_writes_under_the_folder(
    group: TaskGroup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "group.json"
    path.write_text(group.model_dump_json(exclude_none=True), encoding="utf-8")
    result = run_cli(capsys, "verify", str(path), "--emit-smt2", str(tmp_path / "smt"))
    assert result.code == 0, result.err
    written = list((tmp_path / "smt").rglob("*.smt2"))
    assert written and all(p.parent.parent == tmp_path / "smt" for p in written)


def test_contained_refuses_every_way_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    assert contained(root, "task_1", "q.smt2") == root / "task_1" / "q.smt2"
    for parts in (("..", "x"), ("/etc/passwd",), ("a", "..", "..", "x"), (".",), ("",)):
        with pytest.raises(InputError, match="leaves the folder"):
            contained(root, *parts)
    os.symlink(tmp_path, root / "link")
    with pytest.raises(InputError, match="leaves the folder"):
        contained(root, "link", "x")
