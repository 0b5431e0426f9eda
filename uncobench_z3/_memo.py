"""The bounded memory the hot paths share: a dict that starts again when it is full.

Readings, reply texts, statement readings, scores and labels are remembered per group or per
process; each table is bounded, because a model agent or colleague can make every key new.
Starting again (rather than evicting the least recently used) keeps a hit a plain dict
lookup: the scripted colleagues and built-in agents never come near the bounds.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

Key = TypeVar("Key")
Value = TypeVar("Value")


def remember(table: dict[Key, Value], key: Key, value: Value, limit: int) -> Value:
    """Keep ``value`` under ``key`` in ``table`` (emptied first when it holds ``limit``
    entries) and return it."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value
