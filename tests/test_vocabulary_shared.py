"""What a vocabulary takes from one fact's own words is made once and shared by every task
that has the fact: its context entries (``_vocabulary._context_entries``) and its label,
synonym, unit and member entries (``_vocabulary._fact_shape``). Either must give what the
plain per-task loop added, in the same order."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import _twinned
from uncobench_z3.construct import InstantiationError, SpecGenerator, instantiate, load_library
from uncobench_z3.settings._phrases import CONTEXT_STOPWORDS, GENERIC_WORDS
from uncobench_z3.settings._vocabulary import (
    _FUNCTION_WORDS,
    Entry,
    Vocabulary,
    _content,
    _context_entries,
    _entry,
    _fact_words,
    _time_order,
)
from uncobench_z3.settings._words import stem, words_of
from uncobench_z3.spec import TypedTask, check_structure, load_spec


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


def _plain_facts(vocabulary: Vocabulary) -> None:
    """The definition: the loop each vocabulary ran over the facts of its task."""
    task = vocabulary.task

    def entry(kind: str, ref: tuple[str, ...], words: tuple[str, ...], priority: int,
              **flags: bool) -> Entry:  # fmt: skip
        return Entry(kind, ref, words, tuple(stem(w) for w in words), priority, **flags)  # type: ignore[arg-type]

    phrases: dict[str, list[tuple[str, ...]]] = {}
    keyed: dict[str, bool] = {}
    for key, fact in task.facts.items():
        phrases[key] = [words_of(fact.label), *(words_of(s) for s in fact.synonyms if s.strip())]
        key_words = tuple(w for w in key.lower().split("_") if w)
        if key_words:
            phrases[key].append(key_words)
        keyed[key] = bool(key_words)
    users: dict[str, set[str]] = {}
    for key, found in phrases.items():
        alone = [words_of(task.facts[key].label), *(found[-1:] if keyed[key] else [])]
        alone += [words for words in found if len(_content(words)) == 1]
        for words in alone:
            for word in _content(words):
                users.setdefault(word, set()).add(key)
    for key, found in phrases.items():
        fact = task.facts[key]
        for words in found:
            content = _content(words)
            if len(content) >= 2:
                vocabulary._add(entry("fact", (key,), words, 8))
                vocabulary._add(entry("fact", (key,), content, 7, unordered=True))
        label_and_key = [words_of(fact.label), *(found[-1:] if keyed[key] else [])]
        singles = {w for words in label_and_key for w in _content(words)} | {
            w for words in found if len(_content(words)) == 1 for w in _content(words)
        }
        for word in sorted(singles):
            distinctive = users[word] == {key} and word not in GENERIC_WORDS
            if not distinctive and (len(word) < 3 and not word.isdigit()):
                continue
            vocabulary._add(
                entry("fact", (key,), (word,), 6 if distinctive else 2, weak=not distinctive)
            )
        if fact.unit:
            unit_words = _content(words_of(fact.unit))
            if len(unit_words) == 1 and unit_words[0].isalpha() and len(unit_words[0]) > 2:
                vocabulary._add(entry("fact", (key,), unit_words, 1, weak=True))
        for member in fact.members:
            words = words_of(member)
            vocabulary._add(entry("member", (key, member), words, 6))
            if len(_content(words)) >= 2:
                vocabulary._add(entry("member", (key, member), _content(words), 3, unordered=True))


_EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.json"))
_LIBRARY = load_library()


def _generated(seed: int, index: int) -> TypedTask | None:
    try:
        spec = instantiate(SpecGenerator(_LIBRARY, seed).draft(index), seed)
    except InstantiationError:
        return None
    return check_structure(spec).task


def _assert_fact_entries_equal_the_plain_loop(task: TypedTask) -> None:
    shared, plain = Vocabulary(task), Vocabulary(task)
    shared._facts()
    _plain_facts(plain)
    assert shared.entries == plain.entries
    assert list(shared.by_stem.items()) == list(plain.by_stem.items())
    assert list(shared.long_words.items()) == list(plain.long_words.items())


def test_shared_fact_entries_equal_the_plain_loop_on_the_examples() -> None:
    assert _EXAMPLES
    for path in _EXAMPLES:
        task = check_structure(load_spec(path)).task
        assert task is not None
        _assert_fact_entries_equal_the_plain_loop(task)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 200))
def test_shared_fact_entries_equal_the_plain_loop_on_generated_tasks(seed: int, index: int) -> None:
    task = _generated(seed, index)
    if task is not None:
        _assert_fact_entries_equal_the_plain_loop(task)


def _plain_add(vocabulary: Vocabulary, entry: Entry) -> None:
    """The definition of adding an entry: every word looked at in order (``Vocabulary``
    adds a batch of entries in one loop, ``_add_all``)."""
    if not entry.words or entry in vocabulary._known:
        return
    vocabulary._known.add(entry)
    vocabulary.entries.append(entry)
    first = entry.stems[0]
    if entry.unordered:
        vocabulary.unordered_by_first.setdefault(first, []).append(
            len(vocabulary.unordered_entries)
        )
        vocabulary.unordered_entries.append(entry)
        stems = entry.stems
        read = (entry, entry.kind, entry.ref, entry.weak)
        twinned = _twinned(entry, vocabulary.entries[:-1])
        vocabulary.unordered_rows.append(
            (stems, stems[-1], len(stems), -entry.priority, twinned, read)
        )
    else:
        apart = vocabulary.starting_word if len(entry.stems) == 1 else vocabulary.starting_words
        apart.setdefault(first, []).append(entry)
        if len(entry.stems) > 1:  # (its row: as the reader reads it)
            stems, check = entry.stems, entry.capital or entry.exact
            read = (entry, entry.kind, entry.ref, entry.weak)
            row = (stems[1], stems, len(stems), check, -entry.priority, read)
            vocabulary.starting_rows.setdefault(first, []).append(row)
    for word, word_stem in zip(entry.words, entry.stems, strict=True):
        vocabulary.by_stem.setdefault(word_stem, [])
        if len(word) >= 6 and word not in vocabulary.long_words and not word.isdigit():
            vocabulary.long_words[word] = word_stem
    vocabulary.by_stem[first].append(entry)


def _assert_built_as_the_plain_adds(task: TypedTask) -> None:
    built = Vocabulary(task)
    built._build()
    plain = Vocabulary(task)
    for entry in [*built.entries, *built.entries]:  # each a second time too: dropped
        _plain_add(plain, entry)
    for name in ("entries", "unordered_entries", "unordered_rows"):
        assert getattr(built, name) == getattr(plain, name)
    names = ("by_stem", "starting", "starting_words", "starting_word", "unordered_by_first")
    names += ("starting_rows",)
    for name in (*names, "long_words"):  # in order
        assert list(getattr(built, name).items()) == list(getattr(plain, name).items())


def test_a_built_vocabulary_equals_the_plain_adds_on_the_examples() -> None:
    for path in _EXAMPLES:
        task = check_structure(load_spec(path)).task
        assert task is not None
        _assert_built_as_the_plain_adds(task)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 200))
def test_a_built_vocabulary_equals_the_plain_adds_on_generated_tasks(seed: int, index: int) -> None:
    task = _generated(seed, index)
    if task is not None:
        _assert_built_as_the_plain_adds(task)


_ENTRY_WORDS = st.sampled_from(
    ["fee", "fees", "clearance", "clearances", "202612", "123456", "7", "level", "levels",
     "security", "vetting", "reviewed", "review", "2026", "verified"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["fact", "context", "member"]),
            st.lists(_ENTRY_WORDS, min_size=0, max_size=3).map(tuple),
            st.integers(1, 9),
            st.booleans(),
        ),
        max_size=12,
    )
)
def test_adding_entries_equals_the_plain_adds(
    made: list[tuple[str, tuple[str, ...], int, bool]],
) -> None:
    """Entries of words long and short, digits among them, some empty or repeated."""
    task = check_structure(load_spec(_EXAMPLES[0])).task
    assert task is not None
    added, batched, plain = Vocabulary(task), Vocabulary(task), Vocabulary(task)
    entries = []
    for kind, words, priority, unordered in made:
        stems = tuple(stem(w) for w in words)
        entry = Entry(kind, ("f",), words, stems, priority, unordered=unordered)  # type: ignore[arg-type]
        entries.append(entry)
        added._add(entry)
        _plain_add(plain, entry)
    batched._add_all(entries)  # one batch, repeated entries among them
    for vocabulary in (added, batched):
        assert vocabulary.entries == plain.entries
        assert vocabulary.unordered_entries == plain.unordered_entries
        assert vocabulary.unordered_rows == plain.unordered_rows
        for name in ("by_stem", "starting", "unordered_by_first", "long_words", "starting_rows"):
            assert list(getattr(vocabulary, name).items()) == list(getattr(plain, name).items())


def _assert_task_words_as_the_plain_loop(task: TypedTask) -> None:
    plain: set[str] = set()
    for fact in task.facts.values():
        plain |= set(words_of(fact.label)) | {w for s in fact.synonyms for w in words_of(s)}
    for fact in task.facts.values():
        for context in (fact.context, *fact.other_contexts):
            plain |= set(words_of(context))
        for member in fact.members:
            plain |= set(words_of(member))
    shared: set[str] = set()
    for fact in task.facts.values():
        shared |= _fact_words(
            fact.label, fact.synonyms, fact.context, fact.other_contexts, fact.members
        )
    assert shared == plain


def test_the_task_words_are_the_plain_loops_on_the_examples() -> None:
    for path in _EXAMPLES:
        task = check_structure(load_spec(path)).task
        assert task is not None
        _assert_task_words_as_the_plain_loop(task)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(0, 200))
def test_the_task_words_are_the_plain_loops_on_generated_tasks(seed: int, index: int) -> None:
    task = _generated(seed, index)
    if task is not None:
        _assert_task_words_as_the_plain_loop(task)


@given(
    st.sampled_from(["candidate", "fact", "member", "context"]),
    st.lists(st.sampled_from(["fee", "levels", "verified", "2026"]), min_size=1, max_size=3),
    st.integers(1, 9),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_an_entry_made_as_a_tuple_is_the_named_tuples(
    kind: str, words: list[str], priority: int, flags: list[bool]
) -> None:
    unordered, weak, capital, exact = flags
    made = _entry(kind, ("f",), tuple(words), priority,  # type: ignore[arg-type]
                  unordered=unordered, weak=weak, capital=capital, exact=exact)  # fmt: skip
    expected = Entry(kind, ("f",), tuple(words), tuple(stem(w) for w in words), priority,  # type: ignore[arg-type]
                     unordered=unordered, weak=weak, capital=capital, exact=exact)  # fmt: skip
    assert made == expected and type(made) is Entry and made.exact == exact
