"""The dates and numbers written in a message, found on its raw text (:func:`scan_values`),
before its words are read (:mod:`._words`): the year of "1 August 2026" is part of a date, not
a period.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from .._memo import remember
from .._trusted import made_frozen

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_ABBREVIATIONS = {m[:3]: m for m in MONTHS} | {"sept": "september"}
_MONTH_WORD = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE_PATTERNS = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(
        r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mn>"
        + _MONTH_WORD
        + r"),?\s+(?P<y>\d{4})\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?P<mn>" + _MONTH_WORD + r")\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<d>\d{1,2})/(?P<m>\d{1,2})/(?P<y>\d{4})\b"),
)
_DATE_SEPARATORS = ("-", None, None, "/")
"""a character each date pattern's matches have (None: a month's name followed by a digit,
:data:`_MONTH_BEFORE_DIGIT`)"""
_MONTH_BEFORE_DIGIT = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+\d", re.IGNORECASE
)
"""what every match of the date patterns that name the month has (and of ``_MONTH_END``): a
month's name, then a digit after spaces and an optional comma. Most messages name no month
before a number, and this search costs a fifth of trying those patterns."""
_DAY_BEFORE_YEAR = re.compile(r"\d\w{0,2},?\s+\d{4}")
"""what every match of the date pattern with the month first has ("May 3rd, 2026": a digit,
its suffix, a comma, spaces and four digits): messages that name a month before a number
mostly name a month and a year ("April 2026"), and this search costs a third of that
pattern's"""
_SPACED_OF = re.compile(r"\sof\s", re.IGNORECASE)
"""what every match of ``_MONTH_END`` has ("end of March 2026")"""
_DATE_SCREENS = (None, None, _DAY_BEFORE_YEAR, None)
"""a search each date pattern's matches have a match of, besides :data:`_DATE_SEPARATORS`"""
_DIGIT = re.compile(r"\d")
_YEAR_AND_DASH = re.compile(r"\d{4}[-/]$")
_NUMBER = re.compile(
    # (the lookahead first: a number starts with a sign or a digit, and a pattern that starts
    # with a lookbehind is tried in full at every position of the text)
    r"(?=[-\d])(?<![\w.])(?P<sign>-)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<scale>k|m|thousand|million|bn|billion)\b)?(?![\w])",
    re.IGNORECASE,
)
_SCALES = {"k": 1000, "thousand": 1000, "m": 10**6, "million": 10**6, "bn": 10**9, "billion": 10**9}
_MONTH_END = re.compile(
    r"\b(?P<edge>end|start|beginning|middle)\s+of\s+(?P<mn>" + _MONTH_WORD + r")\s+(?P<y>\d{4})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FoundValue:
    """A date or a number written in the message, with its character span."""

    value: Fraction | _dt.date
    start: int
    end: int


def _month_number(text: str) -> int:
    word = text.lower().rstrip(".")
    full = _MONTH_ABBREVIATIONS.get(word[:4] if word.startswith("sept") else word[:3], word)
    return MONTHS.index(full) + 1


_MONTH_STARTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


# Every match of the patterns above starts with a character they name first: a digit or a
# sign (the numbers, three of the date patterns), a month's name (the fourth) or an edge
# ("end of"). But a pattern that starts with a look-around, a word boundary or a choice of
# repeats gets no first characters from Python's engine, which then tries a whole match at
# every position of the text. So each pattern is started where its first character can be:
# a number only at the places :data:`_NUMBER_START` finds (its characters first: the engine
# skips to them), a date from the text's first digit or its first month's name before a
# digit (a pattern's look-behinds and word boundaries see the text before the position a
# search starts from). A text of ASCII (most messages) is searched with patterns written to
# start with their first characters: its digits, and in lower case its months and "of"s.
# scan_values: 103.3 to 51.1 million instructions for the 601 messages of the first 80
# groups of a built benchmark; tests/test_words_fast.py checks the values against the
# patterns tried on the whole text. In a text of ASCII the digits are found once, on its
# characters' classes (:data:`_CLASSES`), and the numbers and the dates that start with a
# digit are tried only at its digits not after a word character: 51.0 to 38.8 million.
# Most numbers are digits alone between spaces ("(2026", "March 2026)."): 799 of the 806
# values of those messages. Such a number is read without the pattern (:func:`_plain_digits`:
# a regular expression's match, its groups and :func:`_number_value` cost about 15,000
# instructions a number), the dates with a day first are tried only at runs of one or two
# digits (:func:`_day_runs`: most runs are years), and a month before a digit is looked
# for at the digits (:func:`_names_a_month_before_digit`): 39.6 to 29.7 million, the first
# pass over 80 built groups 1,051.7 to 1,041.2 (collector off 1,035.6 to 1,024.0). Most
# texts name no month and write no "-" or "/" (309 of the 546 with a run), and most that name
# one write a year alone ("March 2026": 231 of 237 have no day's run): the date patterns are
# zipped once and tried only where they may match, the text read in lower case only with a
# month named, and the runs are the numbers' starts in a text without a "-": 28.7 to 23.8
# million (with a message's value tokens kept in one loop, the first pass 827.2 to 818.7
# million, means of eight and four counts).
_DATE_STARTS = ("digit", "day", "month", "day")
"""where each date pattern's matches start: a digit, a day's (one or two digits, then no
digit), or a month's name before a digit"""
_MONTH_BEFORE_DIGIT_LOWER = re.compile(
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?<!\w...)[a-z]*\.?,?\s+\d"
)
""":data:`_MONTH_BEFORE_DIGIT` in a text of ASCII in lower case (the same matches: the word
boundary is a look-behind after the month's letters, so that the letters come first)"""
_MONTH_END_LOWER = re.compile(
    r"(?P<edge>e(?<!\w.)nd|s(?<!\w.)tart|b(?<!\w.)eginning|m(?<!\w.)iddle)\s+of\s+(?P<mn>"
    + _MONTH_WORD
    + r")\s+(?P<y>\d{4})\b"
)
""":data:`_MONTH_END` in a text of ASCII in lower case"""
_OF_MONTH_LOWER = re.compile(
    r"of\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d"
)
"""what every match of :data:`_MONTH_END_LOWER` has ("of March 2026"): a search for "of"
first, where that pattern's first letters are common"""
_DATE_PATTERNS_ASCII = (
    re.compile(r"(?P<y>[0-9](?<!\w[0-9])[0-9]{3})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})\b"),
    re.compile(
        r"(?P<d>[0-9](?<!\w[0-9])[0-9]?)(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mn>"
        + _MONTH_WORD
        + r"),?\s+(?P<y>[0-9]{4})\b",
        re.IGNORECASE,
    ),
    _DATE_PATTERNS[2],
    re.compile(r"(?P<d>[0-9](?<!\w[0-9])[0-9]?)/(?P<m>[0-9]{1,2})/(?P<y>[0-9]{4})\b"),
)
""":data:`_DATE_PATTERNS` for a text of ASCII, those that start with a digit written to start
with it (the word boundary before it a look-behind after it; a digit of ASCII is one of
``[0-9]``): the engine skips to the digits"""
_NUMBER_START = re.compile(r"[-\d](?<![\w.][-\d])")
"""every place a match of :data:`_NUMBER` can start (its look-ahead and look-behind)"""
_NUMBER_START_ASCII = re.compile(r"[-0-9](?<![\w.][-0-9])")
_CLASSES = bytes.maketrans(
    bytes(range(128)),
    bytes(
        ord("0") if chr(byte).isdigit() else ord("a") if re.match(r"\w", chr(byte)) else ord(" ")
        for byte in range(128)
    ),
)
"""a character of ASCII's class, as a byte: "0" a digit, "a" another word character,
" " the rest. In a text of ASCII so written its digits are one character: the first is found
by a plain scan, and a digit not after a word character (where every match of the date
patterns that start with a digit starts, and every number's first digit) follows a space
(a search for a set of characters, ``[0-9]``, is a call a character: the digit searches cost
a third of scan_values)"""
_LETTER = ord("a")
_DAY_BEFORE_YEAR_AT = re.compile(r"[0-9]\w{0,3},?\s+[0-9]{4}")
"""what a text of ASCII has from the day of every match of the date pattern with the month
first ("May 3rd, 2026": its day is after spaces, so not after a word character;
a digit, up to three more of it and its suffix, a comma, spaces and four digits)"""


_DATE_TRIES = tuple(zip(_DATE_SEPARATORS, _DATE_SCREENS, _DATE_PATTERNS, _DATE_STARTS, strict=True))
"""each date pattern with its separator, screen and starts (zipped once, not a text: a
``zip`` with ``strict`` a keyword costs 1.8k instructions a call)"""
_DATE_TRIES_ASCII = tuple(
    zip(_DATE_SEPARATORS, _DATE_SCREENS, _DATE_PATTERNS_ASCII, _DATE_STARTS, strict=True)
)
""":data:`_DATE_TRIES` for a text of ASCII"""
_SIGN = "-"
"""a number's sign, and the first date pattern's separator (a name: the tests read every text
as having one)"""
_MONTH_START_SET = frozenset(_MONTH_STARTS)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _names_a_month_before_digit(text: str, runs: list[int]) -> bool:
    """Whether a text of ASCII in lower case, ``text.lower()``, has a match of
    :data:`_MONTH_BEFORE_DIGIT_LOWER` (so ``text`` one of :data:`_MONTH_BEFORE_DIGIT`, which
    reads ASCII's capitals as that pattern reads lower case), from ``text``'s ``runs`` (its
    digits not after a word character, :func:`_digit_runs`): that pattern's digit is one of
    them after white space, and before that white space are at most a "," and a "." and a
    word's letters, the first three a month's (the word's first: it follows no word
    character). Looked at only at those digits, where a search for the months' first letters
    read the whole text twelve times (and found them in words such as "market"): for the 546
    messages of the first 80 built groups with a digit, 4.4 to 3.2 million instructions, and
    237 of them name a month before a digit where 267 had a month's first letters. Read on
    ``text`` as written (its letters of either case, a month's three in lower case), not on
    ``text.lower()``: most texts name no month, and need no text in lower case."""
    for run in runs:
        if not run or not text[run - 1].isspace():
            continue
        head = text[:run].rstrip()
        if head.endswith(","):
            head = head[:-1]
        if head.endswith("."):
            head = head[:-1]
        before = head.rstrip(_LETTERS)
        at = len(before)  # (three letters from there are the word's: no letter follows it)
        if text[at : at + 3].lower() in _MONTH_START_SET and not (
            before and (before[-1].isdigit() or before[-1] == "_")
        ):
            return True
    return False


def scan_values(text: str) -> list[FoundValue]:
    """Every date and number of ``text`` in order; a number inside a date is not repeated.

    A number that also names a period ("2026") is found here too; the request reader drops
    it when the task's vocabulary reads it as a context.
    """
    found: list[FoundValue] = []
    taken: list[tuple[int, int]] = []
    runs: list[int] | None = None  # (a text of ASCII: where its digits not after \w are)
    number_starts: Iterable[int]
    if text.isascii():
        runs = _digit_runs(text)
        if not runs:
            return found  # every date and number has a digit not after a word character
        # (a number may start at a run's sign only with a "-" in the text: most texts have
        # none, and a run after a "." is tried there and read as no number, as the pattern
        # reads it)
        number_starts = _number_starts_ascii(text, runs) if _SIGN in text else runs
        # (every match of the patterns that name a month has a match of _MONTH_BEFORE_DIGIT)
        month_named = _names_a_month_before_digit(text, runs)
        month_before_digit = _MONTH_BEFORE_DIGIT_LOWER
        # (the runs where a day may start: read by the patterns with a day first, which need
        # a month named or a "/", and the screen of the one with the month first)
        if month_named:  # (the text in lower case, read only with a month named: 237 of 546)
            month_text = text.lower()
            month_end = _MONTH_END_LOWER if _OF_MONTH_LOWER.search(month_text) else None
            day_runs = _day_runs(text, runs)
            # (every match of a date pattern has a day's run: a day, or the month of
            # "2026-03-01"; most texts that name a month write a year alone, "March 2026",
            # and have none: 231 of 237)
            tries = _DATE_TRIES_ASCII if day_runs else ()
        else:
            month_text, month_end = text, None
            day_runs = _day_runs(text, runs) if "/" in text else runs
            # (no month named: only the patterns with a "-" or a "/" may match; most texts
            # have neither)
            tries = _DATE_TRIES_ASCII if _SIGN in text or "/" in text else ()
    else:
        digit = _DIGIT.search(text)
        if digit is None:
            return found
        digit_at = digit.start()
        number_starts = [
            place.start() for place in _NUMBER_START.finditer(text, max(digit_at - 1, 0))
        ]
        month_text = text
        month_named = _MONTH_BEFORE_DIGIT.search(text) is not None
        month_before_digit = _MONTH_BEFORE_DIGIT
        month_end = _MONTH_END if _SPACED_OF.search(text) else None
        tries = _DATE_TRIES
        day_runs = []
    for separator, screen, pattern, starts in tries:
        if not (month_named if separator is None else separator in text):
            continue
        if screen is not None and not (
            screen.search(text, digit_at) if runs is None else _day_before_year_at(text, day_runs)
        ):
            continue
        matches: Iterable[re.Match[str]]
        if starts == "month":  # from the first month's name before a digit
            month_found = month_before_digit.search(month_text)
            if month_found is None:
                continue
            matches = pattern.finditer(text, month_found.start())
        elif runs is None:
            matches = pattern.finditer(text, digit_at)
        else:
            matches = _matches_at(pattern, text, day_runs if starts == "day" else runs)
        for m in matches:
            day = _date_value(m)
            if day is None or any(s < m.end() and m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(FoundValue(day, m.start(), m.end()))
    for m in month_end.finditer(month_text) if month_named and month_end is not None else ():
        taken.append((m.start(), m.end()))
        found.append(FoundValue(_month_end_value(m), m.start(), m.end()))
    after = 0  # (where the last number ended: the next starts there or later)
    number = _NUMBER.match
    for start in number_starts:
        if start < after:
            continue
        value: Fraction | None
        if runs is not None and (digits := _plain_digits(text, start)):
            end = after = start + len(digits)
            # (the kept fraction without a call; not ``get(digits) or``: a fraction's truth is
            # ``Fraction.__bool__``, a call of Python code for every number found)
            value = _WHOLE_NUMBERS.get(digits)
            if value is None:
                value = _whole_number(digits)
        else:
            written = number(text, start)
            if written is None:
                continue
            end = after = written.end()
            value = _number_value(text, written)
        if taken and any(s < end and start < e for s, e in taken):
            continue
        if value is not None:
            found.append(made_frozen(FoundValue, {"value": value, "start": start, "end": end}))
    if taken:  # dates and numbers (the numbers alone are found in order)
        found.sort(key=_value_start)
    return found


def _digit_runs(text: str) -> list[int]:
    """Where a text of ASCII has a digit not after a word character, in order."""
    classes = text.encode().translate(_CLASSES)
    digit_at = classes.find(b"0")
    if digit_at < 0:
        return []
    # (the first digit follows no digit: a run starts there unless a letter is before it)
    runs = [] if digit_at and classes[digit_at - 1] == _LETTER else [digit_at]
    run = classes.find(b" 0", digit_at)
    while run >= 0:
        runs.append(run + 1)
        run = classes.find(b" 0", run + 2)
    return runs


_DIGITS_END = ").,;:!?"
"""marks that may follow a number's digits in a piece between spaces, where
:func:`_plain_digits` reads them as the number's end (none of them is white space or a word
character, and a "." or "," is a decimal point or a thousands' separator only before a digit)"""
_BEFORE_DIGITS = "".join(chr(byte) for byte in range(128) if not re.match(r"[\w./-]", chr(byte)))
"""the characters of ASCII a number's digits read by :func:`_plain_digits` may follow: no word
character or "." (:data:`_NUMBER`'s look-behind), no "-" or "/" (a period's, or a sign)"""
_SCALE_FIRSTS = "kKmMtTbB"
"""the first letters of the scales a number may be followed by (:data:`_NUMBER`)"""


def _plain_digits(text: str, start: int) -> str:
    """The digits of the number at ``start`` of a text of ASCII (any place: those of
    :func:`_number_starts_ascii` in the scan), when they are all it writes and no period's: a
    piece between spaces of those digits and marks of :data:`_DIGITS_END` alone, not after a
    word character, ".", "-" or "/" and not followed by a space and a scale's first letter;
    "" for any other place or number (read by :data:`_NUMBER` and :func:`_number_value`).
    Then :data:`_NUMBER` matches those digits there (no sign, comma, decimals or scale;
    nothing after them in its look-ahead) and :func:`_number_value` reads their whole number
    (its period check needs "fy", "q", "h", "-" or "/" just before). scan_values: 39.6 to
    34.6 million instructions for the 601 messages of the first 80 built groups."""
    gap = text.find(" ", start)
    piece = text[start:gap] if gap >= 0 else text[start:]
    digits = piece.rstrip(_DIGITS_END)
    if not digits.isdigit() or (start and text[start - 1] not in _BEFORE_DIGITS):
        return ""
    if len(digits) == len(piece) and 0 <= gap < len(text) - 1 and text[gap + 1] in _SCALE_FIRSTS:
        return ""  # ("5 million", "2026 team": read by the pattern)
    return digits


def _number_starts_ascii(text: str, runs: list[int]) -> list[int]:
    """Where a match of :data:`_NUMBER` may start in a text of ASCII, in order, from its
    ``runs`` (digits not after a word character): the places :data:`_NUMBER_START_ASCII` finds from
    the text's first digit on (and the sign before it) but those where no number starts, a
    "-" without a digit after it. A digit not after a word character or a period is at a
    run; a sign before a digit is just before one."""
    starts: list[int] = []
    for run in runs:
        if run:
            before = text[run - 1]
            if before == ".":
                continue
            if before == "-" and _NUMBER_START_ASCII.match(text, run - 1):
                starts.append(run - 1)
        starts.append(run)
    return starts


def _day_runs(text: str, runs: list[int]) -> list[int]:
    """Those of ``runs`` where a day may start: not three digits (every match of the date
    patterns with a day first, and every day of the one with the month first, has one or two
    digits and then no digit). Most runs are years: in the 267 messages of the first 80
    built groups with a month's first letters (mostly "March 2026"), trying a pattern and a
    screen at every run cost 3 million instructions; scan_values 34.6 to 31.3 million (with
    the search for "of" before a month made only when a month is named)."""
    days = []
    for run in runs:
        head = text[run : run + 3]
        if len(head) < 3 or not head.isdigit():
            days.append(run)
    return days


def _matches_at(pattern: re.Pattern[str], text: str, runs: list[int]) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, runs[0])`` for a date pattern whose every match starts at one
    of ``runs`` (its first digit not after a word character): tried only there, not at every
    character (the matches do not overlap: one starts where the last ended or later)."""
    after = 0
    for run in runs:
        if run >= after:
            found = pattern.match(text, run)
            if found is not None:
                after = found.end()
                yield found


def _day_before_year_at(text: str, runs: list[int]) -> bool:
    """Whether ``text`` has a match of :data:`_DAY_BEFORE_YEAR_AT` at one of ``runs``."""
    match = _DAY_BEFORE_YEAR_AT.match
    for run in runs:  # noqa: SIM110 (a loop: any() of a generator costs more)
        if match(text, run):
            return True
    return False


def _date_value(m: re.Match[str]) -> _dt.date | None:
    """The day a match of a date pattern writes (None: no such day)."""
    try:
        month = int(m["m"]) if "m" in m.groupdict() and m["m"] else _month_number(m["mn"])
        return _dt.date(int(m["y"]), month, int(m["d"]))
    except (ValueError, IndexError):
        return None


def _month_end_value(m: re.Match[str]) -> _dt.date:
    """The day a match of :data:`_MONTH_END` names: its month's last, 15th or first."""
    month, year = _month_number(m["mn"]), int(m["y"])
    last = calendar.monthrange(year, month)[1]
    return _dt.date(year, month, {"end": last, "middle": 15}.get(m["edge"].lower(), 1))


def _number_value(text: str, m: re.Match[str]) -> Fraction | None:
    """The number a match of :data:`_NUMBER` in ``text`` writes (None: a period's)."""
    start = m.start()
    before = text[max(0, start - 5) : start].lower()
    # (a year and a dash are the last five characters, so the text ends with the dash)
    if before.endswith(("fy", "q", "h", "-", "/")) and (
        not before.endswith(("-", "/")) or _YEAR_AND_DASH.search(before)
    ):
        return None  # FY26, Q3, H1, the "27" of "2026-27": periods
    sign, number, scale = m.group("sign", "num", "scale")
    digits = number.replace(",", "")
    # a whole number in ASCII digits makes the same fraction without parsing a string
    whole = digits.isascii() and digits.isdigit()
    value = _whole_number(digits) if whole else Fraction(digits)
    if scale:
        value *= _SCALES.get(scale.lower(), 1)
    return -value if sign else value


def _value_start(value: FoundValue) -> int:
    return value.start


_WHOLE_NUMBERS: dict[str, Fraction] = {}
"""digits -> their fraction (a fraction is immutable: one is shared; messages and their
groups quote the same years and figures)"""


def _whole_number(digits: str) -> Fraction:
    found = _WHOLE_NUMBERS.get(digits)
    if found is None:
        found = remember(_WHOLE_NUMBERS, digits, Fraction(int(digits)), 4096)
    return found
