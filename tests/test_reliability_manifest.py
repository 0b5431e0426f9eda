"""Item 3 of issue 12: every command that reads a built benchmark checks the manifest's content
hash and group count, and refuses a mismatch with one line and exit 2 before any file."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from uncobench_z3.construct import GROUPS_FILE, MANIFEST_FILE
from uncobench_z3.evaluation import example_benchmark

from .cli_helpers import one_line, reliable_run, run_cli


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("manifest") / "bench", groups=2)


@pytest.fixture(scope="module")
def run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reliable_run(bench, tmp_path_factory.mktemp("manifest-run") / "run")


def halved(bench: Path, target: Path, *, fix_hash: bool) -> Path:
    shutil.copytree(bench, target)
    lines = (target / GROUPS_FILE).read_text(encoding="utf-8").splitlines()
    text = lines[0] + "\n"
    (target / GROUPS_FILE).write_text(text, encoding="utf-8")
    if fix_hash:  # the count still gives it away
        manifest = json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
        manifest["content_hash"] = hashlib.sha256(text.encode()).hexdigest()
        (target / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return target


def commands(bench: Path, run: Path, tmp: Path) -> list[list[str]]:
    return [
        ["eval", str(bench), "--agent", "builtin/naive", "--out", str(tmp / "new-run"),
         "--no-progress"],
        ["stats", str(bench)],
        ["audit", "sample", str(bench), "--out", str(tmp / "audit.jsonl")],
        ["judge", str(run), "--bench", str(bench)],
    ]  # fmt: skip


@pytest.mark.parametrize("fix_hash", [False, True], ids=["hash", "count"])
def test_a_cut_benchmark_is_refused_by_every_reader(
    bench: Path, run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fix_hash: bool
) -> None:
    cut = halved(bench, tmp_path / "cut", fix_hash=fix_hash)
    for command in commands(cut, run, tmp_path):
        result = run_cli(capsys, *command)
        assert result.code == 2, (command, result.out, result.err)
        assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
        assert ("group count" if fix_hash else "content hash") in result.err, result.err
    assert not (tmp_path / "new-run").exists() and not (tmp_path / "audit.jsonl").exists()


def test_verify_reports_the_count_too(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = halved(bench, tmp_path / "cut", fix_hash=True)
    result = run_cli(capsys, "verify", str(cut), "--json")
    assert result.code == 1
    names = {
        c["name"]: c["verdict"] for r in json.loads(result.out)["reports"] for c in r["checks"]
    }
    assert names["content-hash"] == "proved" and names["group-count"] == "refuted"


def test_a_folder_without_manifest_is_not_a_benchmark(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(bench, tmp_path / "bare")
    (tmp_path / "bare" / MANIFEST_FILE).unlink()
    result = run_cli(capsys, "eval", str(tmp_path / "bare"), "--agent", "builtin/naive",
                     "--out", str(tmp_path / "r"), "--no-progress")  # fmt: skip
    assert result.code == 2 and "manifest" in result.err and not (tmp_path / "r").exists()
    # the groups file itself may still be named explicitly
    direct = run_cli(capsys, "eval", str(tmp_path / "bare" / GROUPS_FILE), "--agent",
                     "builtin/naive", "--out", str(tmp_path / "r"), "--no-progress",
                     "--limit", "1")  # fmt: skip
    assert direct.code == 0, direct.err


def test_report_refuses_stats_of_a_changed_benchmark(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    out = tmp_path / "run"
    assert run_cli(capsys, "eval", str(copy), "--agent", "builtin/naive", "--out", str(out),
                   "--no-progress", "--setting", "reliable").code == 0  # fmt: skip
    halved(bench, tmp_path / "cut", fix_hash=False)
    shutil.rmtree(copy)
    shutil.copytree(tmp_path / "cut", copy)
    result = run_cli(capsys, "report", str(out), "--out", str(tmp_path / "rep"), "--no-plots")
    assert result.code == 2 and "content hash" in result.err


@pytest.mark.parametrize(
    ("manifest", "said"), [({}, "missing"), ({"content_hash": 5}, "not a string")]
)
def test_a_manifest_without_a_content_hash_says_so(
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    manifest: dict,  # type: ignore[type-arg]
    said: str,
) -> None:
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    (copy / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    line = one_line(run_cli(capsys, "stats", str(copy)))
    assert f"holds no content hash of {GROUPS_FILE} (its content_hash is {said})" in line
    assert "None" not in line and "differs" not in line
