"""The follow-up interpreter: words, vocabulary, the structured reading, every rule and
intent, rewording properties, the group schema migration, and the labelled corpus."""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import Environment, make_agent, run_episode, typed_task
from uncobench_z3.settings import (
    Defect,
    TaskGroup,
    Vocabulary,
    decide,
    interpret,
    is_targeted,
    read_request,
    rule_lines,
    rule_text,
)
from uncobench_z3.settings._words import (
    QUESTION,
    SENTENCE,
    WORD,
    close_enough,
    scan_values,
    tokenize,
    words_of,
)

ROOT = Path(__file__).resolve().parent.parent
MINING = load_groups(ROOT / "examples/groups/mining_supervisor.group.json")[0]
PAPER = load_groups(ROOT / "examples/groups/paper_appendix.group.json")[0]
TASK = typed_task(MINING)
PAPER_TASK = typed_task(PAPER)
VOCAB = Vocabulary.of(TASK)


def defect(group: TaskGroup, setting: str) -> Defect:
    return group.setting(setting).defects[0]  # type: ignore[arg-type]


MIS = defect(MINING, "misaligned")  # operations, field allowance of Vance, FY2025 for FY2026
INC = defect(MINING, "incomplete")  # security, clearance of Vance, "passed or failed"
MISSED = defect(MINING, "missed")  # security
PAPER_MIS = defect(PAPER, "misaligned")  # security, clearance of Vance, April for March
PAPER_INC = defect(PAPER, "incomplete")  # hr, hardrock years of Vance, 5 to 30


def targeted(group_task: object, d: Defect, text: str, focus: str | None = None) -> bool:
    return is_targeted(group_task, d, text, focus=focus)  # type: ignore[arg-type]


# -- the twelve natural follow-ups of the issue ---------------------------------------------
NATURAL = [
    (MIS, "Marcus's allowance you sent is from the FY2025 table - what is it in the FY2026 table?"),
    (MIS, "Can you double-check Marcus Vance's field allowance? It should come from the FY2026 "
          "site allowance table, not FY2025."),
    (MIS, "I think that's last year's allowance for Marcus. What's the FY26 figure?"),
    (MIS, "Which allowance table did you use for Vance? We need FY2026."),
    (MIS, "Please re-send the field establishment allowance for Marcus Vance using the current "
          "(FY2026) table."),
    (MIS, "For Marcus Vance, what's the field allowance under FY2026?"),
    (INC, "Did Marcus Vance pass or fail the March 2026 security assessment?"),
    (INC, "Passed or failed - which is it for Marcus?"),
    (INC, "Was Marcus Vance's March 2026 clearance a pass?"),
    (INC, "I need a yes/no on whether Marcus cleared security in March."),
    (INC, "Your reply says Marcus either passed or failed. Can you confirm which?"),
    (INC, "What exactly was the outcome of Marcus's security check?"),
]  # fmt: skip


@pytest.mark.parametrize(("d", "text"), NATURAL)
def test_the_twelve_natural_follow_ups_are_targeted(d: Defect, text: str) -> None:
    assert targeted(TASK, d, text), interpret(TASK, d, text)[1].why()


# -- words ----------------------------------------------------------------------------------
def test_words_are_canonical() -> None:
    assert words_of("FY26 / fy 2026 / FY2026") == ("fy", "2026", "fy", "2026", "fy", "2026")
    assert words_of("the 2026-27 fee") == ("the", "2026", "2027", "fee")
    assert words_of("Q3, third quarter, quarter 3, first half") == ("q3", "q3", "q3", "h1")
    assert words_of("rev C, v2") == ("revision", "c", "version", "2")
    assert words_of("Mar 2026") == ("march", "2026")
    assert words_of("I may come") == ("i", "may", "come")  # "may" the verb stays a word
    assert words_of("Vance's clearance; don't; that's") == (
        "vance", "clearance", "do", "not", "that", "is",
    )  # fmt: skip
    assert words_of("O'Connor") == ("oconnor",)


def test_values_are_found_exactly() -> None:
    found = [v.value for v in scan_values(
        "by 1 August 2026 or 2026-07-14, 45,000 AUD, 12.5k, 4.5 to 5.5, end of September 2026"
    )]  # fmt: skip
    assert found == [
        _dt.date(2026, 8, 1), _dt.date(2026, 7, 14), Fraction(45000), Fraction(12500),
        Fraction(9, 2), Fraction(11, 2), _dt.date(2026, 9, 30),
    ]  # fmt: skip
    assert [v.value for v in scan_values("FY26 and Q3")] == []


def test_typos_of_long_words_only() -> None:
    assert close_enough("clearence", "clearance") and close_enough("experiance", "experience")
    assert not close_enough("match", "march")  # short words never
    assert not close_enough("clearance", "allowance")


def test_sentences_and_questions() -> None:
    tokens = tokenize("Send it. Did he pass? 4.5 is fine")
    assert [t[WORD] for t in tokens][-4:] == ["4", "5", "is", "fine"]  # "4.5" ends no sentence
    assert [t[SENTENCE] for t in tokens] == [0, 0, 1, 1, 1, 2, 2, 2, 2]
    assert [t[QUESTION] for t in tokens][:5] == [False, False, True, True, True]


# -- the reading ------------------------------------------------------------------------------
def test_candidates_by_full_first_and_last_name_in_any_case() -> None:
    for text in ("MARCUS VANCE", "marcus", "Vance's", "vance"):
        assert read_request(VOCAB, text).candidates == ("vance",)
    assert read_request(VOCAB, "priya and tomas").candidates == ("natarajan", "ruiz")
    assert read_request(VOCAB, "all three candidates, please").all_candidates


def test_pronouns_read_as_the_candidate_in_focus() -> None:
    request = read_request(VOCAB, "Did he pass?", "security", focus="vance")
    assert request.candidates == ("vance",) and request.pronoun == "vance"
    assert read_request(VOCAB, "Did he pass?", "security").candidates == ()


def test_facts_by_label_key_word_member_and_typo() -> None:
    for text in ("security clearance result", "the result of the clearance", "clearence",
                 "did she pass", "hardrock_years", "the field allowance"):  # fmt: skip
        assert read_request(VOCAB, text).facts, text
    assert read_request(VOCAB, "the allowance", "operations").facts == ("field_allowance",)
    # a word shared by no fact of the role names nothing
    assert read_request(VOCAB, "anything else?", "operations").facts == ()


def test_contexts_required_other_negated_and_latest() -> None:
    PAPER_VOCAB = Vocabulary.of(PAPER_TASK)
    reading = read_request(PAPER_VOCAB, "March, not April", "security")
    kinds = {(m.context, m.required, m.negated) for m in reading.contexts}
    assert ("March 2026 assessment", True, False) in kinds
    assert ("April 2026 assessment", False, True) in kinds
    latest = read_request(PAPER_VOCAB, "his latest clearance", "security").contexts
    assert [m.context for m in latest] == ["April 2026 assessment"]  # April is later than March
    fy = read_request(VOCAB, "FY26 table", "operations").contexts
    assert "FY2026 site allowance table" in {m.context for m in fy}
    # a word of a context is not named by another word of its stem ("verify" / "verified")
    hr = Vocabulary.of(PAPER_TASK)
    assert not read_request(hr, "please verify everything", "hr").contexts
    assert read_request(hr, "the verified figure", "hr").contexts


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("What is the exact value?", "exact"),
        ("be precise", "exact"),
        ("a single figure please", "exact"),
        ("can you narrow it down", "exact"),
        ("which one is it?", "exact"),
        ("did he pass or fail?", "exact"),
        ("Did he pass?", "exact"),
        ("Is it at least 12 years?", "exact"),
        ("a range isn't enough", "exact"),
        ("yes or no", "exact"),
        ("wrong period", "mismatch"),
        ("that's the April one", "mismatch"),
        ("not the April one", "mismatch"),
        ("is that from the April assessment?", "mismatch"),
        ("that range you gave", "reference"),
        ("you said between 5 and 30", "reference"),
        ("hello?", "request"),
    ],
)
def test_every_intent(text: str, intent: str) -> None:
    request = read_request(Vocabulary.of(PAPER_TASK), text, "security")
    assert intent in request.intents, (text, request.intents)


def test_generic_messages_have_no_intent_but_request() -> None:
    for text in ("Could you double-check your records?", "Thanks!", "Please resend everything."):
        assert read_request(VOCAB, text, "security").intents == {"request"}, text


# -- the rules ----------------------------------------------------------------------------------
def test_misaligned_rule_clause_by_clause() -> None:
    ok = "Please send Marcus's clearance for the March 2026 assessment."
    assert targeted(PAPER_TASK, PAPER_MIS, ok)
    assert targeted(PAPER_TASK, PAPER_MIS, "Marcus's clearance is the wrong assessment.")
    assert targeted(PAPER_TASK, PAPER_MIS, "Clearances for all candidates, March 2026 please.")
    # the fact again without the context or a mismatch: generic
    assert not targeted(PAPER_TASK, PAPER_MIS, "Please resend Marcus's clearance.")
    # another context only, another candidate only: not targeted
    assert not targeted(PAPER_TASK, PAPER_MIS, "What was Marcus's clearance in April 2026?")
    assert not targeted(PAPER_TASK, PAPER_MIS, "Send Priya's clearance for March 2026.")
    # the required context rejected is no request for it
    assert not targeted(PAPER_TASK, PAPER_MIS, "Not the March one: Marcus's April clearance.")


def test_another_context_said_to_be_right_is_no_mismatch() -> None:
    """Asking for the other context again, as the right one, names another context only: not
    targeted (it was read as a mismatch, the words meant for "is not what I need" taken
    without their negation, and got the required context's value)."""
    for text in (
        "Marcus's clearance: the April 2026 assessment is correct, please resend it.",
        "Marcus's clearance - the April 2026 assessment is what we need.",
        "Marcus's clearance - the April 2026 assessment is valid, isn't it?",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text
    for text in (
        "Marcus's clearance - the April 2026 assessment isn't what we need.",
        "Marcus's clearance - the April 2026 assessment is not valid.",
        "Marcus's clearance - the April 2026 assessment is outdated.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text


def test_another_context_said_to_be_the_right_one_is_no_mismatch() -> None:
    """ "The April one is the right one" affirms the context the misaligned reply was for: the
    words "right one" in it say nothing of a wrong context (they were read as a mismatch, and
    the message targeted, though it names another context only)."""
    for text in (
        "The April 2026 assessment is the right one, please resend it.",
        "Marcus's clearance: the April 2026 clearance is the correct one.",
        "Marcus's clearance: the April 2026 assessment is definitely the right version.",
        "The right one is the April 2026 assessment - resend Marcus's clearance.",
        "The correct period is April 2026: please resend Marcus's clearance.",
        "Marcus's clearance: the April 2026 assessment is the right one, not March.",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text
    for text in (
        "Marcus's clearance: the April 2026 assessment is not the right one.",
        "Is the April 2026 assessment the right one for Marcus's clearance?",
        "Marcus's clearance: the March 2026 assessment is the right one.",
        "Marcus's clearance - please use the right assessment.",
        "Marcus's clearance: the April one is outdated, the right one is March 2026.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text


def test_precision_said_not_to_be_needed_asks_for_no_exact_value() -> None:
    """A follow-up that says the exact value is not needed does not ask for it (Incomplete's
    clause 3): the precision words inside "no need to be precise" were read as asking for
    it. A question for one value, or precision asked for elsewhere, still asks."""
    for text in (
        "No need to be precise - Marcus's hardrock years?",
        "Don't bother with exact figures; Marcus's hardrock years, roughly?",
        "Needn't be exact: Marcus's hardrock years?",
        "Precision isn't needed; roughly how many hardrock years for Marcus?",
        "Exact figure not required - Marcus hardrock years ballpark?",
        "I'm not after an exact figure, just Marcus's hardrock years roughly.",
        "It doesn't matter if it's not exact: Marcus's hardrock years?",
        "Marcus's hardrock years - a rough estimate is fine.",
    ):
        assert not targeted(PAPER_TASK, PAPER_INC, text), text
    # said without a need ("no ... needed", "without being"), or a range said not too wide
    for text in (
        "I don't need it narrowed down - Marcus's hardrock years?",
        "Without being exact, how many hardrock years does Marcus have?",
        "No exact figure needed, Marcus's hardrock years roughly?",
        "Marcus's hardrock years: a range is fine, no need to pin it down.",
        "5 to 30 is not too wide - Marcus's hardrock years are fine.",
        "Marcus's hardrock years: that range isn't too vague, thanks.",
    ):
        assert not targeted(PAPER_TASK, PAPER_INC, text), text
    for text in (
        "No need to be precise about the others, but what exactly are Marcus's hardrock years?",
        "No need to be precise: does Marcus have at least 12 hardrock years?",
        "No need for a range - I need Marcus's exact hardrock years.",
        "There's no need for ranges, just give me Marcus's exact hardrock years.",
        "Marcus's hardrock years: 5 to 30 is too wide, be precise.",
        "Marcus's hardrock years: 5 to 30 is too wide.",
        "Without the exact figure I cannot decide - Marcus's hardrock years?",
        "You gave me a range instead of the exact figure - what are Marcus's hardrock years?",
        "You sent a range rather than the precise number for Marcus's hardrock years.",
        "Can you narrow down Marcus's hardrock years?",
    ):
        assert targeted(PAPER_TASK, PAPER_INC, text), text


def test_another_context_said_to_be_wrong_after_any_scope_noun_is_a_mismatch() -> None:
    """Another context said to be wrong after "table" or "schedule" ("the FY2025 table is
    outdated") says the reply's context is wrong: the words between a context and what is
    said of it were "one", "figure"... only (not targeted)."""
    assert targeted(TASK, MIS, "Marcus's allowance: the FY2025 table is outdated.")
    assert targeted(TASK, MIS, "Marcus's allowance: the FY2025 schedule is superseded.")
    assert not targeted(TASK, MIS, "Marcus's allowance: the FY2025 table is not outdated.")


def test_another_context_said_not_to_be_wrong_is_no_mismatch() -> None:
    """ "The April one is not outdated" says the context the misaligned reply was for is
    right: it was read as the mismatch "the April one is outdated", its negation dropped."""
    for text in (
        "Marcus's clearance - the April 2026 assessment isn't outdated, please resend it.",
        "The April 2026 assessment is not wrong; please resend Marcus's clearance.",
        "Marcus's clearance: the April 2026 assessment is not superseded.",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text
    for text in (
        "Marcus's clearance - the April 2026 assessment is outdated.",
        "Marcus's clearance - the April 2026 assessment is no longer valid.",
        "Marcus's clearance - the April 2026 assessment is not valid.",
        "Marcus's clearance - the April one is not binding.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text


def test_the_required_context_said_to_be_wrong_is_rejected() -> None:
    """A context said to be wrong by the words after it ("March 2026 is not what I need",
    "the March one is superseded") is named to be rejected, as after "not": the required one
    so named satisfies no clause (3), and the wrong-words of its clause say nothing of the
    reply (it was named, and "not what I need" read as a mismatch: targeted)."""
    for text in (
        "Marcus's clearance: March 2026 is not what I need, I need April 2026.",
        "Marcus's clearance: the March 2026 assessment is wrong, use April 2026.",
        "The March 2026 assessment is outdated; send Marcus's April 2026 clearance.",
        "Marcus's clearance: the March one is superseded, send the April one.",
        "Marcus's clearance: the March 2026 assessment isn't the right one.",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text
    reading = read_request(Vocabulary.of(PAPER_TASK), "the April one is outdated", "security")
    assert [(m.context, m.negated) for m in reading.contexts] == [("April 2026 assessment", True)]
    for text in (
        "Marcus's clearance: the March 2026 assessment is not outdated.",
        "Marcus's clearance: is the March 2026 assessment outdated?",
        "Marcus's clearance: the April one is outdated, use the March 2026 assessment.",
        "Marcus's clearance: the March 2026 assessment is a different one, so I need it.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text


def test_a_question_about_the_range_asks_for_no_exact_value() -> None:
    """A yes/no or elliptical question whose values are a range's bounds ("between 5 and
    30?", "5 to 30, is that right?") asks about the imprecise reply, not for one value
    (settings.md: "a yes/no question about one option or value"); it was read as asking."""
    for text in (
        "Are Marcus's hardrock years between 5 and 30?",
        "Marcus's hardrock years: 5 to 30, is that right?",
        "Is the 5 to 30 range right for Marcus's hardrock years?",
        "Did you say 5 to 30 for Marcus's hardrock years?",
        "Marcus's hardrock years - 5 to 30?",
        "Marcus's hardrock years 5-30?",
    ):
        assert not targeted(PAPER_TASK, PAPER_INC, text), text
    for text in (
        "Is it 12 years for Marcus?",
        "Marcus's hardrock years: 12?",
        "You said 5 to 30 - is it 12?",
        "Marcus's hardrock years: 5 to 30 - is it nearer 5 or 30?",
        "Did Marcus have more than 12 hardrock years?",
    ):
        assert targeted(PAPER_TASK, PAPER_INC, text), text


def test_a_choice_said_not_to_be_needed_asks_for_no_exact_value() -> None:
    """A choice said not to be needed ("no need to confirm whether he passed") does not ask
    which option holds (it was read as asking, through "confirm whether")."""
    for text in (
        "Marcus's clearance: no need to confirm whether he passed.",
        "Marcus's clearance: I don't need to know whether he passed, just the assessment date.",
    ):
        assert not targeted(TASK, INC, text), text
    for text in (
        "Can you confirm whether Marcus passed his clearance?",
        "Marcus's clearance - please tell me whether he passed.",
    ):
        assert targeted(TASK, INC, text), text


def test_a_candidate_named_to_be_left_out_is_not_concerned() -> None:
    """A candidate named only to be left out ("Not Marcus - I need Priya's ...") is not one
    the follow-up concerns (it was read as naming him, and targeted his defect)."""
    for text in (
        "Not Marcus - I need Priya's exact hardrock years.",
        "Priya, not Marcus: exact hardrock years?",
        "I need Priya's exact hardrock years, not Marcus's.",
        "Not Marcus's hardrock years but Priya's exact ones.",
        "For Priya rather than Marcus, what are the exact hardrock years?",
        "Forget Marcus: Priya's exact hardrock years?",
    ):
        assert not targeted(PAPER_TASK, PAPER_INC, text), text
        reading = read_request(Vocabulary.of(PAPER_TASK), text, "hr")
        assert reading.candidates == ("natarajan",), text
    # named to be left out alone, the follow-up concerns the others
    for text in ("Not Marcus: what are the exact hardrock years?",
                 "All candidates except Marcus: exact hardrock years?"):  # fmt: skip
        reading = read_request(Vocabulary.of(PAPER_TASK), text, "hr")
        assert (reading.candidates, reading.all_candidates) == (("natarajan", "ruiz"), False)
        assert reading.evidence["excluded:vance"] == ("Marcus",)
        assert not targeted(PAPER_TASK, PAPER_INC, text), text
    for text in (
        "Marcus, not Priya: exact hardrock years?",
        "Why not Marcus? His exact hardrock years, please.",
        "Don't forget Marcus: his exact hardrock years?",
        "Not Marcus's April clearance - his exact hardrock years?",
        "Marcus's exact hardrock years, not Priya's.",
    ):
        assert targeted(PAPER_TASK, PAPER_INC, text), text


def test_a_fact_named_to_be_left_out_is_not_named() -> None:
    """A fact named only to be left out ("Forget the allowance - what is Marcus's availability
    date?") is not one the follow-up names (it was, and the message followed up and targeted
    the allowance's defect). "Forget Marcus's allowance" may leave out either: neither."""
    for text in (
        "Forget the allowance - what is Marcus's availability date in the FY2026 table?",
        "Not the field allowance but Marcus's availability date, from the FY2026 table please.",
    ):
        reading = read_request(VOCAB, text, "operations")
        assert reading.facts == ("available_from",), text
        assert reading.evidence["excluded:field_allowance"], text
        assert not targeted(TASK, MIS, text), text
    for text in (
        "Marcus's allowance from the FY2026 table, not the FY2025 one.",
        "Forget Marcus's allowance in the FY2025 table - what is it in FY2026?",
        "Don't forget the allowance: Marcus's, FY2026 table.",
    ):
        assert targeted(TASK, MIS, text), text


def test_a_mismatch_said_not_to_be_one_is_no_mismatch() -> None:
    """ "It's not a mismatch", "that isn't the wrong year" say the reply's context is right:
    their mismatch words were read as saying it is wrong (targeted). Asked as a question
    ("isn't that the wrong assessment?") the words still say it."""
    for text in (
        "It's not a mismatch; what is Marcus's clearance?",
        "That isn't the wrong year. What is Marcus's clearance result?",
        "Marcus's clearance: that's not the wrong assessment, thanks.",
        "Marcus's clearance - no mismatch there.",
        "Marcus's clearance: there's nothing wrong with the period.",
        "Marcus's clearance: you haven't mixed up the years, just resend it.",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text
    for text in (
        "Isn't that the wrong assessment for Marcus's clearance?",
        "Marcus's clearance: it's not the right assessment.",
        "Marcus's clearance: it's not the wrong year, it's the wrong assessment.",
        "Marcus's clearance: I am not confused, you sent April.",
        "No, wrong assessment - Marcus's clearance please.",
        "Marcus's clearance: wrong assessment?",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text


def test_a_negator_before_a_verb_of_getting_rejects_no_context() -> None:
    """ "I did not get the March one" says the required context is missing, not wrong: the
    negator of the verb was read as rejecting the context four words on (not targeted), and
    so was "March 2026 is not what I got". "Do not use April" still rejects April."""
    for text in (
        "I did not get the March 2026 clearance for Marcus - please send it.",
        "You haven't sent Marcus's March 2026 clearance yet.",
        "I don't have the March 2026 assessment for Marcus's clearance; please send it.",
        "Marcus's clearance: I never received the March 2026 result.",
        "You didn't send the March 2026 assessment for Marcus's clearance.",
        "Marcus's clearance: March 2026 is not what I got.",
        "Marcus's clearance: the March 2026 assessment is not what I received, you sent the "
        "wrong one.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text
    vocabulary = Vocabulary.of(PAPER_TASK)
    for text in ("Marcus's clearance: don't use the April one.",
                 "Marcus's clearance - I did not ask for April."):  # fmt: skip
        reading = read_request(vocabulary, text, "security")
        assert [(m.context, m.negated) for m in reading.contexts] == [
            ("April 2026 assessment", True)
        ]
        assert targeted(PAPER_TASK, PAPER_MIS, text), text
    for text in (
        "Marcus's clearance: March 2026 is not what I need, I need April 2026.",
        "Marcus's clearance: the March 2026 assessment is not what I'm after.",
    ):
        assert not targeted(PAPER_TASK, PAPER_MIS, text), text


def test_options_said_not_to_matter_ask_for_no_exact_value() -> None:
    """ "Passed or failed - either is fine" does not ask which option holds (the options were
    read as the question "passed or failed?"), nor does "no need to confirm whether he passed
    or failed"; "Did he pass or fail?", "passed or failed? Either way, tell me" and "it doesn't
    matter if it's a range, I need to know whether Marcus passed or failed" ask."""
    for text in (
        "Marcus's clearance: passed or failed - either is fine.",
        "Marcus's clearance: either passed or failed is fine.",
        "Passed or failed, I don't mind - Marcus's clearance date please.",
        "Marcus's clearance: whether he passed or failed doesn't matter.",
        "Marcus's clearance - I don't care whether he passed or failed, just send the date.",
        "Marcus's clearance: it doesn't matter whether he passed or failed.",
        "Marcus's clearance: no need to confirm whether he passed or failed.",
        "Marcus's clearance: I don't need to know whether he passed or failed.",
    ):
        assert not targeted(TASK, INC, text), text
    for text in (
        "Marcus's clearance: passed or failed? Either way, tell me.",
        "Did Marcus pass or fail his clearance?",
        "Marcus's clearance: passed or failed - which?",
        "No need to be formal: did Marcus pass or fail his clearance?",
        "It doesn't matter if it's a range, I need to know whether Marcus passed or failed his "
        "clearance.",
    ):
        assert targeted(TASK, INC, text), text


def test_a_reply_left_out_leaves_out_no_candidate_and_no_fact() -> None:
    """ "Rather than Marcus's range", "instead of the allowance you sent" leave out a reply,
    not the candidate or the fact it is about: they were read as leaving out Marcus (the
    follow-up concerned the others) or the fact (it named none), and were not targeted."""
    for text in (
        "Rather than Marcus's range, I need the exact years of hardrock experience.",
        "Never mind Marcus's estimate - exact hardrock years, please.",
        "Ignore Marcus's earlier answer - how many hardrock years exactly?",
        "Instead of the hardrock years range, please give Marcus's exact figure.",
    ):
        reading = read_request(Vocabulary.of(PAPER_TASK), text, "hr")
        assert (reading.candidates, reading.facts) == (("vance",), ("hardrock_years",)), text
        assert targeted(PAPER_TASK, PAPER_INC, text), text
    text = "Rather than the allowance you sent, I need Marcus's FY2026 table value."
    assert targeted(TASK, MIS, text), text
    # what follows is no reply: still left out
    text = "Instead of Marcus, could you check Priya's exact hardrock years?"
    assert read_request(Vocabulary.of(PAPER_TASK), text, "hr").candidates == ("natarajan",)
    text = "Instead of the allowance, could you send Marcus's availability date from FY2026?"
    assert read_request(VOCAB, text, "operations").facts == ("available_from",)


def test_a_candidate_left_out_and_then_referred_to_is_concerned() -> None:
    """A candidate "left out" whom the message then calls "he" or "his" is the one it is
    about ("Everything is clear except Marcus: what are his exact years?"), and so is one
    after "except" said of what is fine ("all fine except the allowance for Marcus"): both
    were read as left out, and the follow-ups were not targeted."""
    for text in (
        "Everything is clear except Marcus: what are his exact hardrock years?",
        "Other than Marcus, the rest is clear. For him, I need the exact hardrock years.",
        "Got the exact hardrock years for everyone except Marcus - what are his?",
        "All fine except Marcus: exact hardrock years, please.",
    ):
        assert targeted(PAPER_TASK, PAPER_INC, text), text
    for text in (
        "All good except the clearance for Marcus - I need the March 2026 assessment, not April.",
        "I have all the results except Marcus - his clearance in the March 2026 assessment?",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text
    text = "All fine except the allowance for Marcus - it's the FY2025 figure; I need FY2026."
    assert targeted(TASK, MIS, text), text
    for text in (
        "Priya's clearance is fine, but not Marcus's: I need his March 2026 result.",
        "Priya and Tomas look right, not Marcus - his clearance is from the wrong assessment.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text
    text = "Priya's allowance checks out, but not Marcus's: please send his FY2026 figure."
    assert targeted(TASK, MIS, text), text
    # left out, and "he" another candidate in focus, or no pronoun: still left out
    text = "Not Marcus: what are her exact hardrock years?"
    assert not targeted(PAPER_TASK, PAPER_INC, text, focus="natarajan"), text
    assert not targeted(PAPER_TASK, PAPER_INC, "Everyone except Marcus: exact hardrock years?")


def test_a_context_not_to_be_forgotten_is_not_rejected() -> None:
    """ "Don't forget the March 2026 assessment" asks for it: the negated verb of leaving out
    was read as rejecting the context (not targeted). "Forget April" still rejects April."""
    for text in (
        "Don't forget the clearance from March 2026 for Marcus.",
        "Please don't ignore the March 2026 assessment: what was Marcus's clearance?",
        "Marcus's clearance - never skip the March 2026 assessment.",
    ):
        assert targeted(PAPER_TASK, PAPER_MIS, text), text
    reading = read_request(
        Vocabulary.of(PAPER_TASK), "Marcus's clearance: forget April.", "security"
    )
    assert [(m.context, m.negated) for m in reading.contexts] == [("April 2026 assessment", True)]


def test_the_options_as_the_answer_s_form_ask_which() -> None:
    """ "Just passed or failed is fine" says a one-word answer will do: it asks which holds (it
    was read as the options said not to matter, and the follow-up was not targeted)."""
    for text in (
        "Could you confirm Marcus's March 2026 clearance result? Just passed or failed is fine.",
        "Marcus's clearance: a one-word answer (passed or failed) is fine.",
        "Marcus's clearance - only passed or failed is fine, no detail.",
        "Marcus's clearance: passed or failed is fine as a one-word answer.",
    ):
        assert targeted(TASK, INC, text), text
    assert not targeted(TASK, INC, "Marcus's clearance: passed or failed is fine - either way.")


def test_incomplete_rule_clause_by_clause() -> None:
    assert targeted(PAPER_TASK, PAPER_INC, "What is Marcus's exact hardrock experience?")
    assert targeted(PAPER_TASK, PAPER_INC, "You said 5 to 30 years. Which is it?")  # reference
    assert targeted(PAPER_TASK, PAPER_INC, "Does Marcus have at least 12 years?")
    assert not targeted(PAPER_TASK, PAPER_INC, "How many years of experience does Marcus have?")
    assert not targeted(PAPER_TASK, PAPER_INC, "What is the exact figure?")  # no fact, no reference
    assert not targeted(PAPER_TASK, PAPER_INC, "What is Priya's exact experience?")


def test_missed_rule_is_any_request() -> None:
    for text in ("Hello?", "Could you double-check your records?", "Still waiting."):
        assert targeted(TASK, MISSED, text)


def test_a_message_to_another_role_follows_up_nothing() -> None:
    request = read_request(Vocabulary.of(PAPER_TASK), "Marcus's March 2026 clearance", "hr")
    decision = decide(PAPER_TASK, PAPER_MIS, request)
    assert not decision.follows_up and not decision.targeted


def test_the_rule_renders_as_text_for_people_and_models() -> None:
    lines = rule_lines(PAPER_TASK, PAPER_MIS.targeted_follow_up)
    assert len(lines) == 3 and "Marcus Vance" in lines[0] and "March 2026 assessment" in lines[2]
    text = rule_text(PAPER_TASK, PAPER_INC.targeted_follow_up)
    assert text.startswith("A follow-up is targeted when it (1)") and "exact value" in text


# -- rewording properties ------------------------------------------------------------------------
POLITE = st.sampled_from(["", "Hi, ", "Sorry to bother you, ", "Quick one: ", "Hello again. "])
THANKS = st.sampled_from(["", " Thanks!", " Many thanks.", " Cheers", " Thank you very much!!"])
#: punctuation that keeps what a sentence is: a question stays a question
QUESTION_ENDS = st.sampled_from(["?", "??", " ?", "?!"])
STATEMENT_ENDS = st.sampled_from(["", ".", "!", "..."])
DASHES = st.sampled_from([" - ", ", ", ": ", " -- ", " — "])


def recase(text: str, flags: list[bool]) -> str:
    return "".join(c.upper() if f else c.lower() for c, f in zip(text, flags, strict=False))


@settings(max_examples=80, deadline=None)
@given(
    index=st.integers(0, len(NATURAL) - 1),
    before=POLITE,
    after=THANKS,
    question_end=QUESTION_ENDS,
    statement_end=STATEMENT_ENDS,
    dash=DASHES,
    flags=st.lists(st.booleans(), min_size=200, max_size=200),
)
def test_rewording_keeps_a_targeted_follow_up_targeted(
    index: int,
    before: str,
    after: str,
    question_end: str,
    statement_end: str,
    dash: str,
    flags: list[bool],
) -> None:
    """Random case, politeness and punctuation (that keeps a question a question)."""
    d, text = NATURAL[index]
    end = question_end if text.endswith("?") else statement_end
    body = recase(text.rstrip("?.!").replace(" - ", dash), flags) + end
    assert targeted(TASK, d, f"{before}{body}{after}"), f"{before}{body}{after}"


@settings(max_examples=40, deadline=None)
@given(before=POLITE, after=THANKS, flags=st.lists(st.booleans(), min_size=60, max_size=60))
def test_rewording_keeps_a_generic_follow_up_generic(
    before: str, after: str, flags: list[bool]
) -> None:
    text = f"{before}{recase('Could you double-check your records', flags)}?{after}"
    assert not targeted(TASK, MIS, text) and not targeted(TASK, INC, text)


# -- old group files --------------------------------------------------------------------------
def test_a_schema_1_group_is_migrated_on_load() -> None:
    path = ROOT / "tests/data/groups/mining_supervisor.v1.group.json"
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == 1 and "phrases" in json.dumps(raw["settings"])
    group = load_groups(path)[0]
    assert group.schema_version == 2
    migrated = group.setting("misaligned").defects[0]
    # the rule perturb writes today (the shipped example was pinned: its rationale says so)
    assert migrated.model_copy(update={"rationale": MIS.rationale}) == MIS
    assert group.setting("missed").defects[0].missed_wait is None  # the default (1) applies


async def test_a_schema_1_benchmark_still_evaluates() -> None:
    group = load_groups(ROOT / "tests/data/groups/mining_supervisor.v1.group.json")[0]
    for setting in ("reliable", "misaligned", "incomplete", "missed", "mixed"):
        env = await run_episode(Environment(group, setting), make_agent("builtin/careful", 0))  # type: ignore[arg-type]
        assert env.answer is not None and env.answer.number == "60000", setting


# -- the corpus --------------------------------------------------------------------------------
def _benchmark() -> object:
    spec = importlib.util.spec_from_file_location(
        "followup_accuracy", ROOT / "benchmarks" / "followup_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["followup_accuracy"] = module
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_big_varied_and_resolvable() -> None:
    bench = _benchmark()
    groups = bench.load_groups()  # type: ignore[attr-defined]
    lines = bench.load_split("all")  # type: ignore[attr-defined]
    assert len(lines) >= 600 and len({line["group"] for line in lines}) >= 40
    assert {line.get("fact_type") for line in lines} >= {"int", "decimal", "date", "enum", "bool"}
    share = sum(bool(line["targeted"]) for line in lines) / len(lines)
    assert 0.4 <= share <= 0.65
    assert all(line["group"] in groups for line in lines)


@pytest.mark.parametrize(("split", "floor"), [("heldout", 0.97), ("dev", 0.99)])
def test_precision_and_recall_on_the_corpus(split: str, floor: float) -> None:
    bench = _benchmark()
    outcomes = bench.classify(bench.load_split(split), bench.load_groups())  # type: ignore[attr-defined]
    scores = bench.scores(outcomes)  # type: ignore[attr-defined]
    assert scores["precision"] >= floor and scores["recall"] >= floor, scores


def test_a_message_parsed_once_reads_alike_for_every_addressee() -> None:
    """The addressee-free parse shared between colleagues changes no reading (and a parse of
    another text is not used)."""
    from uncobench_z3.settings import parse_message

    roles: list[str | None] = [None, *TASK.roles]
    texts = [text for _, text in NATURAL] + [
        "Did he pass?",
        "all three candidates, please: the exact FY2026 allowance",
        "not the April one - the March clearance of Vance, passed or failed?",
    ]
    for text in texts:
        parsed = parse_message(VOCAB, text)
        for role in roles:
            for focus in (None, "vance"):
                plain = read_request(VOCAB, text, role, focus)
                assert read_request(VOCAB, text, role, focus, parsed) == plain
        other = parse_message(VOCAB, "Did he pass?")
        assert read_request(VOCAB, text, TASK.roles[0], None, other) == read_request(
            VOCAB, text, TASK.roles[0]
        )


_YES_NO_READING = """
import json, sys
from uncobench_z3.settings._request import read_request
from uncobench_z3.settings._vocabulary import Vocabulary
from uncobench_z3.spec import check_structure, load_spec
task = check_structure(load_spec(sys.argv[1])).task
request = read_request(Vocabulary.of(task), sys.argv[2])
print(json.dumps([list(request.facts), list(request.evidence.get("exact", ()))]))
"""


def test_a_yes_no_question_about_two_facts_reads_alike_in_every_process() -> None:
    """The evidence names the first yes/no fact in the task's order. It took the first of a
    set, so it depended on the process's string hashing (PYTHONHASHSEED 4 and 5 named the
    salary band here, the others the immunisation) and a record could differ between runs."""
    import os
    import subprocess

    spec = str(ROOT / "examples" / "healthcare_nurse_manager.json")
    question = "Is her salary band verified and is she immunised?"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _YES_NO_READING, spec, question],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        )
        for seed in range(6)
    ]
    readings = {run.communicate(timeout=120)[0] for run in runs}
    assert all(run.returncode == 0 for run in runs)
    assert len(readings) == 1
    facts, exact = json.loads(readings.pop())
    assert facts == ["immunised", "band_verified"]
    assert exact == ["a yes/no question about immunisation compliance"]
