"""Screening the phrase patterns: words a pattern cannot match without.

The reader tries some sixty phrase patterns on every message it reads (:mod:`._phrases`),
and most of them find nothing. A search that starts with ``\\b`` tries every position of the
text, while a look-up in the set of the text's words costs next to nothing: so each pattern
carries sets of words such that every match of it has a word of each set ("more" or "less",
and "precise", "specific" or "exact"), derived from the pattern itself once, at import; it
is searched only when the text has a word of each. The result is the pattern's own search
either way: a text that misses every word of one set has no match.

The derivation is conservative: whatever it does not understand (a flag, a lookaround, a
back-reference, a character class) it reads as "could be anything", which can only leave a
pattern unscreened (always searched), never skip one that matches.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from .._memo import remember

try:  # ``re``'s own parser is private (Python 3.11+): without it nothing is screened
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python whose re module is laid out otherwise
    C = _parser = None

_MOST_STRINGS = 256
"""the largest set of strings kept for one part of a pattern (a product of alternations)"""
_BOUNDARY = "\x00"
"""stands for ``\\b`` in the strings a part can match (it matches no character)"""
_WORD = re.compile(r"\w+")
_WHOLE_WORD = re.compile(r"(?<=\W)\w+(?=\W)")
"""a word delimited on both sides in a string of a pattern (``\\b`` and spaces both delimit)"""
_TAIL = re.compile(r"\W\w*\Z")


def text_words(text: str) -> frozenset[str]:
    """The words of ``text`` as a screen sees them (runs of word characters).

    A tagged message (:func:`~._tagging.tagged`, the texts screened) is its words and
    marks ("|", "?") joined by spaces, each word letters and digits alone: its runs of word
    characters are then its pieces between spaces but the marks, which a split and a set
    give for half the cost of the pattern's ``findall``. When a piece holds anything else
    ("O'Connor", "a-b", "_"), the runs are found by the pattern. The 270 tagged texts
    screened afresh in the first 80 groups of a built benchmark (the 30 tagged texts and the
    240 written with names that differ from theirs): 12.5 to 6.3 million instructions."""
    words = frozenset(text.split()) - _MARKS
    # (every piece left is of word characters: str.isalnum is the pattern's \w but "_",
    # so a piece with "_" is read by the pattern too)
    if "".join(words).isalnum():
        return words
    return frozenset(_WORD.findall(text))


_MARKS = frozenset(["|", "?"])
"""the marks a tagged text writes between its words (sentence and clause ends, questions)"""


class Phrase:
    """A compiled phrase pattern, searched only when the text has a word of each ``needs``
    and a string of each ``strings``."""

    __slots__ = ("needs", "pattern", "strings")

    def __init__(self, source: str | re.Pattern[str]) -> None:
        self.pattern = re.compile(source)
        self.needs = needed_words(self.pattern)
        self.strings = needed_strings(self.pattern, self.needs)

    def could_match(self, words: frozenset[str]) -> bool:
        """False when a text with these :func:`text_words` has no match."""
        for need in self.needs:  # noqa: SIM110 (a loop: all() of a generator costs twice)
            if need.isdisjoint(words):
                return False
        return True

    def could_match_text(self, text: str) -> bool:
        """False when ``text`` lacks every string of one of :attr:`strings` (no match)."""
        for need in self.strings:
            for string in need:
                if string in text:
                    break
            else:
                return False
        return True

    def search(self, text: str, words: frozenset[str]) -> re.Match[str] | None:
        """``pattern.search(text)``; ``words`` are :func:`text_words` of ``text``."""
        if self.could_match(words) and self.could_match_text(text):
            return self.pattern.search(text)
        return None

    def finditer(self, text: str, words: frozenset[str]) -> list[re.Match[str]]:
        if self.could_match(words) and self.could_match_text(text):
            return list(self.pattern.finditer(text))
        return []


class Inventory:
    """Phrase patterns tried in order (:func:`first_match`), with each screen's first set
    inverted (word -> the patterns that need it): a text's candidates are looked up from
    its words, not screened pattern by pattern (a reading tries some sixty; most need a word
    it does not have)."""

    __slots__ = ("by_word", "phrases", "unscreened")

    def __init__(self, phrases: list[Phrase]) -> None:
        self.phrases = phrases
        self.by_word: dict[str, list[int]] = {}
        self.unscreened: list[int] = []  # always candidates
        for k, phrase in enumerate(phrases):
            if not phrase.needs:
                self.unscreened.append(k)
                continue
            for word in phrase.needs[0]:
                self.by_word.setdefault(word, []).append(k)

    def candidates(self, words: frozenset[str]) -> set[int]:
        """The patterns a text with these :func:`text_words` has a word of the first set
        of (or no screen)."""
        found = set(self.unscreened)
        by_word = self.by_word
        for word in by_word.keys() & words:
            found.update(by_word[word])
        return found


def phrases(patterns: list[str]) -> Inventory:
    return Inventory([Phrase(p) for p in patterns])


def first_match(
    inventory: Inventory, texts: tuple[tuple[str, frozenset[str]], ...]
) -> tuple[int, re.Match[str]] | None:
    """The match of the inventory's first pattern that matches one of ``texts`` (each with
    its :func:`text_words`), on the first text it matches: (which text, the match). Each
    text is searched with the patterns before the first found in the texts before it
    (:func:`first_pattern`): a later text wins only with an earlier pattern."""
    found = None
    before = None
    for which, (text, words) in enumerate(texts):
        hit = first_pattern(inventory, text, words, before)
        if hit is not None:
            before, found = hit[0], (which, hit[1])
    return found


def first_pattern(
    inventory: Inventory,
    text: str,
    words: frozenset[str],
    before: int | None = None,
    only: AbstractSet[int] | None = None,
    cancelled: tuple[tuple[int, int], ...] = (),
) -> tuple[int, re.Match[str]] | None:
    """The inventory's first pattern (its place in :attr:`Inventory.phrases`, and its match)
    that matches ``text`` (with its :func:`text_words`), among the patterns placed before
    ``before`` when given, and among ``only`` when given (the caller knows the others miss:
    :meth:`NameTouches.may_match`). Only the text's candidates
    (:meth:`Inventory.candidates`) are screened further and searched. A match that lies
    within one of the spans ``cancelled`` (characters ``start:end`` of ``text``) is no match:
    the pattern's first other is taken (:func:`search_outside`)."""
    listed = inventory.phrases
    candidates = inventory.candidates(words)
    if only is not None:
        candidates &= only
    for k in sorted(candidates):
        if before is not None and k >= before:
            break
        phrase = listed[k]
        for need in phrase.needs[1:]:
            if need.isdisjoint(words):
                break
        else:
            if phrase.strings and not phrase.could_match_text(text):
                continue
            if cancelled:
                hit = search_outside(phrase.pattern, text, cancelled)
            else:
                hit = phrase.pattern.search(text)
            if hit:
                return k, hit
    return None


def search_outside(
    pattern: re.Pattern[str], text: str, cancelled: tuple[tuple[int, int], ...]
) -> re.Match[str] | None:
    """The first match of ``pattern`` in ``text`` that does not lie within one of the spans
    ``cancelled`` (each match tried, from each position: a match inside a span may hide one
    that starts inside it and ends after)."""
    at = 0
    while at <= len(text):
        hit = pattern.search(text, at)
        if hit is None:
            return None
        start, end = hit.span()
        if not any(low <= start and end <= high for low, high in cancelled):
            return hit
        at = start + 1
    return None


_MOST_SETS = 3
"""sets of needed words kept for a pattern (the most telling)"""
_MOST_LITERALS = 24
"""the largest set of needed strings kept (each is looked for in the text in turn)"""
_MOST_STRING_SETS = 3
"""sets of needed strings kept for a pattern (the fewest strings: the quickest looked for)"""


def needed_strings(
    pattern: re.Pattern[str], needs: tuple[frozenset[str], ...] = ()
) -> tuple[frozenset[str], ...]:
    """Sets of strings such that every match of ``pattern`` contains a string of each set, as
    written (not as whole words: "mismatch" of "mismatched"; "?"); () when none are known.
    A substring test costs a fraction of a search that finds nothing, and some patterns have
    no whole word to screen with (:func:`needed_words`). A set that a text passing the
    screen of ``needs`` (the pattern's :func:`needed_words`) always has is left out."""
    if pattern.flags & ~re.UNICODE or _parser is None:
        return ()  # case-insensitive and other modes: not screened
    try:
        found = _strings(list(_tree(pattern.pattern)))
    except Exception:  # a parse tree laid out otherwise (another Python): not screened
        return ()
    telling = [
        strings
        for strings in set(found)
        if not any(all(any(s in word for s in strings) for word in need) for need in needs)
    ]
    return tuple(sorted(telling, key=_quickest)[:_MOST_STRING_SETS])


def _quickest(strings: frozenset[str]) -> tuple[int, int, list[str]]:
    """Fewer strings first, then longer shortest strings (then in order, for a stable
    choice)."""
    return len(strings), -min(len(s) for s in strings), sorted(strings)


def _telling(strings: frozenset[str]) -> tuple[int, int, list[str]]:
    """Longer shortest strings first, then fewer (then in order, for a stable choice)."""
    return -min(len(s) for s in strings), len(strings), sorted(strings)


def _literal(run: frozenset[str]) -> frozenset[str] | None:
    """The strings of a run of known parts as text holds them (``\\b`` matches no character);
    None when one is empty (then every text has it) or they are too many."""
    strings = frozenset(s.replace(_BOUNDARY, "") for s in run)
    if "" in strings:
        return None
    return _fewest(strings)


def _fewest(strings: frozenset[str]) -> frozenset[str] | None:
    """The strings that hold no other of them (a text with one of ``strings`` has one of
    these); None when they are too many to look for."""
    kept: list[str] = []
    for string in sorted(strings, key=len):  # (a string can hold only shorter ones)
        if not any(shorter in string for shorter in kept):
            kept.append(string)
            if len(kept) > _MOST_LITERALS:
                return None
    return frozenset(kept)


def _strings(items: list[tuple[object, Any]]) -> list[frozenset[str]]:
    """Sets of strings each match of the parts ``items`` (one after another) contains one of:
    each run of parts whose matches are a known set of strings gives one (its matches are
    contiguous in the text), and so may a part that must match (a group, a branch, a repeat
    of at least one)."""
    found: list[frozenset[str] | None] = []
    run: frozenset[str] = frozenset([""])
    for op, arg in items:
        exact, _ = _part(op, arg)
        if exact is not None and len(run) * len(exact) <= _MOST_STRINGS:
            run = frozenset(a + b for a in run for b in exact)
            continue
        found.append(_literal(run))
        run = frozenset([""]) if exact is None else exact
        if exact is None:
            found.append(_inner_strings(op, arg))
    found.append(_literal(run))
    return [strings for strings in found if strings is not None]


def _inner_strings(op: object, arg: Any) -> frozenset[str] | None:
    """The most telling set of strings every match of one part contains, if any."""
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, items = arg
        return None if add_flags or del_flags else _best(_strings(list(items)))
    if op is C.BRANCH:
        # a match of the branch is a match of one alternative: it has a string of that
        # alternative's set
        chosen = [_best(_strings(list(branch))) for branch in arg[1]]
        if any(strings is None for strings in chosen):
            return None
        return _fewest(frozenset[str]().union(*chosen))  # type: ignore[arg-type]
    if op in _REPEATS:
        low, _high, items = arg
        return _best(_strings(list(items))) if low >= 1 else None
    return None  # anything else (a lookaround, a class...): no string known


def _best(sets: list[frozenset[str]]) -> frozenset[str] | None:
    return min(sets, key=_telling) if sets else None


def needed_words(pattern: re.Pattern[str]) -> tuple[frozenset[str], ...]:
    """Sets of words such that every match of ``pattern`` has, as whole words (maximal runs of
    word characters of the text searched), a word of each set; () when none are known."""
    if pattern.flags & ~re.UNICODE or _parser is None:
        return ()  # case-insensitive and other modes: not screened
    try:
        needs = _sequence(list(_tree(pattern.pattern)))[1]
    except Exception:  # a parse tree laid out otherwise (another Python): not screened
        return ()
    return tuple(sorted(needs, key=_selectivity, reverse=True)[:_MOST_SETS])


@functools.lru_cache(maxsize=256)
def _tree(source: str) -> tuple[tuple[object, Any], ...]:
    """The parse tree of a pattern (parsed once for both screens: read, never changed)."""
    return tuple(_parser.parse(source))


# Each part of a pattern is read as (every string it can match, or None when they are not a
# small known set; sets of words such that each of its matches has a word of every set).
_Needs = frozenset[frozenset[str]]
_Reading = tuple[frozenset[str] | None, _Needs]
_UNKNOWN: _Reading = (None, frozenset())


def _sequence(items: list[tuple[object, Any]]) -> _Reading:
    """Parts one after another: runs of known parts are joined ("exact" + "ly"/"")."""
    needs: set[frozenset[str]] = set()
    run: frozenset[str] = frozenset([""])
    whole = True  # every part known so far: the run is all the sequence can match
    for op, arg in items:
        exact, part_needs = _part(op, arg)
        needs |= part_needs
        if exact is not None and len(run) * len(exact) <= _MOST_STRINGS:
            run = frozenset(a + b for a in run for b in exact)
            continue
        needs |= _words_of_run(run)
        whole = False
        tails = _tails(run)  # what the run ends with still delimits the next part's words
        if exact is not None and tails is not None and len(tails) * len(exact) <= _MOST_STRINGS:
            run = frozenset(a + b for a in tails for b in exact)
            continue
        run = exact if exact is not None else frozenset([""])
    needs |= _words_of_run(run)
    return (run if whole else None), frozenset(needs)


def _words_of_run(strings: frozenset[str]) -> set[frozenset[str]]:
    """The first whole words of the strings, and their last whole words (every match of the
    run is one of the strings); none if a string has no whole word."""
    firsts, lasts = set(), set()
    for string in strings:
        found = _WHOLE_WORD.findall(string)
        if not found:
            return set()
        firsts.add(found[0])
        lasts.add(found[-1])
    return {frozenset(firsts), frozenset(lasts)}


def _tails(strings: frozenset[str]) -> frozenset[str] | None:
    """Each string from its last non-word character on ("\\bnot the " -> " "): the end of
    every match of the run (None when a string has no such character)."""
    tails = set()
    for string in strings:
        tail = _TAIL.search(string)
        if tail is None:
            return None
        tails.add(tail.group(0))
    return frozenset(tails)


#: Words in most tagged messages: a set with one of them screens out little.
_COMMON = frozenset(["zcand", "zfact", "zreq", "znum", "zdate", "please", "need", "send"])


def _selectivity(words: frozenset[str]) -> tuple[bool, int, int]:
    """Sets without common or short words first (a short one, "a", "is", is in most texts),
    then fewer words."""
    return words.isdisjoint(_COMMON), min(len(w) for w in words), -len(words)


_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) if C is not None else ()
_READ_PARTS: dict[int, tuple[Any, _Reading]] = {}
"""id of a group's, a branch's or a repeat's argument -> (it, its reading): both screens read
the parts of a pattern, and the strings' screen reads a part and then the parts inside it"""


def _part(op: object, arg: Any) -> _Reading:
    if op is C.SUBPATTERN or op is C.BRANCH or op in _REPEATS:
        kept = _READ_PARTS.get(id(arg))
        if kept is not None and kept[0] is arg:  # (the very object: an id may be reused)
            return kept[1]
        reading = _compound(op, arg)
        remember(_READ_PARTS, id(arg), (arg, reading), 4096)
        return reading
    if op is C.LITERAL and arg != 0:
        return frozenset([chr(arg)]), frozenset()
    if op is C.AT:
        return frozenset([_BOUNDARY if arg is C.AT_BOUNDARY else ""]), frozenset()
    if op is C.IN and all(o is C.LITERAL and c != 0 for o, c in arg):
        return frozenset(chr(c) for _, c in arg), frozenset()
    return _UNKNOWN  # any other character class, lookarounds, back-references: anything


def _compound(op: object, arg: Any) -> _Reading:
    """:func:`_part` of a group, a branch or a repeat (read from the parts inside it)."""
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, items = arg
        return _UNKNOWN if add_flags or del_flags else _sequence(list(items))
    if op is C.BRANCH:
        readings = [_sequence(list(branch)) for branch in arg[1]]
        exacts = [e for e, _ in readings if e is not None]
        union = frozenset[str]().union(*exacts)
        known = len(exacts) == len(readings) and len(union) <= _MOST_STRINGS
        exact = union if known else None
        if not all(needs for _, needs in readings):
            return exact, frozenset()
        # a match of the branch is a match of one alternative: it has a word of that
        # alternative's most telling set
        either = frozenset().union(*(max(needs, key=_selectivity) for _, needs in readings))
        return exact, frozenset([either])
    low, high, items = arg  # a repeat
    exact, needs = _sequence(list(items))
    if (low, high) == (0, 1) and exact is not None:
        return exact | {""}, frozenset()
    return None, (needs if low >= 1 else frozenset())


class NameTouches:
    """Which phrases of an inventory may match a text that writes some names where a text
    they all miss writes tags: those always searched, and those with a piece in one of the
    names' words (the piece the word, its start, its end, or in it), from a row of
    :mod:`._touches` (a table derived from the patterns by tests/name_pieces.py, which
    tests/test_name_touches.py derives again: deriving it at import took about 22 ms)."""

    __slots__ = ("_read", "always", "ends", "inside", "starts", "whole")

    def __init__(self, rows: tuple[str | None, ...]) -> None:
        always: set[int] = set()
        # a piece's phrases by where it lies in a word: the word, its start, its end, in it
        parts: tuple[dict[str, set[int]], ...] = ({}, {}, {}, {})
        for k, row in enumerate(rows):
            if row is None:
                always.add(k)
                continue
            for piece in row.split():
                core = piece.strip("-")
                at = (piece[0] == "-") + 2 * (piece[-1] == "-")  # whole, ends, starts, in it
                parts[(0, 2, 1, 3)[at]].setdefault(core, set()).add(k)
        self.always = frozenset(always)
        self.whole = {core: frozenset(ks) for core, ks in parts[0].items()}
        self._read: dict[str, frozenset[int]] = {}
        # (the pieces, for one test of a word against all, and each piece's phrases)
        self.starts, self.ends = (
            (tuple(kept), {core: frozenset(ks) for core, ks in kept.items()}) for kept in parts[1:3]
        )
        self.inside = tuple((core, frozenset(ks)) for core, ks in parts[3].items())

    def may_match(self, names: Iterable[str]) -> set[int]:
        """The phrases that may match where ``names`` (every word of letters and digits that
        the names are written with) are written for their tags."""
        found = set(self.always)
        read = self._read
        for word in names:
            ks = read.get(word)
            if ks is None:
                ks = self._touched(word)
                remember(read, word, ks, _WORDS_READ)
            if ks:
                found |= ks
        return found

    def _touched(self, word: str) -> frozenset[int]:
        """The phrases with a piece in ``word``."""
        # (a frozenset kept as is, and each found added by a union: most words have none.
        # One call each for most words, which start and end with no piece; a word that
        # does has its starts or ends looked up, not each piece tested: 42 of the 636 words
        # and inventories of the first pass over 80 built groups; all 636 replayed, 5.00 to
        # 2.73 million instructions)
        found = self.whole.get(word, _NONE)
        pieces, by_piece = self.starts
        if pieces and word.startswith(pieces):
            for end in range(1, len(word) + 1):
                ks = by_piece.get(word[:end])
                if ks is not None:
                    found |= ks
        pieces, by_piece = self.ends
        if pieces and word.endswith(pieces):
            for start in range(len(word)):
                ks = by_piece.get(word[start:])
                if ks is not None:
                    found |= ks
        for core, ks in self.inside:
            if core in word:
                found |= ks
        return found


_NONE: frozenset[int] = frozenset()
"""no phrase (what most words touch)"""
_WORDS_READ = 4096
"""names' words whose phrases :meth:`NameTouches.may_match` keeps (candidates' names recur)"""
