"""The exact chance that an imprecise reply gives the gold answer anyway.

An Incomplete reply states one record imprecisely (a range, or a set of options). Under a
*uniform prior over the values the reply allows* - every grid value of the range (each
multiple of the fact's step, each day, each member listed), the other records at their true
values - the **gold chance** is

    (allowed values under which the output is the gold answer) / (allowed values),

an exact :class:`~fractions.Fraction`. A reply is valid only when it is at most 1/2: guessing
a value inside it is no better than a coin toss.

Ranges can hold millions of values, so they are counted by structure, not one by one:

* the conditions on the fact cut the range into intervals on which every condition keeps its
  truth value (each threshold contributes the codes next to it as cut points), so on each
  interval the eligibility of every candidate is constant;
* on an interval where the output does not depend on the value (the slot is no rule operand
  of the candidate chosen there), one evaluation decides the whole interval;
* where it does (the slot is an operand of the eligible candidate), the rounded result is a
  monotone function of the one value - every operation is monotone in each operand with the
  others fixed (sums, weighted averages and capped sums increase; a difference, product or
  percentage is linear; a ratio or percentage change is linear or ``c/x`` on a domain without
  zero), and rounding is monotone - so the values giving the gold number form one interval,
  found by two binary searches.

``tests/test_chance.py`` cross-checks the count against enumerating every value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ..spec import Outcome, Slot, TypedTask, Value
from ..spec._values import INT_OR_FRACTION
from ._imprecise import Imprecision

#: Intervals up to this many values are enumerated directly (cheaper than searching).
ENUMERATE_BELOW = 8


@dataclass(frozen=True)
class GoldChance:
    """How many of the values a reply allows give the gold answer."""

    gold: int
    allowed: int

    @property
    def probability(self) -> Fraction:
        return Fraction(self.gold, self.allowed)

    def text(self) -> str:
        return f"{self.probability} ({self.gold} of {self.allowed} allowed values)"


def gold_chance(task: TypedTask, gold: Outcome, slot: Slot, statement: Imprecision) -> GoldChance:
    """The exact gold chance of ``statement`` about ``slot`` (the other records true)."""
    fact = task.facts[slot[1]]
    at = _SlotOutcome(task, slot)

    def same(value: Value) -> bool:
        return at(value).same_output(gold)

    if statement.options is not None:
        options = list(dict.fromkeys(statement.options))
        return GoldChance(sum(same(v) for v in options), len(options))
    assert statement.low is not None and statement.high is not None
    low, high = fact.code(statement.low), fact.code(statement.high)
    assert not isinstance(low, bool) and not isinstance(high, bool)
    if high < low:
        raise ValueError(f"an empty range for {slot}")
    count = 0
    for start, end in _intervals(task, slot, low, high):
        count += _count_interval(task, gold, slot, start, end, at)
    return GoldChance(count, high - low + 1)


class _SlotOutcome:
    """``task.outcome`` with one slot changed, without re-evaluating the other candidates
    (their eligibility does not depend on the slot). Same semantics; the tests compare."""

    def __init__(self, task: TypedTask, slot: Slot) -> None:
        self.task = task
        self.slot = slot
        self.values = task.values
        self.others = {c: task.eligible(c, task.values) for c in task.candidates if c != slot[0]}

    def __call__(self, value: Value) -> Outcome:
        task, (candidate, key) = self.task, self.slot
        values = self.values
        own = all(
            cond.holds(value if cond.fact == key else values[(candidate, cond.fact)])
            for cond in task.conditions
        )
        eligible = tuple(c for c in task.candidates if (own if c == candidate else self.others[c]))
        if not eligible:
            return Outcome("none")
        if len(eligible) > 1:
            return Outcome("ambiguous", eligible=eligible)
        chosen = eligible[0]
        operands = [
            value if (chosen, k) == self.slot else values[(chosen, k)] for k in task.rule.operands
        ]
        number = task.rule.rounded([Fraction(v) for v in operands])  # type: ignore[arg-type]
        return Outcome("eligible", chosen, number, eligible)


def _cuts(task: TypedTask, slot: Slot) -> set[int]:
    """Codes where a condition on the slot's fact may change its truth value."""
    fact = task.facts[slot[1]]
    cuts: set[int] = set()
    for cond in task.conditions:
        if cond.fact != slot[1]:
            continue
        operands = cond.operand if isinstance(cond.operand, tuple) else (cond.operand,)
        for operand in operands:
            if fact.type in ("int", "decimal"):
                assert isinstance(operand, INT_OR_FRACTION) and not isinstance(operand, bool)
                q = Fraction(operand) / fact.step
            else:
                code = fact.code(operand)
                assert not isinstance(code, bool)
                q = Fraction(code)
            floor = q.numerator // q.denominator
            # a truth value changes between c-1 and c only next to a threshold
            cuts.update((floor, floor + 1, floor + 2))
    return cuts


def _intervals(task: TypedTask, slot: Slot, low: int, high: int) -> list[tuple[int, int]]:
    cuts = sorted(c for c in _cuts(task, slot) if low < c <= high)
    starts = [low, *cuts]
    ends = [c - 1 for c in cuts] + [high]
    return list(zip(starts, ends, strict=True))


def _count_interval(
    task: TypedTask,
    gold: Outcome,
    slot: Slot,
    start: int,
    end: int,
    at: Callable[[Value], Outcome],
) -> int:
    fact = task.facts[slot[1]]
    if end - start < ENUMERATE_BELOW:
        return sum(at(fact.value_of(code)).same_output(gold) for code in range(start, end + 1))
    here = at(fact.value_of(start))
    candidate, key = slot
    if here.kind != "eligible" or here.candidate != candidate or key not in task.rule.operands:
        return (end - start + 1) if here.same_output(gold) else 0
    # the number moves with the value: count the codes whose rounded result is gold's
    if gold.kind != "eligible" or gold.candidate != candidate:
        return 0
    assert gold.number is not None
    operands = [task.values[(candidate, k)] for k in task.rule.operands]
    position = task.rule.operands.index(key)

    def number(code: int) -> Fraction:
        values = list(operands)
        values[position] = fact.value_of(code)
        return task.rule.rounded([Fraction(v) for v in values])  # type: ignore[arg-type]

    rising = number(start) <= number(end)

    def first(predicate: Callable[[Fraction], bool]) -> int:
        """The first code in [start, end + 1] from which ``predicate`` holds (monotone)."""
        lo, hi = start, end + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if predicate(number(mid)):
                hi = mid
            else:
                lo = mid + 1
        return lo

    target = gold.number
    if rising:
        return first(lambda n: n > target) - first(lambda n: n >= target)
    return first(lambda n: n < target) - first(lambda n: n <= target)
