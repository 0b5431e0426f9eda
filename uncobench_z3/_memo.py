"""The bounded memory the hot paths share: a dict that starts again when it is full, and a
memo of what texts give, bounded by their length too.

Readings, reply texts, statement readings, scores and labels are remembered per group or per
process; each table is bounded, because a model agent or colleague can make every key new.
Starting again (rather than evicting the least recently used) keeps a hit a plain dict
lookup: the scripted colleagues and built-in agents never come near the bounds.

:class:`TextMemo` keeps what is computed from texts across groups (a message's tokens, the
phrases in its tagged words), where what is kept grows with the text: a model's long
message could otherwise hold megabytes in every entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

__all__ = ["MemoInfo", "TextMemo", "remember"]

Key = TypeVar("Key")
Value = TypeVar("Value")


def remember(table: dict[Key, Value], key: Key, value: Value, limit: int) -> Value:
    """Keep ``value`` under ``key`` in ``table`` (emptied first when it holds ``limit``
    entries) and return it."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


class MemoInfo(NamedTuple):
    hits: int
    misses: int
    entries: int
    characters: int


class TextMemo(Generic[Value]):
    """``compute(*texts)``, remembered for the texts used last: at most ``entries`` of them
    and ``characters`` in all, the least recently used let go first. Texts longer than
    ``longest`` (in all) are computed each time and not kept: long texts are a model's,
    rarely sent twice, and what is kept of one grows with it."""

    def __init__(
        self, compute: Callable[..., Value], entries: int, characters: int, longest: int
    ) -> None:
        self.compute = compute
        self.entries = entries
        self.characters = characters
        self.longest = longest
        self._kept: dict[tuple[str, ...], Value] = {}
        self._size = 0
        self._hits = self._misses = 0

    def __call__(self, *texts: str) -> Value:
        kept = self._kept
        found = kept.pop(texts, None)
        if found is not None:
            kept[texts] = found  # the most recently used last: the oldest go first
            self._hits += 1
            return found
        self._misses += 1
        value = self.compute(*texts)
        size = sum(map(len, texts))
        if size <= self.longest:
            kept[texts] = value
            self._size += size
            while len(kept) > self.entries or self._size > self.characters:
                oldest = next(iter(kept))
                del kept[oldest]
                self._size -= sum(map(len, oldest))
        return value

    def cache_clear(self) -> None:
        self._kept.clear()
        self._size = self._hits = self._misses = 0

    def cache_info(self) -> MemoInfo:
        return MemoInfo(self._hits, self._misses, len(self._kept), self._size)
