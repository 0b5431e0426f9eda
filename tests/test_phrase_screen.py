"""The screens of the phrase patterns (:mod:`uncobench_z3.settings._screen`) never skip a
pattern that matches: a screened search is the pattern's own search, for every pattern (the
screens by whole words and by strings written)."""

from __future__ import annotations

import dataclasses
import re
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uncobench_z3.settings import _phrase_hits as PH
from uncobench_z3.settings import _phrases as P
from uncobench_z3.settings import _screen as S
from uncobench_z3.settings._screen import (
    Phrase,
    first_match,
    first_pattern,
    needed_strings,
    needed_words,
    phrases,
    text_words,
)

INVENTORIES = [*P.EXACT, *P.MISMATCH, *P.REPLY_REFERENCE, *P.ALL_CANDIDATES]
#: the statements that cancel an intent's phrases inside them, by intent
CANCELLING = {"exact": P.EXACT_CANCELLED, "mismatch": P.MISMATCH_CANCELLED, "reference": []}
SINGLES = [
    P.ELLIPTICAL_QUESTION,
    P.YES_NO_QUESTION,
    P.COMPARISON,
    P.PRONOUNS,
    P.PLURAL_PRONOUNS,
    P.LATEST,
    P.EARLIEST,
]
PHRASES = [Phrase(p) for p in [*INVENTORIES, *SINGLES, *P.EXACT_CANCELLED, *P.MISMATCH_CANCELLED]]
#: the words the patterns are written with, the tags, and sentence marks
VOCABULARY = sorted(
    {w for p in PHRASES for w in re.findall(r"[a-z0-9]+", p.pattern.pattern) if len(w) > 1}
    | {"zcand", "zfact", "zmem", "zreq", "zoth", "znum", "zdate", "|", "? |", "it", "a", "s"}
)


@pytest.mark.parametrize("phrase", PHRASES, ids=lambda p: p.pattern.pattern[:40])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_text_a_pattern_matches_passes_its_screen(
    phrase: Phrase, data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(phrase.pattern))
    assert phrase.pattern.search(text)
    assert phrase.could_match(text_words(text)), (text, phrase.needs)
    assert phrase.could_match_text(text), (text, phrase.strings)


#: pieces of a text: a tagged text's words, numbers and marks, and what other texts hold
PIECES = [
    *VOCABULARY,
    *["2026", "q3", "O'Connor", "a-b", "x_y", "_", "(", "?|", "|a", "a.", "naïve", "²", "٣"],
]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=20),
    st.sampled_from([" ", "  ", "\t", " \n"]),
)
def test_a_texts_words_are_its_runs_of_word_characters(pieces: list[str], space: str) -> None:
    """:func:`text_words` reads a tagged text's words from its pieces between spaces, and any
    other text's with the pattern: the runs of word characters either way."""
    text = space.join(pieces)
    assert text_words(text) == frozenset(re.findall(r"\w+", text)), text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*VOCABULARY, "2026", "q3", "1234567"]), max_size=25))
def test_a_tagged_texts_words_are_read_without_the_pattern(words: list[str]) -> None:
    """A tagged text, words of letters or digits and marks joined by spaces, is split: the
    pattern (its findall costs twice) is not searched."""
    text = " ".join([*words, "zcand"])
    with patch.object(S, "_WORD") as pattern:
        found = text_words(text)
    pattern.findall.assert_not_called()
    assert found == frozenset(re.findall(r"\w+", text)), text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=25))
def test_a_screened_search_is_the_plain_search(words: list[str]) -> None:
    text = " ".join(words)
    found = text_words(text)
    for phrase in PHRASES:
        screened = phrase.search(text, found)
        plain = phrase.pattern.search(text)
        assert (screened and screened.span()) == (plain and plain.span()), phrase.pattern
        assert [m.span() for m in phrase.finditer(text, found)] == [
            m.span() for m in phrase.pattern.finditer(text)
        ]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(VOCABULARY), max_size=25), min_size=1, max_size=2))
def test_an_inventorys_first_match_is_the_plain_first_match(texts: list[list[str]]) -> None:
    """The patterns looked up by a text's words: the first pattern, in order, that matches
    one of the texts, on the first text it matches, as every pattern searched in turn."""
    written = tuple((" ".join(words), text_words(" ".join(words))) for words in texts)
    for inventory in (P.EXACT, P.MISMATCH, P.REPLY_REFERENCE, P.ALL_CANDIDATES):
        plain = next(
            (
                (which, hit.span())
                for pattern in inventory
                for which, (text, _) in enumerate(written)
                if (hit := re.search(pattern, text))
            ),
            None,
        )
        found = first_match(phrases(inventory), written)
        assert (found and (found[0], found[1].span())) == plain


INVENTORY_LISTS = (P.EXACT, P.MISMATCH, P.REPLY_REFERENCE, P.ALL_CANDIDATES)
SCREENED = [phrases(inventory) for inventory in INVENTORY_LISTS]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=25), st.integers(-1, 40))
def test_an_inventorys_first_pattern_is_the_first_pattern_that_matches(
    words: list[str], before: int
) -> None:
    """The first pattern (by place) that matches the text, among those placed before
    ``before`` (all of them for none): as every pattern searched in turn."""
    text = " ".join(words)
    limit = None if before < 0 else before
    for inventory, screened in zip(INVENTORY_LISTS, SCREENED, strict=True):
        plain = next(
            (
                (k, hit.span())
                for k, pattern in enumerate(inventory)
                if limit is None or k < limit
                if (hit := re.search(pattern, text))
            ),
            None,
        )
        found = first_pattern(screened, text, text_words(text), limit)
        assert (found and (found[0], found[1].span())) == plain


#: words a candidate's name or a one-word fact's name may be written as in the second text
NAMES = [w for w in VOCABULARY if w.isalpha() and not w.startswith("z")]
#: texts of the intents' patterns (a name may be one: "actual", "wrong period", "that range")
INTENT_TEXTS = st.sampled_from(
    [*P.EXACT, *P.MISMATCH, *P.REPLY_REFERENCE, *P.EXACT_CANCELLED, *P.MISMATCH_CANCELLED]
).flatmap(lambda pattern: st.from_regex(pattern, fullmatch=True))
TAGS = st.sampled_from(["zcand", "zfact"])


def _plain_phrase_hits(joined: str, plain: str) -> tuple[object, ...]:
    """:class:`~uncobench_z3.settings._phrase_hits.PhraseHits` of the two texts, every pattern
    searched in turn (no screen, nothing remembered): the intents' first pattern, in order,
    that matches either text, on ``joined`` first, outside the statements that cancel it in
    that text; all else in ``joined``."""

    def outside(pattern: str, text: str, cancelling: list[str]) -> re.Match[str] | None:
        # the first match, at the first place where one starts, that lies within no
        # cancelling statement (a statement cancels what lies within it)
        spans = [hit.span() for c in cancelling for hit in re.finditer(c, text)]
        if not spans:
            return re.search(pattern, text)
        compiled = re.compile(pattern)
        for at in range(len(text) + 1):
            hit = compiled.match(text, at)
            if hit and not any(a <= hit.start() and hit.end() <= b for a, b in spans):
                return hit
        return None

    def first(
        inventory: list[str], texts: tuple[str, ...], cancelling: list[str]
    ) -> tuple[int, re.Match[str]] | None:
        return next(
            (
                (which, hit)
                for pattern in inventory
                for which, text in enumerate(texts)
                if (hit := outside(pattern, text, cancelling))
            ),
            None,
        )

    found_all = first(P.ALL_CANDIDATES, (joined,), [])
    pronoun = re.search(P.PRONOUNS, joined) or re.search(P.PLURAL_PRONOUNS, joined)
    intents = []
    for name, inventory in (
        ("exact", P.EXACT),
        ("mismatch", P.MISMATCH),
        ("reference", P.REPLY_REFERENCE),
    ):
        found = first(inventory, (joined, plain), CANCELLING[name])
        if found is not None:
            which, hit = found
            text = (joined, plain)[which]
            intents.append((name, which, PH._span(text, hit.span()), hit.group(0)))
    questions = [
        PH._span(joined, hit.span())
        for pattern in (P.YES_NO_QUESTION, P.COMPARISON, P.ELLIPTICAL_QUESTION)
        if (hit := re.search(pattern, joined))
    ]
    return (
        PH._span(joined, found_all[1].span()) if found_all is not None else None,
        PH._span(joined, pronoun.span()) if pronoun else None,
        tuple(PH._ordered(joined, h.span()) for h in re.finditer(P.LATEST, joined)),
        tuple(PH._ordered(joined, h.span()) for h in re.finditer(P.EARLIEST, joined)),
        tuple(intents),
        tuple(questions),
        PH._yes_no_about(joined),
        tuple(
            sorted(
                PH._span(joined, h.span())
                for pattern in P.EXCLUDED
                for h in re.finditer(pattern, joined)
            )
        ),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(st.sampled_from(VOCABULARY), TAGS, TAGS, INTENT_TEXTS), max_size=16),
    st.lists(st.one_of(st.sampled_from(NAMES), INTENT_TEXTS), max_size=5),
    st.lists(st.one_of(st.sampled_from(NAMES), INTENT_TEXTS), max_size=5),
)
def test_phrase_hits_read_from_the_tagged_text_alone_are_the_hits_of_both_texts(
    words: list[str], names: list[str], other_names: list[str]
) -> None:
    """What the tagged text gives is remembered by it alone (:data:`PH._tagged_hits`) and
    the intents' patterns before its first are searched in the text as written: the hits
    are those of every pattern searched in both texts, found afresh, and found after
    another message with the same tagged text and other names."""
    joined = " ".join(words)

    def as_written(written: list[str]) -> str:
        # each "zcand" or "zfact" in turn written as a name (a multi-word name at times)
        out, left = [], list(written)
        for word in words:
            out.append(left.pop(0) if word in ("zcand", "zfact") and left else word)
        return " ".join(out)

    plain, other = as_written(names), as_written(other_names)
    for remembered in (False, True):
        if not remembered:
            PH._tagged_hits.cache_clear()
        else:
            PH._find_phrase_hits(joined, other)  # the tagged text's hits remembered
        for text in (plain, joined):
            found = dataclasses.astuple(PH._find_phrase_hits(joined, text))
            assert found == _plain_phrase_hits(joined, text), (joined, text)


def test_the_screens_are_what_the_patterns_need() -> None:
    assert needed_words(re.compile(r"\b(?:more|less) (?:precise|exact)\b")) == (
        frozenset({"precise", "exact"}),
        frozenset({"more", "less"}),
    )
    assert needed_words(re.compile(r"\bexact(?:ly)?\b")) == (frozenset({"exact", "exactly"}),)
    # a word not delimited in the pattern ("narrow" of "narrowing"), a flag, a lookaround or
    # a back-reference alone: no screen (always searched)
    for unscreened in (r"\bnarrow\w*", r"(?i)\bexact\b", r"(?=exact)", r"(\w+) \1"):
        assert needed_words(re.compile(unscreened)) == ()
    # most patterns of the inventories are screened
    assert sum(bool(p.needs) for p in PHRASES) >= 0.9 * len(PHRASES)


def test_the_strings_screens_are_what_the_patterns_contain() -> None:
    mismatch = re.compile(r"\bmismatch\w*\b|\bmis ?match\w*\b|\bmix ?up\b|\bconfused\b")
    assert needed_words(mismatch) == ()  # ("mismatched" is not the word "mismatch")
    assert needed_strings(mismatch) == (
        frozenset({"mismatch", "mis match", "mix up", "mixup", "confused"}),
    )
    # a string another of the set holds is enough ("all" of "all 3"), a set each for the
    # parts on either side of a part of any string; the "?" a question ends with
    assert needed_strings(re.compile(r"\ball(?: of)?(?: 3)?[^|]* (?:candidates|of them)")) == (
        frozenset({"all"}),
        frozenset({" candidates", " of them"}),
    )
    assert frozenset("?") in needed_strings(re.compile(r"[^|?]*\bzmem\b[^|?]*\?"))
    # a set the words screen already asks for is left out; flags, lookarounds alone: none
    exact = re.compile(r"\bexact(?:ly)?\b")
    assert needed_strings(exact, needed_words(exact)) == ()
    for unscreened in (r"(?i)\bmismatch", r"(?=exact)", r"(\w+)\1", r"\w+|x"):
        assert needed_strings(re.compile(unscreened)) == ()
    assert needed_strings(re.compile(r"(\w+) \1")) == (frozenset(" "),)
    assert sum(bool(p.strings) for p in PHRASES) >= 0.6 * len(PHRASES)
