"""The words of a message, in one canonical form the request reader and the vocabulary share.

Everything that must *not* matter when a colleague reads a follow-up is removed here, once:
case, punctuation, plurals and other inflections (Snowball stems), possessives ("Vance's"),
contractions ("don't" -> "do not"), and the many ways of writing a period ("FY26", "fy 2026",
"Mar 2026", "third quarter", "rev. C"). Small typos are tolerated when a word is compared
with the task's vocabulary (:func:`close_enough`), not here.

Dates and numbers are found on the raw text first (:func:`~._values.scan_values`), so that
the year of "1 August 2026" is read as part of a date, not as a period.
"""

from __future__ import annotations

import functools
import re
from typing import Final

import Stemmer
from rapidfuzz.distance import OSA

from .._memo import remember
from ._values import _MONTH_ABBREVIATIONS
from ._values import MONTHS as MONTHS
from ._values import FoundValue as FoundValue  # (the reader's modules import them from here)
from ._values import scan_values as scan_values

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


Token = tuple[str, str, int, int, bool, int, bool, bool]
"""One canonical word of a message, with where it came from: ``(word, stem, start, end,
capitalised, sentence, question, clause)``, read by the indexes below. An exact tuple, not a
named tuple: a message makes one per word (16,300 for the 601 messages of the first 80
groups of a built benchmark), an exact tuple is made without a call to a type, and the
collector stops tracking one of strings, numbers and booleans at its first collection,
while a named tuple stays tracked for good with the text memo that keeps it
(:mod:`._message`)."""
WORD: Final = 0
"""lower case, canonical ("fy26" gives "fy", "2026"; "Mar" before a year gives "march")"""
STEM: Final = 1
START: Final = 2
END: Final = 3
CAPITALISED: Final = 4
"""written with a capital first letter (names that are also common words need one)"""
SENTENCE: Final = 5
QUESTION: Final = 6
"""the token's sentence ends with a question mark"""
CLAUSE: Final = 7
"""the token starts a clause after a colon or a dash ("Marcus: did he pass?")"""


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
    periods: list[int] = []  # the tokens a period's rewrite may start with
    if text.isascii() and _only_spaces(text):  # (most messages)
        _tokens_by_spaces(text, tokens, periods)
    else:
        _read_raw_tokens(text, 0, len(text), tokens, periods, 0, 0, False)
    return _canonical_periods(tokens, periods) if periods else tokens


_OTHER_SPACES = ("\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f")
"""the white space of ASCII but " " (what ``\\s`` reads in a text of ASCII)"""


def _only_spaces(text: str) -> bool:
    """Whether a text of ASCII has no white space but " " (a search for one character is a
    ``memchr``: nine of them cost less than ``str.isprintable``, a call a character)."""
    for space in _OTHER_SPACES:  # noqa: SIM110 (a loop: any() of a generator costs more)
        if space in text:
            return False
    return True


def _tokens_by_spaces(
    text: str,
    tokens: list[Token],
    periods: list[int],
    start: int = 0,
    sentence: int = 0,
    first: int = 0,
    clause: bool = False,
) -> None:
    """:func:`_read_raw_tokens` of a whole text of ASCII whose only white space is " ", read
    between its spaces. So the pieces of ``text.split(" ")`` and their lengths
    give every word's place: a piece of letters or digits alone is one raw word (most are);
    one with leading "(" and trailing ")", "," and sentence or clause marks is that word and
    its marks; "-" alone is a clause mark between spaces; any other piece goes through
    :data:`_RAW_TOKEN` alone (a match of it spans a space only in " - "). A match of that
    pattern costs about 1,800 instructions (a search, its match object, ``m[0]``,
    ``m.span()``), a piece of the split about 100. With the period rewrites' first words
    noted as the tokens are made (no second pass over them), tokenize: 131.1 to 83.5 million
    instructions for the 601 messages of the first 80 groups of a built benchmark;
    tests/test_words_fast.py checks the tokens against the pattern's reading."""
    # (``tokens.append(...)`` called as a method, not a bound method kept in a local: Python
    # 3.11 specialises that call of a list's append; tokenize over the same messages, 67.6
    # to 66.4 million instructions)
    # (from ``start``, a place after a space or the text's start, with the sentence number,
    # the sentence's first token and the clause flag read before it: 0, 0, False at the start)
    plain = _PLAIN
    for chunk in text[start:].split(" "):  # (``text[0:]`` is ``text``, no copy)
        end = start + len(chunk)
        known = plain.get(chunk)  # most words: one piece, itself in lower case
        if known is None and (chunk.isalpha() or chunk.isdigit()):
            known = _plain(chunk)
        if known is not None:
            word, word_stem, capitalised, period, _ = known
            if period:
                periods.append(len(tokens))
            tokens.append((word, word_stem, start, end, capitalised, sentence, False, clause))
            clause = False
        elif chunk == "-":  # " - ", a clause mark (none at the text's ends, where it does
            clause = len(tokens) > first  # nothing; "a - - b": the second a no-op)
        elif chunk:
            marked = _MARKED.get(chunk)
            if marked is None:
                marked = _marked(chunk)
            if not marked:
                sentence, first, clause = _read_raw_tokens(
                    text, start, end, tokens, periods, sentence, first, clause
                )
            else:
                word, word_stem, capitalised, period, _, lead, size, marks = marked
                if period:
                    periods.append(len(tokens))
                at = start + lead
                tokens.append(
                    (word, word_stem, at, at + size, capitalised, sentence, False, clause)
                )
                clause = False
                for mark in marks:  # (")" and "," make no token)
                    if mark == ":":  # (as the pattern's reading: "a.: b" opens no clause,
                        clause = len(tokens) > first  # its sentence has no token yet)
                    elif mark in _SENTENCE_ENDS:  # (a "." before a space or the end)
                        if mark == "?":
                            _ask(tokens, first)
                        sentence += 1
                        first = len(tokens)
                        clause = False
        start = end + 1


def _read_raw_tokens(
    text: str,
    pos: int,
    endpos: int,
    tokens: list[Token],
    periods: list[int],
    sentence: int,
    first: int,
    clause: bool,
) -> tuple[int, int, bool]:
    """The tokens of the raw tokens (:data:`_RAW_TOKEN`) of ``text[pos:endpos]`` added to
    ``tokens`` (and to ``periods`` the indexes of those :func:`_starts_period`), read from the
    sentence number, the sentence's first token and the clause flag given; those after."""
    plain = _PLAIN
    for m in _RAW_TOKEN.finditer(text, pos, endpos):
        raw = m[0]
        # (a plain word's token is made as _tokens_by_spaces makes it, written out in both
        # loops: a shared function would be a call a token, about 6 M instructions over the
        # 601 messages of 80 built groups)
        known = plain.get(raw)  # most words: one piece, itself in lower case
        if known is None and (raw.isalpha() or raw.isdigit()):
            known = _plain(raw)
        if known is not None:
            word, word_stem, capitalised, period, _ = known
            if period:
                periods.append(len(tokens))
            start, end = m.span()
            tokens.append((word, word_stem, start, end, capitalised, sentence, False, clause))
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
            if _starts_period(piece):
                periods.append(len(tokens))
            tokens.append((piece, stem(piece), start, end, capitalised, sentence, False, clause))
            clause = False
    return sentence, first, clause


_SENTENCE_ENDS = frozenset(["?", ".", "!", ";", "\n"])
_CLAUSE_MARKS = frozenset([":", "-", "–", "—"])


_PLAIN: dict[str, tuple[str, str, bool, bool, bool]] = {}
"""a word written in letters or in digits alone -> its token's word, stem, whether it is
capitalised, whether a period's rewrite may start with it (:func:`_starts_period`; a
message's words are mostly words read before: one look-up, not five calls) and whether a
vocabulary may read it as a typo (six characters or more, not digits: what
:func:`~._message.read_text` notes, as ``TokenStems``' correctable tokens)"""
PLAIN_WORDS_KEPT = 65536


def _plain(raw: str) -> tuple[str, str, bool, bool, bool]:
    word = raw.lower()
    long = len(word) >= 6 and not word.isdigit()
    entry = (word, stem(word), raw[0].isupper(), _starts_period(word), long)
    return remember(_PLAIN, raw, entry, PLAIN_WORDS_KEPT)


_MARKED: dict[str, tuple[str, str, bool, bool, bool, int, int, str] | tuple[()]] = {}
"""a piece between spaces that is one plain word (:data:`_PLAIN`) with leading "(" and
trailing ")", ",", sentence or clause marks ("Lot," "pass?", "(FY26)") -> that word's entry,
where the word starts in the piece, its length and the marks after it; () for a piece the
raw pattern reads (:func:`_read_raw_tokens`)"""
MARKED_PIECES_KEPT = 65536


def _marked(chunk: str) -> tuple[str, str, bool, bool, bool, int, int, str] | tuple[()]:
    core = chunk.lstrip("(")
    raw = core.rstrip("),.:;?!")
    known = _PLAIN.get(raw)
    if known is None and (raw.isalpha() or raw.isdigit()):
        known = _plain(raw)
    entry: tuple[str, str, bool, bool, bool, int, int, str] | tuple[()] = ()
    if known is not None:
        entry = (*known, len(chunk) - len(core), len(raw), core[len(raw) :])
    return remember(_MARKED, chunk, entry, MARKED_PIECES_KEPT)


def _ask(tokens: list[Token], first: int) -> None:
    """Make the tokens from ``first`` on those of a question."""
    for i in range(first, len(tokens)):
        word, word_stem, start, end, capitalised, sentence, _, clause = tokens[i]
        tokens[i] = (word, word_stem, start, end, capitalised, sentence, True, clause)


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


def _starts_period(word: str) -> bool:
    """Whether a rewrite of :func:`_canonical_periods` may start with ``word`` (two digits,
    as ``_TWO_DIGITS`` reads them: a token's are ASCII)."""
    return word in _PERIOD_WORDS or (len(word) == 2 and word.isdecimal())


def _canonical_periods(tokens: list[Token], periods: list[int] | None = None) -> list[Token]:
    """Rewrite the ways of writing a period into one form (the same for labels and messages).

    "FY26" / "FY 2026" -> "fy 2026"; "2026-27" -> "2026 2027"; "Mar 2026" -> "march 2026";
    "3rd quarter" / "quarter 3" -> "q3"; "first half" -> "h1"; "rev C" -> "revision c";
    "v2" -> "version 2". ``periods``: the indexes of the tokens that :func:`_starts_period`,
    in order (found here when not given); the tokens between are kept as they are.
    """
    if periods is None:
        periods = [i for i, token in enumerate(tokens) if _starts_period(token[WORD])]
    if not periods:  # (most messages write no period: nothing to rewrite)
        return tokens
    out: list[Token] = []
    i = 0

    def put(token: Token, word: str) -> None:
        out.append((word, stem(word), *token[START:]))

    for at in periods:
        if at < i:
            continue  # (read with the token before it: "fy 26")
        out += tokens[i:at]  # none of the rewrites below starts with them
        i = at
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = out[-1][WORD] if out else ""
        if t[WORD] == "fy" and nxt is not None and _TWO_DIGITS.fullmatch(nxt[WORD]):
            put(t, "fy")
            put(nxt, "20" + nxt[WORD])
            i += 2
        elif (
            _TWO_DIGITS.fullmatch(t[WORD])
            and _year(prev)
            and int(t[WORD]) == (int(prev) + 1) % 100
            and tokens[i - 1][END] + 1 == t[START]
        ):
            put(t, str(int(prev) + 1))  # "2026-27": a financial year, the second year written
            i += 1
        elif (
            t[WORD] in ("q", "h")
            and nxt is not None
            and nxt[WORD] in (("1", "2", "3", "4") if t[WORD] == "q" else ("1", "2"))
        ):
            put(t, t[WORD] + nxt[WORD])
            i += 2
        elif t[WORD] in _ORDINALS and nxt is not None and nxt[WORD] in ("quarter", "half"):
            put(t, ("q" if nxt[WORD] == "quarter" else "h") + _ORDINALS[t[WORD]])
            i += 2
        elif t[WORD] == "quarter" and nxt is not None and nxt[WORD] in ("1", "2", "3", "4"):
            put(t, "q" + nxt[WORD])
            i += 2
        elif t[WORD] == "rev":
            put(t, "revision")
            i += 1
        elif t[WORD] == "v" and nxt is not None and nxt[WORD].isdigit():
            put(t, "version")
            i += 1
        elif t[WORD] in _MONTH_ABBREVIATIONS and t[WORD] not in MONTHS:
            near = [w[WORD] for w in (tokens[i - 1] if i else None, nxt) if w is not None]
            if t[WORD] not in _AMBIGUOUS_MONTHS or t[CAPITALISED] or any(w.isdigit() for w in near):
                put(t, _MONTH_ABBREVIATIONS[t[WORD]])
            else:
                out.append(t)  # "mar", "dec": words unless written as a month
            i += 1
        else:
            out.append(t)
            i += 1
    out += tokens[i:]
    return out


@functools.lru_cache(maxsize=16384)
def words_of(text: str) -> tuple[str, ...]:
    """The canonical words of a label or phrase (for vocabulary entries; remembered: a task
    names each label, context and member many times, and tasks of one scenario share them)."""
    return tuple([t[WORD] for t in tokenize(text)])


def close_enough(word: str, known: str) -> bool:
    """A typo of a long word: one edit (two for ten letters and more), same first letter.

    Short words never match by edit distance: "match" is not "March", "fit" is not "fat".
    """
    if word == known or len(word) < 6 or len(known) < 6 or word[0] != known[0]:
        return word == known
    cutoff = 2 if min(len(word), len(known)) >= 10 else 1
    return OSA.distance(word, known, score_cutoff=cutoff) <= cutoff
