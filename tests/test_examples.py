"""Every example verifies with its expected verdicts; every invalid example fails its way."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.solver import Verdict, verify_spec
from uncobench_z3.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
WELL_POSED = {
    "mining_supervisor": ("Appoint", "vance", "60000"),
    "semiconductor_packaging_contract": ("Award", "kestrel", "304800"),
    "healthcare_nurse_manager": ("Do not appoint", None, None),
    "aerospace_test_stand": ("Select", "woomera", "1000000"),
    "manufacturing_plant_selection": ("Select", "geelong", "46.67"),
}
# file -> (failing check kind, structural problem code or None)
INVALID = {
    "two_eligible": ("uniqueness", None),
    "unnecessary_role": ("necessity", None),
    "single_role_operands": ("structure", "operand_roles"),
    "unknown_fact": ("structure", "unknown_reference"),
    "zero_denominator": ("structure", "zero_denominator"),
    "value_out_of_domain": ("structure", "out_of_domain"),
    "unit_mismatch": ("structure", "unit_mismatch"),
}


@pytest.mark.parametrize("name", sorted(WELL_POSED))
def test_well_posed_example(name: str) -> None:
    report = verify_spec(load_spec(ROOT / "examples" / f"{name}.json"), evidence="full")
    assert report.verdict == Verdict.PROVED, [c.summary for c in report.checks]
    assert report.gold is not None
    decision, candidate, number = WELL_POSED[name]
    assert (report.gold.decision, report.gold.candidate, report.gold.number) == (
        decision,
        candidate,
        number,
    )
    kinds = [c.kind for c in report.checks]
    assert kinds.count("necessity") == len(load_spec(ROOT / "examples" / f"{name}.json").roles)
    for check in report.checks:
        if check.kind == "necessity":
            assert check.witness is not None and check.witness["outcome"]


def test_examples_cover_domains_and_operations() -> None:
    specs = [load_spec(ROOT / "examples" / f"{n}.json") for n in WELL_POSED]
    assert len({s.domain for s in specs}) >= 4
    assert len({s.rule.operation for s in specs}) >= 4


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_example(name: str) -> None:
    report = verify_spec(load_spec(ROOT / "examples" / "invalid" / f"{name}.json"))
    assert report.verdict == Verdict.REFUTED
    kind, code = INVALID[name]
    failing = [c for c in report.checks if c.verdict == Verdict.REFUTED]
    assert [c.kind for c in failing] == [kind]
    if code is not None:
        assert failing[0].problems is not None
        assert {p.code for p in failing[0].problems} == {code}


def test_unnecessary_role_is_explained_by_a_core() -> None:
    report = verify_spec(load_spec(ROOT / "examples" / "invalid" / "unnecessary_role.json"))
    check = next(c for c in report.checks if c.verdict == Verdict.REFUTED)
    assert check.role == "health"
    assert check.core and all("." in name for name in check.core)
    assert not any(name.endswith(".fitness") for name in check.core)


def test_two_eligible_witness_names_both() -> None:
    report = verify_spec(load_spec(ROOT / "examples" / "invalid" / "two_eligible.json"))
    check = next(c for c in report.checks if c.kind == "uniqueness")
    assert check.witness == {"eligible": ["vance", "natarajan"]}


def test_none_answer_uses_joint_necessity() -> None:
    report = verify_spec(load_spec(ROOT / "examples" / "healthcare_nurse_manager.json"))
    modes = {
        c.role: c.witness["mode"] for c in report.checks if c.kind == "necessity" and c.witness
    }
    assert modes["credentialing"] == "alone"
    assert modes["hr"] == "jointly" and modes["finance"] == "jointly"
