"""The scenario library: every file loads, covers every operation and yields valid specs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3._assets import asset_path
from uncobench_z3.construct._library import (
    ChosenCondition,
    ConditionTemplate,
    FactTemplate,
    assemble_spec,
    condition_text,
    load_library,
)
from uncobench_z3.construct._library_check import check_library, reference_conditions
from uncobench_z3.errors import SpecReadError
from uncobench_z3.spec import OPERATIONS, check_structure

DOMAINS = {
    "mining",
    "healthcare",
    "semiconductor_packaging",
    "aerospace_testing",
    "manufacturing",
    "logistics",
    "energy",
    "pharmaceuticals",
    "construction",
    "agriculture",
    "banking",
    "higher_education",
    "telecommunications",
    "maritime",
}


@pytest.fixture(scope="module")
def library_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pristine copy of the library folder; tests copy it again before editing."""
    target = tmp_path_factory.mktemp("lib") / "generators"
    shutil.copytree(asset_path("generators"), target)
    return target


def _edited_copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "generators"
    shutil.copytree(source, target)
    return target


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_asset_path_finds_the_repository_folder() -> None:
    folder = asset_path("generators")
    assert (folder / "names.json").is_file()
    assert (folder / "scenarios").is_dir()


def test_every_domain_file_loads_with_three_scenarios() -> None:
    library = load_library()
    assert set(library.domain_names) == DOMAINS
    for entry in library.domains:
        assert len(entry.scenarios) == 3, entry.domain
        assert library.sources[entry.domain].endswith(f"{entry.domain}.json")


def test_every_domain_and_scenario_covers_all_eight_operations() -> None:
    library = load_library()
    for entry in library.domains:
        for scenario in entry.scenarios:
            covered = {rule.operation for rule in scenario.rules}
            assert covered == set(OPERATIONS), scenario.id


def test_the_self_check_finds_no_problem() -> None:
    problems = check_library(load_library())
    assert problems == [], "\n".join(str(p) for p in problems)


def test_every_scenario_and_rule_builds_a_valid_spec() -> None:
    library = load_library()
    count = 0
    for entry, scenario in library.scenarios():
        names = library.names[scenario.candidate_kind][:3]
        for rule in scenario.rules:
            spec = assemble_spec(
                spec_id="check",
                domain=entry.domain,
                scenario=scenario,
                rule=rule,
                conditions=reference_conditions(scenario, rule),
                candidate_names=names,
            )
            report = check_structure(spec)
            assert report.ok, (scenario.id, rule.operation, report.problems)
            count += 1
    assert count == 14 * 3 * 8


def test_name_pools_are_large_and_distinct() -> None:
    names = load_library().names
    assert len(names["person"]) >= 150
    for kind, pool in names.items():
        assert len(pool) >= 12 and len(set(pool)) == len(pool), kind  # 220+ triples each
    every = [name for pool in names.values() for name in pool]
    assert len(set(every)) == len(every)  # a name says which pool (and domain) it is from


def test_every_role_owns_a_condition_fact_and_thresholds_can_fail() -> None:
    for _, scenario in load_library().scenarios():
        assert 7 <= len(scenario.roles) <= 9
        assert 10 <= len(scenario.facts) <= 16
        for role in scenario.roles:
            assert scenario.condition_facts(role.id), (scenario.id, role.id)


def test_adding_a_file_adds_a_domain(library_copy: Path, tmp_path: Path) -> None:
    root = _edited_copy(library_copy, tmp_path)
    data = _read(root / "scenarios" / "mining.json")
    data["domain"] = "quarrying"
    data["display_name"] = "Quarrying"
    for scenario in data["scenarios"]:
        scenario["id"] = "quarry_" + scenario["id"]
    _write(root / "scenarios" / "quarrying.json", data)
    names = _read(root / "names.json")
    for kind in {scenario["candidate_kind"] for scenario in data["scenarios"]} - {"person"}:
        names[kind]["domains"].append("quarrying")  # the new domain's pools say so
    _write(root / "names.json", names)
    library = load_library(root)
    assert "quarrying" in library.domain_names
    assert len(library.domains) == len(DOMAINS) + 1
    assert check_library(library) == []


def test_a_schema_violation_names_the_file_and_json_path(
    library_copy: Path, tmp_path: Path
) -> None:
    root = _edited_copy(library_copy, tmp_path)
    path = root / "scenarios" / "energy.json"
    data = _read(path)
    del data["scenarios"][1]["facts"][2]["context"]
    _write(path, data)
    with pytest.raises(SpecReadError) as info:
        load_library(root)
    assert info.value.path == str(path)
    assert info.value.json_path == "$.scenarios[1].facts[2].context"


def test_a_broken_reference_names_the_file_and_json_path(
    library_copy: Path, tmp_path: Path
) -> None:
    root = _edited_copy(library_copy, tmp_path)
    path = root / "scenarios" / "maritime.json"
    data = _read(path)
    data["scenarios"][0]["rules"][3]["operands"][1] = "no_such_fact"
    _write(path, data)
    with pytest.raises(SpecReadError) as info:
        load_library(root)
    assert info.value.path == str(path)
    assert info.value.json_path == "$.scenarios[0].rules[3].operands[1]"
    assert "no_such_fact" in str(info.value)


@pytest.mark.parametrize(
    ("edit", "json_path"),
    [
        (lambda d: d.update(domain="other"), "$.domain"),
        (
            lambda d: d["scenarios"][2].update(candidate_kind="robot"),
            "$.scenarios[2].candidate_kind",
        ),
        (  # a banking task naming haulage contractors
            lambda d: d["scenarios"][0].update(candidate_kind="mining_contractor"),
            "$.scenarios[0].candidate_kind",
        ),
        (
            lambda d: d["scenarios"][0]["facts"][1].update(owner="ghost"),
            "$.scenarios[0].facts[1].owner",
        ),
        (lambda d: d["scenarios"][0].update(colour="red"), "$.scenarios[0].colour"),
    ],
)
def test_integrity_errors_point_at_the_field(
    library_copy: Path, tmp_path: Path, edit: Any, json_path: str
) -> None:
    root = _edited_copy(library_copy, tmp_path)
    path = root / "scenarios" / "banking.json"
    data = _read(path)
    edit(data)
    _write(path, data)
    with pytest.raises(SpecReadError) as info:
        load_library(root)
    assert info.value.path == str(path)
    assert info.value.json_path == json_path


def test_invalid_json_names_the_file(library_copy: Path, tmp_path: Path) -> None:
    root = _edited_copy(library_copy, tmp_path)
    path = root / "scenarios" / "logistics.json"
    path.write_text('{"domain": "logistics",', encoding="utf-8")
    with pytest.raises(SpecReadError) as info:
        load_library(root)
    assert info.value.path == str(path)
    assert "not valid JSON" in str(info.value)


def test_a_missing_folder_is_reported(tmp_path: Path) -> None:
    with pytest.raises(SpecReadError, match="does not exist"):
        load_library(tmp_path)


def test_the_self_check_reports_quality_problems(library_copy: Path, tmp_path: Path) -> None:
    root = _edited_copy(library_copy, tmp_path)
    path = root / "scenarios" / "mining.json"
    data = _read(path)
    facts = data["scenarios"][0]["facts"]
    facts[0]["conditions"][0]["choices"] = [0, 12]  # 0 is the domain minimum: cannot fail
    data["scenarios"][0]["rules"] = data["scenarios"][0]["rules"][1:]  # drop "sum"
    sum_rule = data["scenarios"][1]["rules"][0]
    sum_rule["operands"] = ["mobilisation_fee", "technical_score"]  # AUD + points
    _write(path, data)
    problems = check_library(load_library(root))
    paths = {(p.path, p.message.split(":")[0]) for p in problems}
    assert all(p.source == str(path) for p in problems)
    assert ("$.scenarios[0].facts[0].conditions[0]", "choice 0 (0)") in paths
    assert any(p.path == "$.scenarios[0].rules" and "sum" in p.message for p in problems)
    assert any(
        p.path == "$.scenarios[1].rules[0]" and "unit" in p.message.lower() for p in problems
    )


def test_condition_texts_fill_the_template_or_a_default() -> None:
    fact = FactTemplate(
        key="years",
        owner="hr",
        label="years of experience",
        type="int",
        unit="years",
        min=0,
        max=40,
        context="verified history",
    )
    at_least = ConditionTemplate(op=">=", choices=[12], text="at least {value} years on site")
    between = ConditionTemplate(op="between", choices=[[5, 1500]], text="from {low} to {high}")
    plain = ConditionTemplate(op="<", choices=[3])
    assert condition_text(ChosenCondition(fact, at_least, 12)) == "at least 12 years on site"
    assert condition_text(ChosenCondition(fact, between, [5, 1500])) == "from 5 to 1,500"
    assert condition_text(ChosenCondition(fact, plain, 3)) == "years of experience below 3 years"
    enum_fact = FactTemplate(
        key="clearance",
        owner="security",
        label="clearance",
        type="enum",
        values=["passed", "failed", "pending"],
        context="March 2026",
    )
    member_of = ConditionTemplate(op="in", choices=[["passed", "pending"]])
    assert (
        condition_text(ChosenCondition(enum_fact, member_of, ["passed", "pending"]))
        == "clearance is one of passed, pending"
    )
