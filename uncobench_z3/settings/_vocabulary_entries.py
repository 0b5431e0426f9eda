"""What a fact's own words give a task's vocabulary (:mod:`._vocabulary`): its entries - the
ways of naming the fact, its members and its contexts - and the order of its contexts in time.
They depend on the fact alone, so the tasks that share a fact share them (each remembered).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Literal, NamedTuple

from ._phrases import CONTEXT_STOPWORDS, word_set
from ._words import MONTHS, stem, words_of

EntryKind = Literal["candidate", "fact", "member", "context"]

_FUNCTION_WORDS = word_set(
    """
    a an the of for to in on at by with from and or but not no is are was were be been it
    its this that these those he she him her his they them their we you your i me my our as
    if than then so do does did has have had can could will would should may might must
    please
    """
)


class Entry(NamedTuple):
    """One way of naming one thing of the task. (A named tuple: a task has hundreds, made
    and hashed while its vocabulary is built for every group an evaluation plays.)"""

    kind: EntryKind
    ref: tuple[str, ...]
    """(candidate,), (fact,), (fact, member) or (fact, context)"""
    words: tuple[str, ...]
    stems: tuple[str, ...]
    priority: int
    """which entry wins when two cover the same words (longer spans win first)"""
    unordered: bool = False
    """its words may come in any order within one sentence (labels and synonyms)"""
    weak: bool = False
    """names the fact only when it is the addressed role's one fact with these words"""
    capital: bool = False
    """matches only written with a capital (a name word that is also an ordinary word)"""
    exact: bool = False
    """matches the word itself (or its plural), not any word of the same stem: the context
    word "verified" is not named by "verify", nor "confirmed" by "confirm\""""


def _content(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(w for w in words if w not in _FUNCTION_WORDS)


def _entry(kind: EntryKind, ref: tuple[str, ...], words: tuple[str, ...], priority: int, *,
           unordered: bool = False, weak: bool = False, capital: bool = False,
           exact: bool = False) -> Entry:  # fmt: skip
    # made as a plain tuple of its fields, in order: the named tuple's own __new__ with
    # keywords was most of an entry's cost (a group's vocabulary makes about a hundred)
    return _new_tuple(Entry, (kind, ref, words, tuple(map(stem, words)), priority, unordered,
                              weak, capital, exact))  # fmt: skip


_new_tuple = tuple.__new__


@functools.lru_cache(maxsize=16384)
def _single_entry(key: str, word: str, distinctive: bool) -> Entry:
    """The entry of one word of fact ``key`` that may name it alone: strong when only this
    fact of the task has it, else weak. Remembered: the tasks that share a fact make the same
    ones (:func:`_fact_shape`)."""
    return _entry("fact", (key,), (word,), 6 if distinctive else 2, weak=not distinctive)


class _FactShape(NamedTuple):
    """What a fact's own words give its vocabulary, before the task's other facts are known
    (which of its single words only it has): see :func:`_fact_shape`."""

    phrases: tuple[Entry, ...]
    """the label's and synonyms' entries of two content words or more, in order"""
    alone: tuple[str, ...]
    """the words that can name the fact alone (to tell which are the fact's own)"""
    singles: tuple[str, ...]
    """its single words, sorted: an entry each, strong when only this fact has the word"""
    rest: tuple[Entry, ...]
    """the unit's entry and the members' entries, in order"""


@functools.lru_cache(maxsize=4096)
def _fact_words(
    label: str,
    synonyms: tuple[str, ...],
    context: str,
    other_contexts: tuple[str, ...],
    members: tuple[str, ...],
) -> frozenset[str]:
    """The words of a fact's label, synonyms, contexts and members: what a candidate's name
    word must be written with a capital to stand for the candidate against (made once and
    shared by the tasks that have the fact, as :func:`_fact_shape`)."""
    texts = (label, *synonyms, context, *other_contexts, *members)
    return frozenset(word for text in texts for word in words_of(text))


@functools.lru_cache(maxsize=4096)
def _fact_shape(
    key: str, label: str, synonyms: tuple[str, ...], unit: str | None, members: tuple[str, ...]
) -> _FactShape:
    """A fact's entries that depend on its own words alone; made once and shared by the tasks
    that have the fact (1,000 built groups have 7,447 facts, 606 distinct)."""
    found = [words_of(label), *(words_of(s) for s in synonyms if s.strip())]
    key_words = tuple(w for w in key.lower().split("_") if w)
    if key_words:
        found.append(key_words)
    alone = [words_of(label), *(found[-1:] if key_words else [])]
    alone += [words for words in found if len(_content(words)) == 1]
    phrases: list[Entry] = []
    for words in found:
        content = _content(words)
        if len(content) >= 2:
            phrases.append(_entry("fact", (key,), words, 8))
            phrases.append(_entry("fact", (key,), content, 7, unordered=True))
    # single words: of the label and the key, and one-word synonyms ("vetting"); the words of
    # a longer synonym only count together ("security check", not "check")
    label_and_key = [words_of(label), *(found[-1:] if key_words else [])]
    singles = {w for words in label_and_key for w in _content(words)} | {
        w for words in found if len(_content(words)) == 1 for w in _content(words)
    }
    rest: list[Entry] = []
    if unit:
        unit_words = _content(words_of(unit))
        if len(unit_words) == 1 and unit_words[0].isalpha() and len(unit_words[0]) > 2:
            rest.append(_entry("fact", (key,), unit_words, 1, weak=True))
    for member in members:
        words = words_of(member)
        rest.append(_entry("member", (key, member), words, 6))
        if len(_content(words)) >= 2:  # "an open deviation" for "deviation open"
            rest.append(_entry("member", (key, member), _content(words), 3, unordered=True))
    return _FactShape(
        tuple(phrases),
        tuple(word for words in alone for word in _content(words)),
        tuple(sorted(singles)),
        tuple(rest),
    )


@functools.lru_cache(maxsize=4096)
def _context_entries(
    key: str, contexts: tuple[str, ...]
) -> tuple[tuple[Entry, ...], frozenset[str], tuple[str, ...] | None]:
    """The entries that name the contexts of fact ``key`` (in the order they are added), the
    words of its contexts, and their order in time when they have one. They depend on the
    key and the context labels alone, and the groups of one scenario share them (1,000 built
    groups have 7,447 facts with 605 distinct sets of contexts), so they are made once."""
    entries: list[Entry] = []
    words = {c: words_of(c) for c in contexts}
    for context in contexts:
        own = words[context]
        entries.append(_entry("context", (key, context), own, 9))
        if len(_content(own)) >= 2:
            entries.append(_entry("context", (key, context), _content(own), 7, unordered=True))
        others = {w for c in contexts if c != context for w in words[c]}
        telling = [
            (i, w)
            for i, w in enumerate(own)
            if w not in others and w not in CONTEXT_STOPWORDS and w not in _FUNCTION_WORDS
        ]
        for (i, first), (j, second) in itertools.pairwise(telling):
            if j == i + 1:
                entries.append(_entry("context", (key, context), (first, second), 4))
        for i, word in telling:
            if word.isdigit() and not re.fullmatch(r"(19|20)\d\d", word):
                if i > 0:  # "revision 3", "stage 3": a bare "3" is a value
                    entries.append(_entry("context", (key, context), own[i - 1 : i + 1], 4))
            elif len(word) >= 2:
                entries.append(_entry("context", (key, context), (word,), 3, exact=True))
    context_words = frozenset(w for c in contexts for w in words[c] if w not in _FUNCTION_WORDS)
    order = _time_order(contexts, words)
    return tuple(entries), context_words, None if order is None else tuple(order)


_REVISION = re.compile(r"^(?:[a-z]|\d+)$")


def _time_key(words: tuple[str, ...]) -> tuple[int, int, int] | None:
    """(year, month, revision) of a context, or None when it names no period or revision."""
    year = month = revision = 0
    for i, word in enumerate(words):
        if re.fullmatch(r"(19|20)\d\d", word):
            year = max(year, int(word))
        elif word in MONTHS:
            month = max(month, MONTHS.index(word) + 1)
        elif re.fullmatch(r"q[1-4]", word):
            month = max(month, 3 * int(word[1]))
        elif re.fullmatch(r"h[12]", word):
            month = max(month, 6 * int(word[1]))
        elif word in ("revision", "version", "issue", "edition") and i + 1 < len(words):
            nxt = words[i + 1]
            if _REVISION.match(nxt):
                revision = int(nxt) if nxt.isdigit() else ord(nxt) - ord("a") + 1
        elif word.isdigit() and i + 1 < len(words) and words[i + 1] in ("hour", "hours", "day"):
            revision = int(word)
    if not (year or month or revision):
        return None
    return year, month, revision


def _time_order(contexts: tuple[str, ...], words: dict[str, tuple[str, ...]]) -> list[str] | None:
    if len(contexts) < 2:
        return None
    keys = {c: _time_key(words[c]) for c in contexts}
    if any(k is None for k in keys.values()) or len(set(keys.values())) != len(contexts):
        return None
    return sorted(contexts, key=lambda c: keys[c])  # type: ignore[arg-type,return-value]
