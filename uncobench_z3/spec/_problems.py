"""What structural checks report: a problem with its JSON path, and a collector of them."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from pydantic import BaseModel

from ._values import INT_OR_FRACTION, Value, day_number

_UNORDERED = (bool, str)


class Problem(BaseModel):
    """One structural problem: where (JSON path), what kind (code) and why (message)."""

    path: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class Collector:
    """Gathers every problem of a spec (the checks never stop at the first)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, code: str, message: str) -> None:
        self.problems.append(Problem(path=path, code=code, message=message))


def duplicates(ids: Iterable[str]) -> set[str]:
    # a set walk, not a Counter: this runs for every id list of every spec checked, and
    # first a set of the whole list, made in C, where (as nearly always) none repeats
    ids = ids if isinstance(ids, (list, tuple)) else list(ids)
    if len(set(ids)) == len(ids):
        return set()
    seen: set[str] = set()
    repeated: set[str] = set()
    for key in ids:
        if key in seen:
            repeated.add(key)
        else:
            seen.add(key)
    return repeated


def order_key(value: Value) -> Fraction | int:
    """A comparable number for an ordered value (dates as day numbers)."""
    if isinstance(value, _UNORDERED):
        raise TypeError("unordered value")
    if isinstance(value, INT_OR_FRACTION):
        return value
    return day_number(value)
