"""The typed view of a structurally valid spec, and the reference semantics.

:class:`TypedTask` is what every later stage works on: facts with exact domains, conditions
with typed operands, the rule with exact weights, and the instance values per candidate.
Its ``holds`` / ``value`` methods are the *definition* of what a condition and a rule mean,
written directly on values (Fractions, dates, members). The solver encoding is a second,
independent implementation on integer codes; tests cross-check the two.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from .._kept_property import kept_property
from ._model import Operation, Operator, TaskSpec
from ._rounding import RoundingMode, round_fraction
from ._values import INT_OR_FRACTION, FactType, Value, day_number, from_day_number

Slot = tuple[str, str]
"""(candidate id, fact key): one cell of the records."""

_RESULTS_KEPT = 4096
"""operand tuples a rule remembers its rounded result of (emptied when full: a construction
stage may try many)"""


@dataclass(frozen=True)
class TypedFact:
    key: str
    owner: str
    label: str
    type: FactType
    unit: str | None
    context: str
    other_contexts: tuple[str, ...]
    low: Value | None = None
    high: Value | None = None
    step: Fraction = Fraction(1)
    members: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()

    @property
    def is_numeric(self) -> bool:
        return self.type in ("int", "decimal")

    @property
    def is_ordered(self) -> bool:
        return self.type in ("int", "decimal", "date")

    # -- integer codes: how the solver sees a value ------------------------------------------
    def code(self, value: Value) -> int | bool:
        """The solver code of a value: multiples of ``step``, day numbers, member indexes."""
        if self.type == "bool":
            assert isinstance(value, bool)
            return value
        if self.type == "date":
            assert isinstance(value, _dt.date)
            return day_number(value)
        if self.type == "enum":
            assert isinstance(value, str)
            return self.members.index(value)
        assert isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool)
        # value / step in integers (no intermediate Fraction: this runs for every record)
        step = self.step
        units, rest = divmod(value.numerator * step.denominator, value.denominator * step.numerator)
        if rest:
            raise ValueError(f"{value} is not a multiple of the step {self.step}")
        return units

    def value_of(self, code: int | bool) -> Value:
        if self.type == "bool":
            return bool(code)
        assert not isinstance(code, bool)
        if self.type == "date":
            return from_day_number(code)
        if self.type == "enum":
            return self.members[code]
        # code x step in integers (no Fraction arithmetic: a build reads about 400 values a
        # group, and the operator's type dispatch was most of each one's cost)
        step = self.step
        if self.type == "int":
            if step.denominator == 1:
                return code * step.numerator
            return int(code * step)
        return Fraction(code * step.numerator, step.denominator)

    @kept_property
    def _step_ratio(self) -> tuple[int, int]:
        """the step's numerator and denominator: a ``Fraction``'s are properties, each read a
        Python call (:meth:`contains` reads them for every number of every record checked)"""
        return self.step.numerator, self.step.denominator

    @kept_property
    def _code_range(self) -> tuple[int, int]:  # a fact is immutable: computed once
        if self.type == "enum":
            return 0, len(self.members) - 1
        assert self.low is not None and self.high is not None
        low, high = self.code(self.low), self.code(self.high)
        assert not isinstance(low, bool) and not isinstance(high, bool)
        return low, high

    def code_range(self) -> tuple[int, int]:
        """Inclusive range of codes (not for booleans)."""
        return self._code_range

    def domain_size(self) -> int:
        if self.type == "bool":
            return 2
        low, high = self.code_range()
        return high - low + 1

    def domain_values(self) -> list[Value]:
        """Every admissible value, in order (only for small domains)."""
        if self.type == "bool":
            return [False, True]
        low, high = self.code_range()
        return [self.value_of(code) for code in range(low, high + 1)]

    def contains(self, value: Value) -> bool:
        """Whether ``value`` is in the fact's domain (of its type, on a step, within bounds)."""
        kind = self.type
        if kind == "bool":
            return isinstance(value, bool)
        if kind == "enum":
            return value in self.members
        if kind != "date" and type(value) in INT_OR_FRACTION:
            # a number (not a bool) of a numeric fact: its code as :meth:`code` makes it,
            # without the call (this runs for every record of every spec checked)
            step_numerator, step_denominator = self._step_ratio
            numerator, denominator = value.as_integer_ratio()  # type: ignore[union-attr]
            units, rest = divmod(numerator * step_denominator, denominator * step_numerator)
            low, high = self._code_range
            return not rest and low <= units <= high
        try:
            code = self.code(value)
        except (ValueError, AssertionError):
            return False
        low, high = self._code_range
        return isinstance(code, int) and low <= code <= high


def _compare(value: Value, op: str, threshold: Value) -> bool:
    # exact types (``type(True) is bool``, which is not in the tuple)
    if type(value) in INT_OR_FRACTION and type(threshold) in INT_OR_FRACTION:
        # two numbers (most comparisons, once per condition per record evaluated): none of
        # the type checks below applies
        if op == ">=":
            return value >= threshold  # type: ignore[operator]
        if op == "<=":
            return value <= threshold  # type: ignore[operator]
        if op == ">":
            return value > threshold  # type: ignore[operator]
        if op == "<":
            return value < threshold  # type: ignore[operator]
    if op == "==":
        return value == threshold
    if op == "!=":
        return value != threshold
    if isinstance(value, bool) or isinstance(threshold, bool):
        raise TypeError("booleans are only compared with == and !=")
    if isinstance(value, str) or isinstance(threshold, str):
        raise TypeError("enum members are only compared with ==, !=, in, not in")
    a: Fraction | int = day_number(value) if isinstance(value, _dt.date) else value
    b: Fraction | int = day_number(threshold) if isinstance(threshold, _dt.date) else threshold
    if op == ">=":
        return a >= b
    if op == ">":
        return a > b
    if op == "<=":
        return a <= b
    if op == "<":
        return a < b
    raise ValueError(f"unknown comparison {op}")


@dataclass(frozen=True)
class TypedCondition:
    id: str
    fact: str
    op: Operator
    operand: Value | tuple[Value, ...]
    text: str | None = None

    def holds(self, value: Value) -> bool:
        """The reference meaning of the condition on one value."""
        if self.op == "in":
            assert isinstance(self.operand, tuple)
            return value in self.operand
        if self.op == "not in":
            assert isinstance(self.operand, tuple)
            return value not in self.operand
        if self.op == "between":
            assert isinstance(self.operand, tuple)
            low, high = self.operand
            return _compare(value, ">=", low) and _compare(value, "<=", high)
        assert not isinstance(self.operand, tuple)
        return _compare(value, self.op, self.operand)


@dataclass(frozen=True)
class TypedRule:
    operation: Operation
    operands: tuple[str, ...]
    label: str
    unit: str
    digits: int
    mode: RoundingMode
    weights: tuple[Fraction, ...] = ()

    def value(self, operands: Sequence[Fraction | int]) -> Fraction:
        """The unrounded result, exactly (the reference definition of each operation)."""
        a = [x if type(x) is Fraction else Fraction(x) for x in operands]  # (each a Fraction)
        op = self.operation
        if op == "sum":
            return sum(a, Fraction(0))
        if op == "difference":
            return a[0] - a[1]
        if op == "product":
            result = Fraction(1)
            for x in a:
                result *= x
            return result
        if op == "ratio":
            return a[0] / a[1]
        if op == "percentage_of":
            return a[0] * a[1] / 100
        if op == "weighted_average":
            total = sum(self.weights, Fraction(0))
            return sum((w * x for w, x in zip(self.weights, a, strict=True)), Fraction(0)) / total
        if op == "capped_sum":
            return min(sum(a[:-1], Fraction(0)), a[-1])
        if op == "percentage_change":
            return (a[1] - a[0]) / a[0] * 100
        raise ValueError(f"unknown operation {op}")

    @kept_property
    def _results(self) -> dict[tuple[Fraction | int, ...], Fraction]:
        """What :meth:`rounded` gave, by the operands' values: scoring evaluates the chosen
        candidate's operands once for each completion it tries, and most leave them as they
        were."""
        return {}

    def rounded(self, operands: Sequence[Fraction | int]) -> Fraction:
        """The result rounded once, as the answer states it (the reference definition)."""
        memo = self._results
        key = tuple(operands)  # (equal numbers hash alike: 2 and Fraction(2) give one result)
        found = memo.get(key)
        if found is None:
            exact = _value_in_integers(self.operation, key, self.weights)
            if exact is None:  # (an operation or operands it leaves to the definition)
                exact = self.value(operands)
            found = round_fraction(exact, self.digits, self.mode)
            if len(memo) >= _RESULTS_KEPT:
                memo.clear()
            memo[key] = found
        return found


def _value_in_integers(
    operation: str, operands: tuple[Fraction | int, ...], weights: tuple[Fraction, ...]
) -> Fraction | None:
    """:meth:`TypedRule.value` of ``operands`` (ints and Fractions), computed as one
    numerator and denominator in integers and made a Fraction once: every Fraction operation
    of the definition normalises its result and dispatches on its operands' types, and the
    rule's operands are evaluated for every completion scoring tries, every reading of a
    built-in agent, every first sample of a group. None where the definition raises or may
    (an operand of another type, a zero denominator, too few operands or weights), or for an
    operation this does not know: the caller then asks :meth:`TypedRule.value`."""
    nums: list[int] = []
    dens: list[int] = []
    for x in operands:
        kind = type(x)
        if kind is int:
            nums.append(x)  # type: ignore[arg-type]
            dens.append(1)
        elif kind is Fraction:
            nums.append(x.numerator)
            dens.append(x.denominator)
        else:
            return None
    if operation in ("sum", "capped_sum"):
        count = len(nums) if operation == "sum" else len(nums) - 1
        if count < 0:
            return None
        num, den = 0, 1
        for n, d in zip(nums[:count], dens[:count], strict=True):
            num, den = num * d + n * den, den * d
        if operation == "capped_sum" and nums[-1] * den < num * dens[-1]:
            num, den = nums[-1], dens[-1]  # (min(sum, cap): the cap only when it is smaller)
    elif operation == "difference" and len(nums) >= 2:
        num, den = nums[0] * dens[1] - nums[1] * dens[0], dens[0] * dens[1]
    elif operation == "product":
        num, den = 1, 1
        for n, d in zip(nums, dens, strict=True):
            num, den = num * n, den * d
    elif operation == "ratio" and len(nums) >= 2 and nums[1]:
        num, den = nums[0] * dens[1], dens[0] * nums[1]
    elif operation == "percentage_of" and len(nums) >= 2:
        num, den = nums[0] * nums[1], dens[0] * dens[1] * 100
    elif operation == "weighted_average" and len(nums) == len(weights):
        num, den, total_num, total_den = 0, 1, 0, 1
        for w, n, d in zip(weights, nums, dens, strict=True):
            wn, wd = w.numerator * n, w.denominator * d
            num, den = num * wd + wn * den, den * wd
            total_num = total_num * w.denominator + w.numerator * total_den
            total_den *= w.denominator
        if not total_num:
            return None
        num, den = num * total_den, den * total_num
    elif operation == "percentage_change" and len(nums) >= 2 and nums[0]:
        # (a1 - a0) / a0 * 100
        num = (nums[1] * dens[0] - nums[0] * dens[1]) * dens[0] * 100
        den = dens[1] * dens[0] * nums[0]
    else:
        return None
    return Fraction(num, den)  # (normalised: the sign to the numerator, lowest terms)


OutcomeKind = Literal["eligible", "none", "ambiguous"]


@dataclass(frozen=True)
class Outcome:
    """What a full assignment of facts decides.

    ``eligible``: exactly one candidate qualifies (with the rounded number);
    ``none``: nobody qualifies (no number); ``ambiguous``: two or more qualify, which is
    never a valid answer and always counts as differing from gold.
    """

    kind: OutcomeKind
    candidate: str | None = None
    number: Fraction | None = None
    eligible: tuple[str, ...] = ()

    def same_output(self, other: Outcome) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "ambiguous":
            return True
        return self.candidate == other.candidate and self.number == other.number


@dataclass
class TypedTask:
    """A structurally valid spec, typed. Build it with ``check_structure``."""

    spec: TaskSpec
    candidates: tuple[str, ...]
    roles: tuple[str, ...]
    facts: dict[str, TypedFact]
    conditions: tuple[TypedCondition, ...]
    rule: TypedRule
    values: dict[Slot, Value] = field(default_factory=dict)
    alternatives: dict[Slot, dict[str, Value]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def has_values(self) -> bool:
        return bool(self.values)

    @kept_property
    def _facts_by_role(self) -> dict[str, tuple[str, ...]]:
        """Each role's facts, in order (a scripted colleague reads its own for every message:
        made once; the facts do not change after the task is made)."""
        found: dict[str, list[str]] = {}
        for key, fact in self.facts.items():
            found.setdefault(fact.owner, []).append(key)
        return {role: tuple(keys) for role, keys in found.items()}

    def facts_of(self, role: str) -> list[str]:
        return list(self._facts_by_role.get(role, ()))

    def slots_of(self, role: str) -> list[Slot]:
        return [(c, f) for c in self.candidates for f in self.facts_of(role)]

    def all_slots(self, facts: Collection[str] | None = None) -> list[Slot]:
        """Every record, each candidate's facts in the facts' order; ``facts``: only those."""
        if facts is None:
            return [(c, f) for c in self.candidates for f in self.facts]
        chosen = [f for f in self.facts if f in facts]
        return [(c, f) for c in self.candidates for f in chosen]

    @kept_property
    def _candidate_names(self) -> dict[str, str]:
        names: dict[str, str] = {}
        for entry in self.spec.candidates:  # (the first of an id, as a search would find)
            names.setdefault(entry.id, entry.name)
        return names

    def candidate_name(self, candidate: str) -> str:
        """The candidate's name (the spec is frozen: the table is made once)."""
        name = self._candidate_names.get(candidate)
        if name is None:
            raise KeyError(candidate)
        return name

    def role_name(self, role: str) -> str:
        for entry in self.spec.roles:
            if entry.id == role:
                return entry.name
        raise KeyError(role)

    @kept_property
    def required_contexts(self) -> dict[str, str]:
        """Fact key -> the context the task requires (made once: every sample's record reads
        it; do not change it)."""
        return {key: fact.context for key, fact in self.facts.items()}

    def decision_facts(self) -> set[str]:
        """Facts that some condition or the rule reads."""
        return {c.fact for c in self.conditions} | set(self.rule.operands)

    # -- reference semantics -----------------------------------------------------------------
    def eligible(self, candidate: str, values: Mapping[Slot, Value]) -> bool:
        # a loop, not all() over a generator: a frame resumed less each condition (scoring
        # evaluates this for every completion it tries)
        for cond in self.conditions:  # noqa: SIM110
            if not cond.holds(values[(candidate, cond.fact)]):
                return False
        return True

    def outcome(self, values: Mapping[Slot, Value] | None = None) -> Outcome:
        """Decide from ``values`` (default: the instance values), exactly."""
        values = self.values if values is None else values
        return self.outcome_of(
            tuple(c for c in self.candidates if self.eligible(c, values)), values
        )

    def outcome_of(self, eligible: tuple[str, ...], values: Mapping[Slot, Value]) -> Outcome:
        """:meth:`outcome` of ``values``, given the candidates eligible with them (in order)."""
        if not eligible:
            return Outcome("none")
        if len(eligible) > 1:
            return Outcome("ambiguous", eligible=eligible)
        chosen = eligible[0]
        operands: list[Fraction | int] = []
        for key in self.rule.operands:
            value = values[(chosen, key)]
            assert isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool)
            operands.append(value)  # (an int as it is: the rule makes every operand a Fraction)
        return Outcome("eligible", chosen, self.rule.rounded(operands), eligible)

    def with_values(self, changes: Mapping[Slot, Value]) -> dict[Slot, Value]:
        merged = dict(self.values)
        merged.update(changes)
        return merged
