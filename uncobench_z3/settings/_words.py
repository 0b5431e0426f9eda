"""The words of a message, in one canonical form the request reader and the vocabulary share.

Everything that must *not* matter when a colleague reads a follow-up is removed here, once:
case, punctuation, plurals and other inflections (Snowball stems), possessives ("Vance's"),
contractions ("don't" -> "do not"), and the many ways of writing a period ("FY26", "fy 2026",
"Mar 2026", "third quarter", "rev. C"). Small typos are tolerated when a word is compared
with the task's vocabulary (:func:`close_enough`), not here.

Dates and numbers are found on the raw text first (:func:`scan_values`), so that the year of
"1 August 2026" is read as part of a date, not as a period.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import Stemmer
from rapidfuzz.distance import OSA

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
_ORDINALS = {
    "first": "1", "1st": "1", "second": "2", "2nd": "2", "third": "3", "3rd": "3",
    "fourth": "4", "4th": "4",
}  # fmt: skip
#: Abbreviations that are also words: months only capitalised or beside a number.
_AMBIGUOUS_MONTHS = {"mar", "jan", "sep", "oct", "nov", "dec"}
_PRONOUN_IS = {"that", "it", "what", "there", "here", "he", "she", "who", "where", "how", "this"}

# PyStemmer: the Snowball project's C stemmers. The pure-Python ``snowballstemmer`` gives the
# same English stems 18x slower (56 against 3.2 us a word); the test suite keeps it as the
# reference both are checked against (tests/test_stemmer.py). Each word is stemmed once a
# process, but a fresh run meets most of its words in its first groups: 0.91x the
# instructions of a first pass over 100 built groups.
_STEMMER = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball stem of a lower-case word ("clearances" -> "clearanc"); digits unchanged."""
    if not word.isalpha():
        return word
    return str(_STEMMER.stemWord(word))


class Token(NamedTuple):
    """One canonical word of a message, with where it came from. (A named tuple: a message
    makes three per word while it is read, and a tuple is made in a third of the time of a
    frozen dataclass.)"""

    word: str
    """lower case, canonical ("fy26" gives "fy", "2026"; "Mar" before a year gives "march")"""
    stem: str
    start: int
    end: int
    capitalised: bool
    """written with a capital first letter (names that are also common words need one)"""
    sentence: int
    question: bool
    """the token's sentence ends with a question mark"""
    clause: bool = False
    """the token starts a clause after a colon or a dash ("Marcus: did he pass?")"""


# -- dates and numbers on the raw text ------------------------------------------------------------
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


def _names_a_month(text: str) -> bool:
    """False when ``text`` has no match of :data:`_MONTH_BEFORE_DIGIT`: an ASCII text without
    the first three letters of a month's name in any case (lower case is what that pattern's
    case-insensitive matching reads in ASCII; other texts are searched). Most messages name
    no month, and this costs a fifth of the search."""
    if not text.isascii():
        return True
    lowered = text.lower()
    for start in _MONTH_STARTS:  # noqa: SIM110 (a loop: any() of a generator costs twice)
        if start in lowered:
            return True
    return False


def scan_values(text: str) -> list[FoundValue]:
    """Every date and number of ``text`` in order; a number inside a date is not repeated.

    A number that also names a period ("2026") is found here too; the request reader drops
    it when the task's vocabulary reads it as a context.
    """
    found: list[FoundValue] = []
    taken: list[tuple[int, int]] = []
    if not _DIGIT.search(text):
        return found  # every date and number has a digit
    month_named = _names_a_month(text) and _MONTH_BEFORE_DIGIT.search(text) is not None
    for separator, screen, pattern in zip(
        _DATE_SEPARATORS, _DATE_SCREENS, _DATE_PATTERNS, strict=True
    ):
        if not (month_named if separator is None else separator in text):
            continue
        if screen is not None and not screen.search(text):
            continue
        for m in pattern.finditer(text):
            try:
                month = int(m["m"]) if "m" in m.groupdict() and m["m"] else _month_number(m["mn"])
                day = _dt.date(int(m["y"]), month, int(m["d"]))
            except (ValueError, IndexError):
                continue
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(FoundValue(day, m.start(), m.end()))
    for m in _MONTH_END.finditer(text) if month_named and _SPACED_OF.search(text) else ():
        month, year = _month_number(m["mn"]), int(m["y"])
        last = calendar.monthrange(year, month)[1]
        which = {"end": last, "middle": 15}.get(m["edge"].lower(), 1)
        taken.append((m.start(), m.end()))
        found.append(FoundValue(_dt.date(year, month, which), m.start(), m.end()))
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        if taken and any(s < end and start < e for s, e in taken):
            continue
        before = text[max(0, start - 5) : start].lower()
        if before.endswith(("fy", "q", "h")) or _YEAR_AND_DASH.search(before):
            continue  # FY26, Q3, H1, the "27" of "2026-27": periods
        sign, number, scale = m.group("sign", "num", "scale")
        digits = number.replace(",", "")
        # a whole number in ASCII digits makes the same fraction without parsing a string
        whole = digits.isascii() and digits.isdigit()
        value = _whole_number(digits) if whole else Fraction(digits)
        if scale:
            value *= _SCALES.get(scale.lower(), 1)
        found.append(made_frozen(FoundValue, {"value": -value if sign else value,
                                              "start": start, "end": end}))  # fmt: skip
    if taken:  # dates and numbers (the numbers alone are found in order)
        found.sort(key=_value_start)
    return found


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


# -- tokens ------------------------------------------------------------------------------------
_RAW_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*|\?|[!;\n]|\.(?!\d)|:|\s[-–—]\s|[–—]")
_SPLIT_ALNUM = re.compile(r"[a-z]+|\d+")


def _pieces(raw: str) -> list[str]:
    """One raw word as canonical words: contractions, possessives, letters/digits apart."""
    word = raw.lower().replace("’", "'")
    if word.endswith("n't"):
        head = word[:-3]
        return [{"ca": "can", "wo": "will", "sha": "shall"}.get(head, head), "not"]
    if "'" in word:
        head, _, tail = word.partition("'")
        if tail == "s" and head in _PRONOUN_IS:
            return [head, "is"]
        if tail in ("s", ""):
            word = head  # a possessive: "Vance's" is Vance
        elif tail in ("re", "ve", "ll", "d", "m"):
            return [head, {"re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}[tail]]
        else:
            word = head + tail  # O'Connor
    parts = _SPLIT_ALNUM.findall(word)
    return parts or [word]


def tokenize(text: str) -> list[Token]:
    """The canonical tokens of ``text`` (sentence marks are kept only as sentence numbers)."""
    tokens: list[Token] = []
    sentence = 0
    first = 0  # the first token of the sentence read so far
    clause = False
    new_tuple = _new_tuple
    plain = _PLAIN
    for m in _RAW_TOKEN.finditer(text):
        raw = m[0]
        known = plain.get(raw)  # most words: one piece, itself in lower case
        if known is None and (raw.isalpha() or raw.isdigit()):
            known = _plain(raw)
        if known is not None:
            word, word_stem, capitalised = known
            start, end = m.span()
            token = (word, word_stem, start, end, capitalised, sentence, False, clause)
            tokens.append(new_tuple(Token, token))
            clause = False
            continue
        if raw in _SENTENCE_ENDS:
            if raw == "?":  # (made as statements: most sentences are)
                _ask(tokens, first)
            sentence += 1
            first = len(tokens)
            clause = False
            continue
        if raw.strip() in _CLAUSE_MARKS:
            clause = len(tokens) > first
            continue
        start, end = m.span()
        capitalised = raw[0].isupper()
        for piece in _pieces(raw):
            token = (piece, stem(piece), start, end, capitalised, sentence, False, clause)
            tokens.append(new_tuple(Token, token))
            clause = False
    return _canonical_periods(tokens)


_SENTENCE_ENDS = frozenset(["?", ".", "!", ";", "\n"])
_CLAUSE_MARKS = frozenset([":", "-", "–", "—"])
_new_tuple = tuple.__new__  # a Token made without its Python-level __new__ (a third the time)


_PLAIN: dict[str, tuple[str, str, bool]] = {}
"""a word written in letters or in digits alone -> its token's word, stem and whether it is
capitalised (a message's words are mostly words read before: one look-up, not four calls)"""
PLAIN_WORDS_KEPT = 65536


def _plain(raw: str) -> tuple[str, str, bool]:
    word = raw.lower()
    return remember(_PLAIN, raw, (word, stem(word), raw[0].isupper()), PLAIN_WORDS_KEPT)


def _ask(tokens: list[Token], first: int) -> None:
    """Make the tokens from ``first`` on those of a question."""
    for i in range(first, len(tokens)):
        word, word_stem, start, end, capitalised, sentence, _, clause = tokens[i]
        token = (word, word_stem, start, end, capitalised, sentence, True, clause)
        tokens[i] = _new_tuple(Token, token)


_YEAR = re.compile(r"(19|20)\d\d")
_TWO_DIGITS = re.compile(r"\d\d")


def _year(word: str) -> str | None:
    if _YEAR.fullmatch(word):
        return word
    return None


#: The words a rewrite of :func:`_canonical_periods` starts with (besides two digits).
_PERIOD_WORDS = frozenset(
    ["fy", "q", "h", "quarter", "rev", "v", *_ORDINALS, *_MONTH_ABBREVIATIONS]
)


def _canonical_periods(tokens: list[Token]) -> list[Token]:
    """Rewrite the ways of writing a period into one form (the same for labels and messages).

    "FY26" / "FY 2026" -> "fy 2026"; "2026-27" -> "2026 2027"; "Mar 2026" -> "march 2026";
    "3rd quarter" / "quarter 3" -> "q3"; "first half" -> "h1"; "rev C" -> "revision c";
    "v2" -> "version 2".
    """
    for token in tokens:  # (most messages write no period: nothing to rewrite)
        word = token[0]
        if word in _PERIOD_WORDS or (len(word) == 2 and word.isdecimal()):
            break
    else:
        return tokens
    out: list[Token] = []
    i = 0

    def put(token: Token, word: str) -> None:
        out.append(
            Token(
                word,
                stem(word),
                token.start,
                token.end,
                token.capitalised,
                token.sentence,
                token.question,
                token.clause,
            )
        )

    while i < len(tokens):
        t = tokens[i]
        word = t.word  # (two digits, as ``_TWO_DIGITS`` reads them: a token's are ASCII)
        if word not in _PERIOD_WORDS and not (len(word) == 2 and word.isdecimal()):
            out.append(t)  # most words: none of the rewrites below starts with them
            i += 1
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = out[-1].word if out else ""
        if t.word == "fy" and nxt is not None and _TWO_DIGITS.fullmatch(nxt.word):
            put(t, "fy")
            put(nxt, "20" + nxt.word)
            i += 2
            continue
        if (
            _TWO_DIGITS.fullmatch(t.word)
            and _year(prev)
            and int(t.word) == (int(prev) + 1) % 100
            and tokens[i - 1].end + 1 == t.start
        ):
            put(t, str(int(prev) + 1))  # "2026-27": a financial year, the second year written
            i += 1
            continue
        if (
            t.word in ("q", "h")
            and nxt is not None
            and nxt.word in (("1", "2", "3", "4") if t.word == "q" else ("1", "2"))
        ):
            put(t, t.word + nxt.word)
            i += 2
            continue
        if t.word in _ORDINALS and nxt is not None and nxt.word in ("quarter", "half"):
            put(t, ("q" if nxt.word == "quarter" else "h") + _ORDINALS[t.word])
            i += 2
            continue
        if t.word == "quarter" and nxt is not None and nxt.word in ("1", "2", "3", "4"):
            put(t, "q" + nxt.word)
            i += 2
            continue
        if t.word == "rev":
            put(t, "revision")
            i += 1
            continue
        if t.word == "v" and nxt is not None and nxt.word.isdigit():
            put(t, "version")
            i += 1
            continue
        if t.word in _MONTH_ABBREVIATIONS and t.word not in MONTHS:
            near = [w.word for w in (tokens[i - 1] if i else None, nxt) if w is not None]
            if t.word not in _AMBIGUOUS_MONTHS or t.capitalised or any(w.isdigit() for w in near):
                put(t, _MONTH_ABBREVIATIONS[t.word])
            else:
                out.append(t)  # "mar", "dec": words unless written as a month
            i += 1
            continue
        out.append(t)
        i += 1
    return out


@functools.lru_cache(maxsize=16384)
def words_of(text: str) -> tuple[str, ...]:
    """The canonical words of a label or phrase (for vocabulary entries; remembered: a task
    names each label, context and member many times, and tasks of one scenario share them)."""
    return tuple(t.word for t in tokenize(text))


def close_enough(word: str, known: str) -> bool:
    """A typo of a long word: one edit (two for ten letters and more), same first letter.

    Short words never match by edit distance: "match" is not "March", "fit" is not "fat".
    """
    if word == known or len(word) < 6 or len(known) < 6 or word[0] != known[0]:
        return word == known
    cutoff = 2 if min(len(word), len(known)) >= 10 else 1
    return OSA.distance(word, known, score_cutoff=cutoff) <= cutoff
