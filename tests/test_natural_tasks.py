"""Tasks a domain expert would accept: candidates named from their domain's pools, money
answers a person believes, and grammar checked over a built benchmark (subject-verb
agreement on plural labels, units after 1, possessives, articles)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from uncobench_z3.construct import GROUPS_FILE, MANIFEST_FILE, build_benchmark, load_library
from uncobench_z3.construct._library import ScenarioLibrary
from uncobench_z3.construct._natural import naturalness_stats
from uncobench_z3.construct._text import (
    CONDITION_VERBS,
    PLURAL_CONDITION_VERBS,
    label_is_plural,
    possessive,
    singular_unit,
)

GROUPS = 60

#: Every plural label of the library, checked by hand: the oracle for agreement. A new
#: plural label makes test_every_label_has_its_grammatical_number fail until it is added.
PLURAL_LABELS = frozenset(
    [
        "additional residents covered indoors",
        "agreed teaching overload hours",
        "agreed working weeks per year",
        "annual fees and research costs",
        "batch certifications per year",
        "certified splicing crews",
        "committed commercial lots per year",
        "committed night shifts per year",
        "committed pallet positions",
        "continuing education hours in the last three years",
        "contracted annual hours",
        "contracted hours per month",
        "crane days in the erection programme",
        "days available in the charter window",
        "dialysis patients in the catchment",
        "diverse fibre routes available",
        "estimated days in dock",
        "existing customers within 15 minutes",
        "fees added to the loan",
        "flight test campaigns led",
        "flight test hours",
        "fundable capital works",
        "fundable enabling works",
        "funded fees and research costs",
        "good units after final test",
        "headers available",
        "homes passed committed in the first year",
        "incentive-funded enabling works",
        "licence penalty points",
        "loading dock doors",
        "meal plan meals per year",
        "months on the project",
        "no upheld research misconduct findings",
        "notifiable WHS incidents in the last three seasons",
        "on-call release rota weeks per year",
        "on-call weeks per year",
        "operators in the supervised team",
        "payment terms",
        "peer-reviewed publications since 2021",
        "planned annual flight hours",
        "planned vials",
        "projected additional patients by 2030",
        "projected annual scans",
        "projected dialysis patients in 2030",
        "qualified workers within 45 minutes",
        "recordable safety incidents in teams supervised in 2025",
        "reportable safety incidents in 2025",
        "research training support costs",
        "road opening permits approved at first submission",
        "rostered days on site",
        "scheduled annual hours",
        "scheduled night hours per year",
        "security documents executed and registered",
        "site working days per year",
        "substantiated clinical incidents",
        "subvisible particles of 10 micrometres or larger",
        "temperature cycles passed (JEDEC condition B)",
        "temporary housing days",
        "total mortgage fees",
        "turbines in the scope of the offer",
        "units lost in assembly and test",
        "units started",
        "vehicles in the managed fleet",
        "vials produced",
        "wages for the contract",
        "warehouse workers within 30 minutes",
        "years in command",
        "years of carrier network engineering experience",
        "years of control room experience",
        "years of critical care nursing experience",
        "years of experience as a Qualified Person",
        "years of farm management experience",
        "years of fleet management experience",
        "years of semiconductor packaging experience",
        "years of shop-floor supervisory experience",
        "years of site management experience",
        "years of underground hardrock experience",
        "years on tankers at senior rank",
        "years since the doctorate was awarded",
        "years trading",
    ]
)
SINGULAR_ONLY = set(CONDITION_VERBS) - set(PLURAL_CONDITION_VERBS)
PLURAL_ONLY = set(PLURAL_CONDITION_VERBS) - set(CONDITION_VERBS)


@pytest.fixture(scope="module")
def library() -> ScenarioLibrary:
    return load_library()


@pytest.fixture(scope="module")
def groups(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("natural") / "bench"
    build_benchmark(out, groups=GROUPS, seed=3, workers=2)
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    natural = manifest["stats"]["naturalness"]
    assert natural["names_off_domain"] == 0 and natural["money_answers_nonpositive"] == 0
    return [json.loads(line) for line in (out / GROUPS_FILE).read_text().splitlines()]


def labels_of(library: ScenarioLibrary) -> set[str]:
    labels = set()
    for _, scenario in library.scenarios():
        labels |= {fact.label for fact in scenario.facts}
        labels |= {rule.label for rule in scenario.rules}
    return labels


def test_every_label_has_its_grammatical_number(library: ScenarioLibrary) -> None:
    labels = labels_of(library)
    assert labels >= PLURAL_LABELS, "the oracle names labels the library no longer has"
    wrong = {label for label in labels if label_is_plural(label) != (label in PLURAL_LABELS)}
    assert wrong == set()


def test_small_grammar_helpers() -> None:
    assert possessive("Marcus Vance") == "Marcus Vance's"
    assert possessive("Steelspan Structures") == "Steelspan Structures'"
    units = ("years", "incidents", "AUD/day", "ppm", "per 100000 hours")
    assert [singular_unit(u) for u in units] == ["year", "incident", *units[2:]]


def test_every_scenario_names_candidates_of_its_domain(library: ScenarioLibrary) -> None:
    for entry, scenario in library.scenarios():
        assert library.fits(scenario.candidate_kind, entry.domain), scenario.id
    # people fit anywhere; a haulage contractor does not fit a bank
    assert library.off_domain_names("banking", ["Marcus Vance", "Ironbark Haulage"]) == [
        "Ironbark Haulage"
    ]
    kinds = {scenario.candidate_kind for _, scenario in library.scenarios()}
    assert len(kinds) >= 25  # one pool per non-person scenario, not one pool for all


def _texts(group: dict[str, Any]) -> list[str]:
    rendered = group["rendered"]
    return [
        rendered["task_text"],
        *(line for lines in rendered["records"].values() for line in lines),
    ]


def test_conditions_rules_questions_and_records_agree(groups: list[dict[str, Any]]) -> None:
    checked = {"condition": 0, "plural condition": 0, "rule": 0, "question": 0, "record": 0}
    for group in groups:
        spec, text = group["spec"], group["rendered"]["task_text"]
        facts = sorted(spec["facts"], key=lambda f: len(f["label"]), reverse=True)
        for line in re.findall(r"^\d+\. The (.+)$", text, re.MULTILINE):
            fact = next(f for f in facts if line.startswith(f["label"] + " ("))
            verb = re.sub(r"^.*?\) ", "", line[len(fact["label"]) :], count=1)
            plural = fact["label"] in PLURAL_LABELS
            assert not any(
                verb.startswith(v) for v in (SINGULAR_ONLY if plural else PLURAL_ONLY)
            ), line
            checked["condition"] += 1
            checked["plural condition"] += plural
        rule = spec["rule"]
        copula = "are" if rule["label"] in PLURAL_LABELS else "is"
        # the rule names its label on a line of its own; the formula's subject is "the result"
        assert f"\nResult: {rule['label']}\n" in text and "\nThe result is " in text, rule
        checked["rule"] += 1
        if re.search(r"\bwhat (is|are)\b", spec["question"]):
            assert re.search(rf"\bwhat {copula}\b", spec["question"]), spec["question"]
            checked["question"] += 1
        for record in (line for lines in group["rendered"]["records"].values() for line in lines):
            found = re.search(r"'s? (.+) \([^()]*(?:\([^()]*\))?[^()]*\) (is|are) ", record)
            if found:
                plural = found[1] in PLURAL_LABELS
                assert found[2] == ("are" if plural else "is"), record
                checked["record"] += 1
    assert all(checked.values()), checked


def test_units_possessives_and_articles(groups: list[dict[str, Any]]) -> None:
    for group in groups:
        for text in _texts(group):
            assert not re.search(r"(?<![\d.,])1 (?!AUD|USD|EUR|GBP|SGD)[a-z]+s\b(?!/)", text), text
            assert not re.search(r"\b\w+s's\b", text), text
            assert not re.search(r"\ba [aeiouAEIOU]\w", text), text
            assert not re.search(r"\ban [b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z]\w", text), text


def test_names_and_amounts_over_the_built_groups(
    groups: list[dict[str, Any]], library: ScenarioLibrary
) -> None:
    natural = naturalness_stats(groups, library)
    assert natural["names_off_domain"] == 0 and natural["names_from_no_pool"] == 0
    assert natural["money_answers"] > 0 and natural["money_answers_nonpositive"] == 0
    for group in groups:
        names = [c["name"] for c in group["spec"]["candidates"]]
        assert library.off_domain_names(group["spec"]["domain"], names) == []


def test_the_measure_catches_what_it_counts(library: ScenarioLibrary) -> None:
    group = {
        "id": "banking_x",
        "spec": {
            "domain": "banking",
            "candidates": [{"name": "Ironbark Haulage"}, {"name": "Marcus Vance"}],
            "rule": {"operation": "difference", "label": "equity cushion over the loan",
                     "unit": "GBP"},
            "facts": [{"key": "grant", "label": "grant", "unit": "GBP"}],
            "records": [{"fact": "grant", "value": "0"}],
        },
        "gold": {"number": "-3200000"},
    }  # fmt: skip
    natural = naturalness_stats([group], library)
    assert natural["names_off_domain"] == 1 and natural["money_answers_nonpositive"] == 1
    assert natural["money_records_nonpositive"] == 1
    signed: dict[str, Any] = json.loads(json.dumps(group))
    signed["spec"]["rule"]["label"] = "net change in exposure"
    assert naturalness_stats([signed], library)["money_answers_nonpositive_signed"] == 1
