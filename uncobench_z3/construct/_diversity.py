"""Diversity by design: every comparison operator and rounding mode, rounding that matters.

The scenario library states each condition the way its author thought of it ("at least 10
years", "assessed fit or fit with restrictions"). The generator may state it in a sibling
form, and takes the form whose operator the batch has used least:

* a lower bound ``>= t`` also as ``> t``, an upper bound ``<= t`` also as ``< t`` (same
  threshold), and either as ``between [a, b]`` when the template offers two thresholds
  ``a < b`` (the range between them);
* an enum condition is a set ``S`` of passing members: written ``== m`` (``S = {m}``),
  ``!= m`` (``S`` is every member but ``m``), ``in S`` or ``not in`` the others;
* a yes/no condition as ``== v`` or ``!= not v`` (the same meaning).

Rounding: each rule takes the rounding mode the batch has used least (all seven modes come
round in turn). When the rule's result always lies on its rounding grid - the result of a
sum, difference, capped sum, product or percentage of stepped values is a multiple of a
fixed *result grid* - rounding could never change it; then, for half of such rules, the
digits become the finest rounding that can (for a result grid of 1,000 AUD: the nearest
10,000), so that rounding is part of the task.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from itertools import pairwise

from ..spec import ROUNDING_MODES, NumericalRule, Operator, Rounding, RoundingMode, Scalar
from ..spec._values import parse_fraction
from ._library import ChosenCondition, ConditionTemplate, FactTemplate

LOWER = (">=", ">")
UPPER = ("<=", "<")
#: Share of rules whose rounding could never change the result that get coarser digits.
COARSEN_SHARE = 0.75


def _scalar_key(raw: Scalar) -> Fraction | str:
    if isinstance(raw, str) and raw[:4].isdigit() and raw[4:5] == "-":
        return raw  # an ISO date sorts as text
    try:
        return parse_fraction(raw)
    except ValueError:
        return str(raw)


def condition_variants(fact: FactTemplate) -> list[ChosenCondition]:
    """Every way of stating the fact's condition templates (see the module docstring)."""
    out: list[ChosenCondition] = []

    def add(op: Operator, value: Scalar | list[Scalar], template: ConditionTemplate) -> None:
        text = template.text if op == template.op else None
        variant = ConditionTemplate(op=op, choices=[value], text=text)
        out.append(ChosenCondition(fact, variant, value))

    for template in fact.conditions:
        if fact.type == "bool":
            for choice in template.choices:
                assert isinstance(choice, bool)
                wanted = choice if template.op == "==" else not choice
                add("==", wanted, template)
                add("!=", not wanted, template)
            continue
        if fact.type == "enum":
            members = list(fact.values or [])
            for choice in template.choices:
                passing = _passing_members(template.op, choice, members)
                if not passing or len(passing) == len(members):
                    continue
                failing = [m for m in members if m not in passing]
                if len(passing) == 1:
                    add("==", passing[0], template)
                if len(failing) == 1:
                    add("!=", failing[0], template)
                add("in", list(passing), template)
                add("not in", list(failing), template)
            continue
        family = LOWER if template.op in LOWER else UPPER if template.op in UPPER else None
        for choice in template.choices:
            if family is None:
                add(template.op, choice, template)
            else:
                for op in family:
                    add(op, choice, template)  # type: ignore[arg-type]
        if family is not None:
            thresholds = sorted(
                {c for c in template.choices if not isinstance(c, list)}, key=_scalar_key
            )
            for low, high in pairwise(thresholds):
                add("between", [low, high], template)
    return out


def _passing_members(op: str, choice: Scalar | list[Scalar], members: list[str]) -> list[str]:
    items = [str(c) for c in (choice if isinstance(choice, list) else [choice])]
    if op == "==":
        return [m for m in members if m in items]
    if op == "!=":
        return [m for m in members if m not in items]
    if op == "in":
        return [m for m in members if m in items]
    return [m for m in members if m not in items]


def result_grid(rule: NumericalRule, steps: Sequence[Fraction]) -> Fraction | None:
    """The grid every unrounded result of ``rule`` lies on (None: no fixed grid)."""
    op = rule.operation
    if op in ("sum", "difference", "capped_sum"):
        return _gcd(steps)
    if op == "weighted_average":
        weights = [parse_fraction(w) for w in rule.weights or []]
        return _gcd([w * s for w, s in zip(weights, steps, strict=True)]) / sum(weights)
    if op == "product":
        return steps[0] * steps[1]
    if op == "percentage_of":
        return steps[0] * steps[1] / 100
    return None


def _gcd(values: Sequence[Fraction]) -> Fraction:
    denominator = math.lcm(*(v.denominator for v in values))
    return Fraction(math.gcd(*(int(v * denominator) for v in values)), denominator)


def rounding_can_change(grid: Fraction | None, digits: int) -> bool:
    """Whether some result on ``grid`` is off the rounding grid of ``digits`` decimals."""
    return grid is None or (grid * Fraction(10) ** digits).denominator != 1


def biting_digits(grid: Fraction) -> int:
    """The finest rounding (most decimals) under which a result on ``grid`` can change."""
    digits = 9
    while digits > -9 and not rounding_can_change(grid, digits):
        digits -= 1
    return digits


class DiversityBalance:
    """How often each operator and rounding mode was used in the batch so far."""

    def __init__(self) -> None:
        self.operators: Counter[str] = Counter()
        self.modes: Counter[str] = Counter()

    def condition(
        self, fact: FactTemplate, rng: random.Random, pending: Sequence[ChosenCondition] = ()
    ) -> ChosenCondition:
        """A statement of one of the fact's conditions, with the operator least used by the
        batch and the draft's ``pending`` conditions."""
        used = self.operators + Counter(c.template.op for c in pending)
        variants = condition_variants(fact)
        fewest = min(used[v.template.op] for v in variants)
        return rng.choice([v for v in variants if used[v.template.op] == fewest])

    def rounding(
        self, rule: NumericalRule, steps: Sequence[Fraction], rng: random.Random
    ) -> NumericalRule:
        """The rule with the least-used rounding mode, and digits that can change a result."""
        fewest = min(self.modes[m] for m in ROUNDING_MODES)
        modes: list[RoundingMode] = [m for m in ROUNDING_MODES if self.modes[m] == fewest]
        mode = rule.rounding.mode if rule.rounding.mode in modes else rng.choice(modes)
        digits = rule.rounding.digits
        grid = result_grid(rule, steps)
        can_change = grid is None or rounding_can_change(grid, digits)
        if not can_change and rng.random() < COARSEN_SHARE:
            assert grid is not None
            digits = biting_digits(grid)
        return rule.model_copy(update={"rounding": Rounding(digits=digits, mode=mode)})

    def record(self, conditions: Sequence[ChosenCondition], rule: NumericalRule) -> None:
        self.operators.update(c.template.op for c in conditions)
        self.modes[rule.rounding.mode] += 1
