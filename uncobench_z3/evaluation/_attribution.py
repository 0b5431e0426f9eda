"""Why a wrong answer was wrong, proved by the solver from what the agent actually received.

The *evidence* of an episode is every record a reply stated exactly and in the required
context (from the trace's stated values, not from what the agent claims to have read); a
record stated twice with different values counts as not received. A *defective statement*
is a wrong-context value or an imprecise one (a range or a set of options); the agent
*accepted* it when no exact required-context statement of the same record ever reached it.

Labels, in order of precedence:

1. ``integration_error`` - the evidence determined the gold answer: with the received
   records pinned, no completion of the others gives a different output (``unsat`` of
   ``GOAL_DIFFERS``). The agent had what it needed and still answered wrong (or ran out of
   rounds).
2. ``misled`` - the agent accepted defective statements, and they explain its answer: the
   evidence plus the defective statements taken at face value (a wrong-context value as
   the value, a range or options as a constraint) admit the answer the agent gave (``sat``),
   while the evidence plus the *true* values of those records do not (``unsat``). An output
   "admits" a positive answer when the named candidate is eligible and, if a number was
   given, its result rounds to it (other candidates are left free: a defect that makes two
   candidates eligible forces any answer to pick one); a negative answer when nobody is
   eligible.
3. ``gathering_failure`` - otherwise: the evidence left the answer open (step 1 is ``sat``:
   some completion of the records not received gives another output), and no accepted
   defect accounts for the answer.

``unknown`` when a query needed for the label was undecided by the solver (never counted as
any of the three). An episode without a usable answer (budget exhausted, nothing parsed)
can only be ``integration_error`` or ``gathering_failure``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..settings import StatedValue, stated_imprecision, stated_value
from ..solver import GOAL_DIFFERS, SolverBudget, TaskSolver
from ..solver._encoding import smt_and
from ..spec import (
    Answer,
    Outcome,
    Slot,
    TypedTask,
    Value,
    preimage,
    round_fraction,
)
from ._environment import RoundRecord
from ._scoring import ParsedAnswer

AttributionLabel = Literal["integration_error", "misled", "gathering_failure", "unknown"]
ATTRIBUTION_LABELS: tuple[AttributionLabel, ...] = (
    "integration_error",
    "misled",
    "gathering_failure",
    "unknown",
)
ATTRIBUTION_BUDGET = SolverBudget(timeout_ms=5000)


class Attribution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    label: AttributionLabel
    detail: str
    received: int
    """decision-relevant records received exactly in the required context"""
    needed: int
    """decision-relevant records of the task"""
    accepted: tuple[str, ...] = ()
    """the accepted defective statements, described"""


def received_evidence(
    task: TypedTask, trace: Sequence[RoundRecord]
) -> tuple[dict[Slot, Value], dict[Slot, StatedValue]]:
    """(exact required-context values, accepted defective statements) of a trace."""
    exact: dict[Slot, set[object]] = {}
    values: dict[Slot, Value] = {}
    defective: dict[Slot, StatedValue] = {}
    for record in trace:
        for reply in record.replies:
            for stated in reply.stated:
                slot = (stated.candidate, stated.fact)
                if stated.is_exact and stated.context == task.facts[stated.fact].context:
                    value = stated_value(task, stated)
                    exact.setdefault(slot, set()).add(value)
                    values[slot] = value
                else:
                    defective[slot] = stated
    evidence = {slot: values[slot] for slot, seen in exact.items() if len(seen) == 1}
    accepted = {slot: s for slot, s in defective.items() if slot not in exact}
    return evidence, accepted


def _describe(task: TypedTask, stated: StatedValue) -> str:
    who = task.candidate_name(stated.candidate)
    label = task.facts[stated.fact].label
    if stated.is_exact:
        return f"{who}'s {label} for {stated.context!r} (wrong context)"
    return f"{who}'s {label} stated imprecisely"


class _Attributor:
    def __init__(self, task: TypedTask, gold: Answer, budget: SolverBudget) -> None:
        self.task = task
        self.gold = gold.to_outcome()
        self.solver = TaskSolver(task, self.gold, budget)
        self.encoding = self.solver.encoding

    def equals(self, values: dict[Slot, Value]) -> list[str]:
        return [self.encoding.value_equals_term(slot, value) for slot, value in values.items()]

    def statement_term(self, slot: Slot, stated: StatedValue) -> str:
        if stated.is_exact:
            return self.encoding.value_equals_term(slot, stated_value(self.task, stated))
        statement = stated_imprecision(self.task, stated)
        if statement.options is not None:
            return self.encoding.value_in_set_term(slot, statement.options)
        assert statement.low is not None and statement.high is not None
        return self.encoding.value_in_range_term(slot, statement.low, statement.high)

    def answer_term(self, parsed: ParsedAnswer | None) -> str | None:
        """The outputs that agree with the agent's answer, as far as it says anything.

        A negative answer: nobody eligible. A positive one: the named candidate eligible and,
        if a number was given, its result rounding to that number. Other candidates are left
        free: a defect that makes two candidates eligible forces any answer to pick one.
        """
        if parsed is None or parsed.decision is None:
            return None
        if parsed.decision == "negative":
            return self.encoding.outcome_term(Outcome("none"))
        chosen = parsed.candidate
        if chosen is None or chosen not in self.task.candidates:
            return None
        terms = [self.encoding.eligible_name(chosen)]
        if parsed.number is not None:
            rule = self.task.rule
            number = round_fraction(Fraction(parsed.number), rule.digits, rule.mode)
            window = preimage(number, rule.digits, rule.mode)
            terms.append(self.encoding.in_interval_term(chosen, window))
        return smt_and(terms)


def attribute_error(
    task: TypedTask,
    gold: Answer,
    trace: Sequence[RoundRecord],
    parsed: ParsedAnswer | None,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
) -> Attribution:
    """Label a wrong answer (see the module docstring for the definitions)."""
    evidence, accepted = received_evidence(task, trace)
    decision = task.decision_facts()
    received = sum(1 for _, fact in evidence if fact in decision)
    needed = len(task.candidates) * len(decision)
    described = tuple(_describe(task, s) for _, s in sorted(accepted.items()))

    def result(label: AttributionLabel, detail: str) -> Attribution:
        return Attribution(
            label=label, detail=detail, received=received, needed=needed, accepted=described
        )

    attributor = _Attributor(task, gold, budget)
    pinned = attributor.equals(evidence)
    determined = attributor.solver.query("attribution-evidence", [], GOAL_DIFFERS, pinned)
    if determined.status == "unknown":
        return result("unknown", f"the solver could not decide: {determined.reason}")
    if determined.status == "unsat":
        return result(
            "integration_error",
            f"the evidence received ({received} of {needed} decision records) determined "
            "the gold answer",
        )
    # The sat model (a witness of another output) is not reported: Z3's models depend on
    # what the process solved before, and a sample's record must not depend on run order.
    answer = attributor.answer_term(parsed)
    if accepted and answer is not None:
        face = [attributor.statement_term(slot, s) for slot, s in accepted.items()]
        truth = attributor.equals({slot: task.values[slot] for slot in accepted})
        with_defects = attributor.solver.query(
            "attribution-face", [], None, [*pinned, *face, answer]
        )
        with_truth = attributor.solver.query(
            "attribution-truth", [], None, [*pinned, *truth, answer]
        )
        if "unknown" in (with_defects.status, with_truth.status):
            return result("unknown", "the solver could not decide whether a defect misled")
        if with_defects.status == "sat" and with_truth.status == "unsat":
            return result(
                "misled",
                f"accepted {'; '.join(described)}: taken at face value it admits the answer "
                "given, the true records do not",
            )
    return result(
        "gathering_failure",
        f"the evidence received ({received} of {needed} decision records) left the answer "
        "open (another output is consistent with it)",
    )
