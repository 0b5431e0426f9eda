"""Structural validation: every problem at once, each with a JSON path and a code."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.spec import TaskSpec, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
MINING = json.loads((ROOT / "examples" / "mining_supervisor.json").read_text())


def problems_of(doc: dict[str, Any]) -> dict[str, list[str]]:
    report = check_structure(TaskSpec.model_validate(doc))
    found: dict[str, list[str]] = {}
    for problem in report.problems:
        assert problem.path.startswith("$")
        found.setdefault(problem.code, []).append(problem.path)
    return found


def mutate(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(MINING)
    doc.update(changes)
    return doc


def test_valid_example_has_no_problems() -> None:
    report = check_structure(load_spec(ROOT / "examples" / "mining_supervisor.json"))
    assert report.ok and report.task is not None
    assert report.task.candidates == ("vance", "natarajan", "ruiz")


def test_counts() -> None:
    doc = mutate(candidates=MINING["candidates"][:2])
    assert "candidate_count" in problems_of(doc)
    doc = mutate(conditions=MINING["conditions"][:4])
    assert list(problems_of(doc)) == ["condition_count"]


def test_conditions_must_spread_over_four_roles() -> None:
    doc = copy.deepcopy(MINING)
    for cond in doc["conditions"][3:]:
        cond["fact"] = "hardrock_years"
        cond["op"] = ">="
        cond["value"] = 1
    assert problems_of(doc)["condition_roles"] == ["$.conditions"]


def test_every_problem_reported_at_once() -> None:
    doc = copy.deepcopy(MINING)
    doc["conditions"][0]["fact"] = "nope"
    doc["facts"][0]["min"] = 50
    doc["records"][0]["value"] = "seventeen"
    doc["roles"].append({"id": "it", "name": "IT"})
    found = problems_of(doc)
    assert {"unknown_reference", "bad_domain", "role_without_facts"} <= set(found)
    assert found["unknown_reference"] == ["$.conditions[0].fact"]
    assert found["role_without_facts"] == ["$.roles[6]"]


def test_operator_must_fit_type() -> None:
    doc = copy.deepcopy(MINING)
    doc["conditions"][1]["op"] = ">="  # an enum compared by order
    assert problems_of(doc)["bad_operator"] == ["$.conditions[1].op"]


def test_enum_member_and_date_checks() -> None:
    doc = copy.deepcopy(MINING)
    doc["conditions"][1]["value"] = "cleared"
    doc["conditions"][2]["value"] = "next August"
    found = problems_of(doc)
    assert found["bad_value"] == ["$.conditions[1].value", "$.conditions[2].value"]


def test_step_grid_and_missing_values() -> None:
    doc = copy.deepcopy(MINING)
    for record in doc["records"]:
        if (
            record["fact"] == "relocation_grant"
            and record["candidate"] == "vance"
            and "context" not in record
        ):
            record["value"] = "45500"  # not a multiple of the 1000 step
    doc["records"] = [
        r for r in doc["records"] if not (r["candidate"] == "ruiz" and r["fact"] == "fitness")
    ]
    found = problems_of(doc)
    assert "out_of_domain" in found and "missing_value" in found


def test_unknown_context_and_duplicates() -> None:
    doc = copy.deepcopy(MINING)
    doc["records"].append(
        {"candidate": "vance", "fact": "clearance", "context": "June 2026", "value": "passed"}
    )
    doc["records"].append({"candidate": "vance", "fact": "fitness", "value": "fit"})
    doc["candidates"][1]["id"] = "vance"
    found = problems_of(doc)
    assert {"unknown_context", "duplicate_record", "duplicate_id"} <= set(found)


@pytest.mark.parametrize(
    ("operation", "operands", "unit", "code"),
    [
        ("sum", ["relocation_grant", "field_allowance"], "USD", "unit_mismatch"),
        ("difference", ["relocation_grant"], "AUD", "operand_count"),
        ("sum", ["relocation_grant", "clearance"], "AUD", "bad_operand"),
        ("ratio", ["relocation_grant", "hardrock_years"], "AUD/year", "zero_denominator"),
        ("percentage_of", ["relocation_grant", "field_allowance"], "AUD", "unit_mismatch"),
        ("weighted_average", ["relocation_grant", "field_allowance"], "AUD", "bad_weights"),
        ("sum", ["relocation_grant", "relocation_grant"], "AUD", "duplicate_id"),
    ],
)
def test_rule_checks(operation: str, operands: list[str], unit: str, code: str) -> None:
    doc = copy.deepcopy(MINING)
    doc["rule"] = {"operation": operation, "operands": operands, "label": "x", "unit": unit}
    assert code in problems_of(doc)


def test_product_units_multiply() -> None:
    doc = copy.deepcopy(MINING)
    doc["facts"][0]["unit"] = "AUD/year"
    doc["facts"][0]["min"] = 1
    doc["rule"] = {
        "operation": "product",
        "operands": ["hardrock_years", "field_allowance"],
        "label": "x",
        "unit": "AUD",
    }
    assert "unit_mismatch" in problems_of(doc)
    doc["facts"][6]["unit"] = "years"
    doc["rule"]["operands"] = ["hardrock_years", "relocation_grant"]
    doc["facts"][0]["unit"] = "AUD/year"
    doc["facts"][6]["unit"] = "years"
    doc["facts"][6]["step"] = "1"
    doc["facts"][6]["max"] = "50"
    doc["records"] = [r for r in doc["records"] if r["fact"] != "relocation_grant"]
    doc["records"] += [
        {"candidate": c, "fact": "relocation_grant", "value": 3}
        for c in ("vance", "natarajan", "ruiz")
    ]
    assert problems_of(doc) == {}
