"""Solver error attribution and justification on hand-made traces; minimum rounds.

The mining task: Marcus Vance is the only eligible candidate (relocation grant 45,000 + field
allowance 15,000 = 60,000 AUD). Traces state records exactly as the colleagues would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    Action,
    AnswerAction,
    AnswerKey,
    AskAction,
    Conversation,
    ParsedAnswer,
    ReplyRecord,
    RoleRequest,
    RoundRecord,
    SampleJob,
    _attribution,
    attribute_error,
    group_digest,
    justify_answer,
    minimum_rounds,
    parse_answer,
    received_evidence,
    run_sample,
    typed_task,
)
from uncobench_z3.evaluation._evidence import final_evidence
from uncobench_z3.settings import SettingName, StatedValue
from uncobench_z3.solver import SolverBudget
from uncobench_z3.spec import Slot, to_json_scalar

ROOT = Path(__file__).resolve().parent.parent
GROUP = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
TASK = typed_task(GROUP)
KEY = AnswerKey.from_task(TASK)
GOLD = GROUP.gold


def truth(slot: Slot) -> StatedValue:
    candidate, fact = slot
    return StatedValue(
        candidate=candidate,
        fact=fact,
        context=TASK.facts[fact].context,
        value=to_json_scalar(TASK.values[slot]),
    )


def stated(candidate: str, fact: str, context: str | None = None, **value: object) -> StatedValue:
    return StatedValue.model_validate(
        {
            "candidate": candidate,
            "fact": fact,
            "context": context or TASK.facts[fact].context,
            **value,
        }
    )


def trace(*rounds: list[StatedValue]) -> list[RoundRecord]:
    return [
        RoundRecord(
            round=i,
            action="ask",
            replies=(ReplyRecord(role="x", question="q", text="t", stated=tuple(statements)),),
        )
        for i, statements in enumerate(rounds, start=1)
    ]


def everything_but(*missing: Slot) -> list[StatedValue]:
    return [truth(slot) for slot in TASK.all_slots() if slot not in missing]


def answer(decision: str, candidate: str | None = None, number: str | None = None) -> ParsedAnswer:
    return parse_answer(AnswerAction(decision=decision, candidate=candidate, number=number), KEY)


WRONG_ALLOWANCE = stated("vance", "field_allowance", "FY2025 site allowance table", value="12500")


def test_full_evidence_and_a_wrong_answer_is_an_integration_error() -> None:
    result = attribute_error(TASK, GOLD, trace(everything_but()), answer("Do not appoint"))
    assert result.label == "integration_error"
    assert result.received == result.needed == 21


def test_a_wrong_context_value_that_explains_the_answer_is_misled() -> None:
    slot = ("vance", "field_allowance")
    result = attribute_error(
        TASK,
        GOLD,
        trace([*everything_but(slot), WRONG_ALLOWANCE]),
        answer("Appoint", "Marcus Vance", "57500"),
    )
    assert result.label == "misled"
    assert result.accepted == (
        "Marcus Vance's field establishment allowance for "
        "'FY2025 site allowance table' (wrong context)",
    )
    assert result.received == 20


def test_an_accepted_defect_that_does_not_explain_the_answer_is_a_gathering_failure() -> None:
    slot = ("vance", "field_allowance")
    result = attribute_error(
        TASK,
        GOLD,
        trace([*everything_but(slot), WRONG_ALLOWANCE]),
        answer("Appoint", "Marcus Vance", "99999"),
    )
    assert result.label == "gathering_failure"


def test_an_imprecise_statement_taken_at_face_value_is_misled() -> None:
    slot = ("vance", "clearance")
    vague = stated("vance", "clearance", options=["passed", "failed"])
    result = attribute_error(
        TASK, GOLD, trace([*everything_but(slot), vague]), answer("Do not appoint")
    )
    assert result.label == "misled" and "stated imprecisely" in result.accepted[0]


def test_a_range_taken_at_face_value_is_misled() -> None:
    slot = ("vance", "hardrock_years")  # 17 years; the condition needs >= 12
    vague = stated("vance", "hardrock_years", low=10, high=25)
    result = attribute_error(
        TASK, GOLD, trace([*everything_but(slot), vague]), answer("Do not appoint")
    )
    assert result.label == "misled"


def test_a_corrected_defect_is_not_accepted() -> None:
    slot = ("vance", "field_allowance")
    corrected = trace([*everything_but(slot), WRONG_ALLOWANCE], [truth(slot)])
    evidence, accepted = received_evidence(TASK, corrected)
    assert slot in evidence and accepted == {}
    result = attribute_error(TASK, GOLD, corrected, answer("Appoint", "Marcus Vance", "57500"))
    assert result.label == "integration_error"


def test_missing_records_that_leave_the_answer_open_are_a_gathering_failure() -> None:
    finance = [
        ("vance", "relocation_grant"),
        ("natarajan", "relocation_grant"),
        ("ruiz", "relocation_grant"),
    ]
    result = attribute_error(
        TASK, GOLD, trace(everything_but(*finance)), answer("Appoint", "Marcus Vance", "50000")
    )
    assert result.label == "gathering_failure" and result.received == 18


def test_records_that_do_not_matter_missing_still_determine_the_answer() -> None:
    # Priya Natarajan is excluded by her 9 years alone; not knowing her grant changes nothing
    result = attribute_error(
        TASK,
        GOLD,
        trace(everything_but(("natarajan", "relocation_grant"))),
        answer("Appoint", "Priya Natarajan", "53000"),
    )
    assert result.label == "integration_error"


def test_conflicting_values_count_as_not_received() -> None:
    slot = ("vance", "relocation_grant")
    other = stated("vance", "relocation_grant", value="40000")
    evidence, _ = received_evidence(TASK, trace(everything_but(), [other]))
    assert slot not in evidence and len(evidence) == len(TASK.all_slots()) - 1


@pytest.mark.parametrize(
    ("statements", "label"),
    [(everything_but(), "integration_error"), ([], "gathering_failure")],
)
def test_no_answer_at_all(statements: list[StatedValue], label: str) -> None:
    result = attribute_error(TASK, GOLD, trace(statements), None)
    assert result.label == label


def test_a_defect_does_not_make_a_missing_answer_misled() -> None:
    slot = ("vance", "field_allowance")
    result = attribute_error(TASK, GOLD, trace([*everything_but(slot), WRONG_ALLOWANCE]), None)
    assert result.label == "gathering_failure"


def test_attribution_is_the_same_in_any_order() -> None:
    slot = ("vance", "field_allowance")
    cases = [
        (trace(everything_but()), answer("Do not appoint")),
        (
            trace([*everything_but(slot), WRONG_ALLOWANCE]),
            answer("Appoint", "Marcus Vance", "57500"),
        ),
        (trace([]), None),
    ]
    forward = [attribute_error(TASK, GOLD, t, a) for t, a in cases]
    backward = [attribute_error(TASK, GOLD, t, a) for t, a in reversed(cases)]
    assert forward == list(reversed(backward))


# -- justification of correct answers ----------------------------------------------------------
def slots_of(role: str) -> list[Slot]:
    return [slot for slot in TASK.all_slots() if TASK.facts[slot[1]].owner == role]


def test_full_evidence_justifies_the_answer() -> None:
    result = justify_answer(TASK, GOLD, trace(everything_but()))
    assert result.label == "justified" and (result.received, result.needed) == (21, 21)


def test_a_guess_that_skipped_a_role_is_lucky() -> None:
    """Without the security office, Marcus Vance's clearance could have failed (nobody
    eligible then): the right answer was not determined by what the agent had."""
    result = justify_answer(TASK, GOLD, trace(everything_but(*slots_of("security"))))
    assert result.label == "lucky" and result.received == 18


def test_an_imprecise_statement_counts_at_face_value() -> None:
    slot = ("vance", "hardrock_years")  # 17 years; the condition needs >= 12
    enough = stated("vance", "hardrock_years", low=15, high=25)
    result = justify_answer(TASK, GOLD, trace([*everything_but(slot), enough]))
    assert result.label == "justified" and result.imprecise == 1
    too_wide = stated("vance", "hardrock_years", low=10, high=25)
    assert justify_answer(TASK, GOLD, trace([*everything_but(slot), too_wide])).label == "lucky"


def test_a_wrong_context_value_says_nothing_about_the_required_one() -> None:
    slot = ("vance", "field_allowance")
    accepted = trace([*everything_but(slot), WRONG_ALLOWANCE])
    assert justify_answer(TASK, GOLD, accepted).label == "lucky"
    resolved = trace([*everything_but(slot), WRONG_ALLOWANCE], [truth(slot)])
    assert justify_answer(TASK, GOLD, resolved).label == "justified"


def test_contradictory_statements_justify_nothing() -> None:
    """Two disjoint ranges leave no completion at all: "no other output" would hold
    vacuously, so the verdict is unknown, never justified."""
    slot = ("vance", "hardrock_years")
    low = stated("vance", "hardrock_years", low=1, high=5)
    high = stated("vance", "hardrock_years", low=15, high=25)
    result = justify_answer(TASK, GOLD, trace([*everything_but(slot), low, high]))
    assert result.label == "unknown"


def test_a_shared_solver_gives_the_same_verdicts_in_any_order() -> None:
    cases = [
        trace(everything_but()),
        trace(everything_but(*slots_of("security"))),
        trace([*everything_but(("vance", "field_allowance")), WRONG_ALLOWANCE]),
    ]
    fresh = [justify_answer(TASK, GOLD, t).label for t in cases]
    shared = [justify_answer(TASK, GOLD, t, group_hash="mining").label for t in reversed(cases)]
    assert fresh == list(reversed(shared)) == ["justified", "lucky", "lucky"]


def test_a_groups_judge_and_labels_are_shared_by_equal_budgets_alone() -> None:
    """The group tables key the attribution budget apart (by identity, unhashed): a budget
    equal to it shares its judge and labels, as an equal key did; another budget has its own,
    and forgetting the group drops both."""
    default = _attribution.ATTRIBUTION_BUDGET
    equal, other = SolverBudget(timeout_ms=default.timeout_ms), SolverBudget(timeout_ms=7)
    assert equal == default and equal is not default
    judge = _attribution.shared_judge("budgets", TASK, GOLD)
    assert _attribution.shared_judge("budgets", TASK, GOLD, equal) is judge
    assert _attribution.shared_judge("budgets", TASK, GOLD, other) is not judge
    assert _attribution._group_memo("budgets", equal) is _attribution._group_memo(
        "budgets", default
    )
    assert _attribution._group_memo("budgets", other) is not _attribution._group_memo(
        "budgets", default
    )
    _attribution.forget_group("budgets")
    assert not any(k[0] == "budgets" for k in (*_attribution._memos, *_attribution._shared))


def test_a_label_remembered_by_the_evidence_read_is_the_label_of_the_trace() -> None:
    """Scoring hands in the evidence it has read, and the group's label is then remembered by
    that evidence. Every case gets the label (and counts) its trace gets from scratch, in
    either order; two cases differ only in an imprecise statement."""
    slot = ("vance", "hardrock_years")
    cases = [
        trace(everything_but()),
        trace(everything_but(*slots_of("security"))),
        trace([*everything_but(slot), stated("vance", "hardrock_years", low=15, high=25)]),
        trace([*everything_but(slot), stated("vance", "hardrock_years", low=10, high=25)]),
        trace([*everything_but(("vance", "field_allowance")), WRONG_ALLOWANCE]),
        trace(
            [
                *everything_but(slot),
                stated("vance", "hardrock_years", low=1, high=5),
                stated("vance", "hardrock_years", low=15, high=25),
            ]
        ),
    ]
    fresh = [justify_answer(TASK, GOLD, t) for t in cases]
    assert [j.label for j in fresh] == ["justified", "lucky", "justified", "lucky", "lucky",
                                         "unknown"]  # fmt: skip
    for run, order in enumerate((cases, cases[::-1])):
        labels = [
            justify_answer(
                TASK, GOLD, t, group_hash=f"evidence-{run}", evidence=final_evidence(TASK, t)
            )
            for t in order
        ]
        assert labels == [fresh[cases.index(t)] for t in order]


class Skipper:
    """Asks every colleague but the security office, then states the right answer anyway."""

    async def act(self, conversation: Conversation) -> Action:
        if not conversation.turns:
            return AskAction(
                requests=tuple(
                    RoleRequest(role=card.id, question="Please send all your records.")
                    for card in conversation.briefing.roles
                    if card.id != "security"
                )
            )
        return AnswerAction(decision="Appoint", candidate="Marcus Vance", number="60000")


async def test_a_guesser_is_lucky_and_careful_is_justified_in_a_real_run() -> None:
    guessed = await run_sample(
        SampleJob.make(GROUP, "reliable", "test/skipper"), lambda n, s: Skipper()
    )
    assert guessed.correct and guessed.justification is not None
    assert guessed.justification.label == "lucky" and guessed.attribution is None
    careful = await run_sample(SampleJob.make(GROUP, "misaligned", "builtin/careful"))
    assert careful.correct and careful.justification is not None
    assert careful.justification.label == "justified"
    wrong = await run_sample(SampleJob.make(GROUP, "misaligned", "builtin/naive"))
    assert not wrong.correct and wrong.justification is None and wrong.attribution is not None


# -- minimum rounds ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("setting", "fewest"),
    [("reliable", 2), ("misaligned", 3), ("incomplete", 3), ("missed", 3), ("mixed", 3)],
)
async def test_minimum_rounds_by_solver(setting: SettingName, fewest: int) -> None:
    """Reliable: ask everyone, answer. With a defect the first replies leave the answer
    open, so one round of follow-ups comes first."""
    assert await minimum_rounds(GROUP, setting, group_digest(GROUP)) == fewest


async def test_the_minimum_is_reached_by_careful_not_by_patient() -> None:
    careful = await run_sample(SampleJob.make(GROUP, "missed", "builtin/careful"))
    assert careful.rounds == careful.min_rounds == 3
    # patient waits after the silence: the wait delivers the pending reply (policy: one
    # wait round), so it needs no more rounds than re-asking; when waiting never delivers,
    # it loses the round it waited
    waits = await run_sample(SampleJob.make(GROUP, "missed", "builtin/patient"))
    assert waits.rounds == waits.min_rounds == 3
    never = SampleJob.make(GROUP, "missed", "builtin/patient", missed_wait=0)
    patient = await run_sample(never)
    assert patient.rounds == 4 and patient.min_rounds == 3
