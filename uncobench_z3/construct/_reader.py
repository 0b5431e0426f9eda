"""The deterministic reader (construction stage 6): recover a task from its rendered text alone.

It sees what a full-information validator sees - the task text and every role's records -
and nothing of the structured instance. It parses the candidate directory, the record keys,
the conditions, the calculation rule and every record line, evaluates the answer exactly, and
the pipeline compares that with gold over three independently shuffled record orders
(:mod:`._full_information`). A record lost or altered in rendering becomes a rejection that
names the fact.

The record-line parser is also what the built-in agents use to read colleagues' replies.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from .._memo import remember
from .._trusted import made_frozen
from ..spec import FactType, Outcome, TypedCondition, TypedRule, Value, parse_value
from ._key_line import _key_fields
from ._render import (
    MODE_TEXT,
    RULE_RESULT,
    RULE_UNIT,
    SECTION_ANSWER,
    SECTION_CANDIDATES,
    SECTION_CONDITIONS,
    SECTION_KEYS,
    SECTION_ROLES,
    SECTION_RULE,
)
from ._text import CONDITION_VERBS, PLURAL_CONDITION_VERBS, find_unsure_boolean
from ._value_finder import ValueFinder, value_finder


class ReadError(ValueError):
    """The text does not follow the rendering grammar (message names the line)."""


@dataclass(frozen=True)
class KeyEntry:
    key: str
    label: str
    type: FactType
    unit: str | None
    members: tuple[str, ...]
    owner: str


LINES_KEPT = 1024
"""record lines a catalog remembers the reading of (then it starts again: model-written
replies can make every line new). A template-rendered task has a few dozen record lines,
and with :data:`READINGS_KEPT` catalogs kept, what is remembered stays within about
256 x 1,024 short lines at worst."""


@dataclass
class Catalog:
    """What the task text declares: candidates, roles, record keys.

    A catalog is not changed once read: what every record line looks up (the labels and the
    names, longest first) is derived once, and each line's reading is remembered
    (:meth:`statement`)."""

    candidates: list[str]
    roles: dict[str, str]
    keys: dict[str, KeyEntry]
    _statements: dict[str, Statement | ReadError] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _value_finders: dict[str, ValueFinder] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @cached_property
    def _labels(self) -> tuple[tuple[str, KeyEntry], ...]:
        """(label in lower case, entry), the longest label first"""
        ordered = sorted(self.keys.values(), key=lambda k: len(k.label), reverse=True)
        return tuple((entry.label.lower(), entry) for entry in ordered)

    def _finder(self, entry: KeyEntry) -> ValueFinder:
        """the finder of the values of ``entry``'s type in a text (made once a key)"""
        found = self._value_finders.get(entry.key)
        if found is None:
            found = self._value_finders[entry.key] = value_finder(
                entry.type, entry.unit, entry.members
            )
        return found

    @cached_property
    def _names(self) -> tuple[str, ...]:
        """the candidates' names, the longest first"""
        return tuple(sorted(self.candidates, key=len, reverse=True))

    def statement(self, line: str) -> Statement | ReadError:
        """:func:`parse_statement` of ``line`` (the error, for a line that is not a record),
        remembered: the full-information reader of verify and build, and every built-in
        agent of every episode, read the same lines of one task text again."""
        found = self._statements.get(line)
        if found is None:
            try:
                found = parse_statement(line, self)
            except ReadError as exc:
                found = exc.with_traceback(None)  # (kept: its frames are not)
            remember(self._statements, line, found, LINES_KEPT)
        return found


@dataclass(frozen=True)
class Statement:
    """One parsed record line: exact value, inclusive range, or set of options."""

    candidate: str
    fact: str
    context: str
    value: Value | None = None
    low: Value | None = None
    high: Value | None = None
    options: tuple[Value, ...] | None = None


@dataclass
class ReadTask:
    catalog: Catalog
    required_context: dict[str, str]
    conditions: list[TypedCondition]
    rule: TypedRule
    positive: str
    negative: str
    values: dict[tuple[str, str], Value] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def outcome(self) -> Outcome:
        """The answer from the recovered facts (candidates are named, not ids)."""
        eligible = tuple(
            name
            for name in self.catalog.candidates
            if all(c.holds(self.values[(name, c.fact)]) for c in self.conditions)
        )
        if not eligible:
            return Outcome("none")
        if len(eligible) > 1:
            return Outcome("ambiguous", eligible=eligible)
        operands = [Fraction(self.values[(eligible[0], k)]) for k in self.rule.operands]  # type: ignore[arg-type]
        return Outcome("eligible", eligible[0], self.rule.rounded(operands), eligible)


# the task text's patterns, compiled once (not looked up in re's cache at each line)
_QUOTED = re.compile(r'"([^"]*)"')
_NUMBER_TYPE = re.compile(r"a (whole|decimal) number(?: in (.+))?")
_ROLE_LINE = re.compile(r"- (.+?) \[(\w+)\]")
_NUMBERING = re.compile(r"^\d+\.\s*")
_RULE_HEAD = re.compile(r"The result is (.+?)\. Use exact arithmetic")
_WEIGHT = re.compile(r"\s*with weight ([\d./]+)")
_PLACES = re.compile(r"to (\d+) decimal places")
_NEAREST = re.compile(r"to the nearest ([\d,]+)")
_MODE = re.compile(r"rounding (.+?)\.$")
_DECISION = re.compile(r"Decision: (.+) or (.+)")


def _section(lines: list[str], title: str) -> list[str]:
    try:
        start = lines.index(title) + 1
    except ValueError:
        raise ReadError(f"the task text has no section {title!r}") from None
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        out.append(line)
    return out


def _parse_type(text: str) -> tuple[FactType, str | None, tuple[str, ...]]:
    if text == "yes or no":
        return "bool", None, ()
    if text.startswith("one of "):
        return "enum", None, tuple(_QUOTED.findall(text))
    if text == "a date":
        return "date", None, ()
    match = _NUMBER_TYPE.fullmatch(text)
    if not match:
        raise ReadError(f"unknown record type {text!r}")
    return ("int" if match[1] == "whole" else "decimal"), match[2], ()


def parse_catalog(text: str) -> Catalog:
    return _catalog_of(text.splitlines())


def _catalog_of(lines: list[str]) -> Catalog:
    """:func:`parse_catalog` of the task text's lines (split once for the whole reading)."""
    candidates = [line[2:].strip() for line in _section(lines, SECTION_CANDIDATES)]
    roles = {}
    for line in _section(lines, SECTION_ROLES):
        match = _ROLE_LINE.match(line)
        if not match:
            raise ReadError(f"cannot read the colleague line {line!r}")
        roles[match[2]] = match[1]
    keys = {}
    for line in _section(lines, SECTION_KEYS):
        fields = _key_fields(line)
        if fields is None:
            raise ReadError(f"cannot read the record key {line!r}")
        key, label, type_text, owner = fields
        fact_type, unit, members = _parse_type(type_text)
        keys[key] = made_frozen(
            KeyEntry,
            {
                "key": key,
                "label": label,
                "type": fact_type,
                "unit": unit,
                "members": members,
                "owner": owner,
            },
        )  # (without the frozen ``__init__``'s six ``object.__setattr__`` calls)
    return Catalog(candidates, roles, keys)


def parenthesised(text: str, start: int = 0) -> tuple[str, int, int] | None:
    """The first balanced ``( ... )`` group at or after ``start``: (inside, begin, end).

    Context labels may hold parentheses of their own ("heads of terms (April 2026)")."""
    if not start:  # (a record line's group, most often the only one: ``partition``'s one
        head, _, tail = text.partition("(")  # argument is not parsed as ``find``'s are)
        inside, ends, _ = tail.partition(")")
        if ends and "(" not in inside:
            return inside.strip(), len(head), len(head) + len(inside) + 2
    begin = text.find("(", start)
    if begin < 0:
        return None
    # the first ")" where as many "(" as ")" have been passed since ``begin``
    close = text.find(")", begin)
    closed = 1
    while close >= 0:
        if text.count("(", begin, close) == closed:
            return text[begin + 1 : close].strip(), begin, close + 1
        close = text.find(")", close + 1)
        closed += 1
    return None


def _find_label(text: str, catalog: Catalog) -> tuple[KeyEntry, int, int] | None:
    lowered = text.lower()
    for label, entry in catalog._labels:
        # (``in`` first: ``find`` parses its arguments, which costs as much as the search
        # in a line, and most labels are not in it; a loop in Python costs less than
        # ``next(filter(lowered.__contains__, ...))``, whose every call makes a tuple)
        if label in lowered:
            position = lowered.find(label)
            return entry, position, position + len(entry.label)
    return None


def _named(text: str, catalog: Catalog) -> str | None:
    """The longest candidate name in ``text`` (the first found, the longest first)."""
    for name in catalog._names:
        if name in text:
            return name
    return None


def parse_statement(line: str, catalog: Catalog) -> Statement:
    """Read one record line (of the records or of a colleague's reply)."""
    text = line.strip().lstrip("-* ").strip()
    candidate = _named(text, catalog)
    if candidate is None:
        raise ReadError(f"no candidate named in {line!r}")
    text = text.replace(candidate, " ", 1)
    found = _find_label(text, catalog)
    if found is None:
        raise ReadError(f"no record key named in {line!r}")
    entry, start, end = found
    text = text[:start] + " " + text[end:]
    group = parenthesised(text)
    if group is None:
        raise ReadError(f"no context (in parentheses) in {line!r}")
    context, begin, end_context = group
    rest = text[:begin] + " " + text[end_context:]
    unsure = find_unsure_boolean(rest) if entry.type == "bool" else None
    if unsure is not None:
        return _statement(candidate, entry.key, context, None, None, None, (unsure, not unsure))
    values = catalog._finder(entry).values(rest)
    if not values:
        raise ReadError(f"no {entry.type} value in {line!r}")
    if len(values) == 1:
        return _statement(candidate, entry.key, context, values[0], None, None, None)
    if entry.type in ("int", "decimal", "date") and "between" in rest.lower():
        return _statement(candidate, entry.key, context, None, values[0], values[1], None)
    options = tuple(dict.fromkeys(values))
    return _statement(candidate, entry.key, context, None, None, None, options)


_new = object.__new__


def _statement(
    candidate: str,
    fact: str,
    context: str,
    value: Value | None,
    low: Value | None,
    high: Value | None,
    options: tuple[Value, ...] | None,
) -> Statement:
    """``Statement(candidate, fact, context, value, low, high, options)``, made without its
    frozen ``__init__`` (which sets each field with ``object.__setattr__``), as
    :func:`~uncobench_z3._trusted.made_frozen` makes it but with each field stored in the new
    statement's own ``__dict__``, in the fields' order: no dict of the fields is made and
    merged into it (4.3k instructions a statement against made_frozen's 6.1k and
    ``__init__``'s 12.0k)."""
    made = _new(Statement)
    fields = made.__dict__
    fields["candidate"] = candidate
    fields["fact"] = fact
    fields["context"] = context
    fields["value"] = value
    fields["low"] = low
    fields["high"] = high
    fields["options"] = options
    return made


_OPS_BY_PHRASE = [
    ("anything other than", "!="), ("any date other than", "!="), ("on or after", ">="),
    ("on or before", "<="), ("at least", ">="), ("at most", "<="), ("more than", ">"),
    ("less than", "<"), ("exactly", "=="), ("none of", "not in"), ("one of", "in"),
    ("between", "between"), ("after", ">"), ("before", "<"), ("on", "=="),
]  # fmt: skip
# what a condition's verb and phrase are followed by (a space), made once
_VERBS_SPACED = tuple(verb + " " for verb in (*CONDITION_VERBS, *PLURAL_CONDITION_VERBS))
_OPS_SPACED = tuple((phrase + " ", op) for phrase, op in _OPS_BY_PHRASE)
# the first of them a condition's words start with, in one match: ``re`` tries the
# alternatives in their order, so the match is the first that the loop over them (one
# ``startswith`` each) would find
_VERB_AT_START = re.compile("|".join(map(re.escape, _VERBS_SPACED)))
_OP_AT_START = re.compile("|".join(re.escape(phrase) for phrase, _ in _OPS_SPACED))
_OP_OF_PHRASE = dict(_OPS_SPACED)


def _parse_condition(line: str, index: int, catalog: Catalog) -> tuple[TypedCondition, str]:
    body = _NUMBERING.sub("", line.strip()).rstrip(".")
    found = _find_label(body, catalog)
    if found is None:
        raise ReadError(f"condition {line!r} names no record key")
    entry, _, end = found
    after = body[end:]
    group = parenthesised(after)
    if group is None or after[: group[1]].strip():
        raise ReadError(f"condition {line!r} states no context")
    context, _, context_end = group
    rest = after[context_end:].lstrip()
    verb = _VERB_AT_START.match(rest)
    if verb is None:
        raise ReadError(f"condition {line!r} has no verb")
    rest = rest[verb.end() :]
    op = "=="
    phrase = _OP_AT_START.match(rest)
    if phrase is not None:
        op, rest = _OP_OF_PHRASE[phrase[0]], rest[phrase.end() :]
    values = catalog._finder(entry).values(rest)
    if not values:
        raise ReadError(f"condition {line!r} has no {entry.type} value")
    operand: Value | tuple[Value, ...]
    operand = tuple(values) if op in ("in", "not in", "between") else values[0]
    condition: TypedCondition = made_frozen(
        TypedCondition,
        {"id": f"k{index}", "fact": entry.key, "op": op, "operand": operand, "text": None},
    )  # (``TypedCondition(...)`` without its frozen ``__init__``)
    return condition, context


_MODES_BY_TEXT = {text: mode for mode, text in MODE_TEXT.items()}


def _parse_rule(lines: list[str], catalog: Catalog) -> tuple[TypedRule, dict[str, str]]:
    """The rule section: a ``Result:`` line (the label), a ``Unit:`` line, then the sentence."""
    fields = {
        prefix: line[len(prefix) :].strip()
        for line in lines
        for prefix in (RULE_RESULT, RULE_UNIT)
        if line.startswith(prefix)
    }
    paragraph = " ".join(
        line for line in lines if not line.startswith((RULE_RESULT, RULE_UNIT))
    ).strip()
    head = _RULE_HEAD.match(paragraph)
    if head is None or RULE_RESULT not in fields or RULE_UNIT not in fields:
        raise ReadError("cannot read the calculation rule")
    label, unit, body = fields[RULE_RESULT], fields[RULE_UNIT], head[1]
    operands: list[tuple[int, str]] = []
    contexts: dict[str, str] = {}
    weights: list[tuple[int, Fraction]] = []
    remaining = body
    while True:
        found = _find_label(remaining, catalog)
        if found is None:
            break
        entry, start, end = found
        group = parenthesised(remaining, end)
        if group is None or remaining[end : group[1]].strip():
            raise ReadError(f"the rule names {entry.label!r} without its context")
        operands.append((start, entry.key))
        contexts[entry.key] = group[0]
        weight = _WEIGHT.match(remaining[group[2] :])
        if weight:
            weights.append((start, Fraction(weight[1])))
        # mask the label and its context: only the rule's own words are left to read
        remaining = remaining[:start] + "\0" * (group[2] - start) + remaining[group[2] :]
    ordered = [key for _, key in sorted(operands)]
    ordered_weights = tuple(w for _, w in sorted(weights))
    body = remaining
    if "percentage change" in body:
        operation = "percentage_change"
    elif "capped at" in body:
        operation = "capped_sum"
    elif "weighted average" in body:
        operation = "weighted_average"
    elif "divided by 100" in body:
        operation = "percentage_of"
    elif "the sum of" in body:
        operation = "sum"
    elif " minus " in body:
        operation = "difference"
    elif "multiplied by" in body:
        operation = "product"
    elif "divided by" in body:
        operation = "ratio"
    else:
        raise ReadError("the calculation rule names no operation")
    tail = paragraph[head.end() :]  # the rounding clause, after every label and context
    places = _PLACES.search(tail)
    nearest = _NEAREST.search(tail)
    if places:
        digits = int(places[1])
    elif nearest:
        digits = -(len(nearest[1].replace(",", "")) - 1)
    else:
        raise ReadError("the calculation rule states no rounding")
    mode_match = _MODE.search(tail.strip())
    if mode_match is None or mode_match[1] not in _MODES_BY_TEXT:
        raise ReadError("the calculation rule states no rounding mode")
    rule = TypedRule(
        operation=operation,  # type: ignore[arg-type]
        operands=tuple(ordered),
        label=label,
        unit="%" if unit == "percent" else unit,
        digits=digits,
        mode=_MODES_BY_TEXT[mode_match[1]],  # type: ignore[arg-type]
        weights=ordered_weights,
    )
    return rule, contexts


def parse_task_text(text: str) -> ReadTask:
    lines = text.splitlines()
    catalog = _catalog_of(lines)
    required: dict[str, str] = {}
    conditions = []
    for i, line in enumerate(_section(lines, SECTION_CONDITIONS), start=1):
        cond, context = _parse_condition(line, i, catalog)
        conditions.append(cond)
        required[cond.fact] = context
    rule, rule_contexts = _parse_rule(_section(lines, SECTION_RULE), catalog)
    required.update(rule_contexts)
    answer = _section(lines, SECTION_ANSWER)
    decision = _DECISION.fullmatch(answer[0]) if answer else None
    if decision is None:
        raise ReadError("the answer format states no decision words")
    return ReadTask(catalog, required, conditions, rule, decision[1], decision[2])


READINGS_KEPT = 256
"""task texts whose reading :func:`read_task_text` remembers (the least recently used go
first)"""
_readings: OrderedDict[str, ReadTask] = OrderedDict()


def read_task_text(text: str) -> ReadTask:
    """:func:`parse_task_text`, remembered for the last :data:`READINGS_KEPT` texts. The
    reading is shared, so nothing may change it: the full-information reader reads records
    into a copy (:func:`read_full_information`), and the built-in agents only look. Sharing
    it shares its catalog's remembered record lines too (:meth:`Catalog.statement`): verify's
    rendering check reads a group's lines, and the minimum-rounds search's agent then finds
    the faithful replies among them."""
    found = _readings.get(text)
    if found is None:
        found = _readings[text] = parse_task_text(text)  # (an unreadable text raises)
        while len(_readings) > READINGS_KEPT:
            _readings.popitem(last=False)
    else:
        _readings.move_to_end(text)
    return found


def parse_value_as(entry: KeyEntry, raw: str) -> Value:
    """Parse a plain value string of a record key (used by answer parsing and tests)."""
    return parse_value(entry.type, raw, list(entry.members) or None)
