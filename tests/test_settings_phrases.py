"""The phrase lists' screen finds a match exactly when one of their patterns does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.settings import _phrases as P

LISTS = {
    "exact": P.EXACT,
    "mismatch": P.MISMATCH,
    "reference": P.REPLY_REFERENCE,
    "all candidates": P.ALL_CANDIDATES,
}


def _words() -> list[str]:
    """Words the patterns are written with, so that random texts often match some."""
    found: set[str] = set()
    for patterns in LISTS.values():
        for pattern in patterns:
            found.update(re.findall(r"[a-z]+", pattern))
    return [*sorted(found), "zfact", "zreq", "zoth", "|", "?", "3", "2026", "or", "not"]


WORDS = _words()
texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_screen_matches_exactly_when_a_pattern_does(text: str) -> None:
    for patterns in LISTS.values():
        phrases = P.compiled(patterns)
        assert phrases.may_match(text) == any(p.search(text) for p in phrases)


def test_the_screen_is_not_trivially_true_or_false() -> None:
    exact = P.compiled(P.EXACT)
    assert exact.may_match("give me the exact figure")
    assert exact.may_match("did he pass or not pass")  # the backreference pattern, kept apart
    assert not exact.may_match("hello there")
    assert len(list(exact)) == len(P.EXACT)
