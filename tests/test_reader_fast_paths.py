"""The request reader's fast paths against the plain definitions they replace: vocabulary
matches found through the first-word indexes (with the stems a message keeps, the one-word
matches made only on words the longer ones left), the tagged
message written once for both readings, the one-piece words of the tokenizer and its tokens
made as tuples, the remembered
tokens of a message, the phrases remembered by a message's tagged words, the screens of the
value scan."""

from __future__ import annotations

import dataclasses
import datetime
import gc
import itertools
import re
from collections.abc import Set as AbstractSet
from fractions import Fraction
from operator import itemgetter
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_eval_evidence import _unordered_by_scan
from uncobench_z3._trusted import made_frozen
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import typed_task
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _matching as M
from uncobench_z3.settings import _message as MS
from uncobench_z3.settings import _phrase_hits as PH
from uncobench_z3.settings import _phrases as P
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings import _request_words as RW
from uncobench_z3.settings import _tagging as T
from uncobench_z3.settings import _values as VA
from uncobench_z3.settings import _vocabulary as V
from uncobench_z3.settings import _words as W
from uncobench_z3.settings._any_order import add_unordered
from uncobench_z3.settings._matching import (
    Match,
    _compatible,
    find_matches,
    value_tokens,
)
from uncobench_z3.settings._request import (
    ContextMention,
    Request,
    _mention,
    _tokens_and_values,
    parse_message,
    phrase_hits,
    read_request,
)
from uncobench_z3.settings._tagging import tagged
from uncobench_z3.settings._vocabulary import Entry, _entry, unordered_row
from uncobench_z3.settings._words import _pieces, close_enough, scan_values, tokenize
from uncobench_z3.settings._words import stem as stem_of
from uncobench_z3.spec import TypedTask

ROOT = Path(__file__).resolve().parent.parent
TASKS = [
    typed_task(group)
    for path in sorted((ROOT / "examples/groups").glob("*.group.json"))
    for group in load_groups(path)
]
VOCABULARIES = [Vocabulary.of(task) for task in TASKS]


def _words(vocabulary: Vocabulary) -> list[str]:
    task = vocabulary.task
    words = [w for c in task.candidates for w in task.candidate_name(c).split()]
    for fact in task.facts.values():
        for label in (fact.label, fact.context, *fact.other_contexts, *fact.members):
            words += label.split()
    return words


FILLERS = ["not", "the", "and", "or", "?", ".", ":", "-", "2026", "FY26", "March", "he", "3"]


@st.composite
def messages(draw: st.DrawFn) -> tuple[Vocabulary, str]:
    vocabulary = draw(st.sampled_from(VOCABULARIES))
    words = draw(st.lists(st.sampled_from(_words(vocabulary) + FILLERS), max_size=30))
    return vocabulary, " ".join(words)


def _contiguous(entry: Entry, stems: list[str], start: int) -> tuple[int, ...] | None:
    end = start + len(entry.stems)
    if end > len(stems) or tuple(stems[start:end]) != entry.stems:
        return None
    return tuple(range(start, end))


def plain_find_matches(vocabulary: Vocabulary, tokens: list, blocked: set[int]) -> list[Match]:
    """find_matches as it was written before the first-word indexes: every entry looked at,
    every word corrected through the vocabulary, every match sorted by a key of its own."""
    stems = [vocabulary.corrected(t[W.WORD], t[W.STEM]) for t in tokens]
    raw: list[Match] = []
    for i, word_stem in enumerate(stems):
        for entry in vocabulary.by_stem.get(word_stem, ()):
            if entry.unordered:
                continue
            hit = _contiguous(entry, stems, i)
            written = tokens[i][W.WORD] in (entry.words[0], entry.words[0] + "s")
            capital = tokens[i][W.CAPITALISED] or not entry.capital
            if hit is not None and capital and (written or not entry.exact):
                raw.append(Match(entry, hit))
    for entry in vocabulary.unordered_entries:
        if all(want in set(stems) for want in entry.stems):
            raw += [Match(entry, hit) for hit in _unordered_by_scan(entry, stems, tokens)]
    raw = sorted(
        (m for m in raw if not blocked.intersection(m.indexes)),
        key=lambda m: (-len(m.indexes), -m.entry.priority, m.indexes),
    )
    taken: dict[int, tuple[int, int]] = {}
    kept: list[Match] = []
    for match in raw:
        if not {taken[i] for i in match.indexes if i in taken}:
            kept.append(match)
            for i in match.indexes:
                taken[i] = (len(match.indexes), match.entry.priority)
        elif any(
            k.indexes == match.indexes and _compatible(k.entry, match.entry) for k in kept
        ) and not any(k.indexes == match.indexes and _same(k.entry, match.entry) for k in kept):
            kept.append(match)
    return kept


def _same(kept: Entry, other: Entry) -> bool:
    """The same thing named (a weak word's readings all kept)."""
    return (kept.kind, kept.ref) == (other.kind, other.ref) and not (kept.weak or other.weak)


_MADE_UNORDERED = [
    _entry("fact", ("f",), ("zorblax", "zorblax"), 7, unordered=True),  # a word twice
    _entry("member", ("f", "m"), ("zorblax",), 4, unordered=True),  # one word
    _entry("context", ("f", "c"), ("quuxite", "zorblax", "zorblax"), 7, unordered=True),
    # (three and four words are written out in add_unordered: a word twice or three times,
    # first, between and last, so that a token is not taken twice)
    _entry("context", ("f", "d"), ("zorblax", "quuxite", "zorblax"), 6, unordered=True),
    _entry("fact", ("g",), ("zorblax", "quuxite", "zorblax", "zorblax"), 8, unordered=True),
    _entry("member", ("g", "m"), ("quuxite", "zorblax", "quuxite", "zorblax"), 5, unordered=True),
    _entry("member", ("g", "n"), ("quuxite", "zorblax", "zorblax", "quuxite"), 5, unordered=True),
]
"""unordered entries no vocabulary makes from a task (one word, a word twice)"""


@st.composite
def unordered_messages(draw: st.DrawFn) -> tuple[list[Entry], str]:
    """Unordered entries and a message of their words (some), shuffled, with other words
    and sentence marks between."""
    vocabulary = draw(st.sampled_from([v for v in VOCABULARIES if v.unordered_entries]))
    entries = [*vocabulary.unordered_entries, *_MADE_UNORDERED]
    named = draw(st.lists(st.sampled_from(entries), min_size=1, max_size=4))
    words = [w for entry in named for w in entry.words if draw(st.integers(0, 5))]
    words += draw(
        st.lists(st.sampled_from([*FILLERS, ".", "?", "zorblax", "quuxite"]), max_size=10)
    )
    return entries, " ".join(draw(st.permutations(words)))


@settings(max_examples=300, deadline=None)
@given(unordered_messages())
def test_the_unordered_matches_are_those_of_the_plain_scan(
    case: tuple[list[Entry], str],
) -> None:
    """find_matches' unordered matches are those of the plain scan, in the same order,
    numbered as found (a word twice, an entry of one word, words in any order across
    sentences)."""
    entries, text = case
    tokens = tokenize(text)
    stems, _, at, sentence_of = M.token_stems_of(tokens)
    maybe = [k for k, entry in enumerate(entries) if entry.stems[0] in at]
    by_first: dict[str, list[int]] = {}
    for k, entry in enumerate(entries):
        by_first.setdefault(entry.stems[0], []).append(k)
    earlier = [(-2, 0, 0, (0, 1), 0, None)]  # (numbered on from the matches found before)
    raw: list = list(earlier)
    singles: list = []
    rows = [unordered_row(entry) for entry in entries]
    add_unordered(rows, by_first, by_first.keys() & at.keys(), at, sentence_of, raw, singles)
    expected: list = []
    expected_singles = []
    for k in maybe:
        entry = entries[k]
        for hit in _unordered_by_scan(entry, list(stems), tokens):
            if len(hit) == 1:
                expected_singles.append((-entry.priority, hit[0], entry))
            else:
                read = (entry, entry.kind, entry.ref, entry.weak)
                expected.append((-len(hit), -entry.priority, hit[0], hit, len(earlier) + k, read))
    # the first stems are looked at in any order: an entry's matches are numbered by its place
    # (ties in the order of matches are on the same tokens: an entry's are on other tokens)
    assert sorted(raw[len(earlier) :], key=itemgetter(4, 3)) == expected
    assert raw[: len(earlier)] == earlier
    assert sorted(singles, key=itemgetter(1)) == sorted(expected_singles, key=itemgetter(1))


MISSPELLINGS = {
    "double": lambda word: word[:3] + word[2:],
    "drop": lambda word: word[:2] + word[3:],  # a 7-letter word becomes a 6-letter typo
    "swap": lambda word: word[:2] + word[3] + word[2] + word[4:],
    "change": lambda word: word[:-1] + ("a" if word[-1] != "a" else "e"),
}


@settings(max_examples=300, deadline=None)
@given(
    messages(),
    st.sets(st.integers(0, 30), max_size=3),
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from(sorted(MISSPELLINGS)))),
)
def test_matches_through_the_indexes_are_the_plain_matches(
    message: tuple[Vocabulary, str], blocked: set[int], misspelt: list[tuple[int, str]]
) -> None:
    """Also with words misspelt (a letter doubled, dropped, swapped or changed: typos of 5
    to 8 letters and more), which a vocabulary may read as its own long words: the stems a
    message keeps are corrected per vocabulary."""
    vocabulary, text = message
    words = text.split(" ")
    for at, how in misspelt:
        if at < len(words) and len(words[at]) >= 5:
            words[at] = MISSPELLINGS[how](words[at])
    tokens = tokenize(" ".join(words))
    plain = plain_find_matches(vocabulary, tokens, blocked)
    assert find_matches(vocabulary, tokens, blocked) == plain
    found = find_matches(vocabulary, tokens, blocked, M.token_stems_of(tokens))
    assert found == plain
    _hold_their_entries(found)


def test_matches_of_the_template_messages_are_the_plain_matches() -> None:
    """The template messages name labels and contexts of two, three words and more word for
    word (random messages of single words rarely do): a match's tokens are its words'
    (a two-word match's pair is written out), an unordered match's in order. Written word
    for word, a label's reading in any order is the same thing on the same words (kept
    once): the messages are also read with their words the other way round."""
    lengths = set()
    for vocabulary, text in {(id(v), t): (v, t) for v, t, _, _ in template_messages()}.values():
        for written in (text, " ".join(reversed(text.split(" ")))):
            tokens = tokenize(written)
            found = find_matches(vocabulary, tokens, set())
            assert found == plain_find_matches(vocabulary, tokens, set()), written
            _hold_their_entries(found)
            lengths |= {(len(m.indexes), m.entry.unordered) for m in found}
    assert {(2, False), (3, False), (4, False), (2, True), (3, True)} <= lengths


def _hold_their_entries(matches: list[Match]) -> None:
    """Each match's own kind, ref and weak are its entry's (what a reading reads of it: the
    match's slots, which Python 3.11 reads specialised, a named tuple's fields not)."""
    for match in matches:
        entry = match.entry
        assert (match.kind, match.ref, match.weak) == (entry.kind, entry.ref, entry.weak)


def test_a_match_holds_its_entrys_kind_ref_and_weak_and_compares_by_entry_and_words() -> None:
    entry = V._entry("fact", ("clearance",), ("clearance",), 2, weak=True)
    other = V._entry("context", ("clearance", "verified"), ("verified",), 3)
    match = Match(entry, (3,))
    assert (match.kind, match.ref, match.weak) == ("fact", ("clearance",), True)
    assert match == Match(entry, (3,)) and match != Match(other, (3,))
    assert match != Match(entry, (4,))
    assert repr(match) == f"Match(entry={entry!r}, indexes=(3,))"
    assert [f.name for f in dataclasses.fields(Match) if f.compare] == ["entry", "indexes"]
    # (made from its entry, so a match replaced holds its new entry's fields)
    replaced = dataclasses.replace(match, entry=other)
    assert (replaced.kind, replaced.ref, replaced.weak) == (other.kind, other.ref, other.weak)


def test_matches_on_the_same_words_as_strong_keep_the_order_they_were_found_in() -> None:
    """Entries of the same words and priority that are all kept (a fact and a context): in
    the order they were found in (the vocabulary's), not in the entries' own order ("context"
    before "fact") - word for word, and in any order."""
    vocabulary = Vocabulary(VOCABULARIES[0].task)
    fact = _entry("fact", ("f",), ("quuxite", "zorblax"), 3)
    context = _entry("context", ("f", "c"), ("quuxite", "zorblax"), 3)
    fact_any = _entry("fact", ("g",), ("quuxite", "zorblax"), 2, unordered=True)
    context_any = _entry("context", ("g", "c"), ("quuxite", "zorblax"), 2, unordered=True)
    vocabulary._add_all([fact, context, fact_any, context_any])
    found = find_matches(vocabulary, tokenize("the quuxite zorblax"), set())
    assert [m.entry for m in found] == [fact, context, fact_any, context_any]
    found = find_matches(vocabulary, tokenize("the zorblax quuxite"), set())
    assert [m.entry for m in found] == [fact_any, context_any]


def test_a_thing_named_again_on_the_same_words_is_kept_once() -> None:
    """A label's words read word for word and in any order name one thing twice: the first
    match is kept, the second adds nothing (whatever else is kept on the words between them,
    and for one word too); a weak word's readings are all kept, and so are two things."""
    vocabulary = Vocabulary(VOCABULARIES[0].task)
    fact = _entry("fact", ("f",), ("quuxite", "zorblax"), 3)
    other_fact = _entry("fact", ("g",), ("quuxite", "zorblax"), 3)
    context = _entry("context", ("h", "c"), ("quuxite", "zorblax"), 3)
    fact_any = _entry("fact", ("f",), ("quuxite", "zorblax"), 2, unordered=True)
    weak = _entry("fact", ("w",), ("quuxite", "zorblax"), 2, unordered=True, weak=True)
    weak_again = _entry("fact", ("w",), ("quuxite", "zorblax"), 1, unordered=True, weak=True)
    word = _entry("member", ("f", "m"), ("blorft",), 4)
    word_any = _entry("member", ("f", "m"), ("blorft",), 4, unordered=True)
    vocabulary._add_all([fact, other_fact, context, fact_any, weak, weak_again, word, word_any])
    tokens = tokenize("the quuxite zorblax and a blorft")
    found = find_matches(vocabulary, tokens, set())
    assert [m.entry for m in found] == [fact, other_fact, context, weak, weak_again, word]
    assert found == plain_find_matches(vocabulary, tokens, set())
    matches, doubles = M.find_matches_and_doubles(vocabulary, tokens, set())
    assert matches == found and doubles  # (a fact and a context on the same words)
    _hold_their_entries(found)


def test_the_reader_is_told_when_words_are_read_as_a_fact_and_a_context() -> None:
    """find_matches_and_doubles says whether a fact and a context were kept on the same
    words, the only messages :func:`one_reading` changes (and parse_message calls it for)."""
    vocabulary = Vocabulary(VOCABULARIES[0].task)
    fact = _entry("fact", ("f",), ("quuxite", "zorblax"), 3)
    other_fact = _entry("fact", ("g",), ("quuxite", "zorblax"), 3)
    context = _entry("context", ("f", "c"), ("blorft",), 3)
    fact_word = _entry("fact", ("g",), ("blorft",), 3)
    vocabulary._add_all([fact, other_fact, context])
    for text, doubles in [("the quuxite zorblax", False), ("the quuxite zorblax blorft", False)]:
        tokens = tokenize(text)
        assert M.find_matches_and_doubles(vocabulary, tokens, set())[1] is doubles, text
    vocabulary._add_all([fact_word])
    tokens = tokenize("the blorft")
    matches, doubles = M.find_matches_and_doubles(vocabulary, tokens, set())
    assert [m.entry for m in matches] == [context, fact_word] and doubles
    _hold_their_entries(matches)
    assert M.one_reading(matches) != matches


def test_one_word_matches_decided_after_the_longer_keep_the_order_they_were_found_in() -> None:
    """The one-word matches are made after the longer ones are kept, and only on words left
    free: of two equally strong one-word readings of a word that cannot both stand, the
    word-for-word entry's is kept (it was found first), whatever the order they are made in
    - and a word inside a longer match is read only as that match."""
    vocabulary = Vocabulary(VOCABULARIES[0].task)
    word = _entry("fact", ("f",), ("zorblax",), 4)
    unordered = _entry("member", ("f", "m"), ("zorblax",), 4, unordered=True)
    longer = _entry("context", ("f", "c"), ("quuxite", "zorblax"), 3)
    vocabulary._add_all([unordered, word, longer])
    for text, kept in [
        ("Send the zorblax please", [word]),
        ("The quuxite zorblax, and a zorblax", [longer, word]),
    ]:
        tokens = tokenize(text)
        found = find_matches(vocabulary, tokens, set())
        assert found == plain_find_matches(vocabulary, tokens, set())
        assert [m.entry for m in found] == kept


def test_the_indexes_hold_every_entry_once() -> None:
    for vocabulary in VOCABULARIES:
        ordered = {
            stem: [e for e in entries if not e.unordered]
            for stem, entries in vocabulary.by_stem.items()
        }
        assert vocabulary.starting == {stem: es for stem, es in ordered.items() if es}
        for apart, one in ((vocabulary.starting_word, True), (vocabulary.starting_words, False)):
            kept = {s: [e for e in es if (len(e.stems) == 1) == one] for s, es in ordered.items()}
            assert apart == {stem: es for stem, es in kept.items() if es}
        firsts = sorted(k for ks in vocabulary.unordered_by_first.values() for k in ks)
        assert firsts == list(range(len(vocabulary.unordered_entries)))
        for stem, ks in vocabulary.unordered_by_first.items():
            assert all(vocabulary.unordered_entries[k].stems[0] == stem for k in ks)
        # the rows the reader reads, entry by entry as defined
        assert vocabulary.starting_rows == {
            stem: [
                (
                    e.stems[1],
                    e.stems,
                    len(e.stems),
                    e.capital or e.exact,
                    -e.priority,
                    (e, e.kind, e.ref, e.weak),
                )
                for e in es
            ]
            for stem, es in vocabulary.starting_words.items()
        }
        assert vocabulary.unordered_rows == [
            (
                e.stems,
                e.stems[-1],
                len(e.stems),
                -e.priority,
                _twinned(e, vocabulary.entries[: vocabulary.entries.index(e)]),
                (e, e.kind, e.ref, e.weak),
            )
            for e in vocabulary.unordered_entries
        ]
        # (the examples' labels and contexts written without function words have a twin)
        assert any(row[4] for row in vocabulary.unordered_rows) or not vocabulary.unordered_rows


def _twinned(entry: Entry, before: list[Entry]) -> bool:
    """An unordered entry's word-for-word twin among the entries added ``before`` it, as defined
    (:func:`~uncobench_z3.settings._vocabulary._has_twin`)."""
    return (
        len(entry.stems) > 1
        and not entry.weak
        and any(
            not other.unordered
            and other.stems == entry.stems
            and (other.kind, other.ref) == (entry.kind, entry.ref)
            and not (other.capital or other.exact or other.weak)
            and other.priority >= entry.priority
            for other in before
        )
    )


_RUN_WORDS = ["zorblax", "quuxite", "florp", "wibble"]
_RUNS = [
    _entry("fact", (f"r{k}",), tuple(words.split()), 2 + k % 3)
    for k, words in enumerate(
        [
            "zorblax quuxite",
            "quuxite zorblax",
            "zorblax quuxite florp",
            "quuxite zorblax zorblax",
            "florp florp florp",
            "zorblax quuxite florp wibble",
            "zorblax quuxite zorblax quuxite",
            "quuxite zorblax florp florp",
            "zorblax quuxite florp wibble zorblax",
            "quuxite zorblax florp florp zorblax",
        ]
    )
]
"""word-for-word entries of two to five words, some a word repeated (the reader writes out
those of three and four words: their third and fourth words compared alone)"""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_RUN_WORDS, "the", "."]), max_size=9))
def test_matches_of_three_and_four_words_to_the_message_s_end_are_the_plain_matches(
    words: list[str],
) -> None:
    """A message of the entries' words, which may end in the middle of one: the matches are
    the plain ones (an entry's words past the message's end are none of its words)."""
    vocabulary = Vocabulary(TASKS[0])
    vocabulary._add_all(_RUNS)
    tokens = tokenize(" ".join(words))
    plain = plain_find_matches(vocabulary, tokens, set())
    assert find_matches(vocabulary, tokens, set(), M.token_stems_of(tokens)) == plain


def test_an_entry_that_must_start_as_written_or_with_a_capital_is_read_so() -> None:
    """Entries of two words that must start with the word itself (exact) or with a capital:
    their rows say so, and a message's other forms of the word do not start them."""
    vocabulary = Vocabulary(TASKS[0])
    exact = _entry("context", ("f", "c"), ("verified", "figure"), 4, exact=True)
    capital = _entry("candidate", ("c",), ("grant", "holdings"), 5, capital=True)
    vocabulary._add_all([exact, capital])
    assert [row[3] for rows in vocabulary.starting_rows.values() for row in rows] == [True, True]
    for text, expected in (
        ("verify figure", []),
        ("verified figure", [exact]),
        ("grant holdings", []),
        ("Grant holdings", [capital]),
    ):
        found = find_matches(vocabulary, tokenize(text), set())
        assert [m.entry for m in found] == expected, text


def plain_tags(
    task: TypedTask, role_facts: AbstractSet[str], matches: list[Match], found: list
) -> tuple[dict, dict]:
    """The tags' definition (each token's tag and its match's first token; then the same
    without candidate names and one-word fact names): a context's words are zreq when a
    context of the role's facts read on them is required (any read on them, when none is of
    the role's facts)."""
    contexts: dict[tuple[int, ...], list[tuple[bool, bool]]] = {}
    for match in matches:
        if match.entry.kind == "context":
            fact, context = match.entry.ref
            contexts.setdefault(match.indexes, []).append(
                (fact in role_facts, context == task.facts[fact].context)
            )
    tag_at: dict[int, tuple[str, int]] = {}
    named_tag_at: dict[int, tuple[str, int]] = {}
    for match in matches:
        kind, indexes = match.entry.kind, match.indexes
        if kind == "context":
            read = contexts[indexes]
            mine = [required for own, required in read if own] or [r for _, r in read]
            tag = "zreq" if any(mine) else "zoth"
        else:
            tag = {"candidate": "zcand", "fact": "zfact", "member": "zmem"}[kind]
        for i in indexes:
            tag_at[i] = (tag, indexes[0])
            if kind != "candidate" and not (kind == "fact" and len(indexes) == 1):
                named_tag_at[i] = (tag, indexes[0])
    for value, written in found:
        tag = "zdate" if isinstance(value.value, datetime.date) else "znum"
        for i in written:
            tag_at[i] = named_tag_at[i] = (tag, -1 - written[0])
    return tag_at, named_tag_at


def test_words_read_as_contexts_of_several_facts_are_tagged_for_the_role_s_first() -> None:
    """Every two contexts of an example task's facts read on the same words (and a fact or
    a name on them too), to each role and to none: the tags are the definition's."""
    tokens = tokenize("Please send the thing now")
    for task in TASKS:
        contexts = [
            _entry("context", (key, context), ("thing",), 3)
            for key, fact in task.facts.items()
            for context in (fact.context, *fact.other_contexts)
        ]
        name = _entry("candidate", (next(iter(task.candidates)),), ("thing",), 3)
        for role_facts in [set(task.facts_of(role)) for role in task.roles] + [set(task.facts)]:
            for first, second in itertools.product(contexts, repeat=2):
                for extra in ([], [name], [contexts[0]]):
                    matches = [Match(e, (3,)) for e in (first, second, *extra)]
                    tag_at, named_tag_at = plain_tags(task, role_facts, matches, [])
                    words, position, as_written = tagged(task, role_facts, tokens, matches, [])
                    assert words == ["please", "send", "the", tag_at[3][0], "now", "|"]
                    assert position == [0, 1, 2, 3, 4]
                    assert as_written == ["please", "send", "the", named_tag_at[3][0], "now", "|"]


@settings(max_examples=200, deadline=None)
@given(messages(), st.booleans())
def test_the_message_as_written_is_tagged_without_its_names(
    message: tuple[Vocabulary, str], to_role: bool
) -> None:
    """The second writing is the tagging of the matches other than candidate names and
    one-word fact names (what tagging with those names skipped did), and both writings made
    in one pass are the two passes of the definition."""
    vocabulary, text = message
    task = vocabulary.task
    role_facts = set(task.facts_of(task.roles[0])) if to_role else set(task.facts)
    tokens = tokenize(text)
    found = value_tokens(tokens, scan_values(text))
    matches = find_matches(vocabulary, tokens, set())
    words, position, as_written = tagged(task, role_facts, tokens, matches, found)
    unnamed = [
        m
        for m in matches
        if m.entry.kind != "candidate" and not (m.entry.kind == "fact" and len(m.indexes) == 1)
    ]
    assert as_written == tagged(task, role_facts, tokens, unnamed, found)[0]

    def two_passes(layout: T.Layout, tag_at: dict, named_tag_at: dict) -> tuple:
        return (*T._written(layout, tag_at), T._written(layout, named_tag_at)[0])

    with patch.object(T, "_written_twice", two_passes):
        assert (words, position, as_written) == tagged(task, role_facts, tokens, matches, found)

    def plain_writing(tag_at: dict[int, tuple[str, int]]) -> tuple[list[str], list[int]]:
        """The writing's definition, token by token (before the layout was made once)."""
        out: list[str] = []
        position: dict[int, int] = {}
        last = None
        for i, token in enumerate(tokens):
            if i and token[W.SENTENCE] != tokens[i - 1][W.SENTENCE]:
                out += ["?", "|"] if tokens[i - 1][W.QUESTION] else ["|"]
                last = None
            elif i and token[W.CLAUSE]:
                out.append("|")
                last = None
            tag = tag_at.get(i)
            if tag is not None and tag == last:
                position[i] = len(out) - 1
                continue
            last = tag
            position[i] = len(out)
            out.append(tag[0] if tag is not None else token[W.WORD])
        if tokens:
            out += ["?", "|"] if tokens[-1][W.QUESTION] else ["|"]
        return out, [position[i] for i in range(len(tokens))]

    def plain(layout: T.Layout, tag_at: dict, named_tag_at: dict) -> tuple:
        return (*plain_writing(tag_at), plain_writing(named_tag_at)[0])

    with (
        patch.object(T, "_written_twice", plain),
        patch.object(T, "_written", lambda layout, tag_at: plain_writing(tag_at)),
    ):
        assert (words, position, as_written) == tagged(task, role_facts, tokens, matches, found)

    tag_at, named_tag_at = plain_tags(task, role_facts, matches, found)
    assert (words, position) == tuple(plain_writing(tag_at))
    assert as_written == plain_writing(named_tag_at)[0]
    # the reader's pieces (its words always, the tokens' positions only when it needs them)
    layout = T.layout_of(tokens)
    tags, named_tags = T.tags_of(task, role_facts, matches, found)
    assert tags == tag_at
    assert T.words_written(layout, tags) == words
    assert T.positions_written(layout, tags) == position
    assert T.words_written(layout, tags if named_tags is None else named_tags) == as_written
    assert (named_tags is None) == (named_tag_at == tag_at)


@given(st.from_regex(r"[A-Za-z]+|[0-9]+", fullmatch=True))
def test_a_word_of_letters_or_digits_is_one_piece(raw: str) -> None:
    assert _pieces(raw) == [raw.lower()]


def plain_tokens(text: str) -> list[W.Token]:
    """tokenize's definition before the period rewrites (every raw word through ``_pieces``,
    each token's tuple made when its sentence ends)."""
    tokens: list[W.Token] = []
    pending: list[tuple[str, int, int, bool, bool]] = []
    sentence, clause = 0, False

    def close(question: bool) -> None:
        nonlocal sentence
        for word, start, end, capitalised, starts_clause in pending:
            tokens.append(
                (word, stem_of(word), start, end, capitalised, sentence, question,
                 starts_clause)
            )  # fmt: skip
        pending.clear()
        sentence += 1

    for m in W._RAW_TOKEN.finditer(text):
        raw = m.group(0)
        if raw in ("?", ".", "!", ";", "\n"):
            close(raw == "?")
            clause = False
            continue
        if raw.strip() in (":", "-", "–", "—"):
            clause = bool(pending)
            continue
        for piece in _pieces(raw):
            pending.append((piece, m.start(), m.end(), raw[0].isupper(), clause))
            clause = False
    close(False)
    return tokens


TOKEN_PIECES = ["Vance's", "don't", "O'Connor", "FY26", "fy 26", "2026-27", "Q3", "first half",
                "3rd quarter", "rev C", "v2", "Mar 2026", "mar", "Dec", "26", "Hello", "he's",
                ":", " - ", "—", "?", ".", "!", ";", "\n", "a1b2", "’s"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKEN_PIECES), max_size=12), st.text(max_size=6))
def test_tokens_made_as_tuples_are_the_tokens_of_the_definition(
    pieces: list[str], noise: str
) -> None:
    """The tokenizer makes each token as an exact tuple of its fields, a word of
    letters or digits without ``_pieces``, and screens the period rewrites for two digits
    without a pattern: the tokens of the plain definition."""
    text = " ".join(pieces) + noise
    tokens = tokenize(text)
    # every two-digit word (a token's digits are ASCII) looked at by the rewrites, unscreened
    every_start = W._PERIOD_WORDS | {f"{n:02d}" for n in range(100)}
    with patch.object(W, "_PERIOD_WORDS", every_start):
        assert tokens == W._canonical_periods(plain_tokens(text))
    assert all(type(token) is tuple for token in tokens)


@settings(max_examples=100, deadline=None)
@given(messages(), st.sampled_from(VOCABULARIES))
def test_a_remembered_message_parses_as_a_new_one(
    message: tuple[Vocabulary, str], other: Vocabulary
) -> None:
    """The tokens and values of a message are remembered across vocabularies: a parse from
    them equals a parse of the message never read, and shares no list a caller may change."""
    vocabulary, text = message
    parse_message(other, text)  # remembered now
    again = parse_message(vocabulary, text)
    _tokens_and_values.cache_clear()
    fresh = parse_message(vocabulary, text)
    assert again == fresh
    assert all(a is not b for (_, a), (_, b) in zip(again.found, fresh.found, strict=True))


TEMPLATES = [
    "For every candidate, please send your records of: {label} ({context}). I need exactly "
    "these contexts and exact values.",
    "Please give the exact {label} ({context}) of {name}: a single value, not a range or a "
    "set of options.",
    "Your reply gave the {label} of {name} for the {other}, but the task needs the "
    "{context}. Please send the {label} ({context}) of {name}.",
    "Is that the latest {label}? Did {name} pass? Not the {other} one.",
    "What is their {label}, you said a range? Which one is it: {other} or {context}?",
]


def template_messages() -> list[tuple[Vocabulary, str, str | None, str | None]]:
    """Messages of every template about every fact of every example task, to the fact's
    role (with the candidate in focus) and to nobody: many share their tagged words."""
    out = []
    for vocabulary in VOCABULARIES:
        task = vocabulary.task
        first = next(iter(task.candidates))
        for fact_id, fact in task.facts.items():
            other = fact.other_contexts[0] if fact.other_contexts else "previous period"
            role = next(r for r in task.roles if fact_id in task.facts_of(r))
            for template in TEMPLATES:
                text = template.format(
                    label=fact.label,
                    context=fact.context,
                    other=other,
                    name=task.candidate_name(first),
                )
                out += [(vocabulary, text, role, first), (vocabulary, text, None, None)]
    return out


def test_phrases_remembered_from_other_messages_read_as_found_afresh() -> None:
    """The phrases found in a message's tagged words are remembered by those words and
    shared by other messages (of other tasks, to other roles) written alike: every reading
    through them equals the reading with nothing remembered."""
    messages = template_messages()
    afresh = []
    for vocabulary, text, role, focus in messages:
        phrase_hits.cache_clear()
        PH._tagged_hits.cache_clear()  # (what a tagged text alone gives: see _find_phrase_hits)
        _tokens_and_values.cache_clear()
        afresh.append(read_request(vocabulary, text, role, focus))
    phrase_hits.cache_clear()
    PH._tagged_hits.cache_clear()
    remembered = [read_request(*message) for message in messages]
    assert remembered == afresh
    # and the evidence in the order it was noted (a dict compares equal in any order)
    assert [list(r.evidence.items()) for r in remembered] == [
        list(r.evidence.items()) for r in afresh
    ]
    # found again for other messages (each text is read twice: to its role, to nobody),
    # by the tagged text alone where the names' words show no intent of their own
    assert PH._tagged_hits.cache_info().hits > len(messages) // 2 + 50


FOLLOWUP_GROUPS = {
    group.id: group for group in load_groups(ROOT / "tests/data/followups/groups.jsonl")
}
# messages of the follow-up data whose intent word is also a word of a name or a one-word
# fact: found only in the writing that leaves those as written
WRITTEN_INTENTS = [
    ("semiconductor_packaging_00026", "talent", "Rahul's HR interview score, to the point, "
     "please.", {"exact": ("to the point",)}),
    ("pharmaceuticals_00036", "finance", "Lot 26-0314 batch cost: actual April 2026 close "
     "figure please, not the standard estimate.", {"exact": ("actual",)}),
    ("agriculture_00000", "operations", "Checklist for Eagle Flats:\n[x] received on-farm "
     "grain storage capacity\n[ ] but it is labelled landowner's listing; required: 2026 "
     "infrastructure inspection. Please resend for the required context.",
     {"mismatch": ("required context",)}),
    ("maritime_00021", "technical", "**Clarification needed:** the usable dock length you "
     "provided for Keystone Capital Holdings references the yard brochure. Please share the "
     "value recorded in the 2026 yard capability survey.", {"exact": ("clarification",)}),
]  # fmt: skip


def test_an_intent_in_a_name_or_fact_word_is_read_from_the_message_as_written() -> None:
    """The phrases are looked for in both writings of the message (a key of both)."""
    for group_id, role, text, expected in WRITTEN_INTENTS:
        vocabulary = Vocabulary.of(typed_task(FOLLOWUP_GROUPS[group_id]))
        for _ in range(2):  # found, then remembered
            request = read_request(vocabulary, text, role)
            for intent, words in expected.items():
                assert intent in request.intents
                assert request.evidence[intent] == words


def test_a_pronoun_reads_as_the_candidate_in_focus_noted_in_order() -> None:
    """Singular and plural pronouns, after "all candidates" in the evidence (its order is
    the order things were noted: traces and ``request_json`` show it)."""
    vocabulary = VOCABULARIES[0]
    task = vocabulary.task
    focus, role = next(iter(task.candidates)), task.roles[0]
    for text, pronoun in (("For all candidates: did they pass?", "they"),
                          ("Every candidate, please. Did he pass, exactly?", "he"),
                          ("Can you send them again?", "them")):  # fmt: skip
        for _ in range(2):  # found, then remembered
            request = read_request(vocabulary, text, role, focus)
            assert request.pronoun == focus and request.candidates == (focus,)
            noted = [key for key in request.evidence if key != "exact"]
            whole = ["all candidates"] if request.all_candidates else []
            assert noted == [*whole, f"candidate:{focus}"]
            assert request.evidence[f"candidate:{focus}"] == (pronoun,)


def test_phrases_are_remembered_by_both_writings_of_a_message() -> None:
    """Two messages with the same words tagged and different words as written: the second
    does not take the first's phrases ("actual" is an exact intent, "assay" is not)."""
    vocabulary = Vocabulary.of(typed_task(FOLLOWUP_GROUPS["pharmaceuticals_00036"]))
    actual, assay = (
        f"Lot 26-0314 batch cost: {word} April 2026 close figure please, not the standard estimate."
        for word in ("actual", "assay")
    )
    role_facts = set(vocabulary.role_facts("finance"))

    def writings(text: str) -> tuple[str, str]:
        parsed = parse_message(vocabulary, text)
        words, _, as_written = tagged(
            vocabulary.task, role_facts, list(parsed.tokens), list(parsed.matches),
            [(value, list(indexes)) for value, indexes in parsed.found],
        )  # fmt: skip
        return " ".join(words), " ".join(as_written)

    (joined, plain), (other_joined, other_plain) = writings(actual), writings(assay)
    assert joined == other_joined and plain != other_plain
    phrase_hits.cache_clear()
    assert "exact" in read_request(vocabulary, actual, "finance").intents
    other = read_request(vocabulary, assay, "finance")
    assert "exact" not in other.intents and "exact" not in other.evidence
    assert phrase_hits.cache_info().misses == 2


@settings(max_examples=150, deadline=None)
@given(messages(), st.sampled_from(VOCABULARIES), st.booleans())
def test_a_remembered_phrasing_reads_as_a_new_one(
    message: tuple[Vocabulary, str], other: Vocabulary, to_role: bool
) -> None:
    vocabulary, text = message
    task = vocabulary.task
    role = task.roles[0] if to_role else None
    focus = next(iter(task.candidates)) if to_role else None
    read_request(other, text)
    again = read_request(vocabulary, text, role, focus)
    phrase_hits.cache_clear()
    PH._tagged_hits.cache_clear()
    assert read_request(vocabulary, text, role, focus) == again


VALUE_PIECES = ["2026-03-01", "3/4/2026", "1 August 2026", "end of March 2026", "Mar 3, 2026",
                "May 3, 2026", "3rd of May, 2026", "middle of Sept. 2026", "12 dec 2026",
                "June 30th 2026", "Sept 3RD,\t2026", "END\nOF jan 2026", "12k", "1,200.50",
                "-3", "5 million", "FY26", "2026-27", "Q3", " "]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(VALUE_PIECES), max_size=8), st.text(max_size=5))
def test_values_found_with_the_screens_are_the_values_found_without(
    pieces: list[str], noise: str
) -> None:
    """The date patterns are tried only on texts with their separator (or a month's name
    before a digit - searched only when the text has a month's first letters -; a day before
    a year, "of" between spaces), and nothing on texts without a digit; numbers are searched
    where a sign or a digit starts; a text of ASCII is searched from its first digit, and for
    its months in lower case: what every pattern tried on every text finds
    (tests/test_words_fast.py compares them with the patterns over the whole text, too)."""
    text = " ".join(pieces) + noise
    screened = scan_values(text)
    every = re.compile("")
    with patch.multiple(
        VA,
        _DATE_SEPARATORS=("", "", "", ""),
        _DATE_SCREENS=(None, None, None, None),
        _DATE_TRIES=tuple(("", None, *rest) for _, _, *rest in VA._DATE_TRIES),
        _DATE_TRIES_ASCII=tuple(("", None, *rest) for _, _, *rest in VA._DATE_TRIES_ASCII),
        _DIGIT=every,
        _MONTH_BEFORE_DIGIT=every,
        _SPACED_OF=every,
        _digit_runs=lambda text: list(range(len(text) + 1)),
        _DAY_BEFORE_YEAR_AT=every,
        _MONTH_BEFORE_DIGIT_LOWER=every,
        _names_a_month_before_digit=lambda lowered, runs: True,
        _plain_digits=lambda text, start: "",
        _day_runs=lambda text, runs: runs,
        _OF_MONTH_LOWER=every,
        _NUMBER_START=every,
        _NUMBER_START_ASCII=every,
        _NUMBER=re.compile(VA._NUMBER.pattern.removeprefix(r"(?=[-\d])"), VA._NUMBER.flags),
    ):
        assert scan_values(text) == screened


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=24))
def test_a_text_s_digit_runs_are_its_digits_not_after_a_word_character(text: str) -> None:
    """Where the date patterns that start with a digit, and the numbers, are tried in a text
    of ASCII (:func:`_digit_runs`, read on the text's classes of characters)."""
    expected = [m.start() for m in re.finditer(r"(?<!\w)[0-9]", text)]
    assert VA._digit_runs(text) == expected
    assert VA._digit_runs(text + " 1x") == [*expected, len(text) + 1]


@pytest.mark.parametrize(
    "text",
    ["2026-27", "FY2026/27", "the 2026-27 season", "1999-2000", "12-5", "Q3 H1 fy26", "2026 -3"],
)
def test_a_number_after_a_year_and_a_dash_is_a_period(text: str) -> None:
    """:func:`_number_value` reads a number as a period's as defined (the search for a year
    and a dash made only when the five characters before it end with a dash or a slash)."""
    for m in VA._NUMBER.finditer(text):
        before = text[max(0, m.start() - 5) : m.start()].lower()
        period = before.endswith(("fy", "q", "h")) or VA._YEAR_AND_DASH.search(before)
        assert (VA._number_value(text, m) is None) == bool(period), (text, m)
    assert [v.value for v in scan_values("the 2026-27 season")] == [Fraction(2026)]


def test_a_date_pattern_tried_at_the_runs_finds_what_finditer_finds() -> None:
    """A match is tried only where the last one ended or later, as ``finditer`` does."""
    pattern = re.compile(r"[0-9]+-[0-9]+")
    text = "1-2-3 4-5 6"
    runs = [0, 2, 4, 6, 8, 10]
    found = [m.span() for m in VA._matches_at(pattern, text, runs)]
    assert found == [m.span() for m in pattern.finditer(text)] == [(0, 3), (6, 9)]


MONTH_LIKE = [*VA._MONTH_STARTS, "Sept", "MAR", "Dec.", "ſep", "oCt", "x", "12", ""]
ONE_MONTH = st.tuples(
    st.sampled_from(MONTH_LIKE), st.sampled_from([" ", ", ", "\t", ""]), st.sampled_from("3x")
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(ONE_MONTH, max_size=3).map(" ".join))
def test_a_month_before_a_digit_is_read_at_the_digits(text: str) -> None:
    """:data:`_MONTH_BEFORE_DIGIT` in a text of ASCII, read at its digits after white space:
    true exactly where that pattern finds a match (a text with other than ASCII, "ſep" for
    "sep", is searched)."""
    if text.isascii():
        found = VA._names_a_month_before_digit(text.lower(), VA._digit_runs(text))
        assert found == (VA._MONTH_BEFORE_DIGIT.search(text) is not None), text


def test_a_reading_made_without_its_init_is_the_one_its_init_makes() -> None:
    """A reading and its contexts are made as frozen dataclasses without ``__init__``
    (:func:`made_frozen`): equal, with equal hashes, fields and field order."""
    mention = _mention("fact", "April 2026", True, False, "April")
    assert mention == ContextMention("fact", "April 2026", True, False, "April")
    assert hash(mention) == hash(ContextMention("fact", "April 2026", True, False, "April"))
    fields: dict[str, object] = {
        "text": "Did he pass?", "role": "hr", "candidates": ("vance",), "all_candidates": False,
        "pronoun": "vance", "facts": ("cleared",), "contexts": (mention,), "members": (),
        "values": (Fraction(3),), "intents": frozenset(["exact", "request"]),
        "evidence": {"exact": ("Did he pass",)},
    }  # fmt: skip
    made = made_frozen(Request, fields)
    assert made == Request(**fields)  # type: ignore[arg-type]
    assert vars(made) == vars(Request(**fields)) and list(vars(made)) == list(fields)  # type: ignore[arg-type]
    assert [f.name for f in dataclasses.fields(Request)] == list(fields)


@given(st.from_regex(r"[0-9]{1,12}", fullmatch=True))
def test_a_whole_number_is_the_fraction_of_its_digits(digits: str) -> None:
    assert Fraction(int(digits)) == Fraction(digits)


@st.composite
def typos(draw: st.DrawFn) -> tuple[Vocabulary, str]:
    """A vocabulary and a word: one of its long words with up to two edits, or any word."""
    vocabulary = draw(st.sampled_from(VOCABULARIES))
    long_words = sorted(vocabulary.long_words)
    if not long_words or draw(st.booleans()):
        return vocabulary, draw(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14))
    word = list(draw(st.sampled_from(long_words)))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(word) - 1))
        edit = draw(st.sampled_from(["drop", "swap", "change", "insert"]))
        letter = draw(st.sampled_from("aeiorstn"))
        if edit == "drop" and len(word) > 1:
            del word[at]
        elif edit == "swap" and at + 1 < len(word):
            word[at], word[at + 1] = word[at + 1], word[at]
        elif edit == "change":
            word[at] = letter
        else:
            word.insert(at, letter)
    return vocabulary, "".join(word)


@settings(max_examples=400, deadline=None)
@given(typos())
def test_a_typo_is_read_as_the_first_long_word_it_is_close_to(case: tuple[Vocabulary, str]) -> None:
    """The typo check compares a word with the long words of its first letter only: the
    same stem as the scan of every long word, in order (the definition)."""
    vocabulary, word = case
    word_stem = stem_of(word)
    if word_stem in vocabulary.by_stem or len(word) < 6 or word.isdigit():
        expected = word_stem
    else:
        expected = next(
            (s for known, s in vocabulary.long_words.items() if close_enough(word, known)),
            word_stem,
        )
    assert vocabulary.corrected(word, word_stem) == expected


@settings(max_examples=200, deadline=None)
@given(typos())
def test_a_word_is_read_as_the_same_long_word_whatever_stem_it_is_given_with(
    case: tuple[Vocabulary, str],
) -> None:
    """The typo check remembers what a word is read as by the word alone (a token's stem
    follows from its word): a word read as none of the long words is read as the stem it is
    given, each time, and find_matches reads a typo met before as it read it the first time."""
    vocabulary, word = case
    vocabulary = Vocabulary(vocabulary.task)  # (nothing remembered yet)
    vocabulary._build()
    word_stem = stem_of(word)
    if word_stem in vocabulary.by_stem or len(word) < 6 or word.isdigit():
        return  # (read as its own stem, not looked up)
    other = vocabulary.corrected(word, "zz" + word_stem)
    read = vocabulary.corrected(word, word_stem)
    if read == word_stem:
        assert other == "zz" + word_stem
    else:
        assert other == read and read in vocabulary.by_stem
    assert vocabulary.corrected(word, "zz" + word_stem) == other
    tokens = tokenize(f"the {word} and {word}")
    first = find_matches(vocabulary, tokens, set())
    assert find_matches(vocabulary, tokens, set()) == first


def _read_every_match(matches: tuple[Match, ...]) -> list[Match]:
    """What the reading went through before it read a thing on the same words once: every
    match of a fact, a member or a context."""
    return [m for m in matches if m.entry.kind != "candidate"]


def _read_both_ways(vocabulary: Vocabulary, text: str, role: str | None, focus: str | None) -> None:
    request = read_request(vocabulary, text, role, focus)
    with patch.object(RQ, "_to_read", _read_every_match):
        every = read_request(vocabulary, text, role, focus)
    assert request == every
    assert list(request.evidence.items()) == list(every.evidence.items())  # (noted in order)


@settings(max_examples=300, deadline=None)
@given(messages(), st.integers(0, 60), st.integers(0, 60))
def test_a_thing_read_on_the_same_words_once_reads_as_every_match(
    message: tuple[Vocabulary, str], which_role: int, which_focus: int
) -> None:
    """To any role or none, with any candidate in focus or none."""
    vocabulary, text = message
    roles = [None, *vocabulary.task.roles]
    focuses = [None, *vocabulary.task.candidates]
    role, focus = roles[which_role % len(roles)], focuses[which_focus % len(focuses)]
    _read_both_ways(vocabulary, text, role, focus)


def test_a_thing_read_on_the_same_words_once_reads_as_every_match_in_the_templates() -> None:
    for vocabulary, text, role, focus in template_messages():
        _read_both_ways(vocabulary, text, role, focus)


def test_a_weak_word_is_counted_for_each_fact_it_is_read_for() -> None:
    """A fact's weak word read on the words of its strong one still counts it among the
    facts with that weak word (so another fact of the role is not read alone)."""
    task = next(t for t in TASKS if any(len(t.facts_of(r)) > 1 for r in t.roles))
    role = next(r for r in task.roles if len(task.facts_of(r)) > 1)
    first, second = list(task.facts_of(role))[:2]
    vocabulary = Vocabulary(task)
    vocabulary._add_all(
        [
            _entry("fact", (first,), ("zorblax",), 6),
            _entry("fact", (first,), ("zorblax",), 1, weak=True),
            _entry("fact", (second,), ("zorblax",), 1, weak=True),
        ]
    )
    assert read_request(vocabulary, "The zorblax, please.", role).facts == (first,)
    _read_both_ways(vocabulary, "The zorblax, please.", role, None)


LAYOUT_PIECES = [*TOKEN_PIECES, *FILLERS, "Marcus:", "records", "certification", "1234567"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LAYOUT_PIECES), max_size=16), st.text(max_size=6))
def test_stems_and_layout_made_in_one_pass_are_those_made_apart(
    pieces: list[str], noise: str
) -> None:
    """A new message's stems and layout are made in one loop over its tokens: the same as
    :func:`token_stems_of` and :func:`layout_of` (sentences, questions, clauses, repeated
    stems, long words and long numbers)."""
    tokens = tokenize(" ".join(pieces) + noise)
    assert MS.stems_and_layout(tokens) == (M.token_stems_of(tokens), T.layout_of(tokens))


def test_a_remembered_message_is_let_alone_by_the_collector_after_a_collection() -> None:
    """What the text memo keeps of a message (its tokens, the places of its stems, its
    layout) is made of exact tuples of strings, numbers and booleans: the collector stops
    tracking them at their first collections (a token at one; a tuple looked at before what
    it holds at the next; the dict of the stems' places at a full one). A named tuple, or a
    list, would be walked by every later collection of its generation for as long as the
    memo keeps the message."""
    MS._tokens_and_values.cache_clear()
    texts = sorted({text for _, text, _, _ in template_messages()})
    kept = [MS._tokens_and_values(text) for text in texts]
    gc.collect()
    for text, (tokens, _, token_stems, _, _) in zip(texts, kept, strict=True):
        assert tokens and not any(gc.is_tracked(token) for token in tokens), text
        assert all(type(ix) is tuple for ix in token_stems[2].values()), text
        assert not any(gc.is_tracked(ix) for ix in token_stems[2].values()), text
    for _ in range(2):
        gc.collect()
    for text, (tokens, _, token_stems, _, layout) in zip(texts, kept, strict=True):
        assert not gc.is_tracked(tokens) and not gc.is_tracked(layout), text
        assert not gc.is_tracked(token_stems[2]), text  # (the dict, at a full collection)
        assert type(token_stems) is tuple and not any(map(gc.is_tracked, token_stems)), text


def test_stems_and_layout_of_the_template_messages_are_those_made_apart() -> None:
    for _, text, _, _ in template_messages():
        tokens = tokenize(text)
        assert MS.stems_and_layout(tokens) == (M.token_stems_of(tokens), T.layout_of(tokens))


def test_stems_and_layout_of_a_message_longer_than_the_shared_places_are_those_made_apart() -> None:
    """A stem met once takes its place from the shared ones (:data:`MS._ONE_PLACE`), made for
    the first tokens: a longer message's (a model's) makes its own, to its last token."""
    shared = len(MS._ONE_PLACE)
    for size in (shared - 1, shared, shared + 1, 2 * shared + 7):
        # distinct words ("ba", "bb", ...), a sentence of ten at a time, one word repeated
        words = ["".join(w) for w in itertools.product("bcdfghjklm", repeat=4)][:size]
        text = " ".join(w + ("." if k % 10 == 9 else "") for k, w in enumerate(words))
        tokens = tokenize(text + " bbbb")
        assert len(tokens) == size + 1
        stems, layout = MS.stems_and_layout(tokens)
        assert (stems, layout) == (M.token_stems_of(tokens), T.layout_of(tokens)), size
        assert stems[2][stems[0][-2]] == (len(tokens) - 2,)


@settings(max_examples=200, deadline=None)
@given(typos(), typos())
def test_a_remembered_comparison_of_two_words_is_the_comparison(
    first: tuple[Vocabulary, str], second: tuple[Vocabulary, str]
) -> None:
    """The typo check's comparisons are remembered for every vocabulary, by the two words:
    each is :func:`close_enough` of them, asked first or again."""
    for vocabulary, word in (first, second, first):
        for known in vocabulary.long_words:
            assert V._close(word, known) == close_enough(word, known)


def test_a_word_compared_with_two_long_words_is_remembered_for_each() -> None:
    V._CLOSE.clear()
    assert V._close("qualifcation", "qualification")
    assert not V._close("qualifcation", "quantitative")
    assert V._close("qualifcation", "qualification")


def test_a_word_read_as_a_fact_and_a_context_is_read_once() -> None:
    """one_reading's screen (the words of facts and of contexts, disjoint: every match kept)
    lets a word read both ways through to the rule: the context when its fact is named by
    other words, else the fact."""
    verified = _entry("fact", ("verified",), ("verified",), 5)
    context = _entry("context", ("years", "verified"), ("verified",), 4)
    years = _entry("fact", ("years",), ("years",), 5)
    other = _entry("context", ("years", "2026"), ("2026",), 4)
    on_word = [M.Match(verified, (3,)), M.Match(context, (3,))]
    assert M.one_reading(on_word) == [M.Match(verified, (3,))]  # no other fact named
    named = [*on_word, M.Match(years, (5,))]
    assert M.one_reading(named) == [M.Match(context, (3,)), M.Match(years, (5,))]
    apart = [M.Match(verified, (3,)), M.Match(other, (4,)), M.Match(years, (5,))]
    assert M.one_reading(apart) == apart
    assert M.one_reading(apart) is not apart


_SAID_WORDS = st.sampled_from(
    sorted(
        P.word_set(
            "zreq zoth zfact zcand one time frame table is was are were has have been does not "
            "now the a wrong outdated old right what i we need got | ? please"
        )
    )
)
_SAID = st.from_regex(P.CONTEXT_REJECTED_AFTER, fullmatch=True).map(str.split)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_SAID_WORDS.map(lambda word: [word]), _SAID), max_size=10))
def test_a_context_said_to_be_wrong_after_it_is_the_pattern_s_reading(
    pieces: list[list[str]],
) -> None:
    """The screens of the words after a context (a word that starts a statement in the
    message, and within four words of the context's tags) skip no match of the pattern."""
    words = [word for piece in pieces for word in piece]
    for at in range(len(words)):
        after = " " + " ".join(words[at + 1 : at + RW._WORDS_AFTER])
        expected = P.CONTEXT_REJECTED_AFTER.match(after) is not None
        assert (RW._may_say_of_contexts(words) and RW._rejected_after(words, at)) == expected
