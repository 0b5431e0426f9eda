"""A built group stores its decision records' first changes (``proofs.decision_changes``):
the evidence judge reads them instead of searching each one on first use, and gets the same
completions and records; ``verify`` computes them again and refutes a changed one."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.cli_helpers import run_cli
from tests.test_eval_evidence import GROUPS, TASKS, traces
from tests.test_min_rounds_stored import _comparable, _records
from tests.test_min_rounds_stored import _without_stored as _without
from tests.test_min_rounds_stored import built as built  # (its fixture: the same build)
from uncobench_z3 import __version__
from uncobench_z3.construct import (
    BuildConfig,
    with_minimum_rounds_check,
)
from uncobench_z3.construct._rounds_check import stored_proofs_checks
from uncobench_z3.evaluation import (
    RoundRecord,
    decision_changes,
    settings_minimum_rounds,
    settings_stored_proofs,
    typed_task,
)
from uncobench_z3.evaluation._attribution import ATTRIBUTION_BUDGET, forget_group
from uncobench_z3.evaluation._completion import _UNKNOWN, TaskTables, differing_completion
from uncobench_z3.evaluation._evidence import FaceValueEvidence, evidence_by_round
from uncobench_z3.evaluation._evidence_judge import EvidenceJudge
from uncobench_z3.settings import TaskGroup, group_digest
from uncobench_z3.solver import Verdict, VerificationReport
from uncobench_z3.spec import Answer, TypedTask, Value


def _without_stored(group: TaskGroup) -> TaskGroup:
    return _without(group, "decision_changes")


def _index(values: list[Value], value: Value) -> int:
    return next(i for i, v in enumerate(values) if type(v) is type(value) and v == value)


def _plain_changes(task: TypedTask, gold: Answer) -> dict[str, dict[str, int | None]]:
    """The definition: for each decision record, the completion the plain search
    (``shortcuts=False``: every completion evaluated, nothing kept) finds when every other
    decision record is pinned at its true value, as an index into the fact's values to try."""
    tables = TaskTables(task)
    found: dict[str, dict[str, int | None]] = {}
    for slot in tables.decision_slots:
        exact = {s: task.values[s] for s in tables.decision_slots if s != slot}
        evidence = FaceValueEvidence(exact, (), (), None, None)
        completion = differing_completion(task, gold.to_outcome(), evidence, shortcuts=False)
        index = None if completion is None else _index(tables.tries(slot), completion[slot])
        found.setdefault(slot[0], {})[slot[1]] = index
    return found


def test_every_built_group_stores_the_plain_first_changes(built: list[TaskGroup]) -> None:
    changed = 0
    for group in built:
        assert group.proofs is not None and group.proofs.decision_changes is not None
        task = typed_task(group)
        plain = _plain_changes(task, group.gold)
        assert group.proofs.decision_changes == plain == decision_changes(task, group.gold)
        changed += sum(index is not None for facts in plain.values() for index in facts.values())
    assert changed  # (some record's change gives another output)


def test_the_decision_slots_are_the_task_slots_of_decision_facts_in_order() -> None:
    """(the order the first changes are searched and stored in)"""
    for task in TASKS:
        tables = TaskTables(task)
        wanted = tuple(s for s in task.all_slots() if s[1] in task.decision_facts())
        assert tables.decision_slots == wanted


def test_the_examples_first_changes_equal_the_plain_search() -> None:
    for task, group in zip(TASKS, GROUPS, strict=True):
        assert decision_changes(task, group.gold) == _plain_changes(task, group.gold)


def test_true_records_that_do_not_give_gold_store_nothing() -> None:
    task = TASKS[0]
    other = _other_answer(task)
    assert not other.to_outcome().same_output(task.outcome())
    assert decision_changes(task, other) is None


def _other_answer(task: TypedTask) -> Answer:
    """An answer the true records do not give."""
    if task.outcome().kind == "eligible":
        return Answer(decision="no", eligible=False)
    return Answer(decision="yes", eligible=True, candidate=task.candidates[0], number="1")


def test_a_judge_takes_stored_changes_as_the_proof_that_gold_is_the_truth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stored table is made only when the true records give gold (and verify refutes one
    whose recomputation finds they do not): a judge given one does not evaluate them again,
    and takes gold's output as theirs. A judge without one evaluates them, and an answer they
    do not give is not gold for it."""
    for task, group in zip(TASKS, GROUPS, strict=True):
        stored = decision_changes(task, group.gold)
        assert stored is not None
        plain = EvidenceJudge(task, group.gold, ATTRIBUTION_BUDGET)
        assert plain._gold_is_truth
        assert not EvidenceJudge(task, _other_answer(task), ATTRIBUTION_BUDGET)._gold_is_truth
        with monkeypatch.context() as patched:

            def not_again(self: TypedTask, values: object = None) -> None:
                raise AssertionError("the true records were evaluated again")

            patched.setattr(TypedTask, "outcome", not_again)
            judge = EvidenceJudge(task, group.gold, ATTRIBUTION_BUDGET, stored)
        assert judge._gold_is_truth and judge._truth == plain._truth


# one table per example task holding its stored first changes, read for every evidence after
# (as a group's judge holds them)
def _stored_tables(task: TypedTask, group: TaskGroup) -> tuple[TaskTables, object, object]:
    tables, gold, truth = TaskTables(task), group.gold.to_outcome(), task.outcome()
    stored = decision_changes(task, group.gold)
    assert stored is not None
    tables.store(gold, truth, stored)
    return tables, gold, truth


_STORED = [_stored_tables(task, group) for task, group in zip(TASKS, GROUPS, strict=True)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_stored_first_changes_find_the_plain_completion(
    case: tuple[int, list[RoundRecord]],
) -> None:
    """The tables holding the stored first changes give, for any evidence, the completion
    the plain search returns."""
    index, trace = case
    task = TASKS[index]
    tables, gold, truth = _STORED[index]
    for snapshot in evidence_by_round(task, trace):
        stored = differing_completion(task, gold, snapshot, truth=truth, tables=tables)  # type: ignore[arg-type]
        assert stored == differing_completion(task, gold, snapshot, shortcuts=False)  # type: ignore[arg-type]


def test_a_stored_entry_out_of_its_list_or_for_another_gold_is_searched() -> None:
    task, group = TASKS[0], GROUPS[0]
    tables, gold, truth = TaskTables(task), group.gold.to_outcome(), task.outcome()
    stored = decision_changes(task, group.gold)
    assert stored is not None
    slots = [(c, f) for c, facts in stored.items() for f in facts]
    wrong = {c: dict(facts) for c, facts in stored.items()}
    wrong[slots[0][0]][slots[0][1]] = 10**6
    del wrong[slots[1][0]][slots[1][1]]
    tables.store(gold, truth, wrong)
    assert tables.stored_change(slots[0]) is _UNKNOWN
    assert tables.stored_change(slots[1]) is _UNKNOWN
    assert tables.stored_change(("nobody", slots[2][1])) is _UNKNOWN
    assert tables.stored_change(slots[2]) is not _UNKNOWN
    tables.changes(gold.__class__("none"), truth)  # another gold: the stored table is let go
    assert tables.stored_change(slots[2]) is _UNKNOWN


def test_evaluation_reads_stored_changes_and_gets_the_same_records(
    built: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = _records([_without_stored(g) for g in built])
    stores, read = [], []
    real_store, real_read = TaskTables.store, TaskTables.stored_change

    def store(self: TaskTables, gold, truth, stored) -> None:  # type: ignore[no-untyped-def]
        stores.append(self.task.id)
        real_store(self, gold, truth, stored)

    def no_search(self: TaskTables, slot: tuple[str, str]) -> object:
        found = real_read(self, slot)
        assert found is not _UNKNOWN, f"the first change of {slot} was searched for again"
        read.append(slot)
        return found

    monkeypatch.setattr(TaskTables, "store", store)
    monkeypatch.setattr(TaskTables, "stored_change", no_search)
    for group in built:  # (judges an earlier test left in this process would be reused)
        forget_group(group_digest(group))
    assert _comparable(_records(built)) == _comparable(computed)
    assert sorted(stores) == sorted(g.spec.id for g in built)  # every group's judge read it
    assert read


def test_a_build_configuration_without_it_keeps_its_hash() -> None:
    config = BuildConfig(groups=3, seed=1, library="x", minimum_rounds=True)
    options = asdict(config)
    del options["decision_changes"]
    before = json.dumps({**options, "version": __version__}, sort_keys=True)
    assert config.digest() == hashlib.sha256(before.encode()).hexdigest()
    stored = BuildConfig(groups=3, seed=1, library="x", minimum_rounds=True, decision_changes=True)
    assert stored.digest() != config.digest()


def _lying(group: TaskGroup) -> TaskGroup:
    """``group`` with one stored first change moved to another value (or to none)."""
    assert group.proofs is not None and group.proofs.decision_changes is not None
    changed = {c: dict(facts) for c, facts in group.proofs.decision_changes.items()}
    facts = next(iter(changed.values()))
    fact, index = next(iter(facts.items()))
    facts[fact] = 0 if index is None else (None if index else 1)
    proofs = group.proofs.model_copy(update={"decision_changes": changed})
    return group.model_copy(update={"proofs": proofs})


def _changes_check(group: TaskGroup, compute: object) -> Verdict:
    checks = stored_proofs_checks(group, compute)  # type: ignore[arg-type]
    found = [c for c in checks if c.name == "decision-changes"]
    assert len(found) == 1
    return found[0].verdict


def test_verify_refutes_a_changed_first_change(built: list[TaskGroup]) -> None:
    group = built[0]
    assert _changes_check(group, settings_stored_proofs) == Verdict.PROVED
    lying = _lying(group)
    assert _changes_check(lying, settings_stored_proofs) == Verdict.REFUTED
    # the minimum rounds are checked by the same computation, and still proved
    rounds = [c for c in stored_proofs_checks(lying, settings_stored_proofs)
              if c.name == "minimum-rounds"]  # fmt: skip
    assert [c.verdict for c in rounds] == [Verdict.PROVED]
    # a computation that does not give the table cannot prove it
    assert _changes_check(lying, settings_minimum_rounds) == Verdict.UNKNOWN
    assert [
        c.name for c in stored_proofs_checks(_without_stored(group), settings_stored_proofs)
    ] == ["minimum-rounds"]
    report = VerificationReport(
        source="x", document="group", task_id=group.id, verdict=Verdict.PROVED, checks=[]
    )
    assert with_minimum_rounds_check(report, lying, settings_stored_proofs).verdict == (
        Verdict.REFUTED
    )
    assert with_minimum_rounds_check(report, group, settings_stored_proofs).verdict == (
        Verdict.PROVED
    )


def test_verify_refutes_a_table_kept_by_a_group_whose_true_records_no_longer_give_gold(
    built: list[TaskGroup],
) -> None:
    """An evaluation takes a stored table as the proof that the true records give gold (the
    judge does not evaluate them again): a group whose gold was edited after its build, its
    table kept, is refuted by verify."""
    group = built[0]
    edited = group.model_copy(update={"gold": _other_answer(typed_task(group))})
    checks = [
        c for c in stored_proofs_checks(edited, settings_stored_proofs)
        if c.name == "decision-changes"
    ]  # fmt: skip
    assert [c.verdict for c in checks] == [Verdict.REFUTED]
    assert "the true records do not give gold" in checks[0].summary


def test_a_group_that_cannot_be_computed_is_not_proved(built: list[TaskGroup]) -> None:
    def broken(group: TaskGroup, task: TypedTask | None = None) -> dict[str, int]:
        raise ValueError("no colleague can read this")

    assert _changes_check(built[0], broken) == Verdict.UNKNOWN


def test_cli_verify_refutes_an_edited_group_file(
    built: list[TaskGroup], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "group.json"
    path.write_text(built[1].model_dump_json())
    assert run_cli(capsys, "verify", str(path)).code == 0
    path.write_text(_lying(built[1]).model_dump_json())
    result = run_cli(capsys, "verify", str(path))
    assert result.code == 1
    assert "decision-changes" in result.out
