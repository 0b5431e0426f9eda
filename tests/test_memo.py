"""The bounded memos of the hot paths: :func:`remember` and :class:`TextMemo`, against a
plain model of what they keep."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from uncobench_z3._memo import TextMemo, remember

TEXTS = ["", "a", "ab", "xyz", "abcd"]


@settings(max_examples=200, deadline=None)
@given(
    # few texts, so that they come again: hits, and the order of use matters
    st.lists(st.tuples(st.sampled_from(TEXTS), st.sampled_from(TEXTS)), max_size=60),
    st.integers(1, 4),
    st.integers(0, 40),
    st.integers(0, 10),
)
# a text used again outlives one kept after it (the least recently used go first)
@example([("a", "a"), ("ab", "ab"), ("a", "a"), ("xyz", "xyz"), ("a", "a")], 2, 100, 100)
def test_a_text_memo_gives_what_it_computes_and_keeps_the_last_within_its_bounds(
    calls: list[tuple[str, str]], entries: int, characters: int, longest: int
) -> None:
    computed: list[tuple[str, str]] = []

    def compute(first: str, second: str) -> str:
        computed.append((first, second))
        return f"{first}|{second}"

    memo = TextMemo(compute, entries, characters, longest)
    model: list[tuple[str, str]] = []  # what is kept, least recently used first
    for texts in calls:
        before = len(computed)
        assert memo(*texts) == f"{texts[0]}|{texts[1]}"
        assert (len(computed) > before) == (texts not in model)  # a kept text is not computed
        if texts in model:  # used again: the most recent
            model.remove(texts)
            model.append(texts)
        elif len(texts[0]) + len(texts[1]) <= longest:
            model.append(texts)
            while len(model) > entries or sum(len(a) + len(b) for a, b in model) > characters:
                model.pop(0)
        info = memo.cache_info()
        assert info.entries == len(model) <= entries
        assert info.characters == sum(len(a) + len(b) for a, b in model) <= characters
    info = memo.cache_info()
    assert info.hits + info.misses == len(calls) and info.misses == len(computed)
    memo.cache_clear()
    assert memo.cache_info() == (0, 0, 0, 0)


def test_a_long_text_is_computed_each_time() -> None:
    calls = []
    memo = TextMemo(lambda text: calls.append(text) or len(text), 8, 100, 5)
    assert [memo("abcdef"), memo("abcdef"), memo("abc"), memo("abc")] == [6, 6, 3, 3]
    assert calls == ["abcdef", "abcdef", "abc"]


def test_remember_starts_again_when_full() -> None:
    table: dict[int, int] = {}
    for key in range(5):
        assert remember(table, key, key * 10, 3) == key * 10
    assert table == {3: 30, 4: 40}
