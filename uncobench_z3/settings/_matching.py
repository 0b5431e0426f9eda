"""Finding the task's words in a message: vocabulary matches, values, and the tagged message.

:func:`find_matches` finds every vocabulary entry in the tokens (contiguous, or in any order
within a sentence for labels and synonyms), longest and strongest first, without overlaps -
except that the same words may name two things of one kind (both are meant) or a fact and a
context (:func:`one_reading` keeps one); the same thing named again on the same words is
kept once. :mod:`._tagging` writes the message as words with the tags the phrase
inventories are written against.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from operator import itemgetter

from ._any_order import Keyed, add_unordered
from ._vocabulary import Entry, EntryKind, Vocabulary
from ._words import CAPITALISED, WORD, FoundValue, Token


@dataclass(slots=True, init=False)
class Match:
    entry: Entry
    indexes: tuple[int, ...]
    """the tokens it reads, in order"""
    kind: EntryKind = field(init=False, repr=False, compare=False)
    ref: tuple[str, ...] = field(init=False, repr=False, compare=False)
    weak: bool = field(init=False, repr=False, compare=False)
    """the entry's ``kind``, ``ref`` and ``weak`` (of :class:`Entry`), held again as the
    match's own slots: what a reading reads of its matches (about 30,000 reads in the first
    pass over 80 built groups). A named tuple's field is a data descriptor, which Python 3.11
    does not specialise a read of (nor an index of a tuple subclass): a slot's read it does"""

    def __init__(self, entry: Entry, indexes: tuple[int, ...]) -> None:
        self.entry = entry
        self.indexes = indexes
        self.kind, self.ref, self.weak = entry.kind, entry.ref, entry.weak


_single_order = itemgetter(0, 1)
"""a one-word match's place among the one-word matches, (-priority, token): strongest, then
first (the order :data:`Keyed` gives them)"""


TokenStems = tuple[tuple[str, ...], tuple[int, ...], dict[str, tuple[int, ...]], tuple[int, ...]]
"""What :func:`find_matches` reads of a message's tokens before a vocabulary matters (the
same for every vocabulary: a caller that keeps a message's tokens keeps these), ``(stems,
correctable, at, sentence_of)``: each token's stem; the tokens a vocabulary may read as a
typo of one of its words (long, not digits: :meth:`Vocabulary.corrected`); stem -> the
tokens with it, in order (a message is looked up by the stems it shares with a vocabulary's
first words, not word by word; read, never changed); each token's sentence. An exact tuple
(as :data:`~._tagging.Layout` and :data:`~._words.Token`): kept with its text, a named
tuple stays tracked by the collector for good, an exact tuple of untracked things is let go
at a collection (:func:`~._message.stems_and_layout` makes it)."""


def token_stems_of(tokens: Sequence[Token]) -> TokenStems:
    """The :data:`TokenStems` of ``tokens``, as defined (field by field)."""
    if not tokens:
        return ((), (), {}, ())
    # the tokens' fields as columns, in one go: words, stems, ..., sentences
    words, stems, _, _, _, sentence_of, _, _ = zip(*tokens, strict=True)
    at: dict[str, list[int]] = {}
    for i, word_stem in enumerate(stems):
        at.setdefault(word_stem, []).append(i)
    return (
        stems,
        tuple([i for i, word in enumerate(words) if len(word) >= 6 and not word.isdigit()]),
        {word_stem: tuple(indexes) for word_stem, indexes in at.items()},
        sentence_of,
    )


_COMPATIBLE_KINDS = frozenset([("fact", "context"), ("context", "fact")])
"""two different kinds of entry whose readings of the same words are both kept"""


def find_matches(
    vocabulary: Vocabulary,
    tokens: Sequence[Token],
    blocked: AbstractSet[int],
    token_stems: TokenStems | None = None,
) -> list[Match]:
    """Vocabulary matches, longest and strongest first, without overlaps (ties all kept,
    but a thing named again on the same words: :func:`_same_thing`).

    ``token_stems``: :func:`token_stems_of` the tokens, when the caller has it."""
    return find_matches_and_doubles(vocabulary, tokens, blocked, token_stems)[0]


def find_matches_and_doubles(
    vocabulary: Vocabulary,
    tokens: Sequence[Token],
    blocked: AbstractSet[int],
    token_stems: TokenStems | None = None,
) -> tuple[list[Match], bool]:
    """:func:`find_matches`, and whether it kept a fact and a context on the same words
    (only then has :func:`one_reading` a word to decide: none of the first pass's 723
    readings over 80 built groups has one, and noting it here spares a look at every match)."""
    by_stem = vocabulary.by_stem  # a stem of the vocabulary is read as itself
    if token_stems is None:
        token_stems = token_stems_of(tokens)
    stems: Sequence[str]
    stems, correctable, own_at, sentence_of = token_stems
    corrections = vocabulary._corrections  # (what ``corrected`` read a word as before)
    fixed: list[str] | None = None  # the stems, when a typo is read as a vocabulary word
    for i in correctable:  # (most words are known or short: not looked at)
        word_stem = stems[i]
        if word_stem not in by_stem:
            word = tokens[i][WORD]
            # (remembered by the word alone: a token's stem is its word's, :func:`~._words.stem`;
            # "" for a word read as no long word)
            read_as = corrections.get(word)
            if read_as is None:
                read_as = vocabulary.corrected(word, word_stem)
            if read_as and read_as != word_stem:
                if fixed is None:
                    fixed = list(stems)
                fixed[i] = read_as
    at: Mapping[str, Sequence[int]]
    if fixed is None:  # the message's own stems: what it holds is known without a scan
        at = own_at
    else:
        stems = tuple(fixed)  # (a tuple: its slices compare with an entry's stems)
        at = _where(fixed)
    # Every match of two words or more comes before every match of one word in the order
    # (longest first), so the one-word matches are decided after the longer ones are kept:
    # most are on a word a longer match has taken (a label's words are single entries too),
    # and are never made. The words are looked at by stem, the stems the message shares with
    # the entries' first words only; the order they are found in does not matter: a match's
    # place in the order ends with its tokens, and the matches found on one token keep the
    # entries' order.
    raw: list[Keyed] = []  # the matches of two words or more
    starting_rows = vocabulary.starting_rows  # (the entries' fields in exact tuples)
    starting_word = vocabulary.starting_word
    unordered_by_first = vocabulary.unordered_by_first
    padded = (*stems, None)  # (the word after the last: none)
    places = _PLACES if len(stems) <= len(_PLACES) else tuple(range(len(stems)))
    # The stems the message shares with the first words of the three kinds of entry, found
    # by one intersection with all of them (:meth:`Vocabulary.first_stems`), each then put
    # with its kinds; not three intersections of the message's stems (each a look-up of
    # every stem: about 5.7k instructions), and the one-word entries' places gathered here,
    # each looked at once the longer matches are kept (not a set made of each stem's places
    # for ``taken.issuperset``). find_matches_and_doubles counted alone in the first pass
    # over 80 built groups: 105.5 to 101.0 million instructions; the pass 779.0, 778.9 to
    # 776.6, 775.1 million
    single_places: list[int] = []  # the places of the stems of one-word entries
    firsts: list[str] = []  # the first stems of unordered entries
    for word_stem in vocabulary.first_stems().keys() & at.keys():
        if word_stem in starting_word:
            single_places += at[word_stem]
        if word_stem in unordered_by_first:
            firsts.append(word_stem)
        rows = starting_rows.get(word_stem)
        if rows is None:
            continue
        for i in at[word_stem]:
            # an entry's second word is compared first (its first is this one): most entries
            # that start with the word go on with another, and only longer ones need a slice
            following = padded[i + 1]
            for row in rows:
                if row[0] != following:
                    continue  # (most: the row unpacked only past its second word)
                _, wanted, length, check, rank, read = row
                if length == 2:
                    # (a pair written out: most entries are two words)
                    hit: tuple[int, ...] = (i, i + 1)
                elif length == 3:
                    # (the next most: its first two words are these, its third is compared
                    # alone - the word after the second is in ``padded`` - and its places
                    # written out, not two slices made)
                    if padded[i + 2] != wanted[2]:
                        continue
                    hit = (i, i + 1, i + 2)
                elif length == 4:
                    # (so too: a third word past the message's end is the padding's None,
                    # unequal, and the fourth is then not read)
                    if padded[i + 2] != wanted[2] or padded[i + 3] != wanted[3]:
                        continue
                    hit = (i, i + 1, i + 2, i + 3)
                elif stems[i : i + length] == wanted:
                    # (a slice cut short by the message's end is not equal; the places a
                    # slice of shared ones, not a range made into a tuple)
                    hit = places[i : i + length]
                else:
                    continue
                if check and not _starts_as(read[0], tokens[i]):
                    continue  # (capital or exact: most entries may start at any word)
                raw.append((-length, rank, i, hit, len(raw), read))
    # the one-word matches of unordered entries, as (-priority, token, entry)
    unordered_singles: list[tuple[int, int, Entry]] = []
    # only the entries whose first word is in the message can have all their words in it
    if firsts:
        add_unordered(
            vocabulary.unordered_rows,
            unordered_by_first,
            firsts,
            at,
            sentence_of,
            raw,
            unordered_singles,
        )
    if blocked:
        raw = [keyed for keyed in raw if blocked.isdisjoint(keyed[3])]
    raw.sort()  # ties keep the order they were found in (numbered as found)
    taken: set[int] = set()  # the tokens of the matches kept
    kept: list[Match] = []
    kept_on: dict[tuple[int, ...], list[Match]] = {}  # the matches kept on these tokens
    doubles = False  # a fact and a context kept on the same words
    for keyed in raw:
        hit = keyed[3]  # (the entry read only for a match kept or on the same words: few)
        if taken.isdisjoint(hit):
            match = _new(Match)  # (its fields set here: no Python-level __init__ call)
            match.entry, match.kind, match.ref, match.weak = keyed[5]
            match.indexes = hit
            kept.append(match)
            kept_on[hit] = [match]  # (no match kept on these tokens before)
            taken.update(hit)
            continue
        on_these = kept_on.get(hit)  # (mostly none: overlapping other words)
        if not on_these:
            continue
        entry, kind, ref, weak = keyed[5]
        # (:func:`_same_thing` and :func:`_compatible`, inline: this runs for most entries)
        compatible = mixed = False
        for other in on_these:
            if other.kind == kind:
                if other.ref == ref and not (other.weak or weak):
                    break  # the same thing read again on these words: kept once
                compatible = True
            elif (other.kind, kind) in _COMPATIBLE_KINDS:
                compatible = mixed = True
        else:
            if compatible:
                # the same words name two things: both kept (of one kind, or a fact and a
                # context: :func:`one_reading` keeps one)
                match = _new(Match)
                match.entry = entry
                match.indexes = hit
                match.kind, match.ref, match.weak = kind, ref, weak
                kept.append(match)
                on_these.append(match)
                doubles = doubles or mixed
    # the one-word matches on the words the longer matches left, as (-priority, token,
    # entry): the word-for-word ones, then the unordered ones (ties keep that order)
    singles: list[tuple[int, int, Entry]] = []
    for i in single_places:
        if i in taken or i in blocked:
            continue  # (most: a longer match's words; of the first pass's 7,354 places, 97 not)
        token = tokens[i]
        for entry in starting_word[stems[i]]:
            if (entry.capital or entry.exact) and not _starts_as(entry, token):
                continue  # (most entries may start at any word of their stem)
            singles.append((-entry.priority, i, entry))
    if unordered_singles:
        singles += [s for s in unordered_singles if s[1] not in taken and s[1] not in blocked]
    if len(singles) > 1:
        singles.sort(key=_single_order)  # (stable, as above)
    for _, i, entry in singles:
        if i not in taken:
            hit = (i,)
            match = Match(entry, hit)
            kept.append(match)
            kept_on[hit] = [match]
            taken.add(i)
            continue
        on_these = kept_on.get((i,))  # (the word taken by another one-word match: rare)
        if (
            on_these
            and not any(_same_thing(other, entry) for other in on_these)
            and any(_compatible(other, entry) for other in on_these)
        ):
            match = Match(entry, (i,))
            kept.append(match)
            doubles = doubles or any(other.kind != match.kind for other in on_these)
            on_these.append(match)
    return kept, doubles


_new = object.__new__
_PLACES = tuple(range(1024))
"""token places, a match's sliced from them (a longer message makes its own)"""


def _where(stems: Sequence[str]) -> dict[str, list[int]]:
    """the ``at`` of :data:`TokenStems` of ``stems`` (the message's stems with its typos read as the
    vocabulary's words)."""
    at: dict[str, list[int]] = {}
    for i, word_stem in enumerate(stems):
        at.setdefault(word_stem, []).append(i)
    return at


def _starts_as(entry: Entry, token: Token) -> bool:
    """Whether a match of ``entry`` may start at ``token``: written with a capital when the
    entry needs one, and as the entry's word itself (or its plural) when it must be exact."""
    if entry.capital and not token[CAPITALISED]:
        return False
    return not entry.exact or token[WORD] in (entry.words[0], entry.words[0] + "s")


def _same_thing(kept: Match | Entry, other: Entry) -> bool:
    """A match kept and an entry that name the same thing in the same way (neither weak: a
    weak word's readings are counted by the fact they name), so that a reading of the same
    words by the second adds nothing to the first's: a label's words read word for word and in any
    order are most of the matches kept on the same words (1,150 of the 3,840 matches of the
    first pass's 723 readings over 80 built groups were these), each read, tagged and
    looked at again for nothing."""
    return kept.kind == other.kind and kept.ref == other.ref and not kept.weak and not other.weak


def _compatible(kept: Match | Entry, other: Entry) -> bool:
    """A match kept and an entry on the same words that are both kept: two things of one
    kind, or a fact word that is also a context word ("verified"; :func:`one_reading`
    decides)."""
    return kept.kind == other.kind or (kept.kind, other.kind) in _COMPATIBLE_KINDS


def one_reading(matches: list[Match]) -> list[Match]:
    """A word read both as a fact and as a context of another fact: the context when that
    other fact is named by other words ("QP years ... verified figure"), else the fact."""
    # the words read as facts and as contexts, first (every message of the first pass over 80
    # built groups reads both, none on the same words: one pass and a set's test in C, not
    # the facts' places and lists; the first pass's 723 readings 1.05 to 0.66 us each)
    fact_words: set[tuple[int, ...]] = set()
    context_words: set[tuple[int, ...]] = set()
    for m in matches:
        kind = m.kind
        if kind == "fact":
            fact_words.add(m.indexes)
        elif kind == "context":
            context_words.add(m.indexes)
    if fact_words.isdisjoint(context_words):
        return list(matches)  # (most messages: no word is read twice)
    facts_on: dict[tuple[int, ...], list[int]] = {}  # words -> the facts read on them
    contexts: list[int] = []  # the contexts read (looked at once, in the same pass)
    for i, m in enumerate(matches):
        kind = m.kind
        if kind == "fact":
            facts_on.setdefault(m.indexes, []).append(i)
        elif kind == "context":
            contexts.append(i)
    named_elsewhere: dict[tuple[int, ...], set[str]] | None = None
    drop: set[int] = set()
    for i in contexts:
        m = matches[i]
        rivals = facts_on.get(m.indexes)
        if not rivals:
            continue
        if named_elsewhere is None:
            named_elsewhere = {}
            for f in matches:
                if f.kind == "fact" and not f.weak:
                    named_elsewhere.setdefault(f.indexes, set()).add(f.ref[0])
        fact = m.ref[0]
        elsewhere = any(fact in facts for ix, facts in named_elsewhere.items() if ix != m.indexes)
        drop |= set(rivals) if elsewhere else {i}
    if not drop:
        return list(matches)
    return [m for i, m in enumerate(matches) if i not in drop]


def inside_values(match: Match, found: list[tuple[FoundValue, list[int]]]) -> bool:
    """A fact word that is one of the message's numbers (a label such as "Form 3")."""
    numbers = {i for _, indexes in found for i in indexes}
    return numbers.issuperset(match.indexes)


def value_tokens(
    tokens: list[Token], found: list[FoundValue]
) -> list[tuple[FoundValue, list[int]]]:
    """Each value of ``found`` with the tokens it overlaps (``start < value.end`` and
    ``value.start < end``), the values that overlap none left out. A message's tokens come
    in the order of its text, their starts and their ends never decreasing (the pieces of
    one raw word share its span), so a value's tokens are the run from the first that ends
    after its start to the last that starts before its end: two ``bisect`` calls over the
    tokens, by their ends and starts (keys made in C), not a look at every token for every
    value (a message writes two or three). The keys are read only at the tokens a bisect
    looks at (five or so of a message's 27), not made into columns of every token first:
    over the 601 messages of the first 80 groups of a built benchmark, value_tokens
    12.0 to 6.0 million instructions (215.4 to 209.9 for reading their tokens and values
    when the bisects came in)."""
    out = []
    for value in found:
        low = bisect_right(tokens, value.start, key=_END)
        high = bisect_left(tokens, value.end, low, key=_START)
        if low < high:
            out.append((value, list(range(low, high))))
    return out


_START, _END = itemgetter(2), itemgetter(3)
