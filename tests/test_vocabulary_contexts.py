"""The context entries of a fact are made once per (key, context labels) and shared by every
task that has them (``_vocabulary._context_entries``); they must be what the plain per-task
loop adds, in the same order, for any labels."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.settings._phrases import CONTEXT_STOPWORDS
from uncobench_z3.settings._vocabulary import (
    _FUNCTION_WORDS,
    Entry,
    _content,
    _context_entries,
    _time_order,
)
from uncobench_z3.settings._words import stem, words_of


def _plain(key: str, contexts: tuple[str, ...]) -> tuple[list[Entry], frozenset[str], object]:
    """The definition: the loop each vocabulary ran for each of its facts."""

    def entry(ref: tuple[str, ...], words: tuple[str, ...], priority: int, **flags: bool) -> Entry:
        return Entry("context", ref, words, tuple(stem(w) for w in words), priority, **flags)

    added: list[Entry] = []
    words = {c: words_of(c) for c in contexts}
    for context in contexts:
        own = words[context]
        added.append(entry((key, context), own, 9))
        if len(_content(own)) >= 2:
            added.append(entry((key, context), _content(own), 7, unordered=True))
        others = {w for c in contexts if c != context for w in words[c]}
        telling = [
            (i, w)
            for i, w in enumerate(own)
            if w not in others and w not in CONTEXT_STOPWORDS and w not in _FUNCTION_WORDS
        ]
        for (i, first), (j, second) in itertools.pairwise(telling):
            if j == i + 1:
                added.append(entry((key, context), (first, second), 4))
        for i, word in telling:
            if word.isdigit() and not re.fullmatch(r"(19|20)\d\d", word):
                if i > 0:
                    added.append(entry((key, context), own[i - 1 : i + 1], 4))
            elif len(word) >= 2:
                added.append(entry((key, context), (word,), 3, exact=True))
    context_words = frozenset(w for c in contexts for w in words[c] if w not in _FUNCTION_WORDS)
    return added, context_words, _time_order(contexts, words)


_POOL = (
    "2025 2026 FY26 Q3 March april rev C revision 3 version 2 signed draft final the of "
    "self-reported verified 48 hour day stage audit 2026-27 first half latest"
)
_WORDS = st.sampled_from(_POOL.split())
_LABELS = st.lists(_WORDS, min_size=1, max_size=5).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["fee", "rating", "clearance_level"]),
    st.lists(_LABELS, min_size=1, max_size=4, unique=True),
)
def test_shared_context_entries_equal_the_plain_loop(key: str, labels: list[str]) -> None:
    contexts = tuple(labels)
    entries, context_words, order = _context_entries(key, contexts)
    added, plain_words, plain_order = _plain(key, contexts)
    assert list(entries) == added
    assert context_words == plain_words
    assert (None if order is None else list(order)) == plain_order
    assert _context_entries(key, contexts) is _context_entries(key, contexts)  # made once


def test_an_entry_is_equal_and_hashed_by_its_content() -> None:
    """A vocabulary drops an entry it already has by equality: two entries made apart with
    the same content are one, and any field tells them apart."""
    one = Entry("fact", ("f",), ("a", "b"), ("a", "b"), 7, unordered=True)
    assert one == Entry("fact", ("f",), ("a", "b"), ("a", "b"), 7, unordered=True)
    assert len({one, Entry("fact", ("f",), ("a", "b"), ("a", "b"), 7, unordered=True)}) == 1
    assert one != one._replace(weak=True) and one != one._replace(priority=8)
