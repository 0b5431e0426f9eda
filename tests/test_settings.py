"""The paired settings: defects chosen with proofs, follow-up rules as data, group files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from tests.cli_helpers import run_cli
from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.settings import (
    SETTING_NAMES,
    DefectBalance,
    TaskGroup,
    is_targeted,
    missed_rule,
    perturb,
    stated_imprecision,
    stated_value,
    strategy_reading,
    verify_group,
)
from uncobench_z3.solver import Verdict, brute_force_differs
from uncobench_z3.spec import TaskSpec, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
WELL_POSED = sorted(p for p in (ROOT / "examples").glob("*.json"))


def assert_group_properties(spec: TaskSpec, seed: int) -> None:
    """The properties every produced group must have (used on examples and generated specs)."""
    result = perturb(spec, seed=seed)
    assert result.group is not None
    assert result.report.verdict == Verdict.PROVED
    group = result.group
    task = check_structure(spec).task
    assert task is not None
    alone = {
        c.role
        for c in result.report.checks
        if c.kind == "necessity" and c.witness and c.witness["mode"] == "alone" and c.role
    }
    assert [s.name for s in group.settings] == list(SETTING_NAMES)
    assert group.setting("reliable").available and not group.setting("reliable").defects
    for setting in group.settings:
        for defect in setting.defects:
            assert defect.role in alone  # never a role that is not necessary (alone)
            if defect.kind == "misaligned":
                assert defect.fact is not None
                for stated in defect.first_reply or []:
                    if stated.candidate in defect.candidates:
                        slot = (stated.candidate, stated.fact)
                        assert stated.context != task.facts[stated.fact].context
                        assert stated_value(task, stated) != task.values[slot]
                        assert task.alternatives[slot][stated.context] == stated_value(task, stated)
                        # independent check: exact evaluation with the wrong value differs
                        changed = task.outcome(task.with_values({slot: stated_value(task, stated)}))
                        assert not changed.same_output(task.outcome())
            if defect.kind == "incomplete":
                for stated in defect.first_reply or []:
                    if stated.candidate in defect.candidates:
                        slot = (stated.candidate, stated.fact)
                        fact = task.facts[stated.fact]
                        statement = stated_imprecision(task, stated)
                        assert statement.contains(fact, task.values[slot])
                        # a large domain is sampled; the statement's own bounds are always
                        # tried (a witness often sits on one: "55,000 to 70,000")
                        bounds = [b for b in (statement.low, statement.high) if b is not None]
                        # (each value once: a bound is in the domain too, and counted twice it
                        # made a gold-giving bound weigh double: seed 502837, draft 225)
                        allowed = list(dict.fromkeys(
                            v for v in [*bounds, *_bounded_domain(fact)]
                            if statement.contains(fact, v)
                        ))  # fmt: skip
                        brute = brute_force_differs(
                            task, task.outcome(), [slot], restrict={slot: allowed}
                        )
                        assert brute.status == "found"  # the answer is open under the reply
                        if fact.type in ("bool", "enum") or fact.domain_size() <= 5000:
                            # at most half of what the reply allows gives the gold answer
                            same = sum(
                                task.outcome(task.with_values({slot: v})).same_output(
                                    task.outcome()
                                )
                                for v in allowed
                            )
                            assert 2 * same <= len(allowed)
            if defect.kind == "missed":
                assert defect.first_reply is None and defect.missed_wait == 1
                assert defect.targeted_follow_up == missed_rule()
            for stated in defect.resolved_reply or []:
                assert stated_value(task, stated) == task.values[(stated.candidate, stated.fact)]
        if setting.name == "mixed" and setting.available:
            assert sorted(d.kind for d in setting.defects) == ["incomplete", "misaligned", "missed"]
            assert len({d.role for d in setting.defects}) == 3
            # the face-value reading leaves the answer open (brute force where small enough)
            reading = strategy_reading(task, "face-value", setting.defects)
            hidden = [s for s in task.all_slots() if s not in reading]
            fixed = {s: v for s, v in reading.items() if v != task.values[s]}
            brute = brute_force_differs(task, task.outcome(), hidden, fixed=fixed)
            assert brute.status in ("found", "undecided")
    # the full, correct evidence determines the gold answer in every setting
    assert group.gold.to_outcome().same_output(task.outcome())
    # the same seed gives the same group
    again = perturb(spec, seed=seed).group
    assert again is not None and again.model_dump_json() == group.model_dump_json()
    # and the group re-verifies from its data alone
    assert verify_group(group).verdict == Verdict.PROVED


def _bounded_domain(fact):  # type: ignore[no-untyped-def]
    if fact.type in ("bool", "enum") or fact.domain_size() <= 5000:
        return fact.domain_values()
    low, high = fact.code_range()
    step = max(1, (high - low) // 4000)
    return [fact.value_of(c) for c in range(low, high + 1, step)]


@settings(max_examples=12)
@given(st.sampled_from(WELL_POSED), st.integers(0, 10_000))
def test_every_produced_defect_is_proved_and_well_formed(path: Path, seed: int) -> None:
    assert_group_properties(load_spec(path), seed)


LIBRARY = load_library()


@settings(max_examples=20)
@given(st.integers(0, 2**20), st.integers(0, 400), st.booleans())
@example(502837, 225, True)  # (an Incomplete reply whose bound gives the gold answer)
def test_properties_hold_on_generated_instances(seed: int, index: int, plan_none: bool) -> None:
    draft = SpecGenerator(LIBRARY, seed).draft(index, plan_none)
    try:
        spec = instantiate(draft, seed)
    except InstantiationError:
        assume(False)
    result = perturb(spec, seed=seed)
    assume(result.group is not None)
    assert_group_properties(spec, seed)


def test_same_seed_same_group_different_seed_may_differ() -> None:
    spec = load_spec(ROOT / "examples/mining_supervisor.json")
    a = perturb(spec, seed=3).group
    b = perturb(spec, seed=3).group
    assert a is not None and b is not None
    assert a.model_dump_json() == b.model_dump_json()
    groups = {perturb(spec, seed=s).group.model_dump_json() for s in range(6)}  # type: ignore[union-attr]
    assert len(groups) > 1


def test_balance_spreads_defects_over_roles() -> None:
    spec = load_spec(ROOT / "examples/semiconductor_packaging_contract.json")
    balance = DefectBalance()
    roles = set()
    for seed in range(8):
        group = perturb(spec, seed=seed, balance=balance).group
        assert group is not None
        roles.add(group.setting("missed").defects[0].role)
    assert len(roles) >= 4  # the missed defect moves over the team instead of repeating


def test_no_eligible_candidate_has_no_mixed_setting() -> None:
    result = perturb(load_spec(ROOT / "examples/healthcare_nurse_manager.json"), seed=0)
    assert result.group is not None
    mixed = result.group.setting("mixed")
    assert not mixed.available and mixed.reason and "necessary alone" in mixed.reason
    assert "mixed" in result.unavailable
    for name in ("misaligned", "incomplete", "missed"):
        assert result.group.setting(name).available  # type: ignore[arg-type]


def test_ill_posed_spec_gives_no_group() -> None:
    result = perturb(load_spec(ROOT / "examples/invalid/unnecessary_role.json"))
    assert result.group is None and result.report.verdict == Verdict.REFUTED


def test_follow_up_rules() -> None:
    group = TaskGroup.model_validate_json(
        (ROOT / "examples/groups/mining_supervisor.group.json").read_text()
    )
    task = check_structure(group.spec).task
    assert task is not None
    defects = {d.kind: d for s in group.settings for d in s.defects}
    generic = "Could you double-check your records and send them again?"
    for kind in ("misaligned", "incomplete"):
        assert not is_targeted(task, defects[kind], generic)
    assert is_targeted(task, defects["missed"], generic)
    mis = defects["misaligned"]
    fact = task.facts[mis.fact or ""]
    assert is_targeted(task, mis, f"Please send the {fact.label} for the {fact.context}.")
    assert is_targeted(task, mis, f"That {fact.label} looks like a mismatch.")
    assert not is_targeted(task, mis, f"What about the {fact.label}?")
    inc = defects["incomplete"]
    inc_fact = task.facts[inc.fact or ""]
    assert is_targeted(task, inc, f"What is the EXACT {inc_fact.label.upper()}?!")
    assert not is_targeted(task, inc, "What is the exact figure?")


@pytest.mark.parametrize(
    ("name", "failing"),
    [
        ("misaligned_irrelevant", ["validity-misaligned-hr"]),
        ("incomplete_irrelevant", ["validity-incomplete-hr", "validity-incomplete-hr-chance"]),
        ("incomplete_untruthful", ["validity-incomplete-hr-records"]),
        ("incomplete_likely_gold", ["validity-incomplete-hr-chance"]),
        ("wrong_gold", ["gold-identical"]),
        ("floors_tampered", ["guessing-floors"]),
    ],
)
def test_invalid_group_examples_are_refuted(name: str, failing: list[str]) -> None:
    path = ROOT / "examples/groups/invalid" / f"{name}.group.json"
    group = TaskGroup.model_validate_json(path.read_text())
    report = verify_group(group)
    assert report.verdict == Verdict.REFUTED
    assert [c.name for c in report.checks if c.verdict == Verdict.REFUTED] == failing


@pytest.mark.parametrize(
    ("figures", "key", "check"),
    [
        ("gold_chances", "validity-incomplete-credentialing-chance", "gold-chances"),
        ("guessing_floors", "optimist", "guessing-floors"),
    ],
)
def test_verify_refuses_a_tampered_stored_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], figures: str, key: str, check: str
) -> None:
    """verify recomputes the gold chances and floors from the group's data: a copy whose stored
    figure was changed (here to a value still within the targets) is refused."""
    data = json.loads((ROOT / "examples/groups/healthcare_nurse_manager.group.json").read_text())
    stored = data["proofs"][figures]
    if figures == "gold_chances":
        assert stored[key] == "1/2"
        stored[key] = "1/3"
    else:
        assert stored[key]["reliable"] == "0"
        stored[key]["reliable"] = "1/3"
    path = tmp_path / "tampered.group.json"
    path.write_text(json.dumps(data))
    result = run_cli(capsys, "verify", str(path), "--json")
    assert result.code == 1
    (report,) = json.loads(result.out)["reports"]
    assert [c["name"] for c in report["checks"] if c["verdict"] == "refuted"] == [check]


@pytest.mark.parametrize(
    "path", sorted((ROOT / "examples/groups").glob("*.json")), ids=lambda p: p.stem
)
def test_group_examples_verify(path: Path) -> None:
    group = TaskGroup.model_validate_json(path.read_text())
    assert verify_group(group).verdict == Verdict.PROVED


def test_cli_perturb_then_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "group.json"
    result = run_cli(
        capsys,
        "perturb",
        str(ROOT / "examples/aerospace_test_stand.json"),
        "--out",
        str(out),
        "--quiet",
    )
    assert result.code == 0 and out.exists()
    checked = run_cli(capsys, "verify", str(out), "--json")
    assert checked.code == 0
    (doc,) = json.loads(checked.out)["reports"]
    assert doc["document"] == "group"
    validity = [c for c in doc["checks"] if c["kind"] == "validity"]
    assert {c["setting"] for c in validity} == {"misaligned", "incomplete", "missed", "mixed"}
    assert all(c["verdict"] == "proved" and c["witness"] for c in validity)
    certs = tmp_path / "certs"
    assert run_cli(capsys, "verify", str(out), "--emit-smt2", str(certs)).code == 0
    names = {p.stem for p in (certs / "aerospace_test_stand").glob("*.smt2")}
    assert any(n.startswith("validity-misaligned") for n in names)
    assert "validity-mixed-face-value" in names


def test_cli_perturb_refuses_ill_posed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "group.json"
    result = run_cli(
        capsys,
        "perturb",
        str(ROOT / "examples/invalid/two_eligible.json"),
        "--out",
        str(out),
        "--quiet",
    )
    assert result.code == 1 and not out.exists()
