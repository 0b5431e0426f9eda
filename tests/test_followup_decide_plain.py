"""``decide`` (settings/_followup.py) gives what its plain definition gives: the definition
before its clause texts were written in one loop with the checks, a named candidate and a
named context found by one loop each and the names joined by ``map`` (kept here, as it was),
on every defect of the example groups, on the same defects designating every candidate
(so that a request can name several of them, in either order), and on follow-ups that name
candidates, contexts (rejected or not), the fact, the reply and nothing."""

from __future__ import annotations

import itertools
from typing import cast

from tests.sample_helpers import stored_example_groups
from uncobench_z3.evaluation import PreparedGroup
from uncobench_z3.settings import (
    CandidateSign,
    ClauseCheck,
    ContextSign,
    Defect,
    FollowUpDecision,
    Request,
    decide,
)
from uncobench_z3.settings._followup import (
    _check_sign,
    _evidence,
    _sign_class,
    _why_not,
    follows_up,
    incomplete_rule,
    misaligned_rule,
    sign_text,
)
from uncobench_z3.settings._model import Clause, Sign
from uncobench_z3.spec import TypedTask

GROUPS = stored_example_groups()


# -- the plain definitions (as they were) ----------------------------------------------------
def plain_sign_text(task: TypedTask, sign: Sign) -> str:
    if _sign_class(sign) is CandidateSign:
        names = " or ".join([task.candidate_name(c) for c in cast(CandidateSign, sign).candidates])
        return f"concerns {names} (by name or pronoun), all candidates, or no one in particular"
    return sign_text(task, sign)  # (its other branches are unchanged)


def plain_check_sign(task: TypedTask, defect: Defect, sign: Sign, request: Request) -> str | None:
    kind = _sign_class(sign)
    if kind is CandidateSign and request.candidates and not request.all_candidates:
        hit = [c for c in request.candidates if c in cast(CandidateSign, sign).candidates]
        if hit:
            return (
                f"names {task.candidate_name(hit[0])}: {_evidence(request, f'candidate:{hit[0]}')}"
            )
        return None
    if kind is ContextSign:
        context = cast(ContextSign, sign)
        if not request.names_context(context.fact, context.context):
            return None
        words = [
            m.words
            for m in request.contexts
            if m.fact == context.fact and m.context == context.context and not m.negated
        ]
        return f'"{words[0]}"'
    return _check_sign(task, defect, sign, request)  # (its other branches are unchanged)


def plain_why_not(task: TypedTask, clause: Clause, request: Request) -> str:
    first = clause.any_of[0]
    if _sign_class(first) is CandidateSign:
        names = ", ".join(task.candidate_name(c) for c in request.candidates)
        return f"it names only {names}"
    return _why_not(task, clause, request)  # (its other branches are unchanged)


def plain_decide(task: TypedTask, defect: Defect, request: Request) -> FollowUpDecision:
    checks = []
    for clause in defect.targeted_follow_up.all_of:
        text = " or ".join([plain_sign_text(task, s) for s in clause.any_of])
        found = None
        for sign in clause.any_of:
            found = plain_check_sign(task, defect, sign, request)
            if found is not None:
                break
        satisfied = found is not None
        because = found if found is not None else plain_why_not(task, clause, request)
        checks.append(ClauseCheck(text, satisfied, because))
    return FollowUpDecision(follows_up(task, defect, request), tuple(checks))


# -- the follow-ups ---------------------------------------------------------------------------
def _questions(task: TypedTask, defect: Defect) -> list[str]:
    """Follow-ups naming the defect's fact, contexts and candidates in several ways."""
    assert defect.fact is not None
    fact = task.facts[defect.fact]
    names = [task.candidate_name(c) for c in task.candidates]
    contexts = [fact.context, *fact.other_contexts]
    questions = [
        "Could you double-check your records?",
        f"Which one is it exactly? I need the exact {fact.label}.",
        "You gave me a range; that range is not enough, which one is it?",
        f"That was the wrong context for the {fact.label}.",
        "Please send the records of all candidates again.",
    ]
    for first, second in itertools.permutations(names[:3], 2):
        questions += [
            f"What is {first}'s {fact.label}? And {second}'s?",
            f"For {first} and {second}: the exact {fact.label}, please.",
        ]
    for context, other in itertools.permutations(contexts, 2):
        questions += [
            f"I need the {fact.label} {context}, not {other}.",
            f"Not the {other} figure: what is {names[0]}'s {fact.label} {context}, exactly?",
            f"Is that the {context} {fact.label} or the {other} one? Which one is it?",
        ]
    for context in contexts:
        questions.append(f"{names[-1]}'s {fact.label} {context}? The exact value, please.")
    for other in task.facts.values():  # (another fact's context, and this fact's)
        questions.append(f"The {other.label} {other.context}, and the {fact.label} exactly?")
    return questions


def _defects(task: TypedTask, defect: Defect) -> list[Defect]:
    """The defect, and the same defect designating every candidate under either rule (or
    the last), or requiring another fact's context (named for that fact, not for this one)."""
    assert defect.fact is not None
    every = list(task.candidates)
    rules = [
        misaligned_rule(defect.fact, every, task.facts[defect.fact].context),
        incomplete_rule(defect.fact, every),
        incomplete_rule(defect.fact, list(reversed(every))),
        incomplete_rule(defect.fact, every[-1:]),
    ]
    rules += [
        misaligned_rule(defect.fact, every, other.context)
        for key, other in task.facts.items()
        if key != defect.fact
    ]
    return [defect] + [
        defect.model_copy(update={"candidates": every, "targeted_follow_up": rule})
        for rule in rules
    ]


def test_decide_is_its_plain_definition() -> None:
    decided = satisfied = unsatisfied = several = 0
    for group in GROUPS:
        prepared = PreparedGroup.of(group)
        book, task = prepared.book, prepared.task
        for setting in group.settings:
            for original in setting.defects:
                if original.kind == "missed":
                    continue
                for defect in _defects(task, original):
                    for question in _questions(task, original):
                        for focus in (None, task.candidates[0]):
                            request = book.read(defect.role, question, focus)
                            expected = plain_decide(task, defect, request)
                            found = decide(task, defect, request)
                            assert vars(found) == vars(expected), question
                            assert decide(task, defect, request, follows=True).clauses == (
                                expected.clauses
                            )
                            assert found.why() == expected.why()
                            decided += 1
                            satisfied += sum(c.satisfied for c in found.clauses)
                            unsatisfied += sum(not c.satisfied for c in found.clauses)
                            several += len(set(request.candidates)) > 1
    assert decided > 1000 and satisfied > 500 and unsatisfied > 500 and several > 100
