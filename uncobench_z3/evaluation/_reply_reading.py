"""Reading a colleague's reply as record statements, for the judge (:mod:`._reply_judge`).

The reply text is cut into statements, each read with the record-line grammar
(:func:`~uncobench_z3.construct.parse_statement` against the catalog of the task text): its
lines; a line's sentences when it names more than one candidate; a sentence's clauses where
a second candidate or record key begins. A clause without a candidate takes the last one
named (so a candidate may head a list of its records); one without a record key takes the
previous clause's key and context. Each statement is then placed in the role's records: the
slot it names and the context it names (its parenthesised one if the records know it, else the
longest known context written anywhere in it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..construct import (
    Catalog,
    ReadError,
    Statement,
    Style,
    parse_statement,
    statement_text,
)
from ..construct._reader import parenthesised
from ..settings import StatedValue, stated_imprecision, stated_value
from ..spec import Slot, TypedTask, Value, to_json_scalar

_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")


def normal_text(text: str) -> str:
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=256)
def _label_pattern(labels: tuple[str, ...]) -> re.Pattern[str]:
    """Any of the labels, the longest first (so a label inside a longer one never wins)."""
    ordered = sorted(labels, key=len, reverse=True)
    return re.compile("|".join(re.escape(label) for label in ordered), re.IGNORECASE)


def _inside_parentheses(text: str, position: int) -> bool:
    return text.count("(", 0, position) > text.count(")", 0, position)


@dataclass(frozen=True)
class _Anchor:
    position: int
    kind: str
    """``candidate`` or ``label``"""
    text: str


def _anchors(sentence: str, catalog: Catalog, names: Sequence[str]) -> list[_Anchor]:
    """Candidate names and record-key labels written in a sentence (outside contexts)."""
    pattern = _label_pattern(tuple(entry.label for entry in catalog.keys.values()))
    found = [
        _Anchor(m.start(), "label", m.group(0))
        for m in pattern.finditer(sentence)
        if not _inside_parentheses(sentence, m.start())
    ]
    for name in names:
        position = sentence.find(name)
        while position >= 0:
            if not _inside_parentheses(sentence, position):
                found.append(_Anchor(position, "candidate", name))
            position = sentence.find(name, position + len(name))
    return sorted(found, key=lambda anchor: anchor.position)


def _leads_into(sentence: str, candidate: _Anchor, label: _Anchor) -> bool:
    """Whether a candidate name belongs to the label after it ("Lee's rent"): nothing but
    words lies between them (no value, no context)."""
    between = sentence[candidate.position + len(candidate.text) : label.position]
    return not any(char.isdigit() or char in "()" for char in between)


def _context_start(sentence: str, start: int, cut: int) -> int:
    """Where the next statement begins when it opens with its context ("(April 2026) Lee,
    rent: ..."): at a parenthesised group just before the cut, if the clause has a group of
    its own before it."""
    head = sentence[start:cut].rstrip()
    if not head.endswith(")"):
        return cut
    depth, opening = 0, len(head) - 1
    for opening in range(len(head) - 1, -1, -1):
        depth += (head[opening] == ")") - (head[opening] == "(")
        if depth == 0:
            break
    return start + opening if "(" in head[:opening] else cut


def _clauses(sentence: str, anchors: list[_Anchor]) -> list[tuple[str, list[_Anchor]]]:
    """Cut a sentence where a second candidate or a second label begins; a candidate that
    leads into the new label ("..., Lee's rent ...") goes with it."""
    cuts: list[int] = [0]
    groups: list[list[_Anchor]] = [[]]
    for anchor in anchors:
        current = groups[-1]
        if any(a.kind == anchor.kind for a in current):
            moved: list[_Anchor] = []
            last = current[-1]
            if (
                anchor.kind == "label"
                and last.kind == "candidate"
                and len(current) > 1
                and _leads_into(sentence, last, anchor)
            ):
                moved = [current.pop()]
            cut = moved[0].position if moved else anchor.position
            cuts.append(_context_start(sentence, cuts[-1], cut))
            groups.append(moved)
        groups[-1].append(anchor)
    cuts.append(len(sentence))
    return [(sentence[cuts[i] : cuts[i + 1]], groups[i]) for i in range(len(groups))]


def reply_statements(text: str, catalog: Catalog, names: Sequence[str]) -> Iterator[str]:
    """The statements of a reply text, each as a line ``parse_statement`` can read (see the
    module docstring); a missing candidate or record key is written in front of the clause."""
    named: str | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        sentences = [line]
        if sum(line.count(name) for name in names) > 1:
            sentences = [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
        for sentence in sentences:
            label: str | None = None
            context: str | None = None
            for raw, anchors in _clauses(sentence, _anchors(sentence, catalog, names)):
                clause = raw.strip().lstrip("-*• ").strip()
                if not clause:
                    continue
                own = {a.kind: a.text for a in anchors}
                group = parenthesised(clause)
                prefix = ""
                if "label" in own:
                    label, context = own["label"], group[0] if group else context
                elif label is not None and "candidate" in own:
                    prefix = label if group or context is None else f"{label} ({context})"
                if "candidate" in own:
                    named = own["candidate"]
                elif named is not None and "label" in own:
                    prefix = named
                yield f"{prefix}: {clause}" if prefix else clause


def record_contexts(task: TypedTask, slot: Slot) -> dict[str, tuple[str, Value]]:
    """The records of one slot: normalised context -> (context, value)."""
    fact = task.facts[slot[1]]
    known = {normal_text(fact.context): (fact.context, task.values[slot])}
    for context, value in task.alternatives.get(slot, {}).items():
        known[normal_text(context)] = (context, value)
    return known


def resolve_context(segment: str, named: str, known: dict[str, tuple[str, Value]]) -> str:
    """The context a statement names: its parenthesised one if the records know it, else the
    longest known context written anywhere in the segment (free wording), else the named one."""
    key = normal_text(named)
    if key in known:
        return key
    text = normal_text(segment)
    written = [context for context in known if context in text]
    return max(written, key=len) if written else key


def agrees(statement: Statement, record: Value) -> bool:
    try:
        if statement.value is not None:
            return bool(statement.value == record)
        if statement.options is not None:
            return record in statement.options
        assert statement.low is not None and statement.high is not None
        return bool(statement.low <= record <= statement.high)  # type: ignore[operator]
    except TypeError:  # a value of another type than the record's
        return False


@dataclass(frozen=True)
class Read:
    """One statement of a reply, placed in the role's records."""

    text: str
    slot: Slot
    context: str
    statement: Statement


def conveys(task: TypedTask, read: Read, item: StatedValue) -> bool:
    if read.slot != (item.candidate, item.fact) or read.context != normal_text(item.context):
        return False
    statement = read.statement
    if item.is_exact:
        return statement.value is not None and statement.value == stated_value(task, item)
    imprecision = stated_imprecision(task, item)
    if imprecision.options is not None:
        return statement.options is not None and set(statement.options) == set(imprecision.options)
    return statement.low is not None and (statement.low, statement.high) == (
        imprecision.low,
        imprecision.high,
    )


def record_text(task: TypedTask, slot: Slot, context: str, value: Value) -> str:
    stated = StatedValue(
        candidate=slot[0], fact=slot[1], context=context, value=to_json_scalar(value)
    )
    return statement_text(task, stated, Style())


@dataclass
class ReplyReading:
    """What the statements of one reply say, against the role's records."""

    reads: list[Read]
    statements: int
    """statements read (with a candidate and a record key)"""
    unverifiable: list[str]
    contradictions: list[str]


def read_reply(task: TypedTask, catalog: Catalog, role: str, text: str) -> ReplyReading:
    """Read ``text`` statement by statement and check each against ``role``'s records: an
    exact value must equal the record of the context it names, a range or options contain it;
    a record the role does not hold (another role's fact, a context its records lack) is a
    contradiction; a line that cannot be read is unverifiable."""
    ids = {task.candidate_name(c): c for c in task.candidates}
    owned = set(task.facts_of(role))
    reading = ReplyReading([], 0, [], [])
    for segment in reply_statements(text, catalog, list(ids)):
        try:
            statement = parse_statement(segment, catalog)
        except ReadError:
            reading.unverifiable.append(segment)
            continue
        reading.statements += 1
        candidate = ids.get(statement.candidate)
        if candidate is None:
            reading.contradictions.append(f"{segment!r} names no candidate of the task")
            continue
        slot = (candidate, statement.fact)
        label = catalog.keys[statement.fact].label
        if statement.fact not in owned:
            reading.contradictions.append(f"{segment!r}: {role} keeps no {label} records")
            continue
        known = record_contexts(task, slot)
        context = resolve_context(segment, statement.context, known)
        reading.reads.append(Read(segment, slot, context, statement))
        if context not in known:
            reading.contradictions.append(
                f"{segment!r}: the records hold no {label} for {statement.context!r}"
            )
        elif not agrees(statement, known[context][1]):
            record = record_text(task, slot, *known[context])
            reading.contradictions.append(f"{segment!r}: the record is {record!r}")
    return reading
