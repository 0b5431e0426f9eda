"""Append-only JSON Lines logs that survive a crash, and strict UTF-8 reading.

The logs of this package (``samples.jsonl``, ``judge.jsonl``) are written one whole line at
a time, flushed and fsynced. A crash (or ``kill -9``) can therefore leave exactly two kinds
of damage at the end of a log, and both are repaired here without losing a record:

* the last record is whole but its ``\\n`` never reached the disk (*unterminated*): the
  record is kept, and the line is terminated before anything else is appended (appending
  first would glue the next record onto it);
* the last line was cut off inside the record (*torn*: it starts like a JSON object but does
  not parse): it is dropped from the log and kept aside, byte for byte, in
  ``<log stem>.torn-<n>.txt``; the sample it belonged to is simply done again. A cut can
  fall inside a character of the record's text (a write cut short at a page, a full disk):
  such a last line is torn too, not text that is not UTF-8.

Anything else that is not a record - garbage in the middle, a whole file of garbage, a JSON
value of another kind - is *not* a crash and is never dropped silently: the reader reports
it (:attr:`LogContents.bad`) and the caller refuses or, when told to, sets it aside.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Generic, TypeVar

from pydantic import ValidationError

from ..errors import SpecReadError
from ._io import write_bytes_atomic, write_text_atomic

__all__ = [
    "LogContents",
    "append_aside",
    "cut_in_a_character",
    "first_problem",
    "open_for_append",
    "read_jsonl_log",
    "read_utf8",
    "read_utf8_bytes",
    "repair_log",
]

T = TypeVar("T")


def read_utf8(path: str | Path) -> str:
    """The text of ``path``; a file that is not UTF-8 is a :class:`SpecReadError` naming the
    line (``file:line``) and column of the first bad byte, never a ``UnicodeDecodeError``."""
    return read_utf8_bytes(path)[1]


def read_utf8_bytes(path: str | Path) -> tuple[bytes, str]:
    """:func:`read_utf8`, with the bytes read: the text's UTF-8 encoding, exactly (a strict
    decoding is undone by encoding), for a caller that hashes them without encoding again."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        raise SpecReadError(str(source), "no such file") from None
    except IsADirectoryError:
        raise SpecReadError(str(source), "is a directory, not a file") from None
    except OSError as exc:
        raise SpecReadError(str(source), f"cannot be read ({exc.strerror})") from None
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecReadError(
            f"{source}:{line}",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column})",
        ) from None


def first_problem(exc: ValueError) -> str:
    """Why a line is not a record, in one line: a schema's first error with the path of the
    field at fault (``group_id: Field required``), else the parser's first line."""
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        return f"{where}: {error['msg']}" if where else str(error["msg"])
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def cut_in_a_character(line: bytes) -> bool:
    """Whether ``line``, a log's last line that lacks its newline, starts like a JSON object
    and is UTF-8 but for its end, cut off inside a character: what a crash leaves when it
    cuts a record in its non-ASCII text (a torn line, not a file that is not UTF-8)."""
    if not line.lstrip().startswith(b"{"):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(line, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _log_text(path: Path) -> str:
    """The text of a log (:func:`read_utf8`); a last line cut off inside a character
    (:func:`cut_in_a_character`) keeps its bytes as ``surrogateescape`` characters, to be
    found torn and kept aside byte for byte."""
    try:
        return read_utf8(path)
    except SpecReadError as error:
        data = path.read_bytes()
        start = data.rfind(b"\n") + 1
        if not cut_in_a_character(data[start:]):
            raise
        try:
            head = data[:start].decode("utf-8")
        except UnicodeDecodeError:
            raise error from None
        return head + data[start:].decode("utf-8", "surrogateescape")


@dataclass
class LogContents(Generic[T]):
    """What :func:`read_jsonl_log` found in a log."""

    records: list[T] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    """the text of each record's line, as stored (parallel to ``records``)"""
    bad: list[tuple[int, str]] = field(default_factory=list)
    """(line number, text) of the lines that are not records and not a crash's torn line"""
    reason: str = ""
    """why the first of :attr:`bad` is not a record (:func:`first_problem`)"""
    torn: str | None = None
    """the cut-off last line a crash left, if any"""
    unterminated: bool = False
    """the last line is a whole record that lacks its final newline"""

    @property
    def damaged(self) -> bool:
        """A torn or unterminated last line (repairable without losing a record)."""
        return self.torn is not None or self.unterminated


def _looks_torn(row: str) -> bool:
    """A prefix of a JSON object that does not parse: what a cut-off write leaves."""
    if not row.lstrip().startswith("{"):
        return False
    try:
        json.loads(row)
    except ValueError:
        return True
    except RecursionError:
        return False
    return False  # a whole JSON value that is not a record is not a crash: it is foreign


def read_jsonl_log(path: str | Path, parse: Callable[[str], T]) -> LogContents[T]:
    """Read a log whose lines ``parse`` turns into records (raising ``ValueError``, which
    includes pydantic's ``ValidationError``, for a line that is not one)."""
    target = Path(path)
    contents: LogContents[T] = LogContents()
    if not target.exists():
        return contents
    text = _log_text(target)
    rows = text.split("\n")
    for number, row in enumerate(rows, start=1):
        if not row.strip():
            continue
        try:
            record = parse(row)
        except (ValueError, RecursionError) as exc:
            last = number == len(rows)  # only the very last line can have been cut off
            if last and _looks_torn(row):
                contents.torn = row
            else:
                if not contents.bad:
                    contents.reason = (
                        first_problem(exc) if isinstance(exc, ValueError) else "nested too deep"
                    )
                contents.bad.append((number, row))
            continue
        contents.records.append(record)
        contents.lines.append(row)
    contents.unterminated = bool(text) and not text.endswith("\n") and contents.torn is None
    if contents.unterminated and contents.bad and contents.bad[-1][0] == len(rows):
        contents.unterminated = False  # the unterminated line is a bad one: nothing to keep
    return contents


def append_aside(path: Path, suffix: str, text: str) -> Path:
    """Keep ``text`` beside the log in the first free ``<stem>.<suffix>-<n>.txt``."""
    number = 1
    while (target := path.with_name(f"{path.stem}.{suffix}-{number}.txt")).exists():
        number += 1
    # (a torn line cut inside a character holds its bytes as surrogateescape characters)
    write_bytes_atomic(target, text.encode("utf-8", "surrogateescape"))
    return target


def repair_log(path: Path, contents: LogContents[T], keep: list[str] | None = None) -> None:
    """Make the log hold exactly the lines ``keep`` (default: every record read), each
    terminated; a torn last line is kept aside first. Rewrites atomically only when lines
    go; an unterminated last record just gets its newline."""
    if contents.torn is not None:
        append_aside(path, "torn", contents.torn)
    lines = contents.lines if keep is None else keep
    if contents.torn is not None or contents.bad or len(lines) != len(contents.lines):
        write_text_atomic(path, "".join(line + "\n" for line in lines))
    elif contents.unterminated:
        _terminate(path)


def _terminate(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def open_for_append(path: Path) -> IO[str]:
    """Open a log for appending, first terminating a last line that lacks its newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+b")
    try:
        handle.seek(0, os.SEEK_END)
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        handle.close()
    return path.open("a", encoding="utf-8", newline="\n")
