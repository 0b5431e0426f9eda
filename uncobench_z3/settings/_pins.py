"""Pinned defects: the defect of a setting named by the user instead of chosen by seed.

Syntax (``uncobench perturb``):

* ``--misaligned ROLE.FACT@CANDIDATE[:CONTEXT]`` - the role states the candidate's fact for
  ``CONTEXT`` (one the records hold for it; default: the first other context whose record
  changes the answer);
* ``--incomplete ROLE.FACT@CANDIDATE[:LOW-HIGH|:OPT,OPT]`` - the role states a range
  (``LOW..HIGH`` works too; dates as ``2026-07-01..2026-07-31``) or a set of options
  (default: the most precise truthful statement that leaves the answer open);
* ``--missed ROLE`` - the role misses the first request.

:func:`parse_pin` checks the syntax, :func:`pinned_defect` the names against the task
(an unknown role, fact or candidate, a fact of another role, a context without a record:
:class:`~uncobench_z3.errors.ConfigError`, exit 2). Whether the defect *matters* is for the
solver: :func:`~uncobench_z3.settings.perturb` proves it like any other and refuses the pin
when it does not (exit 1, with the failing check's summary).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError
from ..spec import TypedTask, Value, ValueParseError, parse_value, to_json_scalar
from ._followup import incomplete_rule, misaligned_rule, missed_rule
from ._imprecise import Imprecision, imprecise_statements
from ._model import DEFAULT_MISSED_WAIT, Defect, DefectKind, StatedValue

_TARGET = re.compile(r"^(?P<role>[A-Za-z][\w]*)\.(?P<fact>[A-Za-z][\w]*)@(?P<cand>[A-Za-z][\w]*)$")
_ISO_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{4}-\d{2}-\d{2})$")
_NUMBER_RANGE = re.compile(r"^(-?[\d.]+)-(-?[\d.]+)$")


@dataclass(frozen=True)
class Pin:
    """A defect named by the user (see the module docstring)."""

    kind: DefectKind
    role: str
    fact: str | None = None
    candidate: str | None = None
    detail: str | None = None
    """the text after the colon: a context, a range or options"""

    @property
    def text(self) -> str:
        if self.kind == "missed":
            return f"--missed {self.role}"
        tail = f":{self.detail}" if self.detail else ""
        return f"--{self.kind} {self.role}.{self.fact}@{self.candidate}{tail}"


def parse_pin(kind: DefectKind, text: str) -> Pin:
    """The pin written as ``text`` (syntax only)."""
    text = text.strip()
    if kind == "missed":
        if not re.fullmatch(r"[A-Za-z]\w*", text):
            raise ConfigError(f"--missed {text!r}: expected a role id, e.g. --missed security")
        return Pin(kind, text)
    target, colon, detail = text.partition(":")
    match = _TARGET.match(target.strip())
    if match is None or (colon and not detail.strip()):
        raise ConfigError(
            f"--{kind} {text!r}: expected ROLE.FACT@CANDIDATE"
            + ("[:CONTEXT]" if kind == "misaligned" else "[:LOW-HIGH or :OPT,OPT]")
            + ", e.g. security.clearance@vance"
        )
    return Pin(kind, match["role"], match["fact"], match["cand"], detail.strip() or None)


def _check_names(task: TypedTask, pin: Pin) -> None:
    if pin.role not in task.roles:
        raise ConfigError(f"{pin.text}: unknown role {pin.role!r} ({', '.join(task.roles)})")
    if pin.kind == "missed":
        return
    assert pin.fact is not None and pin.candidate is not None
    if pin.fact not in task.facts:
        raise ConfigError(f"{pin.text}: unknown fact {pin.fact!r} ({', '.join(task.facts)})")
    owner = task.facts[pin.fact].owner
    if owner != pin.role:
        raise ConfigError(
            f"{pin.text}: the fact {pin.fact!r} is held by {owner!r}, not {pin.role!r}"
        )
    if pin.candidate not in task.candidates:
        known = ", ".join(task.candidates)
        raise ConfigError(f"{pin.text}: unknown candidate {pin.candidate!r} ({known})")


def _true_values(task: TypedTask, fact: str) -> list[StatedValue]:
    required = task.facts[fact].context
    return [
        StatedValue(
            candidate=c, fact=fact, context=required, value=to_json_scalar(task.values[(c, fact)])
        )
        for c in task.candidates
    ]


def _changes(task: TypedTask, slot: tuple[str, str], value: Value) -> bool:
    return not task.outcome(task.with_values({slot: value})).same_output(task.outcome())


def _misaligned(task: TypedTask, pin: Pin) -> Defect:
    assert pin.fact is not None and pin.candidate is not None
    slot = (pin.candidate, pin.fact)
    records = task.alternatives.get(slot, {})
    if pin.detail is not None:
        if pin.detail not in records:
            held = ", ".join(repr(c) for c in sorted(records)) or "none"
            raise ConfigError(
                f"{pin.text}: the records hold no {pin.fact} of {pin.candidate} for "
                f"{pin.detail!r} (other contexts on record: {held})"
            )
        context = pin.detail
    else:
        differing = [c for c, v in sorted(records.items()) if v != task.values[slot]]
        if not differing:
            raise ConfigError(
                f"{pin.text}: the records hold no other-context value of {pin.fact} for "
                f"{pin.candidate} that differs from the required one"
            )
        context = next((c for c in differing if _changes(task, slot, records[c])), differing[0])
    fact = task.facts[pin.fact]
    reply = [
        s
        if s.candidate != pin.candidate
        else s.model_copy(update={"context": context, "value": to_json_scalar(records[context])})
        for s in _true_values(task, pin.fact)
    ]
    return Defect(
        kind="misaligned",
        role=pin.role,
        fact=pin.fact,
        candidates=[pin.candidate],
        first_reply=reply,
        targeted_follow_up=misaligned_rule(pin.fact, [pin.candidate], fact.context),
        resolved_reply=_true_values(task, pin.fact),
        rationale=f"{task.candidate_name(pin.candidate)}'s {fact.label} is given for "
        f"{context!r}, not {fact.context!r} (pinned)",
    )


def _statement(task: TypedTask, pin: Pin) -> Imprecision | None:
    """The statement the pin writes (None: let the solver choose among the natural ones)."""
    assert pin.fact is not None
    if pin.detail is None:
        return None
    fact = task.facts[pin.fact]
    members = list(fact.members) or None
    try:
        if fact.type in ("enum", "bool"):
            options = [o.strip() for o in pin.detail.split(",")]
            raw = [{"yes": True, "no": False}.get(o.lower(), o) for o in options]
            if fact.type == "bool":
                raw = [{"true": True, "false": False}.get(str(o).lower(), o) for o in raw]
            if len(options) < 2:
                raise ValueParseError("give at least two options, separated by commas")
            return Imprecision(options=tuple(parse_value(fact.type, o, members) for o in raw))
        bounds = pin.detail.split("..")
        if len(bounds) != 2:
            found = (_ISO_RANGE if fact.type == "date" else _NUMBER_RANGE).match(pin.detail)
            if found is None:
                raise ValueParseError("expected LOW-HIGH or LOW..HIGH")
            bounds = [found[1], found[2]]
        low, high = (parse_value(fact.type, b.strip(), members) for b in bounds)
    except ValueParseError as exc:
        raise ConfigError(f"{pin.text}: {exc}") from None
    try:
        codes = [fact.code(low), fact.code(high)]
    except ValueError as exc:
        raise ConfigError(f"{pin.text}: {exc}") from None
    lowest, highest = fact.code_range()
    if not lowest <= codes[0] <= codes[1] <= highest:
        raise ConfigError(
            f"{pin.text}: expected LOW <= HIGH within the fact's domain {fact.low}..{fact.high}"
        )
    return Imprecision(low=low, high=high)


def _incomplete(task: TypedTask, pin: Pin, statement: Imprecision) -> Defect:
    assert pin.fact is not None and pin.candidate is not None
    fields = statement.json_fields()
    reply = [
        s
        if s.candidate != pin.candidate
        else StatedValue(candidate=s.candidate, fact=s.fact, context=s.context, **fields)
        for s in _true_values(task, pin.fact)
    ]
    return Defect(
        kind="incomplete",
        role=pin.role,
        fact=pin.fact,
        candidates=[pin.candidate],
        first_reply=reply,
        targeted_follow_up=incomplete_rule(pin.fact, [pin.candidate]),
        resolved_reply=_true_values(task, pin.fact),
        rationale=f"{task.candidate_name(pin.candidate)}'s {task.facts[pin.fact].label} is "
        "given imprecisely (pinned)",
    )


def pinned_defects(task: TypedTask, pin: Pin) -> list[Defect]:
    """The defect(s) a pin allows, best first: one when the pin says everything; for an
    Incomplete pin without a statement, one per natural statement (the solver picks)."""
    _check_names(task, pin)
    if pin.kind == "missed":
        return [
            Defect(
                kind="missed",
                role=pin.role,
                targeted_follow_up=missed_rule(),
                missed_wait=DEFAULT_MISSED_WAIT,
                rationale=f"{task.role_name(pin.role)} does not answer the first request (pinned)",
            )
        ]
    if pin.kind == "misaligned":
        return [_misaligned(task, pin)]
    assert pin.fact is not None and pin.candidate is not None
    statement = _statement(task, pin)
    if statement is not None:
        return [_incomplete(task, pin, statement)]
    value = task.values[(pin.candidate, pin.fact)]
    statements = imprecise_statements(task.facts[pin.fact], value, conditions=task.conditions)
    return [_incomplete(task, pin, s) for s in statements]
