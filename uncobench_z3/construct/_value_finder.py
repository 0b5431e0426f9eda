"""The values of one record key mentioned in a text, found by what is derived once per key.

The reader (:mod:`._reader`) finds a record line's or a condition's values by the key's type:
numbers (not those of a date, nor the digits of its unit), dates, enum members or yes/no. The
plain definitions are :func:`~._text.find_numbers`, :func:`~._text.strip_dates` and
:func:`~._text.find_members`; a :class:`ValueFinder` gives the same values with less work:
a member found by ``str.find`` (not a pattern compiled for it, or looked up in ``re``'s cache
for each member of each line), the date patterns skipped in a text without four digits in a
row (every date has them), numbers found by a pattern that skips to where one can start, and
a number made as an ``int`` (or from two ints) rather than parsed as a string by
``Fraction``. A key with an empty member is read by :func:`~._text.find_members` itself.

One finder serves every key of one type, unit and members (:func:`value_finder`), and it
remembers the values of each text it read: a record line's text, once its candidate, label
and context are taken out (``": 80 points"``, ``", : yes"``), recurs across the candidates,
settings and tasks that state one value of one kind of record.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from math import gcd

from .._memo import remember
from ..spec import FactType, Value
from ._text import _NUMBER, find_booleans, find_dates, find_members, strip_dates

_FOUR_DIGITS = re.compile(r"\d\d\d\d")
r"""a text without it has no date of any style (each has a four-digit year); written as four
digits, not ``\d{4}``: a pattern that starts with a character set (not a repeat) lets ``re``
skip to a digit in C instead of starting a match at every character"""
_AFTER_NUMBER = r"(?:\.\d+)?(?![\w])"
"""what follows a number's whole part in :data:`~._text._NUMBER` (both alternatives)"""
_THOUSANDS = r"(?:,\d{3})+" + _AFTER_NUMBER
_NUMBER_AT = re.compile(
    r"[-\d](?:"
    r"(?<=-)(?:(?<![\w.]-)\d{1,3}" + _THOUSANDS + r"|(?<![\w.,]-)\d+" + _AFTER_NUMBER + r")"
    r"|(?<!-)(?:(?<![\w.]\d)\d{0,2}" + _THOUSANDS + r"|(?<![\w.,]\d)\d*" + _AFTER_NUMBER + r")"
    r")",
    _NUMBER.flags,
)
""":data:`~._text._NUMBER` with its first character ("-" or a digit) taken first: a pattern
that starts with a character set lets ``re`` skip to the characters in it (in C) instead of
starting a match, and the look-behinds at each place in between, at every character (a
look-ahead first does not: ``re`` skips only to a set or a literal). Each alternative of
``_NUMBER`` reads the same from there: its look-behind moved one character on (the character
before the first, and the first, which is "-" or a digit), its ``-?`` taken as the first
character being "-" or not, its first repeat of digits one fewer when the first was a digit
(greedy either way: tried in the same order). The same matches, tested against ``_NUMBER``."""

_new_fraction = object.__new__


def _fraction(numerator: int, denominator: int) -> Fraction:
    """``Fraction(numerator, denominator)`` of a ``denominator`` > 0 with no common factor,
    set on a new fraction's two slots: ``Fraction(...)`` checks its arguments' types and
    reduces them in Python, four to five thousand instructions a number."""
    made = _new_fraction(Fraction)
    made._numerator = numerator  # type: ignore[attr-defined]
    made._denominator = denominator  # type: ignore[attr-defined]
    return made


def _word_spans(text: str, word: str) -> Iterator[tuple[int, int]]:
    r"""(start, end) of each ``word`` in ``text`` with no word character either side, left to
    right, without overlaps: the matches of ``(?<![\w])word(?![\w])`` (as
    :func:`~._text.find_members` finds a member), a non-empty ``word`` found by ``str.find``
    (a pattern for each member would be compiled: most are new to a task). A word character
    of ``re`` is one that ``isalnum`` or ``_`` (the same for every code point)."""
    size, last = len(word), len(text)
    start = text.find(word)
    while start >= 0:
        end = start + size
        before = start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")
        if before and (end == last or not (text[end].isalnum() or text[end] == "_")):
            yield start, end
            start = text.find(word, end)
        else:
            start = text.find(word, start + 1)


def _number(digits: str) -> Fraction:
    """``Fraction(digits)`` for a number :data:`~._text._NUMBER` matched (commas removed)."""
    whole, point, decimals = digits.partition(".")
    if not point:
        return _fraction(int(whole), 1)
    numerator, denominator = int(whole + decimals), 10 ** len(decimals)
    common = gcd(numerator, denominator)
    return _fraction(numerator // common, denominator // common)


def _whole(digits: str) -> int | None:
    """``int(n)`` of ``n = Fraction(digits)`` where ``n`` is whole, else None."""
    whole, point, decimals = digits.partition(".")
    if not point or not int(decimals):
        return int(whole)
    return None


_FINDERS_KEPT = 256
"""finders :func:`value_finder` keeps (by type, unit and members)"""
_TEXTS_KEPT = 1024
"""texts whose values one finder remembers"""
_TEXT_KEPT_SIZE = 64
"""the longest text whose values a finder remembers: a template's record line comes down to
a few words around its value, where a model's line may be long and every one new (so what
the finders keep stays within 256 x 1,024 texts of 64 characters)"""


class ValueFinder:
    """Every value of one record key's type mentioned in a text, in order."""

    __slots__ = ("_found", "_lowered", "members", "type", "unit")

    def __init__(self, fact_type: FactType, unit: str | None, members: tuple[str, ...]) -> None:
        self.type = fact_type
        # a unit may hold digits ("per 100000 hours"): it is taken out before the numbers
        self.unit = unit if unit and unit.strip() != "%" else None
        self.members = members
        ordered = sorted(members, key=len, reverse=True)  # (stable: ties keep their order)
        self._lowered = tuple((member, member.lower()) for member in ordered)
        self._found: dict[str, list[Value]] = {}

    def values(self, text: str) -> list[Value]:
        """The values ``text`` mentions (:meth:`_values`), remembered: the list is shared,
        and its readers do not change it."""
        found = self._found.get(text)
        if found is None:
            found = self._values(text)
            if len(text) <= _TEXT_KEPT_SIZE:
                remember(self._found, text, found, _TEXTS_KEPT)
        return found

    def _values(self, text: str) -> list[Value]:
        kind = self.type
        if kind == "int" or kind == "decimal":
            if self.unit is not None:
                text = text.replace(self.unit, " ")
            if _FOUR_DIGITS.search(text) is not None:
                text = strip_dates(text)
            # (``findall``: each match's text, without a match object made for it; a loop, not
            # comprehensions: each makes and calls a function, about 3k instructions, more
            # than a number's own reading)
            numbers: list[Value] = []
            if kind == "decimal":
                for digits in _NUMBER_AT.findall(text):
                    numbers.append(_number(digits.replace(",", "")))
            else:
                for digits in _NUMBER_AT.findall(text):
                    whole = _whole(digits.replace(",", ""))
                    if whole is not None:
                        numbers.append(whole)
            return numbers
        if kind == "date":
            return list(find_dates(text))
        if kind == "enum":
            return list(self._members(text))
        return list(find_booleans(text))

    def _members(self, text: str) -> list[str]:
        """:func:`~._text.find_members` of the key's members: the longest first, without
        overlaps, in text order."""
        if "" in self.members:  # (a member matched at every place)
            return find_members(text, self.members)
        lowered = text.lower()  # (positions are the lower case's, as find_members's: "İ")
        taken = bytearray(len(lowered))
        found: list[tuple[int, str]] = []
        for member, lower in self._lowered:
            if lower not in lowered:  # (most members are not in a text: no generator made)
                continue
            for start, end in _word_spans(lowered, lower):
                if not any(taken[start:end]):
                    found.append((start, member))
                    taken[start:end] = b"\x01" * (end - start)
        if len(found) < 2:  # (most texts name one member: no sort, no comprehension)
            return [found[0][1]] if found else []
        return [member for _, member in sorted(found)]


_finders: dict[tuple[FactType, str | None, tuple[str, ...]], ValueFinder] = {}


def value_finder(fact_type: FactType, unit: str | None, members: tuple[str, ...]) -> ValueFinder:
    """The finder of the values of a key of ``fact_type``, ``unit`` and ``members``, shared by
    every catalog that has one (a finder is not changed once made, and what it gives depends
    on these and the text alone)."""
    key = (fact_type, unit, members)
    found = _finders.get(key)
    if found is None:
        found = remember(_finders, key, ValueFinder(fact_type, unit, members), _FINDERS_KEPT)
    return found
