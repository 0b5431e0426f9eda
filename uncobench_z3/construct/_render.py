"""Template rendering (construction stage 5): the task text and each role's private records.

The program writes the calculation rule, the record keys and the candidate directory itself;
nothing here ever states who is eligible or what the number is. Wording varies per group
(record-line frame, condition verb, date format) from the seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from .._plain_reads import plain_reads
from ..settings import StatedValue, stated_imprecision, stated_value
from ..spec import Slot, TypedCondition, TypedFact, TypedTask, Value
from ._text import (
    CONDITION_VERBS,
    DATE_STYLES,
    RECORD_FRAMES,
    Style,
    _possessive_ending,
    candidate_writers,
    format_options,
    format_range,
    format_typed,
    record_line,
    value_writer,
)

MODE_TEXT = {
    "half_up": "halves away from zero",
    "half_even": "halves to the even neighbour",
    "half_down": "halves toward zero",
    "up": "always away from zero",
    "down": "always toward zero (truncating)",
    "floor": "always down (toward minus infinity)",
    "ceiling": "always up (toward plus infinity)",
}
SECTION_CONDITIONS = "Eligibility conditions (a candidate is eligible only if all of them hold):"
SECTION_RULE = "Calculation rule (for the eligible candidate only):"
RULE_RESULT = "Result: "
RULE_UNIT = "Unit: "
SECTION_KEYS = "Record keys (what the colleagues' records hold):"
SECTION_CANDIDATES = "Candidates (the candidate directory):"
SECTION_ROLES = "Your colleagues (each holds private records about every candidate):"
SECTION_ANSWER = "Answer format:"


@plain_reads
class RoleCard(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    name: str
    description: str


@plain_reads
class RenderedTask(BaseModel):
    """What an agent and the colleagues see: the task text and the records, as text."""

    style: Style
    task_text: str
    role_directory: list[RoleCard]
    records: dict[str, list[str]]
    faithful: dict[str, list[int]] | None = None
    """Role -> the place in its records of each of its faithful lines (a record's true value
    in the required context), in the order of :meth:`~uncobench_z3.spec.TypedTask.slots_of`:
    where :func:`render_task` shuffled them, so that the scripted colleagues read a faithful
    line instead of writing it again (``uncobench verify`` renders again and refutes other
    places). None for a renderer model's records, and in groups built before it was stored."""

    def records_text(self, role: str) -> str:
        return "\n".join(self.records[role])


def choose_style(seed: int, task_id: str) -> Style:
    rng = random.Random(f"style:{seed}:{task_id}")
    return Style(
        frame=rng.randrange(len(RECORD_FRAMES)),
        verb=rng.randrange(len(CONDITION_VERBS)),
        dates=rng.choice(DATE_STYLES),
    )


def fact_phrase(fact: TypedFact) -> str:
    return f"{fact.label} ({fact.context})"


def _quoted(fact: TypedFact, value: Value, style: Style) -> str:
    text = format_typed(fact, value, style)
    return f'"{text}"' if fact.type == "enum" else text


def condition_text(fact: TypedFact, cond: TypedCondition, style: Style) -> str:
    """One condition as a sentence the reader can parse back."""
    verb = style.condition_verb_for(fact.label)
    subject = f"The {fact_phrase(fact)} {verb}"
    op, operand = cond.op, cond.operand
    if fact.type == "bool":
        wanted = operand if op == "==" else not operand
        return f"{subject} {'yes' if wanted else 'no'}."
    if op in ("in", "not in"):
        assert isinstance(operand, tuple)
        items = ", ".join(_quoted(fact, v, style) for v in operand)
        return f"{subject} {'one of' if op == 'in' else 'none of'} {items}."
    if op == "between":
        assert isinstance(operand, tuple)
        low, high = (_quoted(fact, v, style) for v in operand)
        return f"{subject} between {low} and {high} (inclusive)."
    assert not isinstance(operand, tuple)
    value = _quoted(fact, operand, style)
    if fact.type == "date":
        words = {
            ">=": "on or after",
            ">": "after",
            "<=": "on or before",
            "<": "before",
            "==": "on",
            "!=": "any date other than",
        }
    elif fact.type == "enum":
        words = {"==": "", "!=": "anything other than"}
    else:
        words = {
            ">=": "at least",
            ">": "more than",
            "<=": "at most",
            "<": "less than",
            "==": "exactly",
            "!=": "anything other than",
        }
    phrase = words[op]
    return f"{subject} {phrase + ' ' if phrase else ''}{value}."


def _weights(weights: tuple[Fraction, ...]) -> list[str]:
    return [str(w) if w.denominator != 1 else str(w.numerator) for w in weights]


def rule_text(task: TypedTask) -> str:
    rule = task.rule
    parts = [fact_phrase(task.facts[k]) for k in rule.operands]
    op = rule.operation
    if op == "sum":
        body = "the sum of " + ", ".join(parts[:-1]) + f" and {parts[-1]}"
    elif op == "difference":
        body = f"{parts[0]} minus {parts[1]}"
    elif op == "product":
        body = f"{parts[0]} multiplied by {parts[1]}"
    elif op == "ratio":
        body = f"{parts[0]} divided by {parts[1]}"
    elif op == "percentage_of":
        body = f"{parts[0]} multiplied by {parts[1]}, divided by 100"
    elif op == "weighted_average":
        pairs = [f"{p} with weight {w}" for p, w in zip(parts, _weights(rule.weights), strict=True)]
        body = "the weighted average of " + ", ".join(pairs[:-1]) + f" and {pairs[-1]}"
    elif op == "capped_sum":
        amount = ", ".join(parts[:-2]) + (" and " if len(parts) > 2 else "") + parts[-2]
        body = f"the sum of {amount}, capped at {parts[-1]} (whichever is lower)"
    else:
        body = (
            f"the percentage change from {parts[0]} to {parts[1]}, that is (new - old) / old x 100"
        )
    if rule.digits >= 0:
        rounding = f"to {rule.digits} decimal places"
    else:
        rounding = f"to the nearest {10 ** (-rule.digits):,}"
    unit = rule.unit if rule.unit.strip() != "%" else "percent"
    # the label and the unit on lines of their own: no label can make the sentence ambiguous
    return (
        f"{RULE_RESULT}{rule.label}\n{RULE_UNIT}{unit}\n"
        f"The result is {body}. Use exact arithmetic and round only the final "
        f"result, {rounding}, rounding {MODE_TEXT[rule.mode]}."
    )


def type_text(fact: TypedFact) -> str:
    if fact.type == "bool":
        return "yes or no"
    if fact.type == "enum":
        return "one of " + ", ".join(f'"{m}"' for m in fact.members)
    if fact.type == "date":
        return "a date"
    kind = "a whole number" if fact.type == "int" else "a decimal number"
    return f"{kind} in {fact.unit}" if fact.unit else kind


def render_task_text(task: TypedTask, style: Style) -> str:
    spec = task.spec
    lines = [spec.title, "", spec.question, "", SECTION_CANDIDATES]
    lines += [f"- {c.name}" for c in spec.candidates]
    lines += ["", SECTION_ROLES]
    lines += [f"- {r.name} [{r.id}]: {r.description}".rstrip(": ") for r in spec.roles]
    lines += ["", SECTION_CONDITIONS]
    for i, cond in enumerate(task.conditions, start=1):
        lines.append(f"{i}. {condition_text(task.facts[cond.fact], cond, style)}")
    lines += ["", SECTION_RULE, rule_text(task), "", SECTION_KEYS]
    for key, fact in task.facts.items():
        owner = task.role_name(fact.owner)
        lines.append(f"- {key}: {fact.label}; {type_text(fact)}; held by {owner} [{fact.owner}]")
    unit = task.rule.unit
    lines += [
        "",
        SECTION_ANSWER,
        f"Decision: {spec.decision.positive} or {spec.decision.negative}",
        "Candidate: the eligible candidate's name, or none",
        f"{task.rule.label[0].upper()}{task.rule.label[1:]} ({unit}): the number, or null",
    ]
    return "\n".join(lines) + "\n"


def stated_value_text(task: TypedTask, stated: StatedValue, style: Style) -> str:
    """What a statement says of its value: exact, "between X and Y", or "either A or B"."""
    fact = task.facts[stated.fact]
    if stated.is_exact:
        return format_typed(fact, stated_value(task, stated), style)
    statement = stated_imprecision(task, stated)
    if statement.options is not None:
        return format_options(fact, statement.options, style)
    assert statement.low is not None and statement.high is not None
    return format_range(fact, statement.low, statement.high, style)


def statement_text(task: TypedTask, stated: StatedValue, style: Style) -> str:
    """One record line for a stated value: exact, a range, or a set of options."""
    fact = task.facts[stated.fact]
    value_text = stated_value_text(task, stated, style)
    return record_line(
        task.candidate_name(stated.candidate), fact.label, stated.context, value_text, style
    )


_FactLines = tuple[str, Callable[[Value], str], dict[str, Callable[[str, str, str, str], str]]]
"""a fact's label, the writer of its values and the line writers by possessive ending"""


class ExactLines:
    """A record's exact line for one task and style: ``lines(slot, context, value)`` is
    :func:`record_line` of the candidate's name, the fact's label, ``context`` and
    :func:`format_typed` of ``value``. What depends on the fact alone (its label's writers,
    its values' formatting) or the candidate alone (the name, its possessive) is worked out
    once, when first needed: a line was about 18k instructions, most of it deciding those
    again (the colleagues write nearly every faithful line of a group, the renderer every
    record; a test compares the lines with that plain definition, kept in the test)."""

    def __init__(self, task: TypedTask, style: Style) -> None:
        self.task = task
        self.style = style
        self._facts: dict[str, _FactLines] = {}
        self._names: dict[str, tuple[str, str]] = {}
        """candidate -> its name and the ending of its possessive"""

    def __call__(self, slot: Slot, context: str, value: Value) -> str:
        fact = self._facts.get(slot[1])
        if fact is None:
            typed = self.task.facts[slot[1]]
            fact = self._facts[slot[1]] = (
                typed.label,
                value_writer(typed, self.style),
                candidate_writers(typed.label, self.style),
            )
        name = self._names.get(slot[0])
        if name is None:
            written = self.task.candidate_name(slot[0])
            name = self._names[slot[0]] = (written, _possessive_ending(written))
        label, value_text, writers = fact
        return writers[name[1]](name[0], label, context, value_text(value))


def role_record_lines(task: TypedTask, role: str, style: Style) -> list[str]:
    """Every record of a role: each candidate's value in the required and the other contexts."""
    return _role_records(task, role, style)[0]


def _role_records(task: TypedTask, role: str, style: Style) -> tuple[list[str], list[int]]:
    """:func:`role_record_lines`, and where among them each faithful line is (a record's value
    in the required context, each followed by its alternatives' lines), in the order of
    ``task.slots_of(role)``."""
    lines: list[str] = []
    faithful: list[int] = []
    line = ExactLines(task, style)
    for slot in task.slots_of(role):
        faithful.append(len(lines))
        lines.append(line(slot, task.facts[slot[1]].context, task.values[slot]))
        for context, value in sorted(task.alternatives.get(slot, {}).items()):
            lines.append(line(slot, context, value))
    return lines, faithful


def render_task(task: TypedTask, seed: int) -> RenderedTask:
    style = choose_style(seed, task.id)
    rng = random.Random(f"records:{seed}:{task.id}")
    records, faithful = {}, {}
    for role in task.roles:
        lines, written_at = _role_records(task, role, style)
        # the lines' indices shuffled, then the lines put in that order: a shuffle's swaps
        # depend only on the length and the generator, so the lines go where shuffling them
        # puts them, and each faithful line's place is known
        order = list(range(len(lines)))
        rng.shuffle(order)
        records[role] = [lines[i] for i in order]
        place = {index: at for at, index in enumerate(order)}
        faithful[role] = [place[index] for index in written_at]
    return RenderedTask(
        style=style,
        task_text=render_task_text(task, style),
        role_directory=[
            RoleCard(id=r.id, name=r.name, description=r.description) for r in task.spec.roles
        ],
        records=records,
        faithful=faithful,
    )
