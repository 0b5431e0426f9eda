"""Attribution's "misled" questions, settled by exact evaluation where that proves the answer.

To call a wrong answer *misled*, attribution asks two questions of the task's records
(:mod:`._attribution`): with the evidence received pinned, do the accepted defective
statements taken at face value *admit* the answer given (``sat``), while the true values of
those records do not (``unsat``)? An output admits a negative answer when nobody is eligible,
and a positive one when the named candidate is eligible and, if a number was given, its
result rounds to that number (:meth:`._evidence_judge._Attributor.answer_term`).

Each question is "is there a completion of the records, every value in its domain, with these
values fixed and these statements true, whose output admits the answer?". Exact evaluation
settles it in two cases, and :func:`settle_admission` says which:

* ``sat``: a completion admits the answer - the fixed values, every statement met by the
  record's true value or a value it names (an option, a range's midpoint or ends), the true
  values elsewhere, or that with one open decision record changed (to another candidate's
  value, an end of its domain, another value a statement allows). Every value is checked to
  lie in its domain, and the task's reference semantics, which the encoding is
  cross-checked against, compute the output: it is a model of the solver's query.
* ``unsat``: the fixed records exclude the answer whatever the open ones are. A condition
  reads one record of its candidate and the rule reads the chosen candidate's own records,
  so a positive answer is excluded when a fixed record of the named candidate fails a
  condition (it is eligible in no completion), or when every operand of its result is fixed
  and the result does not round to the number given; a negative answer, when some candidate
  meets every condition by fixed records (it is eligible in every completion). Every
  decision record fixed is the special case: the output is a function of the decision
  records, and this completion's does not admit the answer.

Otherwise (a decision record left open that could still admit the answer and the tried
completions not admitting it, a value off its domain, an unreadable statement, a rule that
cannot evaluate) it returns None and the solver is asked, as before. Over the 320 groups of
``eval_overhead.py`` (64 copies of the examples), ``builtin/naive``'s 903 wrong answers
loaded an encoding into a solver in 192 groups, for one question each (the true values'),
every one ``unsat``; the exclusion settles all of them (and all 17 over 100 groups of a
1,000-group benchmark), so no encoding is loaded for them.

Input the solver's terms cannot express - a value off its fact's step, a bound or a number
that does not parse - never comes from the scripted colleagues or from scoring (which writes
an answer's number exactly); attribution raises on it when it asks the solver, while a
question settled here (or no longer asked) labels such an answer without raising.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Literal

from .._memo import remember
from ..settings import StatedValue, range_midpoint, stated_imprecision
from ..spec import Slot, TypedTask, Value, round_fraction
from ..spec._values import INT_OR_FRACTION
from ._completion import values_to_try
from ._scoring import ParsedAnswer

Settled = Literal["sat", "unsat"]
_GIVENS_KEPT = 4096
_givens: dict[tuple[str, int, str], Fraction] = {}
"""(an answer's number, digits, rounding mode) -> the result it stands for (:func:`_given`)"""


def admits(task: TypedTask, parsed: ParsedAnswer, values: Mapping[Slot, Value]) -> bool:
    """Does the output of ``values`` admit ``parsed`` (a usable answer: a decision, and a
    task candidate when positive)? May raise when the rule cannot evaluate ``values``."""
    if parsed.decision == "negative":
        return not any(task.eligible(c, values) for c in task.candidates)
    chosen = parsed.candidate
    assert chosen is not None
    if not task.eligible(chosen, values):
        return False
    if parsed.number is None:
        return True
    return _result(task, chosen, values) == _given(task, parsed.number)


def _result(task: TypedTask, chosen: str, values: Mapping[Slot, Value]) -> Fraction:
    """The rounded result of candidate ``chosen`` from ``values`` (raises on a non-number)."""
    operands: list[Fraction | int] = []
    for key in task.rule.operands:
        value = values[(chosen, key)]
        if not isinstance(value, INT_OR_FRACTION) or isinstance(value, bool):
            raise TypeError(f"{key} is not a number")
        operands.append(value)  # (the rule makes each a Fraction)
    return task.rule.rounded(operands)


def _given(task: TypedTask, number: str) -> Fraction:
    """An answer's number as the result it stands for. "Rounds to the number given": the
    result lies in the preimage of the number rounded (what the solver's interval term says;
    the two are equivalent, tested exhaustively). Remembered by the number and the rule's
    rounding (each question of a verdict, and each completion tried, asks it again)."""
    rule = task.rule
    key = (number, rule.digits, rule.mode)
    found = _givens.get(key)
    if found is None:
        found = round_fraction(Fraction(number), rule.digits, rule.mode)
        remember(_givens, key, found, _GIVENS_KEPT)
    return found


def settle_admission(
    task: TypedTask,
    fixed: Mapping[Slot, Value],
    statements: Mapping[Slot, StatedValue],
    parsed: ParsedAnswer,
) -> Settled | None:
    """Is there a completion with ``fixed`` values and every imprecise statement of
    ``statements`` true that admits ``parsed``? ``sat`` or ``unsat`` when exact evaluation
    proves it (module docstring), None when only the solver can say.

    Every value put in place of a true one is checked to lie in its domain once, as it is put
    there (a fixed value equal to the record's true value, of its type, is: ``check_structure``
    refuses a true value off its domain): a completion is a model of the query when its output
    admits the answer."""
    try:
        recorded, facts = task.values, task.facts
        values = dict(recorded)
        for slot, value in fixed.items():
            truth = recorded.get(slot)
            if not (
                value is truth
                or (type(value) is type(truth) and value == truth)
                or facts[slot[1]].contains(value)
            ):
                return None  # off the domain: the solver says what that means
            values[slot] = value
        choices: dict[Slot, list[Value]] = {}  # what each open record may be, first tried first
        for slot, stated in statements.items():
            if slot in fixed:
                continue
            fits = _fitting(task, slot, stated)
            if not fits:
                return None  # unreadable, or nothing tried fits: the solver decides
            choices[slot] = fits
            values[slot] = fits[0]
        # (every value in its domain: the output admitting the answer makes it a model)
        if admits(task, parsed, values):
            return "sat"
        if _excluded(task, parsed, fixed):
            return "unsat"  # (always, when every decision record is fixed: the special case)
        decision = task.decision_facts()
        open_slots = [s for s in task.all_slots(decision) if s not in fixed]
        # another completion, one open decision record changed, may admit it (a model found)
        for slot in open_slots:
            kept = values[slot]
            fits = choices.get(slot)  # (each in its domain)
            fact = facts[slot[1]]
            for value in fits or dict.fromkeys(values_to_try(task, slot)):
                if value != kept:
                    values[slot] = value  # one record changed in place, then put back
                    if admits(task, parsed, values) and (
                        fits is not None or value is recorded.get(slot) or fact.contains(value)
                    ):
                        return "sat"
            values[slot] = kept
        return None
    except Exception:  # a value or a rule the evaluation cannot read: the solver decides
        return None


def _excluded(task: TypedTask, parsed: ParsedAnswer, fixed: Mapping[Slot, Value]) -> bool:
    """No completion admits ``parsed``: the fixed records that decide it are against it.

    A condition reads one record of its candidate, and the rule reads the chosen candidate's
    own records, so: a positive answer is excluded when a fixed record of the named candidate
    fails one of the conditions (it is never eligible), or when every operand of its result
    is fixed and the result does not round to the number given; a negative answer, when
    some candidate has every condition's record fixed and met (it is always eligible)."""
    if parsed.decision == "negative":
        return any(_always_eligible(task, candidate, fixed) for candidate in task.candidates)
    chosen = parsed.candidate
    assert chosen is not None  # (a usable answer)
    for cond in task.conditions:
        slot = (chosen, cond.fact)
        if slot in fixed and not cond.holds(fixed[slot]):
            return True
    if parsed.number is None or any((chosen, key) not in fixed for key in task.rule.operands):
        return False  # (an operand open: some completion may give the number)
    return _result(task, chosen, fixed) != _given(task, parsed.number)


def _always_eligible(task: TypedTask, candidate: str, fixed: Mapping[Slot, Value]) -> bool:
    """Every condition reads a fixed record of ``candidate`` that meets it."""
    for cond in task.conditions:
        slot = (candidate, cond.fact)
        if slot not in fixed or not cond.holds(fixed[slot]):
            return False
    return True


def _fitting(task: TypedTask, slot: Slot, stated: StatedValue) -> list[Value] | None:
    """Values of the record's domain that an imprecise statement allows, among its true
    value, its options, or its range's midpoint and ends (what an agent taking it at face
    value reads it as: :mod:`._builtin`); None for a statement this cannot read."""
    fact = task.facts[slot[1]]
    statement = stated_imprecision(task, stated)
    truth = task.values[slot]
    if statement.options is not None:
        tried = [truth, *statement.options]
        allowed = [v for v in tried if v in statement.options]
    elif fact.is_ordered:
        low, high = statement.low, statement.high
        assert low is not None and high is not None
        tried = [truth, range_midpoint(low, high), low, high]
        allowed = [v for v in tried if low <= v <= high]  # type: ignore[operator]
    else:
        return None
    return [v for v in dict.fromkeys(allowed) if fact.contains(v)]
