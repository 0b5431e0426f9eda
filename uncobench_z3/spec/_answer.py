"""The answer to a task as it is written down: decision word, candidate, number and unit."""

from __future__ import annotations

from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from .._plain_reads import plain_reads
from ._typed import Outcome, TypedTask
from ._values import format_fraction, format_value


@plain_reads
class Answer(BaseModel):
    """A determined answer. ``number`` is an exact decimal string at the rule's rounding."""

    model_config = ConfigDict(frozen=True)

    decision: str
    eligible: bool
    candidate: str | None = None
    candidate_name: str | None = None
    number: str | None = None
    unit: str | None = None

    @classmethod
    def from_outcome(cls, task: TypedTask, outcome: Outcome) -> Answer:
        if outcome.kind == "ambiguous":
            raise ValueError("an ambiguous outcome is not an answer")
        decision = task.spec.decision
        if outcome.kind == "none":
            return cls(decision=decision.negative, eligible=False)
        assert outcome.candidate is not None and outcome.number is not None
        return cls(
            decision=decision.positive,
            eligible=True,
            candidate=outcome.candidate,
            candidate_name=task.candidate_name(outcome.candidate),
            number=format_fraction(outcome.number, max(task.rule.digits, 0)),
            unit=task.rule.unit,
        )

    def number_value(self) -> Fraction | None:
        number = self.number
        if number is None:
            return None
        # a plain decimal ("-1234.5", as from_outcome writes it) from its digits as integers:
        # Fraction's own reading of a text goes through a regular expression (several times
        # the cost; each group's judge and each new answer scored read one); any other text
        # is read by it as before
        whole, point, decimals = number.partition(".")
        digits = whole[1:] if whole[:1] == "-" else whole
        if digits.isdigit() and number.isascii() and (decimals.isdigit() or not point):
            return Fraction(int(whole + decimals), 10 ** len(decimals))
        return Fraction(number)

    def to_outcome(self) -> Outcome:
        if not self.eligible:
            return Outcome("none")
        return Outcome("eligible", self.candidate, self.number_value(), (self.candidate or "",))

    def text(self) -> str:
        if not self.eligible:
            return f"{self.decision} (no eligible candidate)"
        number = self.number_value()
        assert number is not None and self.number is not None
        digits = len(self.number.partition(".")[2])
        amount = format_value(number, self.unit, digits=digits)
        return f"{self.decision} {self.candidate_name}: {amount}"


def describe_outcome(task: TypedTask, outcome: Outcome) -> str:
    """A short human description of any outcome, including an ambiguous one."""
    if outcome.kind == "ambiguous":
        names = ", ".join(task.candidate_name(c) for c in outcome.eligible)
        return f"ambiguous ({names} all eligible)"
    return Answer.from_outcome(task, outcome).text()
