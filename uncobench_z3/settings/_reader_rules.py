"""The follow-up reader's rules as one hash (:data:`READER_RULES`): what a run's samples were
read under.

Whether a follow-up is targeted - and so what a scripted colleague replies - depends on how
:func:`~._request.read_request` reads it: its phrase inventories (:mod:`._phrases`) and word
tables. A run keyed without them would resume across a change of the rules and hold samples
read under both in one log. The hash is computed from the tables themselves, every
module-level text, pattern and collection of them in the reader's table modules, so a change
of a table cannot be forgotten; :data:`READING_CODE` is for a change of the reading's code
alone.
"""

from __future__ import annotations

import hashlib
import re
from types import ModuleType

from . import _phrases, _request_words, _vocabulary, _vocabulary_entries, _words

READING_CODE = 2
"""raise it when the reading of a follow-up changes other than through the tables"""

_TABLE_MODULES = (_phrases, _request_words, _vocabulary, _vocabulary_entries, _words)


def _table_text(value: object) -> str | None:
    """A table's canonical text: a text, a pattern (its text and flags), or a list, tuple or
    set of them; None for anything else (functions, cache sizes, the caches themselves)."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, re.Pattern):
        return f"re({value.pattern!r}, {value.flags})"
    if isinstance(value, list | tuple | set | frozenset):
        items = [_table_text(item) for item in value]
        if any(item is None for item in items):
            return None
        texts = [item for item in items if item is not None]
        return "[" + ", ".join(sorted(texts) if isinstance(value, set | frozenset) else texts) + "]"
    return None


def _module_tables(module: ModuleType) -> list[str]:
    found = []
    for name, value in sorted(vars(module).items()):
        text = None if name.startswith("__") else _table_text(value)
        if text is not None:
            found.append(f"{module.__name__.rsplit('.', 1)[-1]}.{name} = {text}")
    return found


def reader_rules_digest() -> str:
    """SHA-256 (16 hex digits) of the reader's tables and :data:`READING_CODE`."""
    lines = [f"reading_code = {READING_CODE}"]
    for module in _TABLE_MODULES:
        lines += _module_tables(module)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


READER_RULES = reader_rules_digest()
"""the hash a run's configuration and every job key carry"""
