"""What the request reader takes from a message's text alone, remembered across groups.

A message's tokens, the values it writes, its tokens' stems and its layout depend on its text
alone (:func:`_tokens_and_values`, :func:`read_text`), and so do the phrase patterns found in
the message written with tags (:mod:`._phrase_hits`): agents send the same words in many
groups of a benchmark, so the last read are kept. :func:`~._request.read_request` reads the
rest against the task's vocabulary.
"""

from __future__ import annotations

import datetime as _dt
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from .._memo import TextMemo, remember
from . import _words as _W
from ._matching import _END, _START, TokenStems
from ._tagging import _ASKED, _ENDED, Layout
from ._words import (
    _SENTENCE_ENDS,
    FoundValue,
    Token,
    _ask,
    _canonical_periods,
    _marked,
    _only_spaces,
    _plain,
    _read_raw_tokens,
    _tokens_by_spaces,
    scan_values,
    tokenize,
)

TEXTS_KEPT = 2048
"""messages whose tokens and values are remembered (the last read). Agents write the same
messages in many groups of a benchmark (their templates name a scenario library's facts and
contexts): in the minimum-rounds search over a 1,000-group build, 58% of the messages read
had been read before, in another group. With 2,048 texts kept, 56% were found here; with
1,024, 50%; with 128, 3%."""
TEXT_CHARACTERS_KEPT = 400_000
"""the characters of the messages whose tokens are kept, in all: what is kept of a message
grows with it, about 45-55 bytes a character (measured with tracemalloc: 12.0 kB for a
message of 250 characters, 86.5 kB for 2,000; the stems' tokens and the layout kept with the
tokens since round 23 added about a half to the 8.0 and 68.4 kB before), so at most about
22 MB"""
LONGEST_TEXT_KEPT = 2_000
"""a longer message's tokens are not kept (the built-in agents' messages have up to about
500 characters; a model's long message is rarely sent twice)"""


_TextReading = tuple[
    tuple[Token, ...],
    tuple[tuple[FoundValue, tuple[int, ...]], ...],
    TokenStems,
    frozenset[int],
    Layout,
]
"""What a message's text alone gives the reader (:func:`_read_tokens_and_values`):
``(tokens, found, stems, dates, layout)``, its tokens, the values it writes with their
tokens, its :data:`~._matching.TokenStems`, the tokens of its dates (a date's words are the
date: no name or context) and its :data:`~._tagging.Layout`. Exact tuples all through,
no list and no named tuple (but a value's own :class:`FoundValue`): the text memo keeps them
across groups, and the collector walks a named tuple or a list for as long as it is kept,
an exact tuple of strings and numbers only until its first collections (a tuple holding a
dict or a frozenset stays tracked: this one and its stems'). The 601 texts kept after the
readings of the first 80 groups of a built benchmark and two full collections: 36,447
tracked objects before (tokens, lists, named tuples), 4,205 since, two for each text and
the rest its values'."""


def _read_tokens_and_values(text: str) -> _TextReading:
    """The tokens of a message, the values it writes (with their tokens), the tokens' stems
    (:data:`TokenStems`), the tokens of its dates and how it is written (:data:`Layout`).
    They depend on the text alone, and an
    agent sends one message to several colleagues and the same words in many tasks (the
    built-in agents: 46 distinct messages in 1,416 readings of the careful agent), so the
    last are remembered (:func:`_tokens_and_values`)."""
    tokens, token_stems, layout = read_text(text)
    values = scan_values(text)
    kept_found: tuple[tuple[FoundValue, tuple[int, ...]], ...] = ()
    dates = _NO_DATES
    if values:  # (546 of the 601 texts of the first 80 built groups write a number)
        # (:func:`~._matching.value_tokens` written out, each value's tokens made a tuple at
        # once, a value of one token given its shared place, and the dates' tokens gathered
        # in the same loop: 799 of the 806 values of those texts are one token's digits;
        # with scan_values' shortcuts, reading the 601 texts 118.2 to 109.8 million
        # instructions, the first pass over those groups about 8 million less)
        kept = []
        dated: list[int] = []
        for value in values:
            low = bisect_right(tokens, value.start, key=_END)
            high = bisect_left(tokens, value.end, low, key=_START)
            if low < high:
                # (a shared place while there is one: :data:`_ONE_PLACE` holds 1,024)
                one = high == low + 1 and low < 1024
                places = _ONE_PLACE[low] if one else tuple(range(low, high))
                kept.append((value, places))
                if isinstance(value.value, _dt.date):
                    dated += places
        kept_found = tuple(kept)
        if dated:  # (a frozenset is tracked for good: the empty one is shared)
            dates = frozenset(dated)
    return (tuple(tokens), kept_found, token_stems, dates, layout)


def stems_and_layout(tokens: Sequence[Token]) -> tuple[TokenStems, Layout]:
    """:func:`~._matching.token_stems_of` and :func:`~._tagging.layout_of` the tokens, in one
    pass over them: what
    every new message's text gives the reader (most of a benchmark's messages are new, each
    a few dozen tokens). One loop costs less than the two, and the columns the first made
    with ``zip(*tokens)``: 54 against 62 million instructions for the 601 messages of the
    first 80 groups of a built benchmark. A stem met first is looked for with ``in`` (no
    call) and given a shared place (:data:`_ONE_PLACE`, no tuple made): 60.2 to 53.8
    million instructions for the same messages. Building these as the tokenizer makes the
    tokens, in its loop (no second loop), was measured and does not pay: the tokenizer's
    loop with the columns cost as much as the two loops (92.4 against 92.4 million for the
    478 of those messages it read alone, with no piece of the raw pattern and no period
    rewritten)."""
    stems: list[str] = []
    correctable: list[int] = []
    at: dict[str, tuple[int, ...]] = {}
    repeated: dict[str, list[int]] = {}  # the places of the stems met more than once
    sentence_of: list[int] = []
    flat: list[str] = []
    flat_at: list[int] = []
    last_sentence, last_question = 0, False  # (the previous token's)
    one_place = _ONE_PLACE if len(tokens) <= len(_ONE_PLACE) else [(i,) for i in range(len(tokens))]
    for i, (word, word_stem, _, _, _, sentence, question, clause) in enumerate(tokens):
        if i:
            if sentence != last_sentence:
                flat += _ASKED if last_question else _ENDED
            elif clause:
                flat.append("|")
        flat_at.append(len(flat))
        flat.append(word)
        last_sentence, last_question = sentence, question
        stems.append(word_stem)
        sentence_of.append(sentence)
        # (tuples, not lists: kept with the text, a list stays tracked by the collector for
        # good, a tuple of numbers not after its first collection; most stems come once, a
        # repeated one's places are gathered in a list and made a tuple once, after the
        # loop: a tuple grown a place at a time was quadratic in a stem's repeats)
        if word_stem not in at:
            at[word_stem] = one_place[i]  # (i,)
        else:
            more = repeated.get(word_stem)
            if more is None:
                repeated[word_stem] = [*at[word_stem], i]
            else:
                more.append(i)
        if len(word) >= 6 and not word.isdigit():
            correctable.append(i)
    if tokens:
        flat += _ASKED if last_question else _ENDED
    for word_stem, places in repeated.items():
        at[word_stem] = tuple(places)
    token_stems = (
        tuple(stems),
        tuple(correctable),
        at,
        tuple(sentence_of),
    )
    layout = (tuple(flat), tuple(flat_at))
    return token_stems, layout


_ONE_PLACE = tuple([(i,) for i in range(1024)])
"""the places of a stem met once, ``(i,)``, made once for the messages of up to 1,024 tokens
(a message's stems mostly come once: 13,400 of the 16,490 tokens of the 601 messages of the
first 80 groups of a built benchmark; a tuple made for each is an allocation and the
collector's work; a longer message makes its own). Shared: a tuple is never changed, and one
of numbers is let go by the collector at its first collection, as one made for the message
is."""
_NO_DATES: frozenset[int] = frozenset()
_new_tuple = tuple.__new__
_NO_MARKS = ""  # (a plain word's marks after it: none)


HEADS_KEPT = 256
"""texts' heads whose reading is kept or seen, the last (:func:`read_text`)"""
LONGEST_HEAD = 200
"""a head kept ends before this character"""
_Notes = tuple[
    list[Token], list[int], list[str], list[int], dict[str, tuple[int, ...]],
    dict[str, list[int]], list[int], list[str], list[int],
]  # fmt: skip
""":func:`read_text`'s notes as its loop (:func:`_read_pieces`) adds to them: the tokens, the
periods (the tokens whose word is one), the stems, the typo candidates, the stems' places, the
repeated stems' places, the sentences of the tokens of the sentences ended, the layout and the
tokens' places in it (those before the place's ``begun``)"""
_Place = tuple[int, int, int, bool]
"""where :func:`_read_pieces` is: the sentence, its first token, the first token of the
sentence or clause read so far, and whether a clause begins at the next token"""
_AT_START: _Place = (0, 0, 0, False)
_Head = tuple[
    tuple[
        tuple[Token, ...], tuple[int, ...], tuple[str, ...], tuple[int, ...],
        dict[str, tuple[int, ...]], tuple[tuple[str, tuple[int, ...]], ...], tuple[int, ...],
        tuple[str, ...], tuple[int, ...],
    ],
    _Place,
]  # fmt: skip
""":data:`_Notes` and :data:`_Place` at the end of a text's head, kept: exact tuples but the
places, a dict (the repeated stems' places as pairs of tuples)"""
_HEADS: dict[str, _Head | tuple[()]] = {}
"""a text's head (up to its first ": ", or its first three words, with the space after) ->
the notes at its end (:data:`_Head`), or () for a head seen once"""


def read_text(text: str) -> tuple[list[Token], TokenStems, Layout]:
    """:func:`~._words.tokenize` the text and :func:`stems_and_layout` its tokens, the two in
    one loop for a text of ASCII whose only white space is " " (the built-in agents'
    messages): the tokenizer's loop over the pieces between its spaces
    (:func:`~._words._tokens_by_spaces`, written out again in :func:`_read_pieces`) notes each
    token's stem, word and place as it makes it, and a sentence's or a clause's mark in the
    layout where it reads the mark, so no second loop unpacks the tokens; the tokens' places
    in the layout and their sentences are noted a sentence or a clause at a time (a
    ``range``, a repeated list). Any other text, and one whose period is written in a piece
    the raw pattern reads ("(FY26", "2026-27": mostly rewritten, and notes of rewritten
    tokens made again), is read in the two steps (from that piece on, tokens alone). Over the
    601 new texts of the first 80 groups of a built benchmark (`_read_tokens_and_values`,
    word memos warm): 139.8 to 131.6 million instructions, with the typo candidates noted in
    the plain words' memo and the fractions of numbers looked up without
    ``Fraction.__bool__``; the first pass over those groups 916.4-917.6 to 904.9-905.7
    million. A piece the raw pattern reads ("fit-out", in 123 of those texts) is noted after
    it (:func:`_place_tokens`).

    What the loop has read up to a text's first ": " (its head, with that space), or up to
    its third space, depends on that head alone, and the agents' templates open many texts
    with one head ("For every candidate, please send your records of: " 361 of those 601,
    "Please send the " 80): the loop's notes at the end of a head seen twice are kept
    (:data:`_HEADS`), and a text whose head is kept is read from there on, from copies of
    them (the longer head first). read_text over the first pass's texts, 93.4 to 85.9
    million instructions; the pass 847.8-849.0 to 839.8-840.5 million. A text's tail after
    its last ". " kept alike ("I need exactly these contexts and exact values.", as many)
    does not pay: its tokens' places and sentences must be moved, a new tuple a token, which
    costs what reading them does (with heads at ": " alone, 87.0 to 89.1 million)."""
    if len(text) > len(_ONE_PLACE) or not text.isascii() or not _only_spaces(text):
        # (a token has a character at least: a text of up to 1,024 has as many tokens at
        # most, and each a shared place of its own)
        plainly = tokenize(text)
        return (plainly, *stems_and_layout(plainly))
    colon = text.find(": ")
    seen_colon = _HEADS.get(text[: colon + 2]) if 0 <= colon < LONGEST_HEAD else None
    at_place: _Place | None
    if seen_colon:  # (most texts that open so: read from there)
        notes, at_place = _copied(seen_colon)
        start = colon + 2
    else:
        # (a head of three words, when shorter: most texts open with one of a few)
        short = text.find(" ", text.find(" ", text.find(" ") + 1) + 1)
        if not 0 <= short < (colon if 0 <= colon < LONGEST_HEAD else LONGEST_HEAD):
            short = -1
        seen_short = _HEADS.get(text[: short + 1]) if short >= 0 else None
        if seen_short:
            notes, at_place = _copied(seen_short)
            start = short + 1
        else:
            notes = ([], [], [], [], {}, {}, [], [], [])
            at_place, start = _AT_START, 0
            if short >= 0:
                at_place = _read_pieces(text, 0, short, notes, at_place)
                if at_place is None:
                    return (notes[0], *stems_and_layout(notes[0]))
                start = short + 1
                _keep_head(text[:start], seen_short, notes, at_place)
        if 0 <= colon < LONGEST_HEAD:
            at_place = _read_pieces(text, start, colon + 1, notes, at_place)
            if at_place is None:
                return (notes[0], *stems_and_layout(notes[0]))
            start = colon + 2
            _keep_head(text[:start], seen_colon, notes, at_place)
    at_place = _read_pieces(text, start, len(text), notes, at_place)
    tokens, periods, stems, correctable, at, repeated, sentence_of, flat, flat_at = notes
    if at_place is None:
        return (tokens, *stems_and_layout(tokens))
    _, first, begun, _ = at_place
    if periods:
        rewritten = _canonical_periods(tokens, periods)
        if rewritten != tokens:
            return (rewritten, *stems_and_layout(rewritten))
    if len(tokens) > first:  # (the last sentence, with no mark after it)
        _end_sentence(tokens, len(tokens), begun, sentence_of, flat, flat_at)
    for word_stem, places in repeated.items():
        at[word_stem] = tuple(places)
    token_stems = (tuple(stems), tuple(correctable), at, tuple(sentence_of))
    return tokens, token_stems, (tuple(flat), tuple(flat_at))


def _copied(kept: _Head) -> tuple[_Notes, _Place]:
    """The notes kept at the end of a head (:data:`_HEADS`), as the lists and dicts
    :func:`_read_pieces` adds to (copies: they are added to), and its place."""
    (tokens, periods, stems, correctable, at, repeated, sentence_of, flat, flat_at), at_place = kept
    notes: _Notes = (
        [*tokens], [*periods], [*stems], [*correctable], at.copy(),
        {word_stem: [*places] for word_stem, places in repeated} if repeated else {},
        [*sentence_of], [*flat], [*flat_at],
    )  # fmt: skip
    return notes, at_place


def _keep_head(head: str, seen: _Head | tuple[()] | None, notes: _Notes, at_place: _Place) -> None:
    """Keep the notes :func:`_read_pieces` made of a text's ``head`` (:data:`_HEADS`), a head
    ``seen`` before (else note it as seen: most texts' first ": " ends a head of their own)."""
    if seen is None:
        remember(_HEADS, head, (), HEADS_KEPT)
        return
    tokens, periods, stems, correctable, at, repeated, sentence_of, flat, flat_at = notes
    kept: _Head = (
        (
            tuple(tokens), tuple(periods), tuple(stems), tuple(correctable), at.copy(),
            tuple([(word_stem, tuple(places)) for word_stem, places in repeated.items()]),
            tuple(sentence_of), tuple(flat), tuple(flat_at),
        ),
        at_place,
    )  # fmt: skip
    remember(_HEADS, head, kept, HEADS_KEPT)


def _read_pieces(
    text: str, start: int, stop: int, notes: _Notes, at_place: _Place
) -> _Place | None:
    """:func:`read_text`'s loop over the pieces of ``text[start:stop]`` between spaces
    (``start`` after a space or at the text's start, ``stop`` at a space or the text's end),
    adding to the ``notes`` from the place given (:data:`_Place`: the sentence, its first
    token ``first``, the first token of the sentence or clause read so far ``begun``, whose
    tokens before it have their places in the layout noted, and the clause flag); the place
    after. None when a piece the raw pattern reads writes a period: then the notes' tokens
    are the whole text's (:func:`~._words.tokenize`'s) and no other note is made."""
    # (the notes and place unpacked once a call into locals: the loop reads them a token at a
    # time, and a call reads a head, or the rest of a text)
    tokens, periods, stems, correctable, at, repeated, sentence_of, flat, flat_at = notes
    sentence, first, begun, clause = at_place
    # (as _tokens_by_spaces: see there; each token's stem, word and place noted as it is made,
    # written out for a plain word and a word with marks, as the tokenizer's two are)
    plain = _W._PLAIN  # (the tokenizer's memos, read from there: a test may set others)
    pieces = _W._MARKED
    one_place = _ONE_PLACE
    for chunk in text[start:stop].split(" "):
        end = start + len(chunk)
        known = plain.get(chunk)
        if known is not None:
            # (most pieces: a word alone, read before. Its token and notes written out here,
            # as below but with no marks and no clause mark after it: the first pass over 80
            # built groups reads 12,896 of its 16,323 pieces so)
            word, word_stem, capitalised, period, long = known
            i = len(tokens)
            if period:
                periods.append(i)
            if clause:  # (a clause's first token: never a sentence's first)
                flat_at += range(len(flat) - i + begun, len(flat))
                flat.append("|")
                begun = i
                tokens.append((word, word_stem, start, end, capitalised, sentence, False, True))
                clause = False
            else:
                tokens.append((word, word_stem, start, end, capitalised, sentence, False, False))
            flat.append(word)
            stems.append(word_stem)
            if word_stem not in at:
                at[word_stem] = one_place[i]
            else:
                more = repeated.get(word_stem)
                if more is None:
                    repeated[word_stem] = [*at[word_stem], i]
                else:
                    more.append(i)
            if long:
                correctable.append(i)
            start = end + 1
            continue
        if chunk.isalpha() or chunk.isdigit():
            known = _plain(chunk)
        if known is not None:  # (a word alone, read for the first time)
            word, word_stem, capitalised, period, long = known
            word_at, word_end, marks = start, end, _NO_MARKS
        elif chunk == "-":
            clause = len(tokens) > first
            start = end + 1
            continue
        elif chunk:
            marked = pieces.get(chunk)
            if marked is None:
                marked = _marked(chunk)
            if not marked:
                made, rewrites = len(tokens), len(periods)
                sentence, first, clause = _read_raw_tokens(
                    text, start, end, tokens, periods, sentence, first, clause
                )
                if len(periods) > rewrites:
                    # ("FY26", "2026-27", "(Q1": a period so written is mostly rewritten, and
                    # the notes of the tokens are then made again: the rest is read as
                    # tokens alone, and the notes made of the rewritten tokens)
                    _tokens_by_spaces(text, tokens, periods, end + 1, sentence, first, clause)
                    tokens[:] = _canonical_periods(tokens, periods)
                    return None
                begun = _place_tokens(
                    tokens, made, sentence, begun, stems, correctable, at, repeated,
                    sentence_of, flat, flat_at,
                )  # fmt: skip
                start = end + 1
                continue
            word, word_stem, capitalised, period, long, lead, size, marks = marked
            word_at = start + lead
            word_end = word_at + size
        else:  # (between two spaces)
            start = end + 1
            continue
        # the word's token and its notes (a plain word's and a word with marks' alike)
        i = len(tokens)
        if period:
            periods.append(i)
        if clause:  # (a clause's first token: never a sentence's first)
            flat_at += range(len(flat) - i + begun, len(flat))
            flat.append("|")
            begun = i
        tokens.append((word, word_stem, word_at, word_end, capitalised, sentence, False, clause))
        clause = False
        flat.append(word)
        stems.append(word_stem)
        if word_stem not in at:
            at[word_stem] = one_place[i]
        else:
            more = repeated.get(word_stem)
            if more is None:
                repeated[word_stem] = [*at[word_stem], i]
            else:
                more.append(i)
        if long:
            correctable.append(i)
        if marks:  # (not a loop over none: a plain word's iterator costs as much as its notes)
            for mark in marks:
                if mark == ":":
                    clause = len(tokens) > first
                elif mark in _SENTENCE_ENDS:
                    ended = len(tokens)
                    if ended > first:  # (a sentence with tokens ends: its mark)
                        if mark == "?":
                            _ask(tokens, first)
                        flat_at += range(len(flat) - ended + begun, len(flat))
                        sentence_of += [sentence] * (ended - first)
                        flat += _ASKED if mark == "?" else _ENDED
                        begun = ended
                    sentence += 1
                    first = ended
                    clause = False
        start = end + 1
    return sentence, first, begun, clause


def _end_sentence(
    tokens: list[Token],
    ended: int,
    begun: int,
    sentence_of: list[int],
    flat: list[str],
    flat_at: list[int],
) -> None:
    """:func:`read_text`'s notes for a sentence that ends before token ``ended`` (its tokens
    from ``len(sentence_of)`` on; those from ``begun`` have no place noted yet)."""
    last = tokens[ended - 1]
    flat_at += range(len(flat) - ended + begun, len(flat))
    sentence_of += [last[5]] * (ended - len(sentence_of))
    flat += _ASKED if last[6] else _ENDED


def _place_tokens(
    tokens: list[Token],
    made: int,
    sentence: int,
    begun: int,
    stems: list[str],
    correctable: list[int],
    at: dict[str, tuple[int, ...]],
    repeated: dict[str, list[int]],
    sentence_of: list[int],
    flat: list[str],
    flat_at: list[int],
) -> int:
    """:func:`read_text`'s notes of the tokens from ``made`` on, read by the raw pattern from
    one piece (sentences may end among them and after them: ``sentence`` is the number read
    after them); the first token of the sentence or clause read after them."""
    for i in range(made, len(tokens)):
        word, word_stem, _, _, _, token_sentence, _, clause = tokens[i]
        if len(sentence_of) < i and token_sentence != tokens[i - 1][5]:
            _end_sentence(tokens, i, begun, sentence_of, flat, flat_at)
            begun = i
        elif clause and i:
            flat_at += range(len(flat) - i + begun, len(flat))
            flat.append("|")
            begun = i
        flat.append(word)
        stems.append(word_stem)
        if word_stem not in at:
            at[word_stem] = _ONE_PLACE[i]
        else:
            more = repeated.get(word_stem)
            if more is None:
                repeated[word_stem] = [*at[word_stem], i]
            else:
                more.append(i)
        if len(word) >= 6 and not word.isdigit():
            correctable.append(i)
    ended = len(tokens)
    if len(sentence_of) < ended and tokens[ended - 1][5] != sentence:
        _end_sentence(tokens, ended, begun, sentence_of, flat, flat_at)
        begun = ended
    return begun


_tokens_and_values = TextMemo(
    _read_tokens_and_values, TEXTS_KEPT, TEXT_CHARACTERS_KEPT, LONGEST_TEXT_KEPT
)
