"""A built group stores each setting's minimum rounds; an evaluation reads them instead of
playing the ideal agent's episode, and gets the records it would have computed; ``verify``
computes them again and refutes a changed one."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.sample_helpers import typed_tasks_made
from uncobench_z3 import __version__
from uncobench_z3.construct import (
    BuildConfig,
    build_benchmark,
    load_groups,
    minimum_rounds_check,
    verify_benchmark,
    with_minimum_rounds_check,
)
from uncobench_z3.errors import ResumeError
from uncobench_z3.evaluation import (
    PreparedGroup,
    SampleRecord,
    _min_rounds,
    _prepared,
    group_digest,
    make_agent,
    make_config,
    plan_jobs,
    run_sample,
    settings_minimum_rounds,
    settings_stored_proofs,
)
from uncobench_z3.settings import TaskGroup
from uncobench_z3.solver import SolverBudget, Verdict, VerificationReport
from uncobench_z3.spec import TypedTask, check_structure

AGENTS = ["builtin/careful", "builtin/naive", "builtin/patient"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> list[TaskGroup]:
    out = tmp_path_factory.mktemp("bench") / "b"
    # as `uncobench build` builds (tests/test_decision_changes_stored.py reads these too)
    build_benchmark(out, groups=8, seed=5, workers=1, minimum_rounds=settings_stored_proofs)
    return load_groups(out)


def _without_stored(group: TaskGroup, stored: str = "minimum_rounds") -> TaskGroup:
    assert group.proofs is not None
    proofs = group.proofs.model_copy(update={stored: None})
    return group.model_copy(update={"proofs": proofs})


def _records(groups: list[TaskGroup]) -> list[SampleRecord]:
    jobs, _ = plan_jobs(groups, make_config("bench", groups, AGENTS))
    prepared = {id(g): PreparedGroup.of(g) for g in groups}

    async def play() -> list[SampleRecord]:
        return [
            await run_sample(
                job, lambda name, seed: make_agent(name, seed), prepared[id(job.group)]
            )
            for job in jobs
        ]

    return asyncio.run(play())


def _comparable(records: list[SampleRecord]) -> list[str]:
    # the groups differ by the stored figure, so their content hashes (and job keys) do
    drop = {"elapsed_seconds", "group_hash", "key"}
    return [json.dumps(r.model_dump(mode="json", exclude=drop), sort_keys=True) for r in records]


def test_every_available_setting_stores_a_minimum(built: list[TaskGroup]) -> None:
    for group in built:
        assert group.proofs is not None and group.proofs.minimum_rounds is not None
        available = {s.name for s in group.settings if s.available}
        assert set(group.proofs.minimum_rounds) <= available
        assert group.proofs.minimum_rounds == settings_minimum_rounds(_without_stored(group))
        # a fresh computation ignores what the group stores
        assert settings_minimum_rounds(group) == group.proofs.minimum_rounds
        # and gets the same with the typed task a caller made already (build, verify)
        task = check_structure(group.spec).task
        assert settings_minimum_rounds(group, task) == group.proofs.minimum_rounds
    reliable = {g.proofs.minimum_rounds.get("reliable") for g in built if g.proofs}
    assert reliable == {2}  # every role is necessary: one round of asking, then the answer


def test_evaluation_reads_stored_rounds_and_gets_the_same_records(
    built: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = _records([_without_stored(g) for g in built])
    assert any(r.min_rounds == 3 for r in computed) and all(r.min_rounds for r in computed)

    async def no_search(*args: object) -> int | None:
        raise AssertionError("a stored minimum was searched for again")

    monkeypatch.setattr(_min_rounds, "_search", no_search)
    assert _comparable(_records(built)) == _comparable(computed)


@pytest.mark.parametrize("stored", ["minimum_rounds", "decision_changes"])
def test_a_group_without_the_figure_keeps_its_content_hash(
    built: list[TaskGroup], stored: str
) -> None:
    bare = _without_stored(built[0], stored)
    text = bare.model_dump_json()
    assert stored not in text
    assert group_digest(bare) == hashlib.sha256(text.encode()).hexdigest()
    assert stored in built[0].model_dump_json()
    again = TaskGroup.model_validate_json(built[0].model_dump_json())
    assert again == built[0] and group_digest(again) == group_digest(built[0])


def test_a_build_configuration_without_it_keeps_its_hash() -> None:
    config = BuildConfig(groups=3, seed=1, library="x")
    options = asdict(config)
    del options["minimum_rounds"], options["decision_changes"]  # (both came later)
    before = json.dumps({**options, "version": __version__}, sort_keys=True)
    assert config.digest() == hashlib.sha256(before.encode()).hexdigest()
    assert BuildConfig(groups=3, seed=1, library="x", minimum_rounds=True).digest() != (
        config.digest()
    )


def test_verify_refutes_a_changed_minimum(built: list[TaskGroup]) -> None:
    group = built[0]
    assert group.proofs is not None and group.proofs.minimum_rounds is not None
    check = minimum_rounds_check(group, settings_minimum_rounds)
    assert check is not None and check.verdict == Verdict.PROVED
    changed = dict(group.proofs.minimum_rounds)
    changed["reliable"] = 3
    proofs = group.proofs.model_copy(update={"minimum_rounds": changed})
    lying = group.model_copy(update={"proofs": proofs})
    check = minimum_rounds_check(lying, settings_minimum_rounds)
    assert check is not None and check.verdict == Verdict.REFUTED
    assert "reliable 3" in check.summary and "reliable 2" in check.summary
    assert minimum_rounds_check(_without_stored(group), settings_minimum_rounds) is None
    report = VerificationReport(
        source="x", document="group", task_id=group.id, verdict=Verdict.PROVED, checks=[]
    )
    refuted = with_minimum_rounds_check(report, lying, settings_minimum_rounds)
    assert refuted.verdict == Verdict.REFUTED
    noted = with_minimum_rounds_check(report, lying, None)
    assert noted.verdict == Verdict.PROVED and "not re-checked" in noted.notes[-1]
    # the note names what the group stores (a built group: both)
    assert "minimum rounds and decision records' first changes" in noted.notes[-1]
    only_changes = group.proofs.model_copy(update={"minimum_rounds": None})
    noted = with_minimum_rounds_check(
        report, group.model_copy(update={"proofs": only_changes}), None
    )
    assert noted.notes[-1].startswith("the stored decision records' first changes were not")


def test_a_group_that_cannot_be_played_is_not_proved(built: list[TaskGroup]) -> None:
    def broken(group: TaskGroup, task: TypedTask | None = None) -> dict[str, int]:
        raise ValueError("no colleague can read this")

    check = minimum_rounds_check(built[0], broken)  # type: ignore[arg-type]
    assert check is not None and check.verdict == Verdict.UNKNOWN
    assert "no colleague can read this" in check.summary
    # stored rounds are checked however few (none of its settings settled), as on success
    assert built[0].proofs is not None
    none_settled = built[0].proofs.model_copy(update={"minimum_rounds": {}})
    group = built[0].model_copy(update={"proofs": none_settled})
    check = minimum_rounds_check(group, broken)  # type: ignore[arg-type]
    assert check is not None and check.verdict == Verdict.UNKNOWN


def test_cli_verify_refutes_an_edited_group_file(
    built: list[TaskGroup], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(built[1].model_dump_json())
    data["proofs"]["minimum_rounds"]["misaligned"] = 5
    path = tmp_path / "group.json"
    path.write_text(json.dumps(data))
    result = run_cli(capsys, "verify", str(path))
    assert result.code == 1
    assert "minimum-rounds" in result.out and "misaligned 5" in result.out


def test_a_solver_undecided_search_stores_nothing_and_verifies_unknown(
    built: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verdict the solver leaves undecided (a wall-clock timeout may decide it another time)
    is not "the careful agent cannot settle it": nothing is stored, and verify says unknown."""
    real = _min_rounds._search

    async def undecided_in_mixed(group: TaskGroup, setting: str, *args: object) -> int | None:
        if setting == "mixed":
            raise _min_rounds._SolverUndecided(setting)
        return await real(group, setting, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_min_rounds, "_search", undecided_in_mixed)
    group = next(g for g in built if any(s.name == "mixed" and s.available for s in g.settings))
    assert settings_minimum_rounds(group) is None
    check = minimum_rounds_check(group, settings_minimum_rounds)
    assert check is not None and check.verdict == Verdict.UNKNOWN
    # an evaluation that searches itself reads it as undecided, as before
    bare = _without_stored(group)
    found = asyncio.run(_min_rounds.minimum_rounds(bare, "mixed", "key-of-this-test"))
    assert found is None
    _min_rounds.forget_minimum_rounds("key-of-this-test")


def test_build_and_verify_hand_the_search_the_typed_task_they_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search does not check a group's structure again where its caller has (a build's
    proof, verify's structure check); a task of another spec is not used."""
    made = typed_tasks_made(monkeypatch, _prepared)
    out = tmp_path / "b"
    build_benchmark(out, groups=3, seed=5, workers=1, minimum_rounds=settings_minimum_rounds)
    reports = verify_benchmark(out, SolverBudget(), workers=1,
                               minimum_rounds=settings_minimum_rounds)  # fmt: skip
    assert all(r.verdict == Verdict.PROVED for r in reports)
    assert made == []
    first, second = load_groups(out)[:2]
    other = check_structure(second.spec).task
    assert first.proofs is not None
    assert settings_minimum_rounds(first, other) == first.proofs.minimum_rounds
    assert made == [first.id]  # the other spec's task was not used


def test_a_build_whose_search_is_undecided_stores_nothing(tmp_path: Path) -> None:
    def undecided(group: TaskGroup, task: TypedTask | None = None) -> None:
        return None

    build_benchmark(tmp_path / "b", groups=2, seed=5, workers=1, minimum_rounds=undecided)
    for group in load_groups(tmp_path / "b"):
        assert group.proofs is not None and group.proofs.minimum_rounds is None


def test_building_over_a_build_without_the_figure_names_the_difference(tmp_path: Path) -> None:
    out = tmp_path / "b"
    build_benchmark(out, groups=2, seed=5, workers=1)
    with pytest.raises(ResumeError, match="changed: minimum_rounds false -> true"):
        build_benchmark(out, groups=2, seed=5, workers=1, minimum_rounds=settings_minimum_rounds)
