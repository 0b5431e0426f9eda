"""The derivation of :mod:`uncobench_z3.settings._touches` from the intents' patterns: which
pieces of a pattern's matches may lie inside a word of a name (a regex analysis kept out of the
package, whose import reads the table it gives: deriving it took about 22 ms).
tests/test_name_touches.py derives the table again and compares it with the package's; after
changing a pattern, write it again with ``python -m tests.name_pieces``."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from uncobench_z3.settings import _touches
from uncobench_z3.settings._phrase_hits import _INTENTS
from uncobench_z3.settings._screen import _BOUNDARY, _WORD, C, _parser, _tree

# A message's two writings (:func:`~uncobench_z3.settings._phrase_hits.phrase_hits`) differ only
# where the second writes a candidate's or a one-word fact's name as its own words, the first as a
# tag: the two are the same stretches of text around some name regions (the second's holding only
# the names' words; the first's only their tags, "zcand" or "zfact", or nothing). A pattern that
# misses the tagged text can match the other only where the regex engine reads a character of a
# name: a match that reads none reads the same characters in the tagged text (``^`` and ``$`` at the
# same ends, ``\b`` at its edges next to a name's word character or a tag's). For a pattern whose
# matches are a known set of strings, such a match has a piece (a run between its spaces) inside a
# name's word, and only at that word's start or end when a space or a ``\b`` next to a word
# character stands there. Runs of any words (``(?: \w+){0,3}`` and the like, from none), of word
# characters next to a piece (``\w*``) and of anything but "|" (``[^|]*``) are read as marks: a name
# read whole by a run of words or of anything is read as its tags in the tagged text (fewer words,
# none of them "|"), and word characters are in the word of the piece they are next to; two runs
# with no letter between, a run at an end of a match, a back-reference, another class or
# look-around: always searched.

_MOST_MATCHED = 2048
"""the largest set of strings a part of a pattern is read as (:func:`_matched`)"""
_MOST_REPEATS = 8
"""the largest bounded repeat read (:func:`_matched_part`)"""


def _matched(items: list[tuple[object, Any]]) -> frozenset[str] | None:
    """Every string a run of parts can match, ``\\b`` written as :data:`_BOUNDARY` where it
    holds and ``^``/``$`` as nothing; None when that is not a known set of at most
    :data:`_MOST_MATCHED` (anything not understood: a class, a lookaround, a reference)."""
    run: frozenset[str] = frozenset([""])
    for op, arg in items:
        part = _matched_part(op, arg)
        if part is None or len(run) * len(part) > _MOST_MATCHED:
            return None
        run = frozenset(a + b for a in run for b in part)
    return run


def _matched_part(op: object, arg: Any) -> frozenset[str] | None:
    if op is C.LITERAL:
        return frozenset([chr(arg)])
    if op is C.IN and all(o is C.LITERAL for o, _ in arg):
        return frozenset(chr(c) for _, c in arg)
    if op is C.AT:
        if arg is C.AT_BOUNDARY:
            return frozenset([_BOUNDARY])
        ends = (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_END, C.AT_END_STRING)
        return frozenset([""]) if arg in ends else None
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, items = arg
        return None if add_flags or del_flags else _matched(list(items))
    if op is C.BRANCH:
        found: set[str] = set()
        for branch in arg[1]:
            strings = _matched(list(branch))
            if strings is None:
                return None
            found |= strings
        return frozenset(found) if len(found) <= _MOST_MATCHED else None
    if op is C.ASSERT and arg[0] == 1:
        # a look-ahead that reads no letter or digit reads nothing of a name (its words are
        # letters and digits): what it reads is the same in the tagged text
        ahead = _matched(list(arg[1]))
        if ahead is None or any(_WORD.search(a) or _MARKS_READ.intersection(a) for a in ahead):
            return None
        return frozenset([""])
    if op is C.MAX_REPEAT or op is C.MIN_REPEAT:
        low, high, items = arg
        items = list(items)
        wild = _wild(low, high, items)
        if wild is not None:
            return wild
        once = _matched(items)
        if once is None or high > _MOST_REPEATS:
            return None
        found = set()
        run: set[str] = {""}
        for n in range(high + 1):
            if n >= low:
                found |= run
            if n < high:
                run = {a + b for a in run for b in once}
                if len(run) > _MOST_MATCHED:
                    return None
        return frozenset(found) if len(found) <= _MOST_MATCHED else None
    return None


_WORDS_MARK = "\x03"
"""stands for one or more whole words of letters and digits (a repeat from none of " " and a
word, or of a word and " "): where a name may be read whole, its tags read in its place"""
_IN_WORD_MARK = "\x04"
"""stands for word characters next to a piece (``\\w*``): they are in that piece's word"""
_ANY_MARK = "\x05"
"""stands for any characters but "|" (``[^|]*``): where a name may be read whole"""
_MARKS_READ = frozenset([_WORDS_MARK, _IN_WORD_MARK, _ANY_MARK])
_RUNS = frozenset([_WORDS_MARK, _ANY_MARK])
_LETTERS = frozenset(map(ord, "abcdefghijklmnopqrstuvwxyz"))


def _word_class(items: list[tuple[object, Any]]) -> bool:
    """Whether ``items`` is one class that takes every lower-case letter (every tag's) and
    no space: ``\\w`` or a class with the range a-z."""
    if len(items) != 1 or items[0][0] is not C.IN:
        return False
    taken = items[0][1]
    if any(o is C.NEGATE for o, _ in taken):
        return False
    return any(
        (o is C.CATEGORY and a is C.CATEGORY_WORD)
        or (o is C.RANGE and a[0] <= ord("a") and a[1] >= ord("z"))
        for o, a in taken
    )


def _wild(low: int, high: int, items: list[tuple[object, Any]]) -> frozenset[str] | None:
    """What :func:`_matched` reads a repeat as when it is a run of any words, word
    characters or characters but "|" (the marks above); None when it is none of them."""
    unbounded = high == C.MAXREPEAT
    if unbounded and low <= 1 and _word_class(items):
        return frozenset([_IN_WORD_MARK])  # \w* or \w+
    if unbounded and low == 0 and items == [(C.NOT_LITERAL, ord("|"))]:
        return frozenset([_ANY_MARK])
    if low == 0 and len(items) == 2:
        space = (C.LITERAL, ord(" "))
        first, second = items
        word = first if second == space else second if first == space else None
        if word is not None and word[0] is C.MAX_REPEAT:
            w_low, w_high, w_items = word[1]
            if w_low == 1 and w_high == C.MAXREPEAT and _word_class(list(w_items)):
                return frozenset(["", " " + _WORDS_MARK if first == space else _WORDS_MARK + " "])
    return None


_Piece = tuple[str, bool, bool]
"""a run of a match between its spaces, if all letters and digits, and whether it starts and
ends a word of the text (after a space or a ``\\b`` before it; before one after it)"""


def name_pieces(pattern: re.Pattern[str]) -> frozenset[_Piece] | None:
    """The pieces of ``pattern``'s matches that may lie inside a word of letters and digits
    (:data:`_Piece`); None when the pattern must always be searched: its matches are not a
    known set (with runs of words or characters: the marks above), one is empty, one reads a
    character outside it (a ``\\b`` at an end next to a character that is not a word
    character), or a name may be read partly by a run."""
    if pattern.flags & ~re.UNICODE or _parser is None:
        return None
    try:
        tree = list(_tree(pattern.pattern))
        if len(tree) == 1 and tree[0][0] is C.BRANCH:  # (alternatives at the top: each)
            sequences = [list(branch) for branch in tree[0][1][1]]
        else:
            sequences = [tree]
        pieces: set[_Piece] = set()
        for items in sequences:
            if not _sequence_pieces(items, pieces):
                return None
    except Exception:  # a parse tree laid out otherwise (another Python): always searched
        return None
    return frozenset(pieces)


_LETTER_READ = "\x06"
"""stands for the letters or digits read before the place where a sequence's strings were
cut (:func:`_sequence_pieces`)"""
_MOST_CUT = 256
"""a sequence's strings are cut when they would be more"""


def _sequence_pieces(items: list[tuple[object, Any]], pieces: set[_Piece]) -> bool:
    """:func:`name_pieces` of the parts of a pattern one after another. Where their strings
    would be too many, they are cut at a space: the strings so far give their pieces, and
    the next are read after what each ended with after its last letter or digit."""
    run: frozenset[str] = frozenset([""])
    for op, arg in items:
        part = _matched_part(op, arg)
        if part is None:
            return False
        if len(run) * len(part) > _MOST_CUT:
            # (a piece cut in two gives two pieces, neither at the cut's side of its word:
            # each is in the word the whole is in)
            for string in run:
                if not _pieces_of(string, pieces, False):
                    return False
            run = frozenset(_tail(string) for string in run)
            if len(run) * len(part) > _MOST_MATCHED:
                return False
        run = frozenset(a + b for a in run for b in part)
    return all(_pieces_of(string, pieces, True) for string in run)


def _tail(string: str) -> str:
    """What a string cut at a space is read on with: :data:`_LETTER_READ` for the string
    up to its last letter or digit, and what follows it."""
    for k in range(len(string) - 1, -1, -1):
        if string[k].isalnum() or string[k] == _LETTER_READ:
            return _LETTER_READ + string[k + 1 :]
    return string


def _pieces_of(string: str, pieces: set[_Piece], whole: bool) -> bool:
    """Adds the pieces of one string :func:`_matched` gives to ``pieces`` (the start of a
    match's string, cut at a space, when not ``whole``); False when the pattern must always
    be searched (see :func:`name_pieces`)."""
    bare = string.strip(_BOUNDARY) if whole else string.lstrip(_BOUNDARY)
    literal = bare.replace(_BOUNDARY, "")
    for mark in _MARKS_READ:
        literal = literal.replace(mark, "")
    if not literal:
        return not whole and bare == ""  # an empty match, or one of marks alone
    first = string[0] != _LETTER_READ  # (the start of the match)
    if (first and bare[0] in _RUNS) or (whole and bare[-1] in _RUNS):
        return False  # a run of words or of anything at an end: it may read a name partly
    # (word characters at an end are in the word of the piece next to them)
    if first and string[0] == _BOUNDARY and not _word_read(bare[0]):
        return False  # a \\b that reads the character before the match
    if whole and string[-1] == _BOUNDARY and not _word_read(bare[-1]):
        return False  # ... or after it
    # between two runs that may read a name whole, a letter or a digit read as itself (a
    # name read by both would be read by it too)
    runs = [k for k, c in enumerate(bare) if c in (_WORDS_MARK, _ANY_MARK)]
    for a, b in itertools.pairwise(runs):
        if not any(c.isalnum() or c == _LETTER_READ for c in bare[a + 1 : b]):
            return False
    for k in runs:
        if bare[k] == _WORDS_MARK and (
            bare[k - 1] != " " or (k + 1 < len(bare) and bare[k + 1] != " ")
        ):
            return False  # (whole words only between spaces)
    for chunk in string.split(_ANY_MARK):
        parts = chunk.split(" ")
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if part == _WORDS_MARK:
                continue
            segments = part.replace(_LETTER_READ, _IN_WORD_MARK).split(_IN_WORD_MARK)
            if _IN_WORD_MARK in part and not any(seg.replace(_BOUNDARY, "") for seg in segments):
                return False  # word characters with no piece of the pattern's own
            for n, segment in enumerate(segments):
                core = segment.replace(_BOUNDARY, "")
                if not core.isalnum():  # (no other piece lies inside a word of letters and digits)
                    continue
                # a piece starts a word after a space, or after a \b before a letter (in a
                # word of letters and digits); not after word characters or any characters
                starts = n == 0 and (segment[0] == _BOUNDARY or i > 0)
                ends = n == len(segments) - 1 and (segment[-1] == _BOUNDARY or i < last)
                pieces.add((core, starts, ends))
    return True


def _word_read(c: str) -> bool:
    return c in (_IN_WORD_MARK, _LETTER_READ) or _WORD.match(c) is not None


def table() -> dict[str, tuple[str | None, ...]]:
    """The pieces of each intent's patterns, in order, as :mod:`._touches` writes them: a
    piece, "-" before it when it need not start a word, after it when it need not end one;
    None for a pattern always searched."""
    found = {}
    for name, inventory in _INTENTS:
        rows = []
        for phrase in inventory.phrases:
            pieces = name_pieces(phrase.pattern)
            rows.append(
                None
                if pieces is None
                else " ".join(
                    sorted(f"{'' if s else '-'}{core}{'' if e else '-'}" for core, s, e in pieces)
                )
            )
        found[name.upper()] = tuple(rows)
    return found


def module_text() -> str:
    """The text of :mod:`uncobench_z3.settings._touches` for :func:`table`."""
    out = [_touches.__doc__ and f'"""{_touches.__doc__}"""', ""]
    for name, rows in table().items():
        out.append(f"{name}: tuple[str | None, ...] = (")
        for row in rows:
            if row is None:
                out.append("    None,")
                continue
            if len(row) <= 93:  # (what fits on one line of 100)
                out.append(f'    "{row}",')
                continue
            chunks, line = [], ""
            for word in row.split():
                if line and len(line) + len(word) > 88:
                    chunks.append(line + " ")
                    line = word
                else:
                    line = f"{line} {word}" if line else word
            out += ["    (", *(f'        "{c}"' for c in [*chunks, line]), "    ),"]
        out.append(")")
    return "\n".join(out) + "\n"


def write_module() -> None:
    """Write :mod:`uncobench_z3.settings._touches` again (:func:`module_text`). The whole text
    is made before the file is opened: the package's import reads the table, so a shell's
    ``> _touches.py``, which empties the file first, left it empty and the derivation failing."""
    text = module_text()
    Path(_touches.__file__).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_module()
