"""A follow-up's phrase hits without its message as written (``_phrase_hits.tagged_phrase_hits``):
where the screens show that the message as written finds no intent its tagged text does
not, the hits are the tagged text's, as ``_find_phrase_hits`` finds them from both texts;
and a name's word's phrases (``_screen.NameTouches``) found by its starts and ends looked up
are those of every piece tested."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_name_touches import NAME_WORDS, NAMES, TEXTS, _as_written
from uncobench_z3.settings import _phrase_hits as PH
from uncobench_z3.settings import _touches
from uncobench_z3.settings._screen import NameTouches


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS, st.lists(NAMES, max_size=4))
def test_the_tagged_text_s_hits_are_both_texts_hits_where_given(
    words: list[str], names: list[list[str]]
) -> None:
    joined = " ".join(words)
    plain, written = _as_written(words, names)
    PH._tagged_hits.cache_clear()
    both = PH._find_phrase_hits(joined, plain, " ".join(written))
    if not written:  # (no name: the two texts are one)
        assert PH.tagged_phrase_hits(joined, None) is PH._tagged_hits(joined).alone
        assert dataclasses.astuple(PH._find_phrase_hits(joined, joined)) == dataclasses.astuple(
            PH._tagged_hits(joined).alone
        )
        return
    found = PH.tagged_phrase_hits(joined, written)
    # (None: the message as written may find an intent, and is looked at; the tagged text's
    # hits hold no intent of it, so one it finds always gives None)
    if found is not None:
        assert dataclasses.astuple(found) == dataclasses.astuple(both), (joined, plain)


def test_a_name_that_shows_an_intent_is_left_to_the_message_as_written() -> None:
    # "precision" is an intent word (exact) the tagged text does not have
    joined = "your reply gave the zfact of zcand for the zoth but the task needs the zreq |"
    plain = joined.replace("zcand", "brenner precision engineering")
    names = ["brenner", "precision", "engineering"]
    assert PH.tagged_phrase_hits(joined, names) is None
    assert ("exact", 1) in [
        (name, which)
        for name, which, _, _ in PH._find_phrase_hits(joined, plain, " ".join(names)).intents
    ]
    # a word the screens do not read (not letters and digits): always looked at
    assert PH.tagged_phrase_hits(joined, ["o'connor"]) is None
    # a name no pattern reads a word of: the tagged text's hits, the message not written
    joined = "please send the zfact of zcand |"
    names = ["kerry", "formulation", "services"]
    assert PH.tagged_phrase_hits(joined, names) is PH._tagged_hits(joined).alone
    plain = joined.replace("zcand", " ".join(names))
    assert PH.tagged_phrase_hits(joined, names) == PH._find_phrase_hits(
        joined, plain, " ".join(names)
    )


def _touched_by_every_piece(
    touches: NameTouches, rows: tuple[str | None, ...], word: str
) -> set[int]:
    """The phrases with a piece in ``word``, every piece of every row tested (the definition)."""
    found = set()
    for k, row in enumerate(rows):
        for piece in (row or "").split():
            core = piece.strip("-")
            ends, starts = piece[0] == "-", piece[-1] == "-"
            if (
                (not ends and not starts and word == core)
                or (starts and not ends and word.startswith(core))
                or (ends and not starts and word.endswith(core))
                or (ends and starts and core in word)
            ):
                found.add(k)
    return found


PIECES = sorted(
    {
        piece.strip("-")
        for rows in (_touches.EXACT, _touches.MISMATCH, _touches.REFERENCE)
        for row in rows
        if row
        for piece in row.split()
    }
)
WORDS = st.one_of(
    st.sampled_from(NAME_WORDS),
    st.builds(
        lambda a, b, c: a + b + c,
        st.sampled_from(["", "x", "pre", *PIECES]),
        st.sampled_from(PIECES),
        st.sampled_from(["", "s", "x", *PIECES]),
    ),
    st.text(alphabet="abcdeilmnoprstxyz", max_size=12),
)


@settings(max_examples=1500, deadline=None)
@given(WORDS)
def test_a_word_s_phrases_are_those_of_every_piece_tested(word: str) -> None:
    for rows in (_touches.EXACT, _touches.MISMATCH, _touches.REFERENCE):
        touches = NameTouches(rows)
        assert touches._touched(word) == _touched_by_every_piece(touches, rows, word), word
