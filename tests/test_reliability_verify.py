"""Item 2 of issue 12: ``verify`` proves that the stored task text and record texts are what
the spec renders to, and that the full-information reader recovers gold from the stored text."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from uncobench_z3.construct import (
    DIGESTS_KEY,
    GROUPS_FILE,
    MANIFEST_FILE,
    build_benchmark,
    check_rendering,
    load_groups,
)
from uncobench_z3.settings import group_digest
from uncobench_z3.solver import Verdict

from .cli_helpers import run_cli


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "bench"
    build_benchmark(out, groups=2, seed=7, workers=1)
    return out


def tamper(bench: Path, target: Path, edit) -> None:  # type: ignore[no-untyped-def]
    """Copy ``bench`` to ``target`` with ``edit`` applied to the first group's rendered text,
    and the manifest's content hash and that group's stored hash recomputed (what a careful
    forger would do)."""
    shutil.copytree(bench, target)
    lines = (target / GROUPS_FILE).read_text(encoding="utf-8").splitlines()
    group = json.loads(lines[0])
    edit(group["rendered"])
    lines[0] = json.dumps(group, ensure_ascii=False, separators=(",", ":"))
    text = "".join(line + "\n" for line in lines)
    (target / GROUPS_FILE).write_text(text, encoding="utf-8")
    manifest = json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest["content_hash"] = hashlib.sha256(text.encode()).hexdigest()
    manifest[DIGESTS_KEY]["sha256"][0] = group_digest(load_groups(target / GROUPS_FILE)[0])
    (target / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def _lower_a_threshold(rendered: dict) -> None:  # type: ignore[type-arg]
    text = rendered["task_text"]
    match = re.search(r"\n1\. [^\n]*?(\d[\d,]*)", text)
    assert match is not None
    number = int(match[1].replace(",", ""))
    start, end = match.span(1)
    rendered["task_text"] = text[:start] + str(number + 1) + text[end:]


def _edit_a_record(rendered: dict) -> None:  # type: ignore[type-arg]
    role = next(iter(rendered["records"]))
    rendered["records"][role][0] = rendered["records"][role][0] + " (confirmed)"


def test_a_stored_text_as_rendered_is_proved(bench: Path) -> None:
    for group in load_groups(bench):
        check = check_rendering(group)
        assert check.verdict == Verdict.PROVED, check.summary


@pytest.mark.parametrize("edit", [_lower_a_threshold, _edit_a_record])
def test_verify_refuses_an_edited_text_even_with_a_recomputed_hash(
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit,  # type: ignore[no-untyped-def]
) -> None:
    forged = tmp_path / "forged"
    tamper(bench, forged, edit)
    clean = run_cli(capsys, "verify", str(bench))
    assert clean.code == 0, clean.out
    result = run_cli(capsys, "verify", str(forged), "--json")
    assert result.code == 1, result.out
    data = json.loads(result.out)
    failed = [
        check
        for report in data["reports"]
        for check in report["checks"]
        if check["verdict"] == "refuted"
    ]
    assert [c["name"] for c in failed] == ["rendering-identical"]
    assert "content-hash" not in {c["name"] for c in failed}  # the forger fixed the hashes


def test_verify_of_a_group_file_checks_its_text(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = json.loads((bench / GROUPS_FILE).read_text(encoding="utf-8").splitlines()[0])
    _lower_a_threshold(group["rendered"])
    path = tmp_path / "group.json"
    path.write_text(json.dumps(group), encoding="utf-8")
    result = run_cli(capsys, "verify", str(path))
    assert result.code == 1 and "rendering-identical" in result.out


@pytest.mark.parametrize("workers", [1, 2])
def test_the_first_bad_line_is_reported_whoever_reads_it(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Each batch reads its own lines (in a worker process with 2 workers): the error is the
    first bad line's, exactly as the parent's reader words it, for any number of workers."""
    from uncobench_z3.construct import _benchfile
    from uncobench_z3.errors import SpecReadError
    from uncobench_z3.solver import SolverBudget

    broken = tmp_path / "broken"
    shutil.copytree(bench, broken)
    good = (broken / GROUPS_FILE).read_text(encoding="utf-8").splitlines()
    group = json.loads(good[1])
    del group["spec"]["candidates"]  # a schema violation on line 3
    lines = [good[0], "", json.dumps(group), "{not json", good[1]]
    (broken / GROUPS_FILE).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(SpecReadError) as expected:
        _benchfile.iter_jsonl_groups(broken / GROUPS_FILE)
    assert expected.value.path.endswith(":3")
    monkeypatch.setattr(_benchfile, "VERIFY_BATCH", 1)  # one line a batch: 4 batches
    with pytest.raises(SpecReadError) as raised:
        _benchfile.verify_benchmark(broken, SolverBudget(), workers=workers)
    found = raised.value
    assert (str(found), found.path, found.json_path, found.detail) == (
        str(expected.value),
        expected.value.path,
        expected.value.json_path,
        expected.value.detail,
    )
