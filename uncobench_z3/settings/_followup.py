"""What makes a follow-up *targeted*: the rules (data in the group) and the decision.

A follow-up is read into a structured request (:func:`~._request.read_request`) and the
defect's rule - clauses of signs, stored in the group file - is checked against it. The
rules (the table in docs/settings.md):

* **Misaligned** - the request concerns the designated candidate (or all candidates), names
  the fact, and names the required context or says the reply was for the wrong one. Asking
  for the fact again without either is generic; asking about another context or only about
  another candidate is not targeted.
* **Incomplete** - the request concerns the designated candidate (or all), names the fact or
  points at the imprecise reply ("that range", its bounds quoted), and asks for the exact
  value ("exact", "which one is it", "pass or fail?", "is it at least 12?").
* **Missed** - any new request to the role.

A generic follow-up ("could you double-check your records?") satisfies neither of the first
two, so the colleague repeats its first reply.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from .._trusted import made_frozen
from ..spec import TypedTask, Value, ValueParseError, parse_value
from ..spec._values import INT_OR_FRACTION
from ._model import (
    CandidateSign,
    Clause,
    ContextSign,
    Defect,
    FactSign,
    FollowUpRule,
    IntentSign,
    ReplySign,
    Sign,
)
from ._request import Request, read_request
from ._vocabulary import Vocabulary


# -- the rules, as data ---------------------------------------------------------------------
def misaligned_rule(fact: str, candidates: list[str], required_context: str) -> FollowUpRule:
    return FollowUpRule(
        all_of=[
            Clause(any_of=[CandidateSign(candidates=candidates)]),
            Clause(any_of=[FactSign(fact=fact)]),
            Clause(
                any_of=[
                    ContextSign(fact=fact, context=required_context),
                    IntentSign(intent="mismatch"),
                ]
            ),
        ]
    )


def incomplete_rule(fact: str, candidates: list[str]) -> FollowUpRule:
    return FollowUpRule(
        all_of=[
            Clause(any_of=[CandidateSign(candidates=candidates)]),
            Clause(any_of=[FactSign(fact=fact), ReplySign(fact=fact)]),
            Clause(any_of=[IntentSign(intent="exact")]),
        ]
    )


def missed_rule() -> FollowUpRule:
    return FollowUpRule(all_of=[Clause(any_of=[IntentSign(intent="request")])])


# -- the rules, as text ---------------------------------------------------------------------
_INTENT_TEXT = {
    "exact": "asks for one exact value (not a range or a set of options)",
    "mismatch": "says the reply was for the wrong context",
    "reference": "points at the reply it follows up",
    "request": "asks anything at all (any new request)",
}


_SIGN_ORDER = (CandidateSign, FactSign, ContextSign, ReplySign)
"""the signs told apart in this order (any other is an intent)"""
_SIGN_KINDS: dict[type, type] = {cls: cls for cls in (*_SIGN_ORDER, IntentSign)}


def _sign_class(sign: Sign) -> type:
    """The first of :data:`_SIGN_ORDER` that ``sign`` is an instance of (else
    :class:`IntentSign`), by its type first: ``isinstance`` with a pydantic model's class it
    is not an instance of costs about 0.2 us (a decision tests a dozen)."""
    found = _SIGN_KINDS.get(type(sign))
    if found is None:
        found = next((cls for cls in _SIGN_ORDER if isinstance(sign, cls)), IntentSign)
    return found


def sign_text(task: TypedTask, sign: Sign) -> str:
    """One sign in words, for people and for language-model colleagues."""
    kind = _sign_class(sign)
    if kind is CandidateSign:
        names = " or ".join(map(task.candidate_name, cast(CandidateSign, sign).candidates))
        return f"concerns {names} (by name or pronoun), all candidates, or no one in particular"
    if kind is FactSign:
        fact = task.facts[cast(FactSign, sign).fact]
        also = f" (also called: {', '.join(fact.synonyms)})" if fact.synonyms else ""
        return f"names the {fact.label}{also}"
    if kind is ContextSign:
        return f"names the {cast(ContextSign, sign).context} (not to reject it)"
    if kind is ReplySign:
        label = task.facts[cast(ReplySign, sign).fact].label
        return (
            f"points at the imprecise reply about the {label} "
            '("that range", "those options", or its bounds quoted)'
        )
    return _INTENT_TEXT[cast(IntentSign, sign).intent]


def rule_lines(task: TypedTask, rule: FollowUpRule) -> list[str]:
    """One line per clause: every line must hold for the follow-up to be targeted."""
    return [" or ".join(sign_text(task, s) for s in clause.any_of) for clause in rule.all_of]


def rule_text(task: TypedTask, rule: FollowUpRule) -> str:
    """The whole rule as one sentence."""
    lines = rule_lines(task, rule)
    if len(lines) == 1:
        return f"A follow-up is targeted when it {lines[0]}."
    numbered = [f"({i}) {line}" for i, line in enumerate(lines, 1)]
    return "A follow-up is targeted when it " + "; ".join(numbered[:-1]) + f"; and {numbered[-1]}."


# -- the decision ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ClauseCheck:
    """One clause of the rule, and whether (and by which words) the request satisfies it."""

    text: str
    satisfied: bool
    because: str


@dataclass(frozen=True)
class FollowUpDecision:
    """Whether a request is a targeted follow-up to a defect, clause by clause."""

    follows_up: bool
    """it asks the defect's role about the designated record again (any request, for Missed)"""
    clauses: tuple[ClauseCheck, ...]

    @property
    def targeted(self) -> bool:
        return self.follows_up and all(c.satisfied for c in self.clauses)

    def why(self) -> str:
        if not self.follows_up:
            return "not a follow-up: it does not ask about the defective record again"
        if self.targeted:
            return "targeted: " + "; ".join([f"{c.text} ({c.because})" for c in self.clauses])
        missing = [c for c in self.clauses if not c.satisfied]
        return "not targeted: missing - " + "; ".join([f"{c.text} ({c.because})" for c in missing])


def follows_up(task: TypedTask, defect: Defect, request: Request) -> bool:
    """Does the request concern the defect's designated record (the colleagues' concern rule:
    named candidates, or all; the role's named facts, or all of them)? Any request to the
    role follows up a Missed defect."""
    if request.role is not None and request.role != defect.role:
        return False
    if defect.kind == "missed" or defect.fact is None:
        return True
    own = task.facts_of(defect.role)
    facts = [f for f in own if f in request.facts] or list(own)
    candidates = request.concerned_candidates(task.candidates)
    return defect.fact in facts and any(c in candidates for c in defect.candidates)


def _quoted(task: TypedTask, defect: Defect, request: Request, fact: str) -> str | None:
    """The words of the imprecise statement that the request quotes back, if any."""
    typed = task.facts[fact]
    members = list(typed.members) or None
    for stated in defect.first_reply or []:
        if stated.fact != fact or stated.is_exact:
            continue
        try:
            bounds = [
                parse_value(typed.type, raw, members)
                for raw in (stated.low, stated.high)
                if raw is not None
            ]
        except ValueParseError:
            bounds = []
        quoted = [b for b in bounds if _as_quoted(b) in request.values]
        if quoted:
            return "quotes " + ", ".join(str(b) for b in quoted)
        options = {str(o) for o in stated.options or []}
        named = {m for f, m in request.members if f == fact and m in options}
        if len(named) >= 2:
            return "quotes the options " + " and ".join(sorted(named))
    return None


def _as_quoted(value: Value) -> Fraction | _dt.date | None:
    """A bound as the reader finds values in text: numbers as fractions, dates as dates."""
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool):
        return Fraction(value)
    return None


def _evidence(request: Request, key: str) -> str:
    words = request.evidence.get(key)
    return f'"{words[0]}"' if words else ""


def _check_sign(task: TypedTask, defect: Defect, sign: Sign, request: Request) -> str | None:
    """Why the request shows ``sign`` (None when it does not)."""
    kind = _sign_class(sign)
    if kind is CandidateSign:
        if request.all_candidates:
            return f"all candidates: {_evidence(request, 'all candidates')}"
        if not request.candidates:
            return "names no candidate: it concerns every candidate"
        designated = cast(CandidateSign, sign).candidates
        for named in request.candidates:  # (the first it names of the designated)
            if named in designated:
                evidence = _evidence(request, f"candidate:{named}")
                return f"names {task.candidate_name(named)}: {evidence}"
        return None
    if kind is FactSign:
        fact = cast(FactSign, sign).fact
        if fact not in request.facts:
            return None
        said = request.evidence.get(f"fact:{fact}") or next(
            (request.evidence[k] for k in request.evidence if k.startswith(f"member:{fact}:")),
            (),
        )
        return f'"{said[0]}"' if said else "named"
    if kind is ContextSign:
        context = cast(ContextSign, sign)
        mention = request.context_mention(context.fact, context.context)
        return None if mention is None else f'"{mention.words}"'
    if kind is ReplySign:
        if "reference" in request.intents:
            return _evidence(request, "reference")
        return _quoted(task, defect, request, cast(ReplySign, sign).fact)
    intent = cast(IntentSign, sign).intent
    if intent in request.intents:
        return _evidence(request, intent) or "a request"
    return None


def decide(
    task: TypedTask, defect: Defect, request: Request, follows: bool | None = None
) -> FollowUpDecision:
    """Check the defect's rule against a structured request. ``follows``: whether the
    request follows up the defect (:func:`follows_up`), when the caller knows it already
    (the scripted colleagues decide only requests that concern a designated record)."""
    checks = []
    for clause in defect.targeted_follow_up.all_of:
        texts = []
        found = None
        for sign in clause.any_of:
            texts.append(sign_text(task, sign))
            if found is None:
                found = _check_sign(task, defect, sign, request)
        text = " or ".join(texts)
        satisfied = found is not None
        because = found if found is not None else _why_not(task, clause, request)
        # (made as ClauseCheck(text, satisfied, because) makes it: a test compares them)
        checks.append(
            made_frozen(ClauseCheck, {"text": text, "satisfied": satisfied, "because": because})
        )
    if follows is None:
        follows = follows_up(task, defect, request)
    return made_frozen(FollowUpDecision, {"follows_up": follows, "clauses": tuple(checks)})


def _why_not(task: TypedTask, clause: Clause, request: Request) -> str:
    """What the request said instead, for a clause it does not satisfy."""
    first = clause.any_of[0]
    kind = _sign_class(first)
    if kind is CandidateSign:
        names = ", ".join(map(task.candidate_name, request.candidates))
        return f"it names only {names}"
    if kind is ContextSign:
        fact = cast(ContextSign, first).fact
        other = [m for m in request.contexts if m.fact == fact]
        if other:
            said = "; ".join(
                f"{'rejects' if m.negated else 'names'} the {m.context}" for m in other
            )
            return f"it {said}"
        return "no context and no mismatch"
    if kind is FactSign:
        named = [task.facts[f].label for f in request.facts]
        return "it names " + (", ".join(named) if named else "no fact")
    return "not found"


def interpret(
    task: TypedTask,
    defect: Defect,
    text: str,
    role: str | None = None,
    focus: str | None = None,
) -> tuple[Request, FollowUpDecision]:
    """Read a follow-up to the defect's role and decide whether it is targeted."""
    request = read_request(Vocabulary.of(task), text, role or defect.role, focus)
    return request, decide(task, defect, request)


def is_targeted(task: TypedTask, defect: Defect, text: str, focus: str | None = None) -> bool:
    """Does a follow-up to the defect's role satisfy the defect's rule?"""
    return interpret(task, defect, text, focus=focus)[1].targeted
