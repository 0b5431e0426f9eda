"""The message's stems shared with the entries' first words found in one intersection
(:meth:`~uncobench_z3.settings.Vocabulary.first_stems`, :func:`find_matches_and_doubles`): the
first stems are the three indexes' keys, made once and made again after a change, and the
matches found through them (the one-word matches looked for at the places of their stems) are
those of the plain reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import TASKS, VOCABULARIES, plain_find_matches
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _matching as M
from uncobench_z3.settings._vocabulary import _Chunk, _entry
from uncobench_z3.settings._words import tokenize


def _keys(vocabulary: Vocabulary) -> set[str]:
    return {*vocabulary.starting_rows, *vocabulary.starting_word, *vocabulary.unordered_by_first}


def test_the_first_stems_are_the_three_indexes_keys_made_once() -> None:
    for vocabulary in VOCABULARIES:
        first_stems = vocabulary.first_stems()
        assert set(first_stems) == _keys(vocabulary)
        assert vocabulary.first_stems() is first_stems
        # (a fresh vocabulary of the same task has none made until read)
        fresh = Vocabulary(vocabulary.task)
        fresh._build()
        assert fresh._first_stems is None
        assert set(fresh.first_stems()) == _keys(vocabulary)


_NEW = [
    _entry("fact", ("f",), ("zorblax", "quuxite"), 8),
    _entry("fact", ("f",), ("florp",), 6),
    _entry("context", ("f", "c"), ("wibble", "zorblax"), 7, unordered=True),
]


def test_entries_added_after_a_reading_are_read() -> None:
    """A vocabulary read, then given entries of new first words (one at a time, all at once,
    as a chunk): the next reading finds them."""
    text = "zorblax quuxite and florp. zorblax then wibble."
    tokens = tokenize(text)
    for how in ("one", "all", "chunk"):
        vocabulary = Vocabulary(TASKS[0])
        vocabulary._build()
        before = M.find_matches(vocabulary, tokens, set())
        assert not any(m.entry in _NEW for m in before)
        if how == "one":
            for entry in _NEW:
                vocabulary._add(entry)
        elif how == "all":
            vocabulary._add_all(_NEW)
        else:
            vocabulary._merge(_Chunk.of(_NEW))
        assert set(vocabulary.first_stems()) == _keys(vocabulary)
        found = M.find_matches(vocabulary, tokens, set())
        assert {m.entry for m in found} >= set(_NEW)
        assert found == plain_find_matches(vocabulary, tokens, set())


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(VOCABULARIES),
    st.data(),
    st.sets(st.integers(0, 12), max_size=3),
)
def test_one_word_matches_at_their_stems_places_are_the_plain_matches(
    vocabulary: Vocabulary, data: st.DataObject, blocked: set[int]
) -> None:
    """One-word entries' words written several times, among words of longer entries that
    take some of them, some places blocked: each place of a one-word entry's stem left free
    is read."""
    singles = sorted({w for es in vocabulary.starting_word.values() for e in es for w in e.words})
    longer = sorted(
        {w for rows in vocabulary.starting_rows.values() for r in rows for w in r[5][0].words}
    )
    words = data.draw(
        st.lists(st.sampled_from([*singles, *longer, "the", ".", "and"]), min_size=1, max_size=14)
    )
    tokens = tokenize(" ".join(words))
    found = M.find_matches(vocabulary, tokens, blocked, M.token_stems_of(tokens))
    assert found == plain_find_matches(vocabulary, tokens, blocked)
