"""What makes a follow-up *targeted*: the phrases, and the one matcher every colleague uses.

The rules (documented in the README and tested):

* **Misaligned** - the follow-up names the fact (its label, its key, or a word of its label
  that no other fact of the task uses) *and* either the required context (its label, or a
  word that distinguishes it from the context actually given, such as "March" against
  "April") or the mismatch itself ("wrong period", "different context", "mismatch"...).
* **Incomplete** - the follow-up names the fact and asks for precision ("exact", "precise",
  "specific", "actual"...).
* **Missed** - any new request to the role.

A generic follow-up ("could you double-check your records?") satisfies none of these, so the
colleague repeats its first reply.
"""

from __future__ import annotations

import functools
import re

from ..spec import TypedTask
from ._model import AnyOf, FollowUpRule

MISMATCH_PHRASES = [
    "wrong context",
    "different context",
    "wrong period",
    "different period",
    "wrong version",
    "wrong site",
    "wrong date",
    "wrong year",
    "mismatch",
    "mismatched",
    "not the required",
    "outdated",
    "out of date",
    "wrong assessment",
    "wrong record",
]
PRECISION_PHRASES = [
    "exact",
    "exactly",
    "precise",
    "precisely",
    "specific",
    "actual",
    "single value",
    "exact figure",
    "exact value",
    "exact number",
    "exact date",
]
_STOPWORDS = {
    "the", "and", "for", "with", "from", "that", "this", "status", "result", "results",
    "value", "number", "date", "level", "rate", "total", "record", "records", "current",
    "annual", "years", "year", "months", "month", "days", "of", "in", "on", "to", "a", "an",
}  # fmt: skip


_NOT_WORD = re.compile(r"[^0-9a-z%]+")


def normalise(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces, padded for word-boundary search."""
    return f" {_NOT_WORD.sub(' ', text.lower()).strip()} "


@functools.lru_cache(maxsize=4096)
def _normalised_phrase(phrase: str) -> str:
    return normalise(phrase)  # phrases repeat across every follow-up check: normalise once


def contains_phrase(text: str, phrase: str) -> bool:
    target = _normalised_phrase(phrase)
    return target.strip() != "" and target in normalise(text)


def is_targeted(rule: FollowUpRule, text: str) -> bool:
    """Does a follow-up message (to the right role) satisfy the rule?"""
    if rule.any_request:
        return True
    normalised = normalise(text)
    return all(
        any((t := _normalised_phrase(p)).strip() and t in normalised for p in clause.phrases)
        for clause in rule.all_of
    )


def _words(text: str) -> list[str]:
    return [w for w in normalise(text).split() if len(w) >= 4 and w not in _STOPWORDS]


def fact_phrases(task: TypedTask, fact_key: str) -> list[str]:
    """How a message can name a fact: label, key, and label words unique to this fact."""
    fact = task.facts[fact_key]
    phrases = [fact.label, fact_key.replace("_", " ")]
    others = {w for k, f in task.facts.items() if k != fact_key for w in _words(f.label)}
    phrases += [w for w in _words(fact.label) if w not in others]
    return list(dict.fromkeys(p for p in phrases if p.strip()))


def context_phrases(required: str, given: str | None = None) -> list[str]:
    """How a message can name the required context, against the context actually given."""
    phrases = [required]
    if given is not None:
        given_words = set(normalise(given).split())
        phrases += [w for w in normalise(required).split() if w not in given_words and len(w) >= 3]
    return list(dict.fromkeys(phrases))


def misaligned_rule(task: TypedTask, fact_key: str, given_context: str) -> FollowUpRule:
    required = task.facts[fact_key].context
    return FollowUpRule(
        all_of=[
            AnyOf(phrases=fact_phrases(task, fact_key), describes="the fact"),
            AnyOf(
                phrases=context_phrases(required, given_context) + MISMATCH_PHRASES,
                describes="the required context or the mismatch",
            ),
        ]
    )


def incomplete_rule(task: TypedTask, fact_key: str) -> FollowUpRule:
    return FollowUpRule(
        all_of=[
            AnyOf(phrases=fact_phrases(task, fact_key), describes="the fact"),
            AnyOf(phrases=PRECISION_PHRASES, describes="a request for the exact value"),
        ]
    )


def missed_rule() -> FollowUpRule:
    return FollowUpRule(any_request=True)
