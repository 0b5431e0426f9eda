"""Procedural spec generation: valid, diverse, deterministic drafts from the library."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3._assets import asset_path
from uncobench_z3.construct._generate import Draft, DraftError, SpecGenerator
from uncobench_z3.construct._library import ScenarioLibrary, load_library
from uncobench_z3.spec import OPERATIONS, check_structure, spec_to_json


@lru_cache(maxsize=1)
def _library() -> ScenarioLibrary:
    return load_library()


def _drafts(seed: int, count: int, every_none: int = 4) -> list[Draft]:
    generator = SpecGenerator(_library(), seed)
    return [generator.draft(i, plan_none=i % every_none == 0) for i in range(count)]


def _condition_owners(draft: Draft) -> set[str]:
    owner = {f.key: f.owner for f in draft.spec.facts}
    return {owner[c.fact] for c in draft.spec.conditions}


def _assert_well_formed(draft: Draft) -> None:
    spec = draft.spec
    report = check_structure(spec)
    assert report.ok, report.problems
    assert not spec.records
    assert 5 <= len(spec.roles) <= 7
    assert 5 <= len(spec.conditions) <= 7
    assert len(_condition_owners(draft)) >= 4
    used = {c.fact for c in spec.conditions} | set(spec.rule.operands)
    assert {f.key for f in spec.facts} == used
    assert {r.id for r in spec.roles} == {f.owner for f in spec.facts}
    assert [c.id for c in spec.candidates] == ["c1", "c2", "c3"]
    assert len({c.name for c in spec.candidates}) == 3
    assert spec.rule.operation == draft.operation
    assert spec.domain == draft.domain
    assert "{" not in spec.question
    assert set(draft.hints) == {f.key for f in spec.facts}
    if draft.plan_none:
        assert _condition_owners(draft) == {r.id for r in spec.roles}


def test_two_hundred_drafts_are_valid_and_cover_every_pair() -> None:
    drafts = _drafts(7, 200)
    for draft in drafts:
        _assert_well_formed(draft)
    pairs = {(d.domain, d.operation) for d in drafts}
    assert len(pairs) == 14 * len(OPERATIONS)
    # the least-used pair comes first, so one pass over the grid reaches every pair
    assert len({(d.domain, d.operation) for d in drafts[:112]}) == 112


def test_domains_operations_and_scenarios_stay_balanced() -> None:
    drafts = _drafts(7, 224)
    assert set(Counter(d.operation for d in drafts).values()) == {28}
    assert set(Counter(d.domain for d in drafts).values()) == {16}
    per_scenario = Counter(d.scenario_id for d in drafts)
    assert len(per_scenario) == 42
    assert max(per_scenario.values()) - min(per_scenario.values()) <= 1


def test_recent_combinations_are_not_repeated() -> None:
    drafts = _drafts(7, 200)
    combos = [(d.scenario_id, d.operation, frozenset(r.id for r in d.spec.roles)) for d in drafts]
    for i, combo in enumerate(combos):
        assert combo not in combos[max(0, i - 20) : i]


def test_same_seed_same_specs_and_different_seeds_differ() -> None:
    first = [spec_to_json(d.spec) for d in _drafts(11, 60)]
    again = [spec_to_json(d.spec) for d in _drafts(11, 60)]
    other = [spec_to_json(d.spec) for d in _drafts(12, 60)]
    assert first == again
    assert first != other


def test_plan_none_drafts_give_every_role_a_condition() -> None:
    generator = SpecGenerator(_library(), 5)
    for i in range(120):
        draft = generator.draft(i, plan_none=True)
        assert draft.plan_none
        _assert_well_formed(draft)


def test_spec_ids_hints_and_condition_texts() -> None:
    generator = SpecGenerator(_library(), 3)
    draft = generator.draft(42)
    assert draft.spec.id == f"{draft.domain}_00042"
    for fact in draft.spec.facts:
        hint = draft.hints[fact.key]
        if fact.type in ("int", "decimal", "date"):
            assert hint.typical is not None
        else:
            assert hint.typical is None
        texts = [c.text for c in draft.spec.conditions if c.fact == fact.key]
        assert list(hint.conditions) == texts
    assert all(c.text for c in draft.spec.conditions)


def test_validate_counts_rejections_by_code() -> None:
    generator = SpecGenerator(_library(), 2)
    draft = generator.draft(0)
    assert generator.validate(draft) == []
    broken = Draft(
        spec=draft.spec.model_copy(update={"conditions": draft.spec.conditions[:2]}),
        scenario_id=draft.scenario_id,
        domain=draft.domain,
        operation=draft.operation,
        plan_none=True,
        hints=draft.hints,
    )
    codes = {p.code for p in generator.validate(broken)}
    assert "condition_count" in codes
    assert generator.rejections["condition_count"] == 1


def test_an_unusable_rule_raises_and_is_counted(tmp_path: Path) -> None:
    root = tmp_path / "generators"
    (root / "scenarios").mkdir(parents=True)
    shutil.copy(asset_path("generators") / "names.json", root / "names.json")
    data = json.loads((asset_path("generators") / "scenarios" / "mining.json").read_text())
    for scenario in data["scenarios"]:
        for rule in scenario["rules"]:
            if rule["operation"] == "ratio":
                # both operands of the first scenario's owner: a one-role rule everywhere
                same_owner = [f["key"] for f in scenario["facts"] if f["owner"] == "finance"]
                rule["operands"] = (same_owner or rule["operands"])[:2]
    data["scenarios"] = data["scenarios"][:1]
    (root / "scenarios" / "mining.json").write_text(json.dumps(data), encoding="utf-8")
    generator = SpecGenerator(load_library(root), 0)
    with pytest.raises(DraftError, match="mining/ratio"):
        for i in range(8):
            generator.draft(i)
    assert generator.rejections["operand_roles"] >= 1


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    plan=st.lists(st.booleans(), min_size=1, max_size=12),
    start=st.integers(min_value=0, max_value=99_000),
)
def test_any_seed_gives_well_formed_drafts(seed: int, plan: list[bool], start: int) -> None:
    generator = SpecGenerator(_library(), seed)
    for offset, plan_none in enumerate(plan):
        draft = generator.draft(start + offset, plan_none=plan_none)
        _assert_well_formed(draft)
        assert draft.spec.id.endswith(f"_{start + offset:05d}")
