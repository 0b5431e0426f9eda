"""A vocabulary entry's words in any order within a sentence (labels, synonyms, members,
contexts: :func:`~._matching.find_matches`): where a message has them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ._vocabulary import Entry, UnorderedRow

Keyed = tuple[int, int, tuple[int, ...], int, Entry]
"""a match found, ``(-length, -priority, tokens, number, entry)``: its place in the order -
longest, then strongest, then first, then found first (numbered as found: a plain sort, no
key) - and its entry (a :class:`~._matching.Match` is made only for the matches kept)"""


def add_unordered(
    entries: Sequence[UnorderedRow],
    by_first: Mapping[str, Sequence[int]],
    firsts: Iterable[str],
    at: Mapping[str, Sequence[int]],
    sentence_of: Sequence[int],
    raw: list[Keyed],
    singles: list[tuple[int, int, Entry]],
) -> None:
    """The matches of the unordered ``entries`` (their :data:`~._vocabulary.UnorderedRow`) whose
    first stem is one of ``firsts`` (the message's; ``by_first``: stem -> the places in
    ``entries`` of those that start with it, in order): for each sentence holding all an entry's
    words, in any order, the first token of each word. Added to ``raw`` numbered by their
    entry's place on from its length (a plain sort then keeps the entries' order, whatever order
    ``firsts`` comes in: matches tie on their tokens, and an entry's own are on other tokens),
    and the one-word ones to ``singles`` as ``(-priority, token, entry)`` (in the entries' order
    for each token).

    ``at``: stem -> the indexes of the tokens with that stem, in order (what a scan of the
    tokens would meet first comes first); ``sentence_of``: each token's sentence, in order
    (a message's sentences are). Only the sentences of the entry's first word are looked
    at, from its tokens (no other can hold all its words; every sentence was, before: most
    messages have two or three, an entry's first word is in one): with the sort keys made
    in C, the matches of the 723 readings of the first 80 groups of a built benchmark
    (find_matches and what parse_message does with them) 200.3 to 188.3 million
    instructions. Written out for all the entries in one call (an entry's call, its list of
    matches and a loop over it were about a tenth of find_matches), two-word entries apart
    (most: no list of tokens made); the plain scan it replaced is in the tests. The entries
    are taken stem by stem, not gathered into a list and sorted first."""
    numbered = len(raw)
    for first_stem in firsts:
        for k in by_first[first_stem]:
            # (an entry's fields unpacked from its row at once: :data:`UnorderedRow`)
            wanted, last, size, rank, entry = entries[k]
            # most entries whose first word a message has miss another: screened by their last
            # word alone (one look-up, not a loop over their words); the few that pass and miss
            # a word in between find nothing below
            if last not in at:
                continue
            previous = -1  # the sentence of the last first word looked at
            if size == 1:  # (none of a vocabulary's: they have two content words or more)
                for first in at[wanted[0]]:
                    if sentence_of[first] != previous:
                        previous = sentence_of[first]
                        singles.append((rank, first, entry))
                continue
            if size == 2:  # (most entries: no list of tokens made)
                seconds = at[wanted[1]]
                for first in at[wanted[0]]:
                    sentence = sentence_of[first]
                    if sentence == previous:
                        continue  # (its first word's first token in the sentence is taken)
                    previous = sentence
                    for hit in seconds:
                        if sentence_of[hit] == sentence and hit != first:
                            pair = (first, hit) if first < hit else (hit, first)
                            raw.append((-2, rank, pair, numbered + k, entry))
                            break
                continue
            rest = wanted[1:]
            for first in at[wanted[0]]:
                sentence = sentence_of[first]
                if sentence == previous:
                    continue
                previous = sentence
                indexes = [first]
                for want in rest:
                    for hit in at.get(want, ()):
                        if sentence_of[hit] == sentence and hit not in indexes:
                            indexes.append(hit)
                            break
                    else:
                        break
                else:
                    indexes.sort()
                    raw.append((-size, rank, tuple(indexes), numbered + k, entry))
