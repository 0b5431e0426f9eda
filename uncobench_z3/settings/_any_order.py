"""A vocabulary entry's words in any order within a sentence (labels, synonyms, members,
contexts: :func:`~._matching.find_matches`): where a message has them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ._vocabulary import Entry, EntryRead, UnorderedRow

Keyed = tuple[int, int, int, tuple[int, ...], int, EntryRead]
"""a match found, ``(-length, -priority, first token, tokens, number, (entry, kind, ref,
weak))``: its place in the order - longest, then strongest, then first, then found first
(numbered as found: a plain sort, no key) - and its entry with what a match of it holds
(:data:`~._vocabulary.EntryRead`, its row's: a :class:`~._matching.Match` is made only for the
matches kept). The first token comes before the tokens (the same order: it is their first),
so that most ties of length and priority - most comparisons of the sort - are decided by an
int, not by two comparisons of tuples (equal? less?)."""


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
    first stem is one of ``firsts`` (the message's; ``by_first``: stem -> the places in ``entries``
    of those that start with it, in order): for each sentence holding all an entry's words, in any
    order, the first token of each word. Added to ``raw`` numbered by their entry's place on from
    its length (a plain sort then keeps the entries' order, whatever order ``firsts`` comes in:
    matches tie on their tokens, and an entry's own are on other tokens), and the one-word ones to
    ``singles`` as ``(-priority, token, entry)`` (in the entries' order for each token).

    ``at``: stem -> the indexes of the tokens with that stem, in order (what a scan of the tokens
    would meet first comes first); ``sentence_of``: each token's sentence, in order (a message's
    sentences are). Only the sentences of the entry's first word are looked at, from its tokens (no
    other can hold all its words; every sentence was, before: most messages have two or three, an
    entry's first word is in one): with the sort keys made in C, the matches of the 723 readings of
    the first 80 groups of a built benchmark (find_matches and what parse_message does with them)
    200.3 to 188.3 million instructions. Written out for all the entries in one call (an entry's
    call, its list of matches and a loop over it were about a tenth of find_matches), two-word
    entries apart (most: no list of tokens made); the plain scan it replaced is in the tests. The
    entries are taken stem by stem, not gathered into a list and sorted first. Entries of three and
    four words are written out too (of the 3,476 entries the 723 readings look at past their last
    word, 1,414 have two words, 1,126 three, 713 four): no list of tokens, no slice of the words,
    no sort of a list (with :data:`~._vocabulary.EntryRead` and the word-for-word entries of three
    and four words compared word by word, the 723 calls of find_matches_and_doubles, warm: 113.1 to
    104.4 million instructions; the first pass over 80 built groups: 896.8-897.7 to
    888.4-889.3).

    A match of a *twinned* entry (its row says so: :func:`~._vocabulary._has_twin`) on the tokens of
    its words in its own order, one after another, is left out: its word-for-word twin matches
    those tokens too and comes first in the order, so it is never kept (the same thing again on
    the same words, or on words already taken). Most unordered matches were these (1,939 of the
    3,652 found by the first pass's 723 readings over 80 built groups, none of them kept): the 723
    calls of find_matches_and_doubles, warm, 104.4 to 97.0 million instructions; the first pass
    849.1-849.9 to 841.3-842.1."""
    numbered = len(raw)
    for first_stem in firsts:
        for k in by_first[first_stem]:
            # (an entry's fields unpacked from its row at once: :data:`UnorderedRow`)
            wanted, last, size, rank, twinned, read = entries[k]
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
                        singles.append((rank, first, read[0]))
                continue
            if size == 2:  # (most entries: no list of tokens made)
                seconds = at[last]  # (its second word)
                for first in at[wanted[0]]:
                    sentence = sentence_of[first]
                    if sentence == previous:
                        continue  # (its first word's first token in the sentence is taken)
                    previous = sentence
                    for hit in seconds:
                        if sentence_of[hit] == sentence and hit != first:
                            if twinned and hit == first + 1:
                                break  # its word-for-word twin's match (see the docstring)
                            pair = (first, hit) if first < hit else (hit, first)
                            raw.append((-2, rank, pair[0], pair, numbered + k, read))
                            break
                continue
            if size == 3:  # (most of the longer ones: written out, no list of tokens made)
                middles = at.get(wanted[1])
                if middles is None:
                    continue  # (its middle word is not in the message: no match)
                thirds = at[last]
                for first in at[wanted[0]]:
                    sentence = sentence_of[first]
                    if sentence == previous:
                        continue
                    previous = sentence
                    for second in middles:
                        if sentence_of[second] == sentence and second != first:
                            break
                    else:
                        continue
                    for third in thirds:
                        if sentence_of[third] == sentence and third != first and third != second:
                            break
                    else:
                        continue
                    if twinned and second == first + 1 and third == first + 2:
                        continue  # its word-for-word twin's match
                    # the three in order (not a list sorted and made a tuple)
                    low, high = (first, second) if first < second else (second, first)
                    if third > high:
                        three = (low, high, third)
                    elif third > low:
                        three = (low, third, high)
                    else:
                        three = (third, low, high)
                    raw.append((-3, rank, three[0], three, numbered + k, read))
                continue
            if size == 4:  # (the next most: written out as well, the four put in order at once)
                at_second, at_third = at.get(wanted[1]), at.get(wanted[2])
                if at_second is None or at_third is None:
                    continue
                fourths = at[last]
                for first in at[wanted[0]]:
                    sentence = sentence_of[first]
                    if sentence == previous:
                        continue
                    previous = sentence
                    for second in at_second:
                        if sentence_of[second] == sentence and second != first:
                            break
                    else:
                        continue
                    for third in at_third:
                        if sentence_of[third] == sentence and third != first and third != second:
                            break
                    else:
                        continue
                    for fourth in fourths:
                        if (
                            sentence_of[fourth] == sentence
                            and fourth != first
                            and fourth != second
                            and fourth != third
                        ):
                            break
                    else:
                        continue
                    if (
                        twinned
                        and second == first + 1
                        and third == first + 2
                        and fourth == first + 3
                    ):
                        continue  # its word-for-word twin's match
                    four = tuple(sorted((first, second, third, fourth)))
                    raw.append((-4, rank, four[0], four, numbered + k, read))
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
                    if twinned and indexes == list(range(first, first + size)):
                        continue  # its word-for-word twin's match
                    indexes.sort()
                    raw.append((-size, rank, indexes[0], tuple(indexes), numbered + k, read))
