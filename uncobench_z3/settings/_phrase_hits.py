"""The phrase patterns found in a message written with tags (:func:`phrase_hits`): all
candidates, a pronoun, "latest" and "earliest", the intents (exact, mismatch, reference), the
questions asking for one value, a yes/no question. They depend on the two tagged texts alone
(facts, candidates, contexts and numbers written as tags; names left as written in the
second), which many messages of other groups share, so the last read are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from .._memo import TextMemo
from . import _phrases as P
from . import _touches as _T
from ._screen import Inventory, NameTouches, Phrase, first_pattern, phrases, text_words

_EXACT = phrases(P.EXACT)
_MISMATCH = phrases(P.MISMATCH)
_REFERENCE = phrases(P.REPLY_REFERENCE)
_ALL = phrases(P.ALL_CANDIDATES)
_PRONOUNS = Phrase(P.PRONOUNS)
_PLURAL_PRONOUNS = Phrase(P.PLURAL_PRONOUNS)
_EXCLUDED = tuple(Phrase(p) for p in P.EXCLUDED)
_LATEST = Phrase(P.LATEST)
_EARLIEST = Phrase(P.EARLIEST)
_QUESTIONS = (Phrase(P.YES_NO_QUESTION), Phrase(P.COMPARISON), Phrase(P.ELLIPTICAL_QUESTION))

_new_tuple = tuple.__new__

PHRASINGS_KEPT = 2048
"""tagged messages whose phrase-pattern hits are remembered (the last read). Written with
tags, a message loses its task's names and numbers: over 300 groups of a built benchmark,
70% of the built-in careful agent's readings had the tagged words of an earlier reading
(2,685 readings, 819 distinct), 87% for the naive and patient agents together. A kept entry
is the two tagged texts and a few spans: about 1 kB for a message of 250 characters."""
PHRASING_CHARACTERS_KEPT = 1_000_000
"""the characters of the tagged texts kept, in all (a kept entry is about its two texts:
23 kB for a message of 20,000 characters), so about 2 MB at most"""
LONGEST_PHRASING_KEPT = 4_000
"""two tagged texts longer than this in all are not kept (see :data:`LONGEST_TEXT_KEPT`)"""

_Span = tuple[int, int, int, int]
"""characters ``start:end`` of ``joined`` (or ``plain``) and the words ``first:last`` of it
(where the read words of the message stand: :func:`_span`)"""
_Ordered = tuple[int, int, int, int, tuple[str, ...]]
"""a :data:`_Span` of ``joined`` and its first three words after it in its sentence"""


@dataclass(frozen=True, slots=True)
class PhraseHits:
    """What the phrase patterns find in a message written with tags (:func:`tagged`). It
    depends on the two tagged texts alone, so equal texts of other messages share it; spans
    are positions in ``joined`` (or in ``plain``, for an intent found there), each with the
    words it covers and, for "latest" and "earliest", the words after it (:data:`_Span`):
    what the reading would otherwise work out from ``joined`` for every message."""

    all_candidates: _Span | None
    pronoun: _Span | None
    """a personal pronoun, singular or plural (read only when no candidate is named)"""
    latest: tuple[_Ordered, ...]
    earliest: tuple[_Ordered, ...]
    intents: tuple[tuple[str, int, _Span, str], ...]
    """(intent, 0 for ``joined`` or 1 for ``plain``, span, the words matched), in
    :data:`~._request.INTENTS` order"""
    questions: tuple[_Span, ...]
    """the questions asking for one exact value (:data:`_QUESTIONS`, each pattern's first)"""
    yes_no: bool
    """a yes/no question naming a fact (:func:`_yes_no_about`)"""
    excluded: tuple[_Span, ...]
    """the words that name a candidate or a fact to be left out ("not Marcus":
    :data:`~._phrases.EXCLUDED`), each ending at the candidate's or the fact's tag"""


_INTENTS = (("exact", _EXACT), ("mismatch", _MISMATCH), ("reference", _REFERENCE))
"""the intents' inventories, in :data:`~._request.INTENTS` order"""
_CANCELLING = (
    tuple(Phrase(p) for p in P.EXACT_CANCELLED),
    tuple(Phrase(p) for p in P.MISMATCH_CANCELLED),
    (),
)
"""for each intent (:data:`_INTENTS`), the statements inside which its phrases say nothing
("no need to be precise": :data:`~._phrases.EXACT_CANCELLED`)"""
_TOUCHES = (NameTouches(_T.EXACT), NameTouches(_T.MISMATCH), NameTouches(_T.REFERENCE))
"""for each intent, which of its patterns may match a message as written where its tagged
text has no match (:func:`_find_phrase_hits`)"""


class _TaggedHits(NamedTuple):
    """What the phrase patterns find in a message's tagged text alone (``joined``: facts,
    candidates and contexts written as tags)."""

    words: frozenset[str]
    """:func:`text_words` of the tagged text"""
    intents: tuple[tuple[int, _Span, str] | None, ...]
    """for each intent (:data:`_INTENTS`), its inventory's first pattern that matches, if
    any, outside the statements that cancel it (:func:`cancelled_spans`): (its place in the
    inventory, its span, the words matched)"""
    alone: PhraseHits
    """the tagged text's :class:`PhraseHits`: the message's, unless the message as written
    finds an intent the tagged text does not (:func:`_find_phrase_hits`)"""


def _read_tagged(joined: str) -> _TaggedHits:
    """:class:`_TaggedHits` of ``joined``. :data:`_tagged_hits` remembers the last."""
    in_joined = text_words(joined)  # what the phrase patterns are screened with
    found_all = first_pattern(_ALL, joined, in_joined)
    pronoun = _PRONOUNS.search(joined, in_joined) or _PLURAL_PRONOUNS.search(joined, in_joined)
    intents: list[tuple[int, _Span, str] | None] = []
    for (_, patterns), cancelling in zip(_INTENTS, _CANCELLING, strict=True):
        cancelled = cancelled_spans(cancelling, joined, in_joined)
        found_intent = first_pattern(patterns, joined, in_joined, cancelled=cancelled)
        if found_intent is None:
            intents.append(None)
        else:
            k, hit = found_intent
            intents.append((k, _span(joined, hit.span()), hit.group(0)))
    questions = []
    for pattern in _QUESTIONS:
        asked = pattern.search(joined, in_joined)
        if asked:
            questions.append(_span(joined, asked.span()))
    alone = PhraseHits(
        all_candidates=_span(joined, found_all[1].span()) if found_all is not None else None,
        pronoun=_span(joined, pronoun.span()) if pronoun else None,
        latest=tuple([_ordered(joined, h.span()) for h in _LATEST.finditer(joined, in_joined)]),
        earliest=tuple([_ordered(joined, h.span()) for h in _EARLIEST.finditer(joined, in_joined)]),
        intents=tuple(
            [
                (name, 0, hit[1], hit[2])
                for (name, _), hit in zip(_INTENTS, intents, strict=True)
                if hit
            ]
        ),
        questions=tuple(questions),
        yes_no=_yes_no_about(joined),
        excluded=tuple(
            sorted(
                [_span(joined, h.span()) for p in _EXCLUDED for h in p.finditer(joined, in_joined)]
            )
        ),
    )
    return _new_tuple(_TaggedHits, (in_joined, tuple(intents), alone))


def _find_phrase_hits(joined: str, plain: str, names: str | None = None) -> PhraseHits:
    """The phrase patterns' hits in a tagged message (``joined``: facts, candidates and
    contexts written as tags; ``plain``: candidate names and one-word fact names left as
    written; ``names``: the words of those names, if known: else nothing is screened by
    them). :func:`phrase_hits` remembers the last.

    All but the intents are looked for in ``joined`` alone, and an intent's pattern is
    taken from ``plain`` only when it comes before the first that matches ``joined`` (the
    first pattern, in order, that matches either text, on ``joined`` first): what
    ``joined`` gives is remembered by it alone (:data:`_tagged_hits`), since messages to
    other candidates and tasks share their tagged text but not their names (the 723
    readings of the first 80 groups of a built benchmark: 248 pairs of texts, 30 tagged
    texts). Of those patterns, which all miss ``joined``, only those that may read a word
    of a name are searched (:class:`~._screen.NameTouches`): most name no word of theirs
    (that pass's ``phrase_hits``, counted alone, 21.9 to 13.3 million instructions)."""
    tagged = _tagged_hits(joined)
    if plain == joined:
        # most messages name no candidate and no one-word fact: their two texts are one,
        # and a pattern that misses the first misses the second
        return tagged.alone
    in_plain: frozenset[str] | None = None
    words = None  # the names' words, when known and all letters and digits
    if names and names.replace(" ", "").isalnum():
        words = names.split()
    intents = []
    found_in_plain = False
    for (name, patterns), touches, cancelling, in_joined in zip(
        _INTENTS, _TOUCHES, _CANCELLING, tagged.intents, strict=True
    ):
        # (an intent whose first pattern matches ``joined`` has none before it to look for
        # in ``plain``: 144 of the 459 intents of the first pass's 153 pairs of texts)
        if in_joined is None or in_joined[0] != 0:
            before = in_joined[0] if in_joined is not None else None
            # (the patterns before ``before`` all miss ``joined``: of them only those that
            # may read a name's word can match ``plain``)
            only = None
            if words is not None:
                only = _may_match_plain(patterns, touches, words, tagged.words, plain, before)
            if only is None or only:
                if in_plain is None:
                    in_plain = text_words(plain)
                cancelled = cancelled_spans(cancelling, plain, in_plain)
                found_plain = first_pattern(patterns, plain, in_plain, before, only, cancelled)
                if found_plain is not None:
                    hit = found_plain[1]
                    intents.append((name, 1, _span(plain, hit.span()), hit.group(0)))
                    found_in_plain = True
                    continue
        if in_joined is not None:
            intents.append((name, 0, in_joined[1], in_joined[2]))
    # (``plain`` finds no intent of its own in 151 of the first pass's 153 pairs of texts)
    return replace(tagged.alone, intents=tuple(intents)) if found_in_plain else tagged.alone


def tagged_phrase_hits(joined: str, names: list[str] | None) -> PhraseHits | None:
    """The phrase hits of a tagged message (``joined``) whose message as written cannot
    find an intent ``joined`` does not, by the screens of :func:`_find_phrase_hits` alone
    (a pattern's needed strings are not looked for): ``joined``'s own. ``names``: the words
    of its names left as written, None when it names none (the two texts are one). None
    when the message as written may find one: :func:`phrase_hits` looks for it there. The
    message as written is then written only where needed: 38 of the 160 follow-ups of the
    first pass over 80 built groups (counted alone, ``phrase_hits`` 13.3 million
    instructions for the 160 became 7.0 here and 2.4 for the 38; ``_request``'s tags and
    message as written 11.2 became 7.5 for the tags and names)."""
    tagged = _tagged_hits(joined)
    if names is None:
        return tagged.alone
    if not "".join(names).isalnum():
        return None  # (a name's word that :class:`~._screen.NameTouches` does not read)
    for (_, patterns), touches, in_joined in zip(_INTENTS, _TOUCHES, tagged.intents, strict=True):
        if in_joined is None or in_joined[0] != 0:
            before = in_joined[0] if in_joined is not None else None
            if _may_match_plain(patterns, touches, names, tagged.words, None, before):
                return None
    return tagged.alone


def _may_match_plain(
    patterns: Inventory,
    touches: NameTouches,
    words: list[str],
    in_joined: frozenset[str],
    plain: str | None,
    before: int | None,
) -> set[int]:
    """The patterns of an intent placed before ``before`` that may match ``plain`` where
    all miss ``joined`` (with :func:`text_words` ``in_joined``), whose names' words are
    ``words``: those that may read one (:meth:`~._screen.NameTouches.may_match`), whose
    needed words are among ``joined``'s and the names' (all ``plain``'s are) and whose
    needed strings ``plain`` has (when given): :func:`first_pattern` screens them again by
    ``plain``'s words, which are not read when none is left (most intents)."""
    listed = patterns.phrases
    left = set()
    for k in touches.may_match(words):
        if before is not None and k >= before:
            continue
        phrase = listed[k]
        for need in phrase.needs:
            if need.isdisjoint(in_joined) and need.isdisjoint(words):
                break
        else:
            if not phrase.strings or plain is None or phrase.could_match_text(plain):
                left.add(k)
    return left


def cancelled_spans(
    cancelling: tuple[Phrase, ...], text: str, words: frozenset[str]
) -> tuple[tuple[int, int], ...]:
    """The spans (characters ``start:end``) of ``text`` (with its :func:`text_words`) that
    the statements ``cancelling`` an intent (:data:`_CANCELLING`) cover: the intent's
    phrases inside one say nothing. What they cover in a tagged text they cover in its
    message as written (:mod:`._phrases`), so that a pattern that misses the tagged text
    still misses the other unless it reads a name (:class:`NameTouches`)."""
    if not cancelling:
        return ()
    spans: list[tuple[int, int]] = []
    for phrase in cancelling:
        spans.extend(hit.span() for hit in phrase.finditer(text, words))
    return tuple(spans)


def _span(text: str, span: tuple[int, int]) -> _Span:
    """The characters ``span`` of ``text`` with the words they cover: what the reading needs
    to find the message's own words for them (:func:`~._request.read_request`), remembered
    with the phrases since it depends on the tagged text alone."""
    start, end = span
    first = len(text[:start].split())
    return (start, end, first, first + len(text[start:end].split()))


def _ordered(joined: str, span: tuple[int, int]) -> _Ordered:
    """:func:`_span` of "latest" or "earliest", with the three words after it in its sentence
    (what tells whether it names an ordered fact's context)."""
    return (*_span(joined, span), tuple(joined[span[1] :].split("|")[0].split()[:3]))


phrase_hits = TextMemo(
    _find_phrase_hits, PHRASINGS_KEPT, PHRASING_CHARACTERS_KEPT, LONGEST_PHRASING_KEPT
)
_tagged_hits = TextMemo(
    _read_tagged, PHRASINGS_KEPT, PHRASING_CHARACTERS_KEPT, LONGEST_PHRASING_KEPT
)
"""the last tagged texts' :class:`_TaggedHits`, kept as :func:`phrase_hits` keeps its pairs
(each is a part of the same bounds' worth)"""


_AUXILIARIES = frozenset(
    [
        "did",
        "does",
        "do",
        "is",
        "was",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "are",
        "were",
    ]
)


def _yes_no_about(joined: str) -> bool:
    """A yes/no question naming a fact ("Is he certified?", "Does she hold the licence?");
    "Can you send ...?" is a request, not such a question."""
    for sentence in joined.split("|"):
        words = sentence.split()
        is_question = bool(words) and words[-1] == "?" and "zfact" in words
        while words and words[0] in P.LEAD_WORDS:
            words = words[1:]
        asks_value = bool(words) and words[0] in _AUXILIARIES and words[1:2] != ["you"]
        if is_question and (asks_value or "whether" in words):
            return True
    return False
