"""The grammar of rendered text: how values, statements and record lines are written.

The renderer writes with it and the reader parses with it, so every phrase lives here once.
A *style* (chosen per group from the seed) varies the wording - date format, record-line
frame, condition verb - without changing what can be recovered.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from fractions import Fraction

from ..spec import TypedFact, Value, format_fraction

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

#: Record-line frames. Each holds the candidate, the fact label, the context in parentheses
#: and the value; the reader removes the known parts and parses what is left.
RECORD_FRAMES = (
    "{candidate} — {label} ({context}): {value}",
    "{label} for {candidate} ({context}): {value}",
    "({context}) {candidate}, {label}: {value}",
    "{candidate}'s {label} ({context}) is {value}.",
)
CONDITION_VERBS = ("must be", "has to be", "needs to be", "is required to be")
DATE_STYLES = ("day_month", "iso", "month_day")


@dataclass(frozen=True)
class Style:
    """The wording choices of one rendered group."""

    frame: int = 0
    verb: int = 0
    dates: str = "day_month"

    @property
    def record_frame(self) -> str:
        return RECORD_FRAMES[self.frame % len(RECORD_FRAMES)]

    @property
    def condition_verb(self) -> str:
        return CONDITION_VERBS[self.verb % len(CONDITION_VERBS)]


def step_decimals(step: Fraction) -> int:
    """Decimals needed to write any multiple of ``step``."""
    decimals = 0
    while (step * 10**decimals).denominator != 1:
        decimals += 1
        if decimals > 12:
            break
    return decimals


def format_number(value: Fraction | int, decimals: int) -> str:
    text = format_fraction(Fraction(value), decimals)
    sign = "-" if text.startswith("-") else ""
    whole, _, frac = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}" + (f".{frac}" if frac else "")


def format_date(day: _dt.date, style: Style) -> str:
    if style.dates == "iso":
        return day.isoformat()
    if style.dates == "month_day":
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def with_unit(number: str, unit: str | None) -> str:
    if not unit:
        return number
    return f"{number}%" if unit.strip() == "%" else f"{number} {unit}"


def format_typed(fact: TypedFact, value: Value, style: Style) -> str:
    """One exact value as text (numbers with their unit, dates in the style, yes/no)."""
    if fact.type == "bool":
        return "yes" if value else "no"
    if fact.type == "enum":
        assert isinstance(value, str)
        return value
    if fact.type == "date":
        assert isinstance(value, _dt.date)
        return format_date(value, style)
    assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    decimals = step_decimals(fact.step) if fact.type == "decimal" else 0
    return with_unit(format_number(value, decimals), fact.unit)


def format_range(fact: TypedFact, low: Value, high: Value, style: Style) -> str:
    if fact.type in ("int", "decimal"):
        assert isinstance(low, int | Fraction) and isinstance(high, int | Fraction)
        decimals = step_decimals(fact.step) if fact.type == "decimal" else 0
        return with_unit(
            f"between {format_number(low, decimals)} and {format_number(high, decimals)}",
            fact.unit,
        )
    return f"between {format_typed(fact, low, style)} and {format_typed(fact, high, style)}"


def format_options(fact: TypedFact, options: tuple[Value, ...], style: Style) -> str:
    words = [format_typed(fact, option, style) for option in options]
    if len(words) == 2:
        return f"either {words[0]} or {words[1]}"
    return "one of " + ", ".join(words[:-1]) + f" or {words[-1]}"


def record_line(candidate: str, label: str, context: str, value_text: str, style: Style) -> str:
    return style.record_frame.format(
        candidate=candidate, label=label, context=context, value=value_text
    )


# -- parsing helpers shared by the reader and the built-in agents -----------------------------
_NUMBER = re.compile(
    r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\w])"
)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r") (\d{4})\b")
_MONTH_DAY = re.compile(r"\b(" + "|".join(MONTHS) + r") (\d{1,2}), (\d{4})\b")


def find_numbers(text: str) -> list[Fraction]:
    return [Fraction(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def find_dates(text: str) -> list[_dt.date]:
    found: list[tuple[int, _dt.date]] = []
    for m in _ISO_DATE.finditer(text):
        found.append((m.start(), _dt.date(int(m[1]), int(m[2]), int(m[3]))))
    for m in _DAY_MONTH.finditer(text):
        found.append((m.start(), _dt.date(int(m[3]), MONTHS.index(m[2]) + 1, int(m[1]))))
    for m in _MONTH_DAY.finditer(text):
        found.append((m.start(), _dt.date(int(m[3]), MONTHS.index(m[1]) + 1, int(m[2]))))
    return [day for _, day in sorted(found, key=lambda item: item[0])]


def strip_dates(text: str) -> str:
    for pattern in (_ISO_DATE, _DAY_MONTH, _MONTH_DAY):
        text = pattern.sub(" ", text)
    return text


def find_members(text: str, members: tuple[str, ...] | list[str]) -> list[str]:
    """Enum members mentioned in ``text``, longest first, without overlaps, in text order."""
    lowered = text.lower()
    taken = [False] * len(text)
    found: list[tuple[int, str]] = []
    for member in sorted(members, key=len, reverse=True):
        pattern = re.compile(r"(?<![\w])" + re.escape(member.lower()) + r"(?![\w])")
        for m in pattern.finditer(lowered):
            if not any(taken[m.start() : m.end()]):
                found.append((m.start(), member))
                for i in range(m.start(), m.end()):
                    taken[i] = True
    return [member for _, member in sorted(found)]


def find_booleans(text: str) -> list[bool]:
    words = re.findall(r"\b(yes|no)\b", text.lower())
    return [word == "yes" for word in words]
