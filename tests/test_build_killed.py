"""A build killed at any moment resumes with the same command, and a rerun never claims a
benchmark is built when its files are not the ones its manifest describes.

Chunks are processed once (the ``reference`` build) and replayed from memory afterwards, so
the many builds here cost little; the pipeline around them (folders, stamps, output files)
is the real one.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.kill_helpers import run_killed
from uncobench_z3._outdir import HOLDER_FILE, LOCK_FILE
from uncobench_z3.construct import GROUPS_FILE, MANIFEST_FILE, _pipeline, build_benchmark
from uncobench_z3.construct._candidate import CandidateOutcome
from uncobench_z3.construct._pipeline import BuildResult, build_config
from uncobench_z3.errors import ResumeError
from uncobench_z3.evaluation import settings_minimum_rounds
from uncobench_z3.spec import dump_json

GROUPS = 6
SEED = 11
REJECTED_FILE = "rejected.jsonl"
OUTPUTS = [GROUPS_FILE, MANIFEST_FILE, REJECTED_FILE]
FINISHED = sorted([LOCK_FILE, *OUTPUTS])
"""what a finished benchmark folder holds"""


def build(out: Path, **options: Any) -> BuildResult:
    """The command line's build (it stores minimum rounds), in this process."""
    return build_benchmark(
        out, groups=GROUPS, seed=SEED, workers=1, minimum_rounds=settings_minimum_rounds,
        **options,
    )  # fmt: skip


CLI_BUILD = ["build", "--groups", str(GROUPS), "--seed", str(SEED), "--workers", "1"]


@pytest.fixture(scope="module")
def processed() -> dict[int, list[CandidateOutcome]]:
    return {}


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, processed: dict[int, list[CandidateOutcome]]
) -> Path:
    out = tmp_path_factory.mktemp("killed") / "reference"
    real = _pipeline._process_chunk

    def remembered(drafts: list[Any], *args: Any) -> list[CandidateOutcome]:
        processed[drafts[0][0]] = real(drafts, *args)
        return list(processed[drafts[0][0]])

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_pipeline, "_process_chunk", remembered)
        build(out)
    return out


@pytest.fixture(autouse=True)
def replayed(
    monkeypatch: pytest.MonkeyPatch,
    reference: Path,
    processed: dict[int, list[CandidateOutcome]],
) -> None:
    monkeypatch.setattr(
        _pipeline, "_process_chunk", lambda drafts, *_: list(processed[drafts[0][0]])
    )


def finished_copy(reference: Path, out: Path) -> Path:
    out.mkdir()
    for name in OUTPUTS:
        shutil.copyfile(reference / name, out / name)
    return out


def assert_same_benchmark(out: Path, reference: Path) -> None:
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    assert sorted(path.name for path in out.iterdir()) == FINISHED


def stamp_text() -> str:
    config = build_config(GROUPS, SEED, minimum_rounds=True)
    return dump_json({"config_hash": config.digest(), "config": {}})


def test_a_build_killed_after_any_filesystem_step_resumes_with_the_same_command(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = 0
    while True:
        step += 1
        out = tmp_path / f"killed-{step}"
        if not run_killed(monkeypatch, step, build, out):
            break
        build(out)
        assert_same_benchmark(out, reference)
    assert step > 5  # (the build took that many steps: the states were visited)


def test_a_work_folder_without_its_stamp_or_chunks_is_a_fresh_start(
    reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "new"
    (out / ".work").mkdir(parents=True)  # a build killed before its stamp was written
    build(out)
    assert_same_benchmark(out, reference)


@pytest.mark.parametrize("left", ["empty", "chunks without stamp", "stamp and some chunks"])
def test_a_finished_benchmark_with_a_leftover_work_folder_is_already_built(
    reference: Path, tmp_path: Path, left: str
) -> None:
    out = finished_copy(reference, tmp_path / "bench")
    work = out / ".work"
    work.mkdir()
    if left != "empty":  # killed while the finished build removed its work folder
        (work / "chunk-00001.jsonl").write_text("{}\n")
    if left == "stamp and some chunks":
        (work / "config.json").write_text(stamp_text())
    result = build(out)
    assert result.reused
    assert_same_benchmark(out, reference)


def test_a_work_folder_killed_while_being_made_is_removed(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "new"
    scratch = out / ".work.abcd1234.tmp"  # made, stamped, not yet renamed into place
    scratch.mkdir(parents=True)
    (scratch / "config.json").write_text(stamp_text())
    build(out)
    assert_same_benchmark(out, reference)


@pytest.mark.parametrize("damage", ["cut", "missing"])
def test_a_damaged_groups_file_is_not_already_built(
    reference: Path, tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = finished_copy(reference, tmp_path / "bench")
    groups = out / GROUPS_FILE
    if damage == "cut":
        groups.write_bytes(groups.read_bytes()[:30000])
    else:
        groups.unlink()
    said = "is missing" if damage == "missing" else "does not match manifest.json"
    with pytest.raises(ResumeError, match=said):
        build(out)
    refused = run_cli(capsys, *CLI_BUILD, "--out", str(out), "--no-progress")
    assert refused.code == 2 and "--force" in refused.err and "Traceback" not in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    rebuilt = build(out, force=True)
    assert not rebuilt.reused
    assert_same_benchmark(out, reference)


def test_a_damaged_groups_file_is_rebuilt_from_a_work_folder_that_is_still_there(
    reference: Path, tmp_path: Path
) -> None:
    out = finished_copy(reference, tmp_path / "bench")
    (out / GROUPS_FILE).write_bytes((reference / GROUPS_FILE).read_bytes()[:30000])
    work = tmp_path / "interrupted"

    def stop(done: int, retained: int, wanted: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(work, progress=stop)
    shutil.copytree(work / ".work", out / ".work")
    assert not build(out).reused
    assert_same_benchmark(out, reference)


def test_a_rerun_removes_the_temporary_files_killed_writes_left_and_nothing_else(
    reference: Path, tmp_path: Path
) -> None:
    out = finished_copy(reference, tmp_path / "bench")
    ours = [
        ".groups.jsonl.abcd_123.tmp",
        ".manifest.json.zz9y8x7w.tmp",
        ".rejected.jsonl.a1b2c3d4.tmp",
        f".{HOLDER_FILE}.q1w2e3r4.tmp",
    ]
    theirs = [
        ".groups.jsonl.tmp",  # not named the way our writes name theirs
        "groups.jsonl.abcd1234.tmp",
        ".groups.jsonl.ABCD1234.tmp",
        ".groups.jsonl.abcd12345.tmp",
        ".notes.txt.abcd1234.tmp",  # named so, but not one of the build's files
        "notes.md",
    ]
    for name in ours + theirs:
        (out / name).write_text("x")
    (out / ".manifest.json.folder12.tmp").mkdir()  # a folder is never ours
    assert build(out).reused
    left = sorted(path.name for path in out.iterdir())
    assert left == sorted([*FINISHED, *theirs, ".manifest.json.folder12.tmp"])


def test_a_finished_benchmark_beside_another_configuration_s_work_keeps_both_until_force(
    reference: Path, tmp_path: Path
) -> None:
    out = finished_copy(reference, tmp_path / "bench")
    work = out / ".work"
    work.mkdir()
    (work / "config.json").write_text(dump_json({"config_hash": "another", "config": {}}))
    with pytest.raises(ResumeError, match="interrupted build with another configuration"):
        build(out)
    assert (work / "config.json").exists()
    assert build(out, force=True).reused  # the finished benchmark is kept
    assert_same_benchmark(out, reference)
