"""A built benchmark stores every group's content hash in its manifest; a reader uses them only
for the current hashing scheme and after computing a few of them again, and computes all of
them otherwise. The pins below are what ties a stored hash to the code that reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.construct import (
    DIGESTS_KEY,
    GROUPS_FILE,
    MANIFEST_FILE,
    _benchfile,
    build_benchmark,
    group_digests,
    load_benchmark,
    load_groups,
    verify_benchmark,
)
from uncobench_z3.construct._benchfile import DIGEST_CHECK
from uncobench_z3.evaluation import example_benchmark, settings_minimum_rounds
from uncobench_z3.settings import GROUP_DIGEST_SCHEME, group_digest
from uncobench_z3.solver import SolverBudget, Verdict, VerificationReport

ROOT = Path(__file__).resolve().parent.parent

# The content hashes of the stored example groups under GROUP_DIGEST_SCHEME 1. A change that
# moves them (a field added to a group, another serialiser) makes every hash a built benchmark
# stores wrong for the new code: raise GROUP_DIGEST_SCHEME (so those are computed again, not
# trusted), then update these pins.
PINNED = {
    "healthcare_nurse_manager.group.json": (
        "c91de4243fb8c152417394174456136289b923b9f7abf269a678c918aaab641d"
    ),
    "mining_supervisor.group.json": (
        "fbeb4d9f2f0e74586708390295a20edabb425049b5dc2d2b1cf027de65239a3d"
    ),
    "paper_appendix.group.json": "a5ea4a601478e88cc83f822bc0f02b633305d735e088ac6733700b551e78f60d",
}


def test_the_hashing_scheme_is_pinned() -> None:
    assert GROUP_DIGEST_SCHEME == 1
    found = {
        path.name: group_digest(load_groups(path)[0])
        for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
    }
    assert found == PINNED


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "b"
    build_benchmark(out, groups=6, seed=5, workers=1, minimum_rounds=settings_minimum_rounds)
    return out


def _copy_with_manifest(built: Path, tmp_path: Path, change: dict[str, object] | None) -> Path:
    """``built`` copied, with its manifest's digests entry replaced (None: removed); the groups
    file stays as it was, so the content hash still holds."""
    out = tmp_path / "copy"
    out.mkdir()
    (out / GROUPS_FILE).write_bytes((built / GROUPS_FILE).read_bytes())
    manifest = json.loads((built / MANIFEST_FILE).read_text())
    if change is None:
        del manifest[DIGESTS_KEY]
    else:
        manifest[DIGESTS_KEY] = change
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))
    return out


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def counted(group: object) -> str:
        calls.append(1)
        return group_digest(group)  # type: ignore[arg-type]

    monkeypatch.setattr(_benchfile, "group_digest", counted)
    return calls


def test_a_build_stores_every_groups_hash_in_file_order(built: Path) -> None:
    entry = json.loads((built / MANIFEST_FILE).read_text())[DIGESTS_KEY]
    groups = load_groups(built)
    assert entry == {"scheme": GROUP_DIGEST_SCHEME, "sha256": [group_digest(g) for g in groups]}


def test_the_stored_hashes_are_read_after_four_spot_checks(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    groups, digests = load_benchmark(built)
    assert digests == [group_digest(g) for g in groups]
    assert len(calls) == 4  # the first, the last and two between; not all 6


@pytest.mark.parametrize(
    "why",
    ["no entry", "another scheme", "one hash short", "a spot-checked hash wrong", "not a list"],
)
def test_hashes_that_cannot_be_trusted_are_computed(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, why: str
) -> None:
    stored = json.loads((built / MANIFEST_FILE).read_text())[DIGESTS_KEY]["sha256"]
    wrong_first = ["0" * 64, *stored[1:]]
    change: dict[str, object] | None = {
        "no entry": None,
        "another scheme": {"scheme": GROUP_DIGEST_SCHEME + 1, "sha256": stored},
        "one hash short": {"scheme": GROUP_DIGEST_SCHEME, "sha256": stored[:-1]},
        "a spot-checked hash wrong": {"scheme": GROUP_DIGEST_SCHEME, "sha256": wrong_first},
        "not a list": {"scheme": GROUP_DIGEST_SCHEME, "sha256": "x"},
    }[why]
    copy = _copy_with_manifest(built, tmp_path, change)
    calls = _counting(monkeypatch)
    groups, digests = load_benchmark(copy)
    assert digests == stored == [group_digest(g) for g in groups]
    assert len(calls) >= len(groups)  # every group hashed


def test_files_and_examples_give_their_hashes(tmp_path: Path) -> None:
    path = ROOT / "examples" / "groups" / "mining_supervisor.group.json"
    groups, digests = load_benchmark(path)
    assert digests == [PINNED["mining_supervisor.group.json"]]
    assert group_digests(groups) == digests  # no manifest: computed
    out = example_benchmark(tmp_path / "examples", groups=3)
    entry = json.loads((out / MANIFEST_FILE).read_text())[DIGESTS_KEY]
    assert entry["sha256"] == [group_digest(g) for g in load_groups(out)]


def _checks(report: VerificationReport, name: str) -> list[Verdict]:
    return [check.verdict for check in report.checks if check.name == name]


def test_verify_checks_every_stored_hash(built: Path, tmp_path: Path) -> None:
    reports = verify_benchmark(built, SolverBudget(), workers=1)
    manifest, groups = reports[0], reports[1:]
    assert _checks(manifest, "group-digests") == [Verdict.PROVED]
    assert all(_checks(report, DIGEST_CHECK) == [Verdict.PROVED] for report in groups)
    # a hash no spot check reads (the third of six: the checks read the first, second,
    # fourth and sixth): an evaluation would trust it, verify refutes that group alone
    stored = json.loads((built / MANIFEST_FILE).read_text())[DIGESTS_KEY]["sha256"]
    wrong = [*stored[:2], "0" * 64, *stored[3:]]
    copy = _copy_with_manifest(built, tmp_path, {"scheme": GROUP_DIGEST_SCHEME, "sha256": wrong})
    assert load_benchmark(copy)[1] == wrong  # (what the spot checks cannot catch)
    reports = verify_benchmark(copy, SolverBudget(), workers=2)
    verdicts = [_checks(report, DIGEST_CHECK) for report in reports[1:]]
    assert verdicts == [[Verdict.PROVED]] * 2 + [[Verdict.REFUTED]] + [[Verdict.PROVED]] * 3
    assert reports[3].verdict == Verdict.REFUTED and reports[0].verdict == Verdict.PROVED


@pytest.mark.parametrize("why", ["one hash short", "no entry"])
def test_verify_without_a_hash_for_every_group(built: Path, tmp_path: Path, why: str) -> None:
    stored = json.loads((built / MANIFEST_FILE).read_text())[DIGESTS_KEY]["sha256"]
    change = {"scheme": GROUP_DIGEST_SCHEME, "sha256": stored[:-1]} if why != "no entry" else None
    reports = verify_benchmark(_copy_with_manifest(built, tmp_path, change), SolverBudget(), 1)
    expected = [Verdict.REFUTED] if why == "one hash short" else []
    assert _checks(reports[0], "group-digests") == expected
    assert all(_checks(report, DIGEST_CHECK) == [] for report in reports[1:])
