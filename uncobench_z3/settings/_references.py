"""The names a group's settings use, checked against the group's own task.

A defect names a role, a fact, candidates; its replies state values of facts of candidates
in contexts; its follow-up rule names facts, contexts and candidates. Every one of those
names must be the task's, and every stated value must have one form and parse as a value of
its fact: otherwise the checks, the colleagues and the readers of a run would each meet the
bad name at a different place (a proof that never looks at it, a crash that does). The
group is refused when it is read instead, with the place of the first bad name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..spec import Fact, Scalar, TaskSpec, ValueParseError, parse_value
from ._model import CandidateSign, ContextSign, FactSign, ReplySign
from ._stated import _parse_scalar

if TYPE_CHECKING:
    from ._model import Defect, Setting, StatedValue


Location = tuple[str | int, ...]
Problem = tuple[Location, str]
"""where in the group document (as pydantic locates errors), and what is wrong there"""


class _Names:
    def __init__(self, spec: TaskSpec) -> None:
        self.candidates = {c.id for c in spec.candidates}
        self.roles = {r.id for r in spec.roles}
        self.facts = {f.key: f for f in spec.facts}
        self.members = {f.key: tuple(f.values or ()) for f in spec.facts}

    def fact(self, key: str, where: Location) -> Iterator[Problem]:
        if key not in self.facts:
            yield where, f"{key!r} is not a fact of the task"

    def context(self, key: str, context: str, where: Location) -> Iterator[Problem]:
        fact = self.facts.get(key)
        if fact is not None and context not in (fact.context, *fact.other_contexts):
            yield where, f"{context!r} is not a context of the fact {key!r}"

    def candidate(self, candidate: str, where: Location) -> Iterator[Problem]:
        if candidate not in self.candidates:
            yield where, f"{candidate!r} is not a candidate of the task"


def stated_value_problems(
    spec: TaskSpec, stated: StatedValue, where: Location = ()
) -> list[Problem]:
    """What is wrong with one stated value against ``spec`` (nothing: it can be read)."""
    return list(_stated(_Names(spec), stated, where))


def _stated(names: _Names, stated: StatedValue, where: Location) -> Iterator[Problem]:
    # every group read goes through here once per stated value: the usual, sound value
    # passes with a few comparisons and cached parses
    fact = names.facts.get(stated.fact)
    if stated.candidate not in names.candidates:
        yield from names.candidate(stated.candidate, (*where, "candidate"))
    if fact is None:
        yield from names.fact(stated.fact, (*where, "fact"))
    elif stated.context != fact.context and stated.context not in fact.other_contexts:
        yield from names.context(stated.fact, stated.context, (*where, "context"))
    value, low, high, options = stated.value, stated.low, stated.high, stated.options
    forms = (value is not None) + (low is not None or high is not None) + (options is not None)
    if forms != 1:
        yield where, "a stated value has exactly one form: value, low and high, or options"
    elif (low is None) != (high is None):
        yield where, "a range needs both low and high"
    elif options is not None and not options:
        yield (*where, "options"), "no options"
    elif fact is not None:
        members = names.members[fact.key]
        raws = [("value", value), ("low", low), ("high", high)]
        raws += [("options", option) for option in options or ()]
        for field, raw in raws:
            if raw is not None and (problem := _unreadable(fact, members, raw)) is not None:
                yield (*where, field), problem
                return


def _unreadable(fact: Fact, members: tuple[str, ...], raw: Scalar) -> str | None:
    try:
        try:  # the parse the colleagues and the checks make, cached (see ._stated)
            _parse_scalar(fact.type, type(raw).__name__, raw, members)
        except TypeError:  # unhashable (a signalling NaN): parsed uncached, to its error
            parse_value(fact.type, raw, list(members) or None)
    except ValueParseError as exc:
        return f"not a value of the fact {fact.key!r} ({exc})"
    return None


def _defect(names: _Names, defect: Defect, where: Location) -> Iterator[Problem]:
    if defect.role not in names.roles:
        yield (*where, "role"), f"{defect.role!r} is not a role of the task"
    if defect.fact is not None:
        yield from names.fact(defect.fact, (*where, "fact"))
        fact = names.facts.get(defect.fact)
        if fact is not None and defect.role in names.roles and fact.owner != defect.role:
            yield (*where, "fact"), f"{defect.fact!r} is not a fact of the role {defect.role!r}"
    for i, candidate in enumerate(defect.candidates):
        yield from names.candidate(candidate, (*where, "candidates", i))
    for reply in ("first_reply", "resolved_reply"):
        for i, stated in enumerate(getattr(defect, reply) or []):
            yield from _stated(names, stated, (*where, reply, i))
    for i, clause in enumerate(defect.targeted_follow_up.all_of):
        for j, sign in enumerate(clause.any_of):
            at = (*where, "targeted_follow_up", "all_of", i, "any_of", j)
            if isinstance(sign, CandidateSign):
                for k, candidate in enumerate(sign.candidates):
                    yield from names.candidate(candidate, (*at, "candidates", k))
            elif isinstance(sign, FactSign | ReplySign | ContextSign):
                yield from names.fact(sign.fact, (*at, "fact"))
                if isinstance(sign, ContextSign):
                    yield from names.context(sign.fact, sign.context, (*at, "context"))


def reference_problems(spec: TaskSpec, settings: list[Setting]) -> list[Problem]:
    """Every name of ``settings`` that ``spec`` does not have, and every stated value that
    has no single form or does not parse as a value of its fact, each with its place."""
    names = _Names(spec)
    if _sound(names, settings):
        return []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, setting in enumerate(settings):
        if setting.name in seen:
            problems.append(
                (("settings", i, "name"), f"the setting {setting.name!r} appears twice")
            )
        seen.add(setting.name)
        for j, defect in enumerate(setting.defects):
            problems += _defect(names, defect, ("settings", i, "defects", j))
    return problems


def _sound(names: _Names, settings: list[Setting]) -> bool:
    """Whether every setting passes the checks of :func:`reference_problems`: the same tests
    in plain loops, no place made. Every group read goes through here; only a group it
    doubts is walked again by the generators above, which say what is wrong and where (it
    doubts a group whenever they would find a problem, so their answer is the answer)."""
    candidates, roles, facts = names.candidates, names.roles, names.facts
    seen: set[str] = set()
    for setting in settings:
        if setting.name in seen:
            return False
        seen.add(setting.name)
        for defect in setting.defects:
            if defect.role not in roles:
                return False
            if defect.fact is not None:
                fact = facts.get(defect.fact)
                if fact is None or fact.owner != defect.role:
                    return False
            if not candidates.issuperset(defect.candidates):
                return False
            for reply in (defect.first_reply, defect.resolved_reply):
                for stated in reply or ():
                    if not _stated_sound(names, stated):
                        return False
            for clause in defect.targeted_follow_up.all_of:
                for sign in clause.any_of:
                    if isinstance(sign, CandidateSign):
                        if not candidates.issuperset(sign.candidates):
                            return False
                    elif isinstance(sign, FactSign | ReplySign | ContextSign):
                        fact = facts.get(sign.fact)
                        if fact is None:
                            return False
                        if isinstance(sign, ContextSign) and not (
                            sign.context == fact.context or sign.context in fact.other_contexts
                        ):
                            return False
    return True


def _stated_sound(names: _Names, stated: StatedValue) -> bool:
    """:func:`_stated` finds nothing wrong with ``stated`` (the same tests, no place made)."""
    fact = names.facts.get(stated.fact)
    if fact is None or stated.candidate not in names.candidates:
        return False
    if stated.context != fact.context and stated.context not in fact.other_contexts:
        return False
    value, low, high, options = stated.value, stated.low, stated.high, stated.options
    if value is not None:
        if low is not None or high is not None or options is not None:
            return False
        raws: list[Scalar] = [value]
    elif low is not None and high is not None:
        if options is not None:
            return False
        raws = [low, high]
    elif low is not None or high is not None or not options:
        return False
    else:
        raws = options
    members = names.members[fact.key]
    return all(_unreadable(fact, members, raw) is None for raw in raws)


def reference_error(title: str, problems: list[Problem]) -> ValidationError:
    """The problems as one validation error, each at its own place in the document."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError("reference", "{problem}", {"problem": message}),
            loc=where,
            input=None,
        )
        for where, message in problems
    ]
    return ValidationError.from_exception_data(title, details)
