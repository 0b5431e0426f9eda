"""Compile a typed task into SMT-LIB2 text (integer arithmetic only, no division).

Every fact of every candidate becomes one constant ``v.<candidate>.<fact>``:

* int and decimal facts: an ``Int`` counting multiples of the fact's ``step``
  (a decimal 45,000.50 with step 0.01 is the code 4,500,050);
* dates: an ``Int`` day number (days since 1970-01-01);
* enums: an ``Int`` index into the declared members;
* booleans: a ``Bool``.

Domains are bounds on the codes. Each recorded value is tied to its constant through an
assumption literal ``pin.<candidate>.<fact>`` (``pin => v = value``), so one encoding answers
every query: hiding a role is simply *not assuming* its pins.

Conditions become integer comparisons on codes (thresholds pre-divided by the step and
rounded in the direction that keeps the meaning exact). The numerical rule becomes a pair of
integer terms ``num/den`` with ``den > 0``; "the rounded result equals v" is membership of
``num/den`` in the preimage interval of ``v``, cross-multiplied so that no division occurs.

The file is plain text so that the same bytes are parsed by Z3 (``Solver.from_string``, much
faster than building terms through the Python API) and written as standalone certificates
that a second solver can re-check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from ..spec import (
    Interval,
    Outcome,
    Slot,
    TypedCondition,
    TypedFact,
    TypedTask,
    Value,
    preimage,
)
from ..spec._values import INT_OR_FRACTION

GOAL_DIFFERS = "q.differs"
GOAL_TWO_ELIGIBLE = "q.two_eligible"
_ANY = "\x00"  # stands for a candidate id in a term built once for every candidate


def smt_int(value: int) -> str:
    return str(value) if value >= 0 else f"(- {-value})"


def smt_and(terms: Sequence[str]) -> str:
    if not terms:
        return "true"
    return terms[0] if len(terms) == 1 else f"(and {' '.join(terms)})"


def smt_or(terms: Sequence[str]) -> str:
    if not terms:
        return "false"
    return terms[0] if len(terms) == 1 else f"(or {' '.join(terms)})"


def slot_var(slot: Slot) -> str:
    return f"v.{slot[0]}.{slot[1]}"


def pin_literal(slot: Slot) -> str:
    return f"pin.{slot[0]}.{slot[1]}"


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


def _floor(q: Fraction) -> int:
    return q.numerator // q.denominator


def code_of(fact: TypedFact, value: Value) -> int | bool:
    return fact.code(value)


def code_literal(fact: TypedFact, value: Value) -> str:
    code = fact.code(value)
    if isinstance(code, bool):
        return "true" if code else "false"
    return smt_int(code)


def _code_threshold(fact: TypedFact, value: Value) -> Fraction:
    """A condition operand in code units (may fall between two codes)."""
    if fact.type in ("int", "decimal"):
        assert isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool)
        return Fraction(value) / fact.step
    code = fact.code(value)
    assert not isinstance(code, bool)
    return Fraction(code)


def condition_term(fact: TypedFact, cond: TypedCondition, var: str) -> str:
    """The condition as a Boolean term over the code constant ``var``."""
    if fact.type == "bool":
        assert isinstance(cond.operand, bool)
        positive = var if cond.operand else f"(not {var})"
        return positive if cond.op == "==" else f"(not {positive})"
    if cond.op in ("in", "not in"):
        assert isinstance(cond.operand, tuple)
        equalities = []
        for item in cond.operand:
            q = _code_threshold(fact, item)
            if q.denominator == 1:
                equalities.append(f"(= {var} {smt_int(int(q))})")
        member = smt_or(equalities)
        return member if cond.op == "in" else f"(not {member})"
    if cond.op == "between":
        assert isinstance(cond.operand, tuple)
        low = _code_threshold(fact, cond.operand[0])
        high = _code_threshold(fact, cond.operand[1])
        return f"(and (>= {var} {smt_int(_ceil(low))}) (<= {var} {smt_int(_floor(high))}))"
    assert not isinstance(cond.operand, tuple)
    q = _code_threshold(fact, cond.operand)
    if cond.op == ">=":
        return f"(>= {var} {smt_int(_ceil(q))})"
    if cond.op == ">":
        return f"(>= {var} {smt_int(_floor(q) + 1)})"
    if cond.op == "<=":
        return f"(<= {var} {smt_int(_floor(q))})"
    if cond.op == "<":
        return f"(<= {var} {smt_int(_ceil(q) - 1)})"
    if q.denominator != 1:
        return "false" if cond.op == "==" else "true"
    equal = f"(= {var} {smt_int(int(q))})"
    return equal if cond.op == "==" else f"(not {equal})"


class _Linear:
    """A rational linear combination of code constants: sum(coeff * var) + const."""

    def __init__(self, terms: dict[str, Fraction] | None = None, const: Fraction = Fraction(0)):
        self.terms = dict(terms or {})
        self.const = const

    def plus(self, other: _Linear, sign: int = 1) -> _Linear:
        terms = dict(self.terms)
        for var, coeff in other.terms.items():
            terms[var] = terms.get(var, Fraction(0)) + sign * coeff
        return _Linear(terms, self.const + sign * other.const)

    def scaled(self, factor: Fraction) -> _Linear:
        return _Linear({v: c * factor for v, c in self.terms.items()}, self.const * factor)

    def denominator(self) -> int:
        return math.lcm(self.const.denominator, *(c.denominator for c in self.terms.values()))

    def integer_term(self, multiplier: int) -> str:
        """``multiplier * self`` as an integer term (``multiplier`` clears the denominators)."""
        parts = []
        for var, coeff in self.terms.items():
            k = coeff * multiplier
            assert k.denominator == 1
            if k == 0:
                continue
            parts.append(var if k == 1 else f"(* {smt_int(int(k))} {var})")
        constant = self.const * multiplier
        assert constant.denominator == 1
        if constant != 0 or not parts:
            parts.append(smt_int(int(constant)))
        return parts[0] if len(parts) == 1 else f"(+ {' '.join(parts)})"


class TaskEncoding:
    """The SMT-LIB2 text of one task, and the names needed to query it."""

    def __init__(self, task: TypedTask, gold: Outcome | None = None) -> None:
        self.task = task
        self.gold = gold
        self._lines: list[str] = []
        self._emit()
        self.text = "\n".join(self._lines) + "\n"

    # -- names --------------------------------------------------------------------------------
    @staticmethod
    def eligible_name(candidate: str) -> str:
        return f"elig.{candidate}"

    @staticmethod
    def num_name(candidate: str) -> str:
        return f"num.{candidate}"

    @staticmethod
    def den_name(candidate: str) -> str:
        return f"den.{candidate}"

    # -- construction ---------------------------------------------------------------------------
    def _emit(self) -> None:
        task = self.task
        out = self._lines
        out.append(f"; uncobench-z3 encoding of task {task.id}")
        for slot in task.all_slots():
            fact = task.facts[slot[1]]
            var = slot_var(slot)
            if fact.type == "bool":
                out.append(f"(declare-const {var} Bool)")
                continue
            out.append(f"(declare-const {var} Int)")
            low, high = fact.code_range()
            out.append(f"(assert (and (<= {smt_int(low)} {var}) (<= {var} {smt_int(high)})))")
        for slot in task.all_slots():
            if slot in task.values:
                fact = task.facts[slot[1]]
                literal = pin_literal(slot)
                out.append(f"(declare-const {literal} Bool)")
                value = code_literal(fact, task.values[slot])
                out.append(f"(assert (=> {literal} (= {slot_var(slot)} {value})))")
        # Conditions and the rule read the same for every candidate: build each term once with
        # a placeholder for the candidate id, then substitute it.
        bodies = [
            (cond.id, condition_term(task.facts[cond.fact], cond, slot_var((_ANY, cond.fact))))
            for cond in task.conditions
        ]
        rule = self.rule_terms(_ANY)
        for candidate in task.candidates:
            terms = []
            for cond_id, body in bodies:
                name = f"cond.{candidate}.{cond_id}"
                out.append(f"(define-fun {name} () Bool {body.replace(_ANY, candidate)})")
                terms.append(name)
            out.append(f"(define-fun {self.eligible_name(candidate)} () Bool {smt_and(terms)})")
            num, den = (term.replace(_ANY, candidate) for term in rule)
            out.append(f"(define-fun {self.num_name(candidate)} () Int {num})")
            out.append(f"(define-fun {self.den_name(candidate)} () Int {den})")
            # declared copies, so that a model can be read back (macros have no value)
            for name, sort in (
                (self.eligible_name(candidate), "Bool"),
                (self.num_name(candidate), "Int"),
                (self.den_name(candidate), "Int"),
            ):
                out.append(f"(declare-const out.{name} {sort})")
                out.append(f"(assert (= out.{name} {name}))")
        pairs = [
            f"(and {self.eligible_name(a)} {self.eligible_name(b)})"
            for i, a in enumerate(task.candidates)
            for b in task.candidates[i + 1 :]
        ]
        out.append(f"(declare-const {GOAL_TWO_ELIGIBLE} Bool)")
        out.append(f"(assert (=> {GOAL_TWO_ELIGIBLE} {smt_or(pairs)}))")
        if self.gold is not None:
            out.append(f"(declare-const {GOAL_DIFFERS} Bool)")
            out.append(f"(assert (=> {GOAL_DIFFERS} {self.differs_term(self.gold)}))")

    def rule_terms(self, candidate: str) -> tuple[str, str]:
        """Integer terms (num, den) with den > 0 whose quotient is the unrounded result."""
        rule = self.task.rule
        facts = [self.task.facts[key] for key in rule.operands]
        vars_ = [slot_var((candidate, key)) for key in rule.operands]
        linear = [_Linear({v: f.step}) for v, f in zip(vars_, facts, strict=True)]
        op = rule.operation

        def as_ratio(form: _Linear) -> tuple[str, str]:
            d = form.denominator()
            return form.integer_term(d), smt_int(d)

        if op == "sum":
            total = _Linear()
            for form in linear:
                total = total.plus(form)
            return as_ratio(total)
        if op == "difference":
            return as_ratio(linear[0].plus(linear[1], sign=-1))
        if op == "weighted_average":
            weight_total = sum(rule.weights, Fraction(0))
            total = _Linear()
            for form, weight in zip(linear, rule.weights, strict=True):
                total = total.plus(form.scaled(weight / weight_total))
            return as_ratio(total)
        if op == "capped_sum":
            amount = _Linear()
            for form in linear[:-1]:
                amount = amount.plus(form)
            cap = linear[-1]
            d = math.lcm(amount.denominator(), cap.denominator())
            a, c = amount.integer_term(d), cap.integer_term(d)
            return f"(ite (<= {a} {c}) {a} {c})", smt_int(d)
        if op in ("product", "percentage_of"):
            coeff = facts[0].step * facts[1].step
            if op == "percentage_of":
                coeff /= 100
            product = f"(* {vars_[0]} {vars_[1]})"
            num = product if coeff.numerator == 1 else f"(* {smt_int(coeff.numerator)} {product})"
            return num, smt_int(coeff.denominator)
        if op == "ratio":
            # (x0*s0) / (x1*s1) = (x0 * p0*q1) / (x1 * p1*q0) with s = p/q
            s0, s1 = facts[0].step, facts[1].step
            num_k = s0.numerator * s1.denominator
            den_k = s1.numerator * s0.denominator
            return self._signed(f"(* {num_k} {vars_[0]})", f"(* {den_k} {vars_[1]})", facts[1])
        if op == "percentage_change":
            # (a1 - a0) / a0 * 100 with a = x*s, cleared of denominators
            s0, s1 = facts[0].step, facts[1].step
            common = math.lcm(s0.denominator, s1.denominator)
            k0 = s0 * common
            k1 = s1 * common
            assert k0.denominator == 1 and k1.denominator == 1
            change = f"(- (* {int(k1)} {vars_[1]}) (* {int(k0)} {vars_[0]}))"
            return self._signed(f"(* 100 {change})", f"(* {int(k0)} {vars_[0]})", facts[0])
        raise ValueError(f"unknown operation {op}")

    @staticmethod
    def _signed(num: str, den: str, divisor: TypedFact) -> tuple[str, str]:
        """Keep den > 0: a divisor whose domain is negative flips both terms."""
        assert divisor.high is not None
        high = divisor.high
        assert isinstance(high, INT_OR_FRACTION) and not isinstance(high, bool)
        if high < 0:
            return f"(- {num})", f"(- {den})"
        return num, den

    # -- reusable terms -----------------------------------------------------------------------
    def in_interval_term(self, candidate: str, interval: Interval) -> str:
        """``num/den`` (den > 0) lies in ``interval``, cross-multiplied."""
        num, den = self.num_name(candidate), self.den_name(candidate)
        parts = []
        for bound, closed, lower in (
            (interval.low, interval.low_closed, True),
            (interval.high, interval.high_closed, False),
        ):
            # num/den >= a/b  <=>  b*num >= a*den   (b > 0, den > 0)
            a, b = bound.numerator, bound.denominator
            left = num if b == 1 else f"(* {b} {num})"
            right = "0" if a == 0 else (den if a == 1 else f"(* {smt_int(a)} {den})")
            if lower:
                parts.append(f"({'>=' if closed else '>'} {left} {right})")
            else:
                parts.append(f"({'<=' if closed else '<'} {left} {right})")
        return smt_and(parts)

    def outcome_term(self, outcome: Outcome) -> str:
        """The output of the task equals ``outcome`` (a determined, non-ambiguous output)."""
        task = self.task
        if outcome.kind == "none":
            return smt_and([f"(not {self.eligible_name(c)})" for c in task.candidates])
        assert outcome.kind == "eligible" and outcome.candidate is not None
        assert outcome.number is not None
        chosen = outcome.candidate
        others = [f"(not {self.eligible_name(c)})" for c in task.candidates if c != chosen]
        window = preimage(outcome.number, task.rule.digits, task.rule.mode)
        return smt_and([self.eligible_name(chosen), *others, self.in_interval_term(chosen, window)])

    def differs_term(self, gold: Outcome) -> str:
        return f"(not {self.outcome_term(gold)})"

    def value_in_set_term(self, slot: Slot, allowed: Iterable[Value]) -> str:
        """The slot takes one of ``allowed`` (an explicit set of values)."""
        fact = self.task.facts[slot[1]]
        var = slot_var(slot)
        return smt_or([f"(= {var} {code_literal(fact, value)})" for value in allowed])

    def value_in_range_term(self, slot: Slot, low: Value, high: Value) -> str:
        """The slot lies in the closed range [low, high] (ordered facts)."""
        fact = self.task.facts[slot[1]]
        var = slot_var(slot)
        lo = _code_threshold(fact, low)
        hi = _code_threshold(fact, high)
        return f"(and (>= {var} {smt_int(_ceil(lo))}) (<= {var} {smt_int(_floor(hi))}))"

    def value_equals_term(self, slot: Slot, value: Value) -> str:
        fact = self.task.facts[slot[1]]
        return f"(= {slot_var(slot)} {code_literal(fact, value)})"
