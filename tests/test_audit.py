"""Human audit support: rejected.jsonl from the build, sampling per stage, verdicts, agreement."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import (
    AUDIT_STAGES,
    GROUPS_FILE,
    MANIFEST_FILE,
    REJECTED_FILE,
    AuditItem,
    CandidateOutcome,
    audit_agreement,
    build_benchmark,
    process_candidate,
    read_audit,
    read_rejected,
    record_verdict,
    sample_audit,
    write_audit,
)
from uncobench_z3.construct import _pipeline as pipeline
from uncobench_z3.errors import ConfigError, SpecReadError
from uncobench_z3.stats import wilson_interval

GROUPS = 6
# candidate index modulo 5 -> the stage at which the stand-in pipeline rejects it
REJECT_AT = {1: "logical_verification", 3: "rendering_validation", 4: "spec_validation"}


@pytest.fixture(scope="module")
def with_rejections() -> Iterator[None]:
    """The real pipeline, except that some candidates are rejected at a given stage."""
    real = process_candidate

    def process(draft: Any, seed: int, index: int, *args: Any, **kwargs: Any) -> CandidateOutcome:
        stage = REJECT_AT.get(index % 5)
        if stage is None:
            return real(draft, seed, index, *args, **kwargs)
        return CandidateOutcome(
            index=index, domain=draft.domain, operation=draft.operation,
            scenario=draft.scenario_id, plan_none=draft.plan_none, retained=False,
            stage=stage, reason=f"{stage}: rejected for the test (candidate {index})",
        )  # fmt: skip

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "process_candidate", process)
        yield


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory, with_rejections: None) -> Path:
    out = tmp_path_factory.mktemp("audit") / "bench"
    build_benchmark(out, groups=GROUPS, seed=2, workers=1)  # in-process: the stand-in applies
    return out


def test_the_build_records_rejected_candidates(bench: Path) -> None:
    rejected = read_rejected(bench)
    assert rejected is not None
    manifest = json.loads((bench / MANIFEST_FILE).read_text())
    rates = manifest["stats"]["pass_rates"]
    assert [r.index for r in rejected] == sorted(r.index for r in rejected)
    assert len(rejected) == sum(rates["rejected"].values()) == rates["candidates"] - GROUPS
    for candidate in rejected:
        assert candidate.stage == REJECT_AT[candidate.index % 5]
        assert candidate.reason.endswith(f"(candidate {candidate.index})")
    groups = [json.loads(line) for line in (bench / GROUPS_FILE).read_text().splitlines()]
    kept = {group["provenance"]["index"] for group in groups}
    assert kept.isdisjoint(r.index for r in rejected)
    assert kept | {r.index for r in rejected} == set(range(rates["candidates"]))


def test_rejected_file_is_deterministic(bench: Path, tmp_path: Path, with_rejections: None) -> None:
    other = tmp_path / "again"
    build_benchmark(other, groups=GROUPS, seed=2, workers=1)
    for name in (REJECTED_FILE, GROUPS_FILE, MANIFEST_FILE):
        assert (other / name).read_bytes() == (bench / name).read_bytes()


def test_sample_draws_both_decisions_per_stage(bench: Path) -> None:
    rejected = read_rejected(bench) or []
    items, recorded = sample_audit(bench, per_stage=4, seed=0)
    assert recorded
    for stage in AUDIT_STAGES:
        chosen = [item for item in items if item.stage == stage]
        at_stage = sum(r.stage == stage for r in rejected)
        assert at_stage > 0
        n_rejected = sum(item.automated == "rejected" for item in chosen)
        assert n_rejected == min(at_stage, 2)
        assert len(chosen) - n_rejected == 4 - n_rejected  # the accepted fill the rest
        assert [i.item for i in chosen] == sorted(i.item for i in chosen)
        for item in chosen:
            assert item.human is None and item.note == ""
            if item.automated == "rejected":
                assert "rejected for the test" in item.reason
                assert set(item.material) == {"index", "domain", "operation", "scenario"}
            else:
                material = item.material
                assert material["task_text"] and material["records"] and material["gold"]
                assert ("spec" in material) == (stage == "spec_validation")
                assert ("proofs" in material) == (stage == "logical_verification")
    again, _ = sample_audit(bench, per_stage=4, seed=0)
    assert again == items
    other, _ = sample_audit(bench, per_stage=4, seed=1)
    assert [i.item for i in other] != [i.item for i in items]
    everything, _ = sample_audit(bench, per_stage=1000, seed=0)
    assert len(everything) == 3 * GROUPS + len(rejected)


def test_sample_lists_items_in_index_order_past_five_digits(bench: Path, tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for name in (GROUPS_FILE, MANIFEST_FILE):
        (big / name).write_bytes((bench / name).read_bytes())
    stage = "logical_verification"
    rejected = [
        {"index": index, "domain": "mining", "operation": "sum", "scenario": "s", "stage": stage,
         "reason": "rejected for the test"}
        for index in (99_999, 100_000)
    ]  # fmt: skip
    (big / REJECTED_FILE).write_text("".join(json.dumps(r) + "\n" for r in rejected))
    items, _ = sample_audit(big, per_stage=4, seed=0)
    indices = [item.material["index"] for item in items if item.stage == stage]
    assert indices == sorted(indices) and indices[-2:] == [99_999, 100_000]


def test_sample_without_rejected_file(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in (GROUPS_FILE, MANIFEST_FILE):
        (old / name).write_bytes((bench / name).read_bytes())
    out = tmp_path / "audit.jsonl"
    result = run_cli(capsys, "audit", "sample", str(old), "--per-stage", "3", "--out", str(out))
    assert result.code == 0, result.err
    assert f"no {REJECTED_FILE}" in " ".join(result.out.split())
    items = read_audit(out)
    assert len(items) == 9 and {item.automated for item in items} == {"accepted"}


def verdicts(path: Path) -> dict[str, AuditItem]:
    return {item.item: item for item in read_audit(path)}


def test_record_and_report_round_trip(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.jsonl"
    result = run_cli(capsys, "audit", "sample", str(bench), "--per-stage", "4", "--seed", "5",
                     "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    items = read_audit(out)
    spec = [i for i in items if i.stage == "spec_validation"]
    logic = [i for i in items if i.stage == "logical_verification"]
    accepted = [i.item for i in spec if i.automated == "accepted"]
    rejected = [i.item for i in spec if i.automated == "rejected"]
    assert len(accepted) == len(rejected) == 2
    # spec validation: 4 judged, 2 agree; one disagreement in each direction
    plan = [(accepted[0], "accept"), (accepted[1], "reject"), (rejected[0], "reject"),
            (rejected[1], "accept"), (logic[0].item, "reject")]  # fmt: skip
    for item, word in plan:
        result = run_cli(capsys, "audit", "record", str(out), item, word, "--note", f"n-{item}")
        assert result.code == 0, result.err
    # a second verdict replaces the first; a note is kept when none is given
    logic_human = "accepted" if logic[0].automated == "accepted" else "rejected"
    result = run_cli(capsys, "audit", "record", str(out), logic[0].item, logic_human[:6])
    assert result.code == 0 and "agrees with" in result.out
    recorded = verdicts(out)
    assert recorded[accepted[1]].human == "rejected"
    assert recorded[accepted[1]].note == f"n-{accepted[1]}"
    assert recorded[logic[0].item].human == logic_human
    assert recorded[logic[0].item].note == f"n-{logic[0].item}"
    assert recorded[accepted[0]].material == {i.item: i for i in items}[accepted[0]].material

    result = run_cli(capsys, "audit", "report", str(out), "--json")
    assert result.code == 0, result.err
    rows = {row["stage"]: row for row in json.loads(result.out)}
    assert list(rows) == [*AUDIT_STAGES, "all"]
    spec_row = rows["spec_validation"]
    assert (spec_row["items"], spec_row["judged"], spec_row["agreed"]) == (4, 4, 2)
    assert spec_row["agreement"] == "1/2"  # exact, as every figure
    assert tuple(map(Fraction, (spec_row["ci_low"], spec_row["ci_high"]))) == wilson_interval(2, 4)
    assert spec_row["rejected_but_human_accepted"] == [rejected[1]]
    assert spec_row["accepted_but_human_rejected"] == [accepted[1]]
    logic_row = rows["logical_verification"]
    assert (logic_row["judged"], logic_row["agreed"], logic_row["agreement"]) == (1, 1, "1")
    assert rows["rendering_validation"]["judged"] == 0
    assert rows["rendering_validation"]["agreement"] is None
    overall = rows["all"]
    assert (overall["items"], overall["judged"], overall["agreed"]) == (len(items), 5, 3)
    assert overall["agreement"] == "3/5"
    table = run_cli(capsys, "audit", "report", str(out))
    assert table.code == 0 and "50.0%" in table.out
    assert f"spec_validation: automated rejected, human accepted: {rejected[1]}" in table.out
    assert f"spec_validation: automated accepted, human rejected: {accepted[1]}" in table.out


def test_an_audit_with_verdicts_is_not_overwritten(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit.jsonl"
    items, _ = sample_audit(bench, per_stage=2)
    write_audit(out, items)
    write_audit(out, items)  # no verdict yet: replacing is harmless
    record_verdict(out, items[0].item, "accepted")
    with pytest.raises(ConfigError, match="human verdict"):
        write_audit(out, items)
    write_audit(out, items, force=True)
    assert all(item.human is None for item in read_audit(out))
    assert audit_agreement(read_audit(out))[-1].judged == 0


def test_an_empty_audit_file_is_written(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only verdicts are protected: an empty file (``touch``, ``mktemp``) was refused as an
    audit file that "holds no audit items; make some with `uncobench audit sample`"."""
    out = tmp_path / "audit.jsonl"
    out.write_text("")
    result = run_cli(capsys, "audit", "sample", str(bench), "--per-stage", "2", "--out", str(out))
    assert result.code == 0, result
    assert len(read_audit(out)) == len(sample_audit(bench, per_stage=2)[0])


def test_record_unknown_item(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.jsonl"
    write_audit(out, sample_audit(bench, per_stage=2)[0])
    result = run_cli(capsys, "audit", "record", str(out), "spec_validation:99999", "accept")
    assert result.code == 2 and str(out) in result.err and "no item" in result.err
    result = run_cli(capsys, "audit", "record", str(out), "spec_validation:99999", "maybe")
    assert result.code == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("", "holds no audit items"),
        ('{"item": "a", "stage": "spec_validation", "automated": "accepted", "reason": "r"}\n{oops',
         ":2: not valid JSON"),
        ('{"item": "a", "stage": "spec_validation", "automated": "maybe", "reason": "r"}',
         ":1: $.automated"),
        ('{"item": "a", "stage": "spec_validation", "automated": "accepted", "reason": "r"}\n'
         '{"item": "a", "stage": "spec_validation", "automated": "accepted", "reason": "r"}',
         ":2: $.item: item 'a' already appears on line 1"),
        ('[1, 2]', ":1: $"),
    ],
)  # fmt: skip
def test_bad_audit_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    path = tmp_path / "audit.jsonl"
    if content is not None:
        path.write_text(content)
    for args in (("report", str(path)), ("record", str(path), "a", "accept")):
        result = run_cli(capsys, "audit", *args)
        assert result.code == 2, result
        assert str(path) in result.err and expected in " ".join(result.err.split())
        assert "Traceback" not in result.err
    with pytest.raises(SpecReadError):
        read_audit(path)


def test_bad_benchmarks(bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "audit", "sample", str(tmp_path), "--out", str(tmp_path / "a.jsonl"))
    assert result.code == 2 and "not a built benchmark" in result.err
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in (GROUPS_FILE, MANIFEST_FILE):
        (broken / name).write_bytes((bench / name).read_bytes())
    (broken / REJECTED_FILE).write_text('{"index": 1, "domain": "x"}\n')
    result = run_cli(capsys, "audit", "sample", str(broken), "--out", str(tmp_path / "a.jsonl"))
    assert result.code == 2 and f"{REJECTED_FILE}:1" in result.err
    result = run_cli(capsys, "audit", "sample", str(bench), "--per-stage", "0",
                     "--out", str(tmp_path / "a.jsonl"))  # fmt: skip
    assert result.code == 2 and "--per-stage" in result.err


def test_record_reads_and_rewrites_under_the_files_lock(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three concurrent records on different items lost a verdict: each read the file, then
    rewrote it with its own change only. Read and rewrite now happen under a lock beside it,
    so a record waits for another, and one that cannot get the lock changes nothing."""
    from filelock import FileLock, Timeout

    from uncobench_z3.construct import _audit
    from uncobench_z3.errors import InputError

    out = tmp_path / "audit.jsonl"
    items, _ = sample_audit(bench, per_stage=2, seed=0)
    write_audit(out, items)
    lock_path = str(out.with_name(f".{out.name}.lock"))

    def held() -> None:  # another record holds the lock now
        with pytest.raises(Timeout):
            FileLock(lock_path).acquire(timeout=0)

    real_read, real_write = _audit._read_lines, _audit.write_text_atomic
    monkeypatch.setattr(_audit, "_read_lines", lambda p: (held(), real_read(p))[1])
    monkeypatch.setattr(_audit, "write_text_atomic", lambda p, t: (held(), real_write(p, t))[1])
    record_verdict(out, items[0].item, "accepted")
    monkeypatch.undo()
    before = out.read_text()
    monkeypatch.setattr(_audit, "RECORD_LOCK_WAIT", 0)
    with FileLock(lock_path), pytest.raises(InputError, match="stayed locked"):
        record_verdict(out, items[1].item, "accepted")
    assert out.read_text() == before
    record_verdict(out, items[1].item, "rejected")
    assert [i.human for i in read_audit(out)][:2] == ["accepted", "rejected"]
