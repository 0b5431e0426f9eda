"""The answer parser on a table of messy answers, and scoring at the rule's rounding."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    AnswerAction,
    AnswerKey,
    PreparedGroup,
    parse_answer,
    score_answer,
)
from uncobench_z3.settings import TaskGroup
from uncobench_z3.spec import Answer, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent


def _key_and_gold(name: str) -> tuple[AnswerKey, Answer]:
    spec = load_spec(ROOT / "examples" / f"{name}.json")
    task = check_structure(spec).task
    assert task is not None
    return AnswerKey.from_task(task), Answer.from_outcome(task, task.outcome())


MINING = _key_and_gold("mining_supervisor")  # Appoint Marcus Vance, 60000 AUD (0 digits, half_up)
NURSE = _key_and_gold("healthcare_nurse_manager")  # Do not appoint (nobody eligible)
PLANT = _key_and_gold("manufacturing_plant_selection")  # Select Geelong Plant, 46.67 half_even


def test_the_gold_answers_are_what_the_table_assumes() -> None:
    assert MINING[1].candidate_name == "Marcus Vance" and MINING[1].number == "60000"
    assert not NURSE[1].eligible
    assert PLANT[1].candidate_name == "Geelong Plant" and PLANT[1].number == "46.67"
    assert (PLANT[0].digits, PLANT[0].mode) == (2, "half_even")


def A(
    decision: str | None = None,
    candidate: str | None = None,
    number: str | None = None,
    text: str | None = None,
) -> AnswerAction:
    return AnswerAction(decision=decision, candidate=candidate, number=number, text=text)


CASES: list[tuple[str, tuple[AnswerKey, Answer], AnswerAction | str, bool]] = [
    # -- structured, eligible gold ----------------------------------------------------------
    ("exact fields", MINING, A("Appoint", "Marcus Vance", "60000"), True),
    ("lower case, thousands separator", MINING, A("appoint", "marcus vance", "60,000"), True),
    ("last name, currency code, decimals", MINING, A("Appoint", "Vance", "AUD 60,000.00"), True),
    ("candidate id, dollar sign, k suffix", MINING, A("APPOINT", "vance", "$60k"), True),
    (
        "inflected decision, spaced digits",
        MINING,
        A("Appointed", "Marcus Vance", "60 000 AUD"),
        True,
    ),
    ("apostrophe separator", MINING, A("Appoint", "Marcus Vance", "60'000"), True),
    ("unrounded, rounds to gold", MINING, A("Appoint", "Marcus Vance", "60000.4"), True),
    ("unrounded, rounds away (half_up)", MINING, A("Appoint", "Marcus Vance", "60000.5"), False),
    (
        "sum written out in the field",
        MINING,
        A("Appoint", "Marcus Vance", "45,000 + 15,000 = 60,000"),
        True,
    ),
    (
        "result first, working after",
        MINING,
        A("Appoint", "Marcus Vance", "60,000 AUD (45,000 + 15,000)"),
        True,
    ),
    ("decision missing, inferred", MINING, A(None, "Marcus Vance", "60000"), True),
    ("wrong candidate", MINING, A("Appoint", "Priya Natarajan", "60000"), False),
    ("no number", MINING, A("Appoint", "Marcus Vance", None), False),
    ("number in words", MINING, A("Appoint", "Marcus Vance", "sixty thousand"), False),
    ("wrong number", MINING, A("Appoint", "Marcus Vance", "57,500"), False),
    ("negative decision", MINING, A("Do not appoint", None, None), False),
    (
        "negative decision with the right name",
        MINING,
        A("Do not appoint", "Marcus Vance", "60000"),
        False,
    ),
    ("a name nobody has", MINING, A("Appoint", "Jane Doe", "60000"), False),
    # -- free text, eligible gold -------------------------------------------------------------
    (
        "labelled lines",
        MINING,
        "Decision: Appoint\nCandidate: Marcus Vance\nRelocation package (AUD): 60,000",
        True,
    ),
    (
        "markdown bold labels",
        MINING,
        "**Decision:** Appoint\n**Candidate:** Marcus Vance\n"
        "**Relocation package (AUD):** AUD 60,000",
        True,
    ),
    (
        "prose with working",
        MINING,
        "I recommend we appoint Marcus Vance. Relocation grant 45,000 + field allowance 15,000 "
        "= 60,000 AUD.",
        True,
    ),
    (
        "others named after the decision",
        MINING,
        "Appoint Marcus Vance; Priya Natarajan and Tomas Ruiz do not qualify. Package: 60,000 AUD",
        True,
    ),
    (
        "a date beside the number",
        MINING,
        "Appoint Marcus Vance (available 14 July 2026) with a package of AUD 60,000.",
        True,
    ),
    ("no decision word, name and number", MINING, "The answer is Marcus Vance with 60000", True),
    ("two unmarked numbers", MINING, "Appoint Marcus Vance, 45,000 and 15,000", False),
    ("negative prose", MINING, "Don't appoint anyone: no eligible candidate.", False),
    # -- "no eligible candidate" gold ---------------------------------------------------------
    ("negative fields", NURSE, A("Do not appoint", None, None), True),
    ("null words", NURSE, A("Do not appoint", "none", "null"), True),
    ("shouting, n/a", NURSE, A("do NOT appoint", "N/A", "n/a"), True),
    ("contraction, dash", NURSE, A("Don't appoint", "", "-"), True),
    ("can't is can not", NURSE, "We can't appoint anyone: nobody meets every condition.", True),
    ("cannot is can not", NURSE, A("Cannot appoint", None, None), True),
    ("only 'none' as candidate", NURSE, A(None, "none", None), True),
    ("decision field 'none'", NURSE, A("none", None, None), True),
    ("a zero is not null", NURSE, A("Do not appoint", None, "0"), False),
    ("a positive answer", NURSE, A("Appoint", "Adaeze Okafor", "8887.50"), False),
    ("negative but names someone", NURSE, A("Do not appoint", "Adaeze Okafor", None), False),
    ("prose: no eligible candidate", NURSE, "No eligible candidate.", True),
    ("prose: nobody", NURSE, "Nobody qualifies, so do not appoint.", True),
    ("prose: none of the candidates", NURSE, "None of the candidates is eligible.", True),
    (
        "prose naming candidates after a negative",
        NURSE,
        "Do not appoint: Adaeze Okafor's registration is conditional and Erik Lindqvist lacks "
        "the qualification.",
        True,
    ),
    (
        "labelled negative",
        NURSE,
        "Decision: Do not appoint\nCandidate: none\nAnnual leadership allowance (AUD): null",
        True,
    ),
    ("empty answer", NURSE, "", False),
    # -- two decimals, half_even ----------------------------------------------------------------
    ("exact", PLANT, A("Select", "Geelong Plant", "46.67"), True),
    ("unrounded", PLANT, A("select", "geelong plant", "46.6666"), True),
    ("rounded the other way", PLANT, A("Select", "Geelong Plant", "46.66"), False),
    (
        "exact tie rounds to even (46.665 -> 46.66)",
        PLANT,
        A("Select", "Geelong Plant", "46.665"),
        False,
    ),
    ("unit after the number", PLANT, A("Selected", "Geelong Plant", "AUD 46.67/hour"), True),
    ("one distinctive word of the name", PLANT, A("Select", "Geelong", "46.67"), True),
    ("a word every name has", PLANT, A("Select", "Plant", "46.67"), False),
    ("prose with unit", PLANT, "Select Geelong Plant at 46.67 AUD/hour.", True),
    ("negative for an eligible gold", PLANT, "Do not select any plant.", False),
]


@pytest.mark.parametrize(
    ("answer", "key_gold", "expected"),
    [
        pytest.param(answer, key_gold, expected, id=name)
        for name, key_gold, answer, expected in CASES
    ],
)
def test_messy_answers(
    answer: AnswerAction | str, key_gold: tuple[AnswerKey, Answer], expected: bool
) -> None:
    key, gold = key_gold
    score = score_answer(parse_answer(answer, key), gold, key)
    assert score.correct is expected, score


def test_parsed_fields_are_exact() -> None:
    key, _ = MINING
    parsed = parse_answer(A("Appoint", "Marcus Vance", "$60,000.50"), key)
    assert (parsed.decision, parsed.candidate, parsed.number) == ("positive", "vance", "60000.5")
    assert not parsed.problems


def test_problems_are_reported() -> None:
    key, _ = MINING
    parsed = parse_answer(A("Appoint", "Jane Doe", "sixty"), key)
    assert any("candidate not recognised" in p for p in parsed.problems)
    assert any("number not recognised" in p for p in parsed.problems)
    assert "no decision found" in parse_answer("", key).problems


def test_scoring_reports_each_part_and_the_rounded_number() -> None:
    key, gold = PLANT
    score = score_answer(parse_answer(A("Select", "Wollongong Plant", "46.6666"), key), gold, key)
    assert (score.decision_ok, score.candidate_ok, score.number_ok) == (True, False, True)
    assert score.rounded_number == "46.67" and not score.correct


def test_earliest_decision_phrase_wins() -> None:
    key, _ = MINING
    assert parse_answer("Appoint Marcus Vance. Do not appoint the others.", key).decision == (
        "positive"
    )
    assert parse_answer("Do not appoint anyone; appoint nobody.", key).decision == "negative"


def test_a_negative_phrase_containing_the_positive_one_is_negative() -> None:
    key, _ = MINING  # "Do not appoint" contains "appoint"
    assert parse_answer(A("Do not appoint"), key).decision == "negative"
    assert parse_answer(A("not appointed"), key).decision == "negative"


_GROUPS = [g for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
           for g in load_groups(path)]  # fmt: skip
_PIECES = st.sampled_from(
    ["", "none", "yes", "no", "approve", "reject", "0", "12.5", "1e3", "candidate",
     "decision: ", "number: ", " and ", "C1", "Alice"]
)  # fmt: skip


def _answers(group: TaskGroup) -> st.SearchStrategy[AnswerAction]:
    gold = group.gold
    words = st.one_of(
        _PIECES,
        st.sampled_from([gold.decision, gold.candidate or "", gold.number or ""]),
        st.text(max_size=6),
    )
    field = st.one_of(st.none(), words, st.lists(words, max_size=4).map(" ".join))
    return st.builds(
        AnswerAction, decision=field, candidate=field, number=field, unit=field, text=field
    )


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_prepared_group_scores_an_answer_as_the_parser_and_scorer_do(
    data: st.DataObject,
) -> None:
    """The runner scores through PreparedGroup.score, which remembers each answer's score."""
    group = data.draw(st.sampled_from(_GROUPS))
    prepared = PreparedGroup.of(group)
    key = AnswerKey.from_task(prepared.task)
    answers = data.draw(st.lists(_answers(group), min_size=1, max_size=5))
    for answer in [*answers, *answers]:  # the second time from memory
        expected = score_answer(parse_answer(answer, key), group.gold, key)
        assert prepared.score(answer) == expected
        assert prepared.score(answer.model_copy()) == expected  # equal answers, equal scores


def test_a_currency_code_written_against_the_number_is_read_as_a_code() -> None:
    """A number with its currency code against it ("AUD60,000") is 60,000 AUD (the docs:
    currency codes are understood), in a number field and in free text; it was read as "000"
    (the digits after the thousands separator: the only place the number pattern could
    start), scoring a right answer wrong as 0."""
    key, gold = MINING
    for answer in (
        A("Appoint", "Marcus Vance", "AUD60,000"),
        A("Appoint", "Marcus Vance", "USD60,000"),
        "Decision: Appoint\nCandidate: Marcus Vance\nRelocation package: AUD60,000",
        "Appoint Marcus Vance with a relocation package of AUD60,000.",
    ):
        parsed = parse_answer(answer, key)
        assert parsed.number == "60000", answer
        assert score_answer(parsed, gold, key).correct, answer
    # digits after a thousands separator never start a number of their own
    assert parse_answer(A("Appoint", "Marcus Vance", "X60,000"), key).number is None
