"""The rest of a reading made with its tags written once: where a name is tagged, the tags
of its tokens and the message as written both from one ``tags_of`` (``_request``'s
``_positions_and_names`` and ``_written_as_is``), and the phrases of the message as written
looked for only for an intent that the tagged text does not find at its inventory's first pattern
(``_phrase_hits._find_phrase_hits``), each against the steps it replaces."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import messages, template_messages
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _phrase_hits as PH
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings import _tagging as T
from uncobench_z3.settings._request import parse_message, read_request
from uncobench_z3.settings._screen import first_pattern, text_words


def _written_as_is_before(task: object, role_facts: frozenset[str], rest: RQ._Rest) -> str:
    """The message as written, as it was made before: from ``tags_of``'s second tags alone."""
    _, _, _, (joined, layout, _, _), (matches, found, _) = rest
    named_tag_at = T.tags_of(task, role_facts, matches, found)[1]  # type: ignore[arg-type]
    return joined if named_tag_at is None else " ".join(T.words_written(layout, named_tag_at))


def _check_positions_and_written_as_is(vocabulary: Vocabulary, text: str, role: str | None) -> None:
    request = read_request(vocabulary, text, role, None, parse_message(vocabulary, text))
    rest = request.__dict__[RQ._REST]
    task, role_facts = vocabulary.task, vocabulary.facts_read_for(role)
    matches, found = rest[4][0], rest[4][1]
    position, words, as_written = RQ._positions_and_names(task, role_facts, rest)
    assert position == T.positions_written(
        rest[3][1], T.tags_of(task, role_facts, matches, found)[0]
    )
    joined = rest[3][0]
    plain = RQ._written_as_is(joined, rest[3][1], as_written)
    assert plain == _written_as_is_before(task, role_facts, rest)
    # the names' words: every word written more often as written than tagged, and only
    # words written
    names = " ".join(words or ())
    more = Counter(plain.split())
    more.subtract(joined.split())
    assert {w for w, n in more.items() if n > 0} <= set(names.split()) <= set(plain.split())
    assert (names == "") == (plain == joined) == (words is None)


@settings(max_examples=300, deadline=None)
@given(messages(), st.booleans())
def test_the_positions_and_the_message_as_written_are_the_tags_and_written_as_is(
    message: tuple[Vocabulary, str], to_role: bool
) -> None:
    vocabulary, text = message
    role = vocabulary.task.roles[0] if to_role else None
    _check_positions_and_written_as_is(vocabulary, text, role)


def test_the_template_messages_tags_and_message_as_written() -> None:
    for vocabulary, text, role, _ in template_messages():
        _check_positions_and_written_as_is(vocabulary, text, role)


def _phrase_hits_before(joined: str, plain: str) -> PH.PhraseHits:
    """``_find_phrase_hits`` as it was: ``plain`` searched for every intent when it differs."""
    tagged = PH._tagged_hits(joined)
    in_plain = text_words(plain) if plain != joined else None
    intents = []
    for (name, patterns), cancelling, in_joined in zip(
        PH._INTENTS, PH._CANCELLING, tagged.intents, strict=True
    ):
        if in_plain is not None:
            before = in_joined[0] if in_joined is not None else None
            cancelled = PH.cancelled_spans(cancelling, plain, in_plain)
            found_plain = first_pattern(patterns, plain, in_plain, before, None, cancelled)
            if found_plain is not None:
                hit = found_plain[1]
                intents.append((name, 1, PH._span(plain, hit.span()), hit.group(0)))
                continue
        if in_joined is not None:
            intents.append((name, 0, in_joined[1], in_joined[2]))
    return PH.PhraseHits(
        all_candidates=tagged.alone.all_candidates,
        pronoun=tagged.alone.pronoun,
        latest=tagged.alone.latest,
        earliest=tagged.alone.earliest,
        intents=tuple(intents),
        questions=tagged.alone.questions,
        yes_no=tagged.alone.yes_no,
        excluded=tagged.alone.excluded,
    )


def _pattern_words() -> list[str]:
    """Words of the intents' patterns (so that random texts match some of them)."""
    words: set[str] = set()
    for _, inventory in PH._INTENTS:
        for phrase in inventory.phrases:
            words.update(re.findall(r"[a-z]+", phrase.pattern.pattern))
    return sorted(w for w in words if len(w) > 1)


_WORDS = [*_pattern_words(), "zcand", "zfact", "zreq", "zoth", "znum", "|", "?", "the", "of"]
_NAMES = ["auburn", "medical", "suites", "exact", "value", "range", "wrong", "price", "that"]


@st.composite
def text_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A tagged text and the same with some of its name tags written as words (names that
    may be the patterns' own words)."""
    words = draw(st.lists(st.sampled_from(_WORDS), max_size=25))
    plain = []
    for word in words:
        if word in ("zcand", "zfact") and draw(st.booleans()):
            plain += draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3))
        else:
            plain.append(word)
    return " ".join(words), " ".join(plain)


@settings(max_examples=2000, deadline=None)
@given(text_pairs())
def test_phrase_hits_are_those_of_every_intent_searched(pair: tuple[str, str]) -> None:
    joined, plain = pair
    assert PH._find_phrase_hits(joined, plain) == _phrase_hits_before(joined, plain)
    assert PH._find_phrase_hits(joined, joined) == _phrase_hits_before(joined, joined)


def test_the_template_messages_phrase_hits() -> None:
    """Over the example tasks' template messages (none of which finds an intent in the
    message as written alone)."""
    for vocabulary, text, role, _ in template_messages():
        request = read_request(vocabulary, text, role)
        rest = request.__dict__[RQ._REST]
        joined = rest[3][0]
        plain = _written_as_is_before(vocabulary.task, vocabulary.facts_read_for(role), rest)
        assert PH._find_phrase_hits(joined, plain) == _phrase_hits_before(joined, plain)


def test_an_intent_found_in_the_message_as_written_alone_or_first_in_the_tagged_text() -> None:
    """A name that is an intent's word is found in the message as written (an intent the
    tagged text lacks), and one the tagged text finds at its first pattern is not looked for
    again (the same hits as looking)."""
    hits = PH._find_phrase_hits("zcand", "exact")
    assert hits.intents == (("exact", 1, (0, 5, 0, 1), "exact"),)
    assert hits == _phrase_hits_before("zcand", "exact")
    # the tagged text finds a later pattern (the fourth, the second), the name an earlier
    for joined, plain, later in (
        ("definite zcand", "definite exact", 4),
        ("zcand issue precise", "exact issue precise", 1),
    ):
        assert PH._tagged_hits(joined).intents[0][0] == later
        hits = PH._find_phrase_hits(joined, plain)
        assert hits == _phrase_hits_before(joined, plain)
        assert hits.intents[0][:2] == ("exact", 1)
    joined = "please give the exact zfact zreq of zcand |"
    assert PH._tagged_hits(joined).intents[0][0] == 0  # (the exact inventory's first)
    for plain in (
        "please give the exact price zreq of auburn medical suites |",
        "please give the exact exact zreq of that range |",
    ):
        hits = PH._find_phrase_hits(joined, plain)
        assert hits == _phrase_hits_before(joined, plain)
        assert hits.intents[0][:2] == ("exact", 0)
