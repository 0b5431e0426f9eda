"""A new message read from the kept notes of its head (``_message.read_text``'s heads).

The one loop's notes after a text's first ": " (with the space after it), or after its first
three words, depend on that head alone: a head seen twice is kept (``_message._HEADS``) and a
later text with it is read from there on, from copies. Every text must still give exactly
what :func:`~._words.tokenize` and :func:`~._message.stems_and_layout` give, the first time
its head is seen, the second and later, and the kept notes must not change as texts add to
their copies.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_read_text import WORDS, assert_read_as_in_two_steps
from tests.test_words_fast import SEPARATORS
from uncobench_z3.settings import _message as MS


def _read_thrice(texts: list[str]) -> None:
    """Each text read as in two steps, the texts read three times in turn (a head seen
    once, kept, then read from), and the kept heads unchanged by what was read from them."""
    for _ in range(3):
        for text in texts:
            kept = copy.deepcopy(MS._HEADS)
            assert_read_as_in_two_steps(text)
            for head, notes in kept.items():
                if notes:  # (a head seen once is kept when seen again)
                    assert MS._HEADS.get(head, notes) == notes, head


BODIES = [
    "dialysis patients in the catchment (2026 renal registry extract). I need exactly these.",
    "fit-out cost estimate (2026 quantity surveyor estimate).",
    "did he pass? yes",
    "(FY26) and 2026-27, rev C",
    "the the records: the records - the.",
    "",
    "  x",
    "Marcus: did he pass?",
]
HEADS = [
    "For every candidate, please send your records of: ",
    "Please send the ",
    "Please give the exact ",
    "Marcus, can you say: ",  # (a question later in the head's sentence)
    "Was it the fit-out: ",  # (a piece the raw pattern reads)
    "In FY26 and (Q1 2026): ",  # (periods rewritten)
    "For (FY2026) records: ",  # (a period in a raw piece: read in the two steps)
    "Done. Next - the the: ",  # (a sentence ended, a clause and a repeated stem)
    "Done.: ",
    "a b c d e: ",
    ": ",
    "a: ",
    "a  b: ",
    "x - y: ",
]


def test_texts_that_share_heads_read_as_in_two_steps() -> None:
    MS._HEADS.clear()
    _read_thrice([head + body for head in HEADS for body in BODIES])
    assert any(MS._HEADS.values())  # (some read from kept notes)


def test_the_heads_kept_are_bounded() -> None:
    MS._HEADS.clear()
    for k in range(MS.HEADS_KEPT + 10):
        assert_read_as_in_two_steps(f"Head {k} words: body {k}.")
        assert len(MS._HEADS) <= MS.HEADS_KEPT


def test_a_long_head_is_not_kept() -> None:
    MS._HEADS.clear()
    head = "word " * (MS.LONGEST_HEAD // 5) + "end: "
    _read_thrice([head + "one", head + "two"])
    assert all(len(kept) < MS.LONGEST_HEAD + 2 for kept in MS._HEADS)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), max_size=8),
    st.sampled_from([": ", " "]),
    st.lists(
        st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=8),
        min_size=1,
        max_size=3,
    ),
)
def test_random_texts_with_shared_heads_read_as_in_two_steps(
    head: list[str], colon: str, bodies: list[list[tuple[str, str]]]
) -> None:
    MS._HEADS.clear()
    opening = " ".join(head) + colon
    texts = [opening + " ".join(piece for piece, _ in body) for body in bodies]
    texts += [opening + "".join(piece + separator for piece, separator in body) for body in bodies]
    _read_thrice(texts)
