"""A record key's line of the task text (``- key: label; type; held by Role [owner]``), read
by :func:`_key_fields` as :data:`_KEY_LINE` reads it (construct/_reader.py's catalog)."""

from __future__ import annotations

import re

_KEY_LINE = re.compile(r"- (\w+): (.+?); (.+?); held by .+? \[(\w+)\]")


def _key_fields(line: str) -> tuple[str, str, str, str] | None:
    """The four groups of ``_KEY_LINE.fullmatch(line)`` (key, label, type, owner; None: no
    match). A line that holds "; " exactly twice, the second before "held by ", is split
    by ``str`` methods: its key (after "- ", before the first ": ") and owner (in the last
    " [...]", at the end) are word characters, so the pattern's lazy label and type can only
    end at those two "; " (each pattern step of a lazy ``.+?`` tries the rest of the
    pattern: 21k instructions a key line, against about 4k here). Any other line is matched
    by the pattern."""
    if line.startswith("- ") and line.endswith("]"):
        colon, bracket = line.find(": ", 2), line.rfind(" [")
        if 2 < colon < bracket:
            key, owner = line[2:colon], line[bracket + 2 : -1]
            parts = line[colon + 2 : bracket].split("; ")
            if (
                len(parts) == 3
                and parts[0]
                and parts[1]
                and len(parts[2]) > 8
                and parts[2].startswith("held by ")
                and _is_word(key)
                and _is_word(owner)
                and "\n" not in line  # (``.`` matches any character but a newline)
            ):
                return key, parts[0], parts[1], owner
    match = _KEY_LINE.fullmatch(line)
    return None if match is None else (match[1], match[2], match[3], match[4])


def _is_word(text: str) -> bool:
    r"""Whether ``text`` is one or more word characters (``\w+``: those that ``isalnum``, or
    "_")."""
    return text.replace("_", "a").isalnum()
