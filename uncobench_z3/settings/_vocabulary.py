"""A task's own vocabulary: how a message can name its candidates, facts, members and contexts.

Built once per task from the typed spec (names, labels, keys, declared synonyms, enum
members, context labels) and nothing else, so a colleague understands a follow-up in the
words of *this* task and no benchmark-wide keyword list decides a score. What each entry
stands for:

* **candidates** - the full name; every word of it that no other candidate's name has
  (first name, surname, "Kestrel"), unless it is a generic word of names ("Mount", "Lot",
  "Services"); the candidate's id. A name word that is also one of the task's words
  ("Grant", "Price") must be written with a capital.
* **facts** - the label and the synonyms (their words in any order within a sentence), the
  key, and single label or synonym words that only this fact of the task has. A word several
  facts share, a generic word ("score", "rate", "date") and the unit ("years") are *weak*:
  they name the fact only when it is the one fact of the addressed role that has them.
* **members** - the members of an enum fact ("passed", "fit with restrictions").
* **contexts** - each context label of a fact (required and others), and the words that tell
  it apart from the fact's other contexts ("March" against "April", "2026" against "2025",
  "verified" against "self-reported"). When a fact's contexts are periods or revisions that
  can be ordered, "latest" / "previous" name the last / first of them.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from .._memo import remember
from ..spec import TypedTask
from ._phrases import GENERIC_WORDS, word_set
from ._vocabulary_entries import _FUNCTION_WORDS as _FUNCTION_WORDS
from ._vocabulary_entries import Entry as Entry
from ._vocabulary_entries import EntryKind as EntryKind
from ._vocabulary_entries import _content as _content
from ._vocabulary_entries import _context_entries as _context_entries
from ._vocabulary_entries import _entry as _entry
from ._vocabulary_entries import _fact_shape as _fact_shape
from ._vocabulary_entries import _fact_words as _fact_words
from ._vocabulary_entries import _single_entry as _single_entry
from ._vocabulary_entries import _time_order as _time_order
from ._words import close_enough, words_of

#: Words of names that do not tell candidates apart on their own.
_NAME_GENERIC = word_set(
    """
    mv mt ms lot batch the and of co ltd pty inc llc plc group services service systems
    solutions technologies technology engineering industries industrial holdings partners
    consulting labs laboratories international global mount port north south east west upper
    lower new old great little saint st de da van von al el la le bin
    """
)


@dataclass
class Vocabulary:
    """The task's words, indexed for the request reader (see the module docstring)."""

    task: TypedTask
    entries: list[Entry] = field(default_factory=list)
    by_stem: dict[str, list[Entry]] = field(default_factory=dict)
    long_words: dict[str, str] = field(default_factory=dict)
    """word -> stem, for the typo check (words of six letters and more)"""
    context_words: dict[str, frozenset[str]] = field(default_factory=dict)
    """fact -> the words of its contexts (what "the latest ..." may be followed by)"""
    order: dict[str, list[str]] = field(default_factory=dict)
    """fact -> its contexts from the earliest to the latest (only when they can be ordered)"""
    starting_word: dict[str, list[Entry]] = field(default_factory=dict)
    """stem -> the entries of one word matched as written, in ``entries`` order (the reader
    makes their matches last)"""
    unordered_by_first: dict[str, list[int]] = field(default_factory=dict)
    """stem -> where the unordered entries whose first stem it is stand in
    ``unordered_rows`` (a message has the words of few of them)"""
    starting_rows: dict[str, list[StartingRow]] = field(default_factory=dict)
    """stem -> the entries of two words or more matched word for word that start with it, in
    ``entries`` order (the reader tries them word by word), as it reads them
    (:data:`StartingRow`; the entries alone: :attr:`starting_words`)"""
    unordered_rows: list[UnorderedRow] = field(default_factory=list)
    """the entries matched in any word order, in ``entries`` order, as the reader reads them
    (:data:`UnorderedRow`; the entries alone: :attr:`unordered_entries`)"""
    _known: set[Entry] = field(default_factory=set, repr=False)
    """the entries, as a set (a task has thousands: a list lookup made building quadratic)"""
    _corrections: dict[str, str] = field(default_factory=dict, repr=False)
    """word -> the stem of the long word :meth:`corrected` read it as a typo of, "" for none
    (the typo check scans the long words; its answer depends on the word alone)"""
    _facts_read_for: dict[str | None, frozenset[str]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """:meth:`facts_read_for`, by role"""
    _long_by_first: dict[str, list[tuple[str, str]]] | None = field(
        default=None, repr=False, compare=False
    )
    """``long_words`` by first letter, in order (a typo keeps its first letter: only those
    are compared), made on the first check"""
    _first_stems: dict[str, object] | None = field(default=None, repr=False, compare=False)
    """:meth:`first_stems`, made on the first reading and dropped when entries are added"""
    _shared: bool = field(default=False, repr=False, compare=False)
    """lists of ``by_stem``, ``starting_word`` and ``starting_rows`` may be a chunk's own
    (:meth:`_merge` shares them): none is changed in place, :meth:`_add_all` copies them
    first"""

    @classmethod
    def of(cls, task: TypedTask) -> Vocabulary:
        """The vocabulary of ``task``: built once per task object while something holds it
        (a colleagues' record book does, for its group's episodes) or while it is among the
        last :data:`RECENT_VOCABULARIES` asked for; :func:`forget_vocabulary` lets it go."""
        found = _CACHE.get(id(task))
        if found is None or found.task is not task:
            found = cls(task)
            found._build()
            _CACHE[id(task)] = found
        _RECENT[id(task)] = found
        _RECENT.move_to_end(id(task))
        while len(_RECENT) > RECENT_VOCABULARIES:
            _RECENT.popitem(last=False)
        return found

    # -- building ---------------------------------------------------------------------------
    def _add(self, entry: Entry) -> None:
        """Index one entry (skipped when already known)."""
        self._add_all((entry,))

    def _add_all(self, entries: Iterable[Entry]) -> None:
        """Index ``entries``, in order, as :meth:`_add` one by one would."""
        if self._shared:  # its lists are to be changed in place: its own copies first
            self._shared = False
            for index in (self.by_stem, self.starting_word):
                for key, listed in index.items():
                    index[key] = listed.copy()
            rows = self.starting_rows
            for key, listed_rows in rows.items():
                rows[key] = listed_rows.copy()
        self._first_stems = None
        if _index(self, entries):
            self._long_by_first = None  # made again when next needed

    def _merge(self, chunk: _Chunk) -> None:
        """Index ``chunk``'s entries, in order, as :meth:`_add_all` would, from its own
        indexes: a step a stem, not an entry (the chunks are shared by many tasks)."""
        known = self._known
        if not known.isdisjoint(chunk._known):  # (entries of two facts are never equal)
            self._add_all(chunk.entries)
            return
        known |= chunk._known  # a set's own hashes: no entry hashed again
        self._first_stems = None
        self._shared = True
        self.entries += chunk.entries
        offset = len(self.unordered_rows)
        if chunk.unordered_rows:
            self.unordered_rows += chunk.unordered_rows
            by_first = self.unordered_by_first
            for first, at in chunk.unordered_by_first.items():
                moved = [i + offset for i in at]
                listed = by_first.get(first)
                if listed is None:
                    by_first[first] = moved
                else:
                    listed += moved
        _extend(self.starting_word, chunk.starting_word)
        _extend(self.starting_rows, chunk.starting_rows)
        _extend(self.by_stem, chunk.by_stem)
        if chunk.long_words:
            long_words = self.long_words
            size = len(long_words)
            for word, word_stem in chunk.long_words.items():
                if word not in long_words:
                    long_words[word] = word_stem
            if len(long_words) != size:
                self._long_by_first = None

    def _build(self) -> None:
        task_words: set[str] = set()
        for fact in self.task.facts.values():
            task_words |= _fact_words(fact.label, fact.synonyms, fact.context,
                                      fact.other_contexts, fact.members)  # fmt: skip
        self._candidates(task_words)
        self._facts()
        self._contexts()

    def _candidates(self, task_words: set[str]) -> None:
        task = self.task
        named = {c: words_of(task.candidate_name(c)) for c in task.candidates}
        counts: dict[str, int] = {}
        for words in named.values():
            for word in set(words):
                counts[word] = counts.get(word, 0) + 1
        found: list[Entry] = []
        for candidate, words in named.items():
            found.append(_entry("candidate", (candidate,), words, 9, unordered=False))
            for word in words:
                if counts[word] > 1 or word in _NAME_GENERIC or word in _FUNCTION_WORDS:
                    continue
                if len(word) < 3 and not word.isdigit():
                    continue
                common = word in task_words or word in GENERIC_WORDS
                found.append(_entry("candidate", (candidate,), (word,), 5, capital=common))
            if candidate not in counts and candidate.isalpha() and candidate not in task_words:
                found.append(_entry("candidate", (candidate,), (candidate.lower(),), 5))
        self._add_all(found)

    def _facts(self) -> None:
        task = self.task
        words = {
            key: (key, fact.label, tuple(fact.synonyms), fact.unit, tuple(fact.members))
            for key, fact in task.facts.items()
        }
        shapes = {key: _fact_shape(*fact_words) for key, fact_words in words.items()}
        users: dict[str, set[str]] = {}  # single words -> the facts they can name alone
        for key, shape in shapes.items():
            for word in shape.alone:
                users.setdefault(word, set()).add(key)
        for key, shape in shapes.items():
            kept = tuple(
                (word, distinctive)
                for word in shape.singles
                for distinctive in (users[word] == {key} and word not in GENERIC_WORDS,)
                if distinctive or len(word) >= 3 or word.isdigit()
            )
            self._merge(_fact_chunk(*words[key], kept))

    def _contexts(self) -> None:
        for key, fact in self.task.facts.items():
            chunk, context_words, order = _context_chunk(key, (fact.context, *fact.other_contexts))
            self._merge(chunk)
            self.context_words[key] = context_words
            if order is not None:
                self.order[key] = list(order)

    @property
    def unordered_entries(self) -> list[Entry]:
        """The entries matched in any word order, in ``entries`` order (of
        :attr:`unordered_rows`, which the reader reads)."""
        return [row[-1][0] for row in self.unordered_rows]

    @property
    def starting_words(self) -> dict[str, list[Entry]]:
        """stem -> the entries of two words or more matched word for word that start with it,
        in ``entries`` order (of :attr:`starting_rows`, which the reader reads)."""
        return {stem: [row[-1][0] for row in rows] for stem, rows in self.starting_rows.items()}

    @property
    def starting(self) -> dict[str, list[Entry]]:
        """stem -> the entries matched word for word that start with it, in ``entries`` order
        (``by_stem`` without the unordered ones; the reader keeps them apart by length:
        :attr:`starting_word`, :attr:`starting_words`)."""
        found: dict[str, list[Entry]] = {}
        for word_stem, entries in self.by_stem.items():
            kept = [entry for entry in entries if not entry.unordered]
            if kept:
                found[word_stem] = kept
        return found

    # -- reading helpers --------------------------------------------------------------------
    def first_stems(self) -> dict[str, object]:
        """The first stems of the entries, as a dict's keys (its values are not read):
        ``starting_word``'s, ``starting_rows``' and ``unordered_by_first``'s keys. Made once,
        in C: a message's stems are looked up among them in one intersection, and the dicts
        merged are the cheapest union (about 1.7 us a vocabulary, three sets' 5.8 us)."""
        found = self._first_stems
        if found is None:
            found = self._first_stems = {
                **self.starting_word,
                **self.starting_rows,
                **self.unordered_by_first,
            }
        return found

    def corrected(self, word: str, word_stem: str) -> str:
        """The stem a word is read as: its own, or a long vocabulary word it is a typo of."""
        if word_stem in self.by_stem or len(word) < 6 or word.isdigit():
            return word_stem
        found = self._corrections.get(word)
        if found is None:
            by_first = self._long_by_first
            if by_first is None:
                by_first = self._long_by_first = {}
                for known_pair in self.long_words.items():
                    listed = by_first.get(known_pair[0][0])
                    if listed is None:  # (no empty list made for each word)
                        by_first[known_pair[0][0]] = [known_pair]
                    else:
                        listed.append(known_pair)
            # close_enough never matches two long words with different first letters, nor two
            # whose lengths differ by three or more (at most two edits, each changes the
            # length by one at most): those pairs are not looked up. A loop, not a generator
            # given to next(): the typo check misses once a word and vocabulary (613 times
            # in the first pass over 80 built groups), 25k instructions a miss before
            found = ""
            size = len(word)
            for known, known_stem in by_first.get(word[0], ()):
                apart = len(known) - size
                # (one edit for words under ten letters: their lengths differ by one at most)
                if (
                    -3 < apart < 3
                    and (-2 < apart < 2 or (size >= 10 and len(known) >= 10))
                    and _close(word, known)
                ):
                    found = known_stem
                    break
            # bounded for long runs of model-written text
            remember(self._corrections, word, found, 65536)
        return found or word_stem

    def role_facts(self, role: str) -> tuple[str, ...]:
        return tuple(self.task.facts_of(role))

    def facts_read_for(self, role: str | None) -> frozenset[str]:
        """The facts a message to ``role`` is read for: the role's, or every fact of the task
        for none (made once per role: every reading asks)."""
        found = self._facts_read_for.get(role)
        if found is None:
            facts = self.task.facts_of(role) if role is not None else self.task.facts
            found = self._facts_read_for[role] = frozenset(facts)
        return found


_CLOSE: dict[tuple[str, str], bool] = {}
"""(a message's word, a vocabulary's long word) -> :func:`close_enough`, for every vocabulary:
a word is compared with each long word of its first letter once per group (its reading is
remembered per vocabulary), and the groups of a benchmark share their facts' words and the
agents their messages' words (a fresh first pass over 80 built groups compared 2,076 pairs,
624 distinct; over 16 copies of the examples 1,616, 77 distinct). A pure function of the two
words, bounded."""
CLOSE_PAIRS_KEPT = 65536


def _close(word: str, known: str) -> bool:
    """:func:`close_enough`, remembered (:data:`_CLOSE`)."""
    found = _CLOSE.get((word, known))
    if found is None:
        found = remember(_CLOSE, (word, known), close_enough(word, known), CLOSE_PAIRS_KEPT)
    return found


def _index(tables: Vocabulary | _Chunk, entries: Iterable[Entry]) -> bool:
    """Add ``entries`` to ``tables``'s indexes, in order, each unless already there; whether
    a long word was added. One loop with the tables at hand, not a call an entry."""
    known = tables._known
    listed = tables.entries
    by_stem, long_words = tables.by_stem, tables.long_words
    starting_word, starting_rows = tables.starting_word, tables.starting_rows
    unordered_by_first, unordered_rows = tables.unordered_by_first, tables.unordered_rows
    long_added = False
    for entry in entries:
        words, stems = entry.words, entry.stems
        if not words:
            continue
        size = len(known)
        known.add(entry)  # hashed once (a named tuple's hash is not kept)
        if size == len(known):
            continue
        listed.append(entry)
        first = stems[0]
        if entry.unordered:
            unordered_by_first.setdefault(first, []).append(len(unordered_rows))
            # (a twin is added before its unordered entry: a label's words as written first)
            twinned = first in starting_rows and _has_twin(entry, starting_rows[first])
            unordered_rows.append(unordered_row(entry, twinned))
        elif len(stems) == 1:
            starting_word.setdefault(first, []).append(entry)
        else:
            starting_rows.setdefault(first, []).append(starting_row(entry))
        for word_stem in stems:
            if word_stem not in by_stem:
                by_stem[word_stem] = []
        by_stem[first].append(entry)
        # the words a typo may be read as: six letters and more, not digits
        for word, word_stem in zip(words, stems, strict=True):
            if len(word) >= 6 and word not in long_words and not word.isdigit():
                long_words[word] = word_stem
                long_added = True
    return long_added


_Listed = TypeVar("_Listed")
EntryRead = tuple[Entry, EntryKind, tuple[str, ...], bool]
"""An entry with what a match of it holds again, ``(entry, kind, ref, weak)``: the last field of
its row and of a match found (:data:`~._any_order.Keyed`), read in one unpacking where the
reader keeps a match (or looks at one on the words of a match kept), not as three of the named
tuple's fields (each read through its descriptor: several hundred instructions; with the other
changes of :func:`~._any_order.add_unordered`'s docstring, the first pass over 80 built groups
896.8-897.7 to 888.4-889.3 million instructions)."""
StartingRow = tuple[str, tuple[str, ...], int, bool, int, EntryRead]
"""An entry of two words or more matched word for word, as the reader reads it: ``(second stem,
stems, length, capital or exact, -priority, (entry, kind, ref, weak))`` (the last:
:data:`EntryRead`). An exact tuple, unpacked in one step where the reader loops over the entries
that start with a message's word: a named tuple's field is read through its descriptor (no
faster by its index), several hundred instructions a field, and the reader read three to five of
each entry it tried (the second stem first). Made with the fact's chunk (shared by the tasks
that have the fact, when the group is prepared). With both kinds of rows, and the one-word
matches looked for only on stems a longer match left a place of, the first pass over 80 built
groups: 1,051.1-1,051.7 to 1,043.5-1,045.0 million instructions (collector off: 1,035.5-1,035.7
to 1,026.5-1,027.2)."""
UnorderedRow = tuple[tuple[str, ...], str, int, int, bool, EntryRead]
"""An unordered entry as the reader reads it (:func:`~._any_order.add_unordered`):
``(stems, last stem, length, -priority, twinned, (entry, kind, ref, weak))`` (see
:data:`StartingRow`; ``twinned``: a word-for-word twin was in the vocabulary when it was added,
:func:`_has_twin`)."""


def starting_row(entry: Entry) -> StartingRow:
    """The :data:`StartingRow` of ``entry`` (of two words or more), as defined."""
    # (the entry's fields in one unpacking, not read one by one through their descriptors)
    kind, ref, _, stems, priority, _, weak, capital, exact = entry
    read = (entry, kind, ref, weak)
    return (stems[1], stems, len(stems), capital or exact, -priority, read)


def unordered_row(entry: Entry, twinned: bool = False) -> UnorderedRow:
    """The :data:`UnorderedRow` of ``entry``, as defined (``twinned``: :func:`_has_twin`)."""
    kind, ref, _, stems, priority, _, weak, _, _ = entry
    return (stems, stems[-1], len(stems), -priority, twinned, (entry, kind, ref, weak))


def _has_twin(entry: Entry, rows: list[StartingRow]) -> bool:
    """Whether the unordered ``entry`` has a word-for-word twin among ``rows`` (the word-for-word
    entries of two words or more that start with its first stem; an unordered entry of one word
    has none, its matches are read apart): an entry of the same stems in the same order, kind
    and ref, that may start at any word (no capital, not exact), at least as strong, neither of
    the two weak. A match of the unordered entry on the tokens of its words written in order, one
    after another, is then never kept: its twin matches those tokens too, of the same length, and
    comes before it (as strong or stronger, found first), so that it is kept on them and the
    unordered one is the same thing again, or it is not and the unordered one is not either (the
    same tokens, the same kind)."""
    kind, ref, _, stems, priority, _, weak, _, _ = entry
    if weak:
        return False
    for _, wanted, _, check, rank, (_, other_kind, other_ref, other_weak) in rows:
        if (
            wanted == stems
            and not check
            and not other_weak
            and rank <= -priority
            and other_kind == kind
            and other_ref == ref
        ):
            return True
    return False


def entry_read(entry: Entry) -> EntryRead:
    """The :data:`EntryRead` of ``entry``, as defined (what its row ends with)."""
    return (entry, entry.kind, entry.ref, entry.weak)


def _extend(index: dict[str, list[_Listed]], more: dict[str, list[_Listed]]) -> None:
    """``more``'s lists after ``index``'s, key by key, a new key last. A list of a chunk is
    shared, not copied, and a list is never changed once in a vocabulary made of chunks: one
    extended is made anew (see :attr:`Vocabulary._shared`)."""
    if index.keys().isdisjoint(more):
        index.update(more)
        return
    for key, entries in more.items():
        listed = index.get(key)
        index[key] = entries if listed is None else listed + entries


@dataclass
class _Chunk:
    """Entries of one fact, indexed as a vocabulary indexes them (the same tables, on their
    own): what :meth:`Vocabulary._merge` adds to a task's vocabulary. Made once and shared by
    the tasks that have the fact (1,000 built groups have 7,447 facts, 606 distinct); never
    changed once made."""

    entries: list[Entry] = field(default_factory=list)
    by_stem: dict[str, list[Entry]] = field(default_factory=dict)
    long_words: dict[str, str] = field(default_factory=dict)
    starting_word: dict[str, list[Entry]] = field(default_factory=dict)
    unordered_by_first: dict[str, list[int]] = field(default_factory=dict)
    starting_rows: dict[str, list[StartingRow]] = field(default_factory=dict)
    unordered_rows: list[UnorderedRow] = field(default_factory=list)
    _known: set[Entry] = field(default_factory=set)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> _Chunk:
        made = cls()
        _index(made, entries)
        return made


@functools.lru_cache(maxsize=4096)
def _fact_chunk(
    key: str,
    label: str,
    synonyms: tuple[str, ...],
    unit: str | None,
    members: tuple[str, ...],
    kept: tuple[tuple[str, bool], ...],
) -> _Chunk:
    """The entries of fact ``key`` (its :func:`_fact_shape`), with the single words ``kept``
    (each strong when the word is distinctive in the task), indexed. (By the fact's words,
    not its shape: a shape's hash is its entries'.)"""
    shape = _fact_shape(key, label, synonyms, unit, members)
    singles = [_single_entry(key, word, distinctive) for word, distinctive in kept]
    return _Chunk.of((*shape.phrases, *singles, *shape.rest))


@functools.lru_cache(maxsize=4096)
def _context_chunk(
    key: str, contexts: tuple[str, ...]
) -> tuple[_Chunk, frozenset[str], tuple[str, ...] | None]:
    """:func:`_context_entries`, the entries indexed."""
    entries, context_words, order = _context_entries(key, contexts)
    return _Chunk.of(entries), context_words, order


RECENT_VOCABULARIES = 16
"""vocabularies kept alive for callers that hold none (the least recently asked go first)"""
_CACHE: weakref.WeakValueDictionary[int, Vocabulary] = weakref.WeakValueDictionary()
"""id of a task -> its vocabulary, while something holds that (a vocabulary holds its task,
so the id cannot be another task's meanwhile)"""
_RECENT: OrderedDict[int, Vocabulary] = OrderedDict()


def forget_vocabulary(task: TypedTask) -> None:
    """Stop keeping ``task``'s vocabulary alive (it lives on while something else holds it):
    an evaluation calls this when the last sample of a group has finished, so a long run
    does not keep every task it played."""
    found = _RECENT.get(id(task))
    if found is not None and found.task is task:
        del _RECENT[id(task)]
