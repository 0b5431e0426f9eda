"""An unordered entry's match on its word-for-word twin's tokens is left out
(:func:`~uncobench_z3.settings._vocabulary._has_twin`, :func:`add_unordered`): the matches kept
are those of the reader that finds every unordered match, and of the plain reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import TASKS, VOCABULARIES, plain_find_matches
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _matching as M
from uncobench_z3.settings._any_order import add_unordered
from uncobench_z3.settings._vocabulary import Entry, _entry, _has_twin, starting_row, unordered_row
from uncobench_z3.settings._words import tokenize

_WORDS = ["zorblax", "quuxite", "florp", "wibble"]


def _pair(words: str, priority: int, **kind: bool) -> Entry:
    return _entry("fact", ("f",), tuple(words.split()), priority, **kind)


_TWINS = [
    # a twin and its unordered entry, as a label makes them (8 and 7)
    _pair("zorblax quuxite", 8),
    _pair("zorblax quuxite", 7, unordered=True),
    # three and four words, a word repeated
    _pair("quuxite florp zorblax", 8),
    _pair("quuxite florp zorblax", 7, unordered=True),
    _pair("florp wibble florp quuxite", 8),
    _pair("florp wibble florp quuxite", 7, unordered=True),
    _pair("wibble zorblax florp quuxite zorblax", 8),
    _pair("wibble zorblax florp quuxite zorblax", 7, unordered=True),
    # not twins: weaker word for word (the unordered one comes first), a capital, exact, weak
    _pair("florp zorblax", 5),
    _pair("florp zorblax", 7, unordered=True),
    _pair("quuxite wibble", 8, capital=True),
    _pair("quuxite wibble", 7, unordered=True),
    _pair("wibble quuxite", 8, exact=True),
    _pair("wibble quuxite", 7, unordered=True),
    _pair("zorblax florp", 8, weak=True),
    _pair("zorblax florp", 7, unordered=True),
    _pair("quuxite zorblax", 8),
    _pair("quuxite zorblax", 7, unordered=True, weak=True),
    # another thing on the same words: two things, both kept
    _entry("member", ("f", "m"), ("wibble", "wibble"), 8),
    _entry("fact", ("g",), ("wibble", "wibble"), 7, unordered=True),
]


def _vocabulary(entries: list[Entry]) -> Vocabulary:
    vocabulary = Vocabulary(TASKS[0])
    vocabulary._add_all(entries)
    return vocabulary


def _untwinned(vocabulary: Vocabulary) -> Vocabulary:
    """``vocabulary`` with every unordered row saying it has no twin (all its matches found)."""
    plain = _vocabulary(vocabulary.entries)
    plain.unordered_rows = [(*row[:4], False, row[5]) for row in plain.unordered_rows]
    return plain


TWINNED = _vocabulary(_TWINS)


def test_the_twins_are_those_defined() -> None:
    twinned = {row[5][0]: row[4] for row in TWINNED.unordered_rows}
    assert [twinned[e] for e in _TWINS if e.unordered] == [True] * 4 + [False] * 6
    # an entry added before its twin has none (the rows are made as entries are added)
    later = _vocabulary([_TWINS[1], _TWINS[0]])
    assert [row[4] for row in later.unordered_rows] == [False]
    # and the examples' vocabularies have twins (labels, contexts)
    assert all(any(row[4] for row in v.unordered_rows) for v in VOCABULARIES)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*_WORDS, "the", ".", "Quuxite"]), max_size=14))
def test_matches_with_twins_left_out_are_all_the_matches(words: list[str]) -> None:
    """The entries' words in any order, repeated, across sentences, capitalised."""
    tokens = tokenize(" ".join(words))
    stems = M.token_stems_of(tokens)
    found = M.find_matches_and_doubles(TWINNED, tokens, set(), stems)
    assert found == M.find_matches_and_doubles(_untwinned(TWINNED), tokens, set(), stems)
    assert found[0] == plain_find_matches(TWINNED, tokens, set())


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(VOCABULARIES),
    st.data(),
    st.sets(st.integers(0, 20), max_size=3),
)
def test_the_examples_matches_with_twins_left_out_are_all_the_matches(
    vocabulary: Vocabulary, data: st.DataObject, blocked: set[int]
) -> None:
    """Labels and contexts of the examples written in order, reversed and shuffled."""
    entries = [row[5][0] for row in vocabulary.unordered_rows if row[4]]
    named = data.draw(st.lists(st.sampled_from(entries), min_size=1, max_size=3))
    words = [w for entry in named for w in entry.words]
    written = data.draw(st.sampled_from([words, words[::-1], *[data.draw(st.permutations(words))]]))
    tokens = tokenize(" ".join(written))
    found = M.find_matches_and_doubles(vocabulary, tokens, blocked)
    assert found == M.find_matches_and_doubles(_untwinned(vocabulary), tokens, blocked)
    assert found[0] == plain_find_matches(vocabulary, tokens, blocked)


def test_only_the_twin_s_tokens_are_left_out() -> None:
    """add_unordered leaves out a twinned entry's match on its words in order, one after
    another, and no other (of two, three, four and five words)."""
    for entry, text, left_out in [
        (_TWINS[1], "zorblax quuxite", True),
        (_TWINS[1], "quuxite zorblax", False),
        (_TWINS[1], "zorblax the quuxite", False),
        (_TWINS[3], "quuxite florp zorblax", True),
        (_TWINS[3], "zorblax florp quuxite", False),
        (_TWINS[3], "quuxite the florp zorblax", False),
        (_TWINS[3], "florp quuxite florp zorblax", False),  # (its first florp is read)
        (_TWINS[3], "quuxite florp zorblax . quuxite zorblax florp", True),  # (the second kept)
        (_TWINS[5], "florp wibble florp quuxite", True),
        (_TWINS[5], "florp wibble quuxite florp", False),
        (_TWINS[7], "wibble zorblax florp quuxite zorblax", True),
        (_TWINS[7], "zorblax wibble florp quuxite zorblax", False),
        (_TWINS[7], "wibble florp zorblax quuxite zorblax", False),  # (in order once sorted)
    ]:
        tokens = tokenize(text)
        _, _, at, sentence_of = M.token_stems_of(tokens)
        found = {}
        for twinned in (True, False):
            raw: list = []
            row = unordered_row(entry, twinned)
            first = entry.stems[0]
            add_unordered([row], {first: [0]}, [first], at, sentence_of, raw, [])
            found[twinned] = [keyed[3] for keyed in raw]
        in_order = tuple(range(len(entry.stems)))
        assert found[False], text  # (every case has a match)
        if left_out:
            assert found[True] == [hit for hit in found[False] if hit != in_order] != found[False]
        else:
            assert found[True] == found[False], text


def test_a_twin_is_as_strong_of_the_same_thing_and_free_to_start_anywhere() -> None:
    unordered = _TWINS[1]
    twin = _TWINS[0]
    assert _has_twin(unordered, [starting_row(twin)])
    for other in [
        twin._replace(priority=6),
        twin._replace(capital=True),
        twin._replace(exact=True),
        twin._replace(weak=True),
        twin._replace(ref=("g",)),
        twin._replace(kind="member"),
        twin._replace(stems=("zorblax", "florp")),
    ]:
        assert not _has_twin(unordered, [starting_row(other)]), other
    assert not _has_twin(unordered._replace(weak=True), [starting_row(twin)])
    assert _has_twin(unordered, [starting_row(twin._replace(priority=9))])
