"""The grammar of rendered text: how values, statements and record lines are written.

The renderer writes with it and the reader parses with it, so every phrase lives here once.
A *style* (chosen per group from the seed) varies the wording - date format, record-line
frame, condition verb - without changing what can be recovered.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ..spec import TypedFact, Value, format_fraction
from ..spec._values import INT_OR_FRACTION

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _frame_writers_of(ending: str, copula: str) -> tuple[Callable[[str, str, str, str], str], ...]:
    """The record-line writers of each frame, in :data:`RECORD_FRAMES`' order, for a
    candidate whose possessive takes ``ending`` (:func:`possessive`) and a label that takes
    ``copula``: each frame's phrase is written here, once (:data:`RECORD_FRAMES` is what the
    writers write of the fields' names). Written as functions rather than compiled from the
    frames' text in each process: compiling the 15 writers a first pass over 80 built groups
    used was about 3.7 M instructions (0.4%), more than all the lines they wrote in it."""
    return (
        lambda candidate, label, context, value: f"{candidate} — {label} ({context}): {value}",
        lambda candidate, label, context, value: f"{label} for {candidate} ({context}): {value}",
        lambda candidate, label, context, value: f"({context}) {candidate}, {label}: {value}",
        lambda candidate, label, context, value: (
            f"{candidate}{ending} {label} ({context}) {copula} {value}."
        ),
    )


#: Record-line frames. Each holds the candidate, the fact label, the context in parentheses
#: and the value; the reader removes the known parts and parses what is left.
RECORD_FRAMES = tuple(
    write("{candidate}", "{label}", "{context}", "{value}")
    for write in _frame_writers_of("'s", "is")
)

CONDITION_VERBS = ("must be", "has to be", "needs to be", "is required to be")
PLURAL_CONDITION_VERBS = ("must be", "have to be", "need to be", "are required to be")
"""the same verbs for a plural subject ("The dialysis patients ... need to be ...")"""
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

    def condition_verb_for(self, label: str) -> str:
        """The condition verb agreeing with ``label`` as the subject."""
        verbs = PLURAL_CONDITION_VERBS if label_is_plural(label) else CONDITION_VERBS
        return verbs[self.verb % len(verbs)]


# -- agreement ------------------------------------------------------------------------------
#: Words that end a label's head noun phrase: prepositions, determiners, relatives, and
#: participles that follow the noun ("homes passed", "units lost", "headers available").
_PHRASE_END_WORDS = (
    "of in for per within after from to by at on with under over since against between "
    "before during than the that which who where as into across if when "
    "available payable recoverable due left lost led held certifying trading"
)
_PHRASE_ENDS = frozenset(_PHRASE_END_WORDS.split())
#: Singular nouns that end in "s".
_SINGULAR_IN_S_WORDS = (
    "status analysis basis series species gas bus news means bonus campus census corpus "
    "process access business fitness readiness stress class loss gross mass pass press "
    "glass address progress success witness chassis diagnosis thesis axis lens plus "
    "surplus virus radius consensus apparatus stimulus focus genus"
)
_SINGULAR_IN_S = frozenset(_SINGULAR_IN_S_WORDS.split())
# (compiled once: ``re.fullmatch(pattern, ...)`` looks its pattern up in re's cache each call)
_BRACKETED = re.compile(r"\([^)]*\)")
_PLURAL_FORM = re.compile(r"[a-z-]+s")
_UNIT_PLURAL_FORM = re.compile(r"[a-z]+s")


def label_head(label: str) -> str:
    """The head noun of a fact or rule label: the last word before what modifies it from
    behind ("years of experience" -> years, "groundworks and hardstanding cost" -> cost)."""
    # (a label without a parenthesis has nothing to take out: most labels; the colleagues
    # ask this of every fact of every group)
    unbracketed = _BRACKETED.sub(" ", label) if "(" in label else label
    words = unbracketed.replace("'s ", " ").split()
    phrase: list[str] = []
    for i, word in enumerate(words):
        lowered = word.lower()
        if i > 0 and (lowered in _PHRASE_ENDS or (lowered.endswith("ed") and "-" not in lowered)):
            break
        phrase.append(word)
    return phrase[-1] if phrase else label


def _plural_word(word: str) -> bool:
    lowered = word.lower()
    if lowered in _SINGULAR_IN_S or not _PLURAL_FORM.fullmatch(lowered):
        return False
    return not lowered.endswith(("ss", "us", "is"))


@functools.lru_cache(maxsize=4096)
def label_is_plural(label: str) -> bool:
    """Whether a label is grammatically plural ("dialysis patients in the catchment")."""
    return _plural_word(label_head(label))


def copula(label: str) -> str:
    return "are" if label_is_plural(label) else "is"


def question_text(template: str, label: str, unit: str) -> str:
    """A scenario's question with the rule's label and unit filled in, its "what is" agreeing
    with the label ("what are its projected additional patients by 2030")."""
    if label_is_plural(label):
        template = re.sub(r"\bwhat is ([^,?{]*)\{rule_label\}", r"what are \1{rule_label}",
                          template)  # fmt: skip
    return template.replace("{rule_label}", label).replace("{unit}", unit)


# (remembered: the colleagues' value writers ask it once per fact of every group, and its
# regular expression's look-up and match were about 2,800 of a writer's 7,000 instructions)
@functools.lru_cache(maxsize=1024)
def singular_unit(unit: str) -> str:
    """The unit after exactly 1: "1 year", "1 incident" (compound units stay: "1 AUD/day")."""
    if _UNIT_PLURAL_FORM.fullmatch(unit) and not unit.endswith("ss"):
        return unit[:-1]
    return unit


def step_decimals(step: Fraction) -> int:
    """Decimals needed to write any multiple of ``step``."""
    # a function of the denominator alone (the step is in lowest terms): remembered by it,
    # an int, as hashing the Fraction itself cost as much as the rest of writing a number
    return _denominator_decimals(step.denominator)


@functools.lru_cache(maxsize=1024)
def _denominator_decimals(denominator: int) -> int:
    decimals = 0
    while (10**decimals) % denominator != 0:
        decimals += 1
        if decimals > 12:
            break
    return decimals


def format_number(value: Fraction | int, decimals: int) -> str:
    # The colleagues write a record line for nearly every record of a group once per run:
    # whole numbers and decimals of their step are written directly, as the general path
    # below would write them (thousands separated, ``decimals`` places, a minus before).
    # (a format spec costs about 2,500 instructions, ``str`` 700: a number below a thousand
    # needs no separator, and a fraction's digits are its digits padded with zeros)
    kind = type(value)
    if kind is int and decimals == 0:
        return str(value) if -1000 < value < 1000 else f"{value:,}"
    if (kind is Fraction or kind is int) and decimals >= 0:
        # (``value * 10**decimals`` in integers: a Fraction's product reduces by a gcd and
        # makes a new Fraction; the value is in lowest terms, its denominator positive)
        scale = 10**decimals
        scaled, rest = divmod(value.numerator * scale, value.denominator)
        if rest == 0:
            sign = "-" if scaled < 0 else ""
            whole, frac = divmod(abs(scaled), scale)
            number = str(whole) if whole < 1000 else f"{whole:,}"
            return f"{sign}{number}.{str(frac).zfill(decimals)}" if decimals else sign + number
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
    if unit.strip() == "%":
        return f"{number}%"
    return f"{number} {singular_unit(unit) if number == '1' else unit}"


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
    assert isinstance(value, INT_OR_FRACTION) and not isinstance(value, bool)
    decimals = step_decimals(fact.step) if fact.type == "decimal" else 0
    return with_unit(format_number(value, decimals), fact.unit)


def value_writer(fact: TypedFact, style: Style) -> Callable[[Value], str]:
    """``lambda value: format_typed(fact, value, style)`` for ``fact``'s values (the typed
    task's: of the fact's type), with what depends on the fact alone decided once: its
    type's branch, a decimal's places, the unit's spelling. The colleagues write a line for
    nearly every record of a group once per run, most facts' for several candidates (a test
    compares this with :func:`format_typed`)."""
    kind = fact.type
    if kind == "bool":
        return _yes_no
    if kind == "enum":
        return str
    if kind == "date":
        return functools.partial(format_date, style=style)
    decimals = step_decimals(fact.step) if kind == "decimal" else 0
    unit = fact.unit
    if not unit:
        return functools.partial(format_number, decimals=decimals)
    if unit.strip() == "%":
        return functools.partial(_number_then, decimals, "%")
    return functools.partial(_number_in_unit, decimals, " " + unit, " " + singular_unit(unit))


def _yes_no(value: Value) -> str:
    return "yes" if value else "no"


def _number_then(decimals: int, suffix: str, value: Fraction | int) -> str:
    return format_number(value, decimals) + suffix


def _number_in_unit(decimals: int, unit: str, one: str, value: Fraction | int) -> str:
    """:func:`with_unit` of the number (``unit`` and ``one``, its singular, after a space)."""
    number = format_number(value, decimals)
    return number + (one if number == "1" else unit)


def format_range(fact: TypedFact, low: Value, high: Value, style: Style) -> str:
    if fact.type in ("int", "decimal"):
        assert isinstance(low, INT_OR_FRACTION) and isinstance(high, INT_OR_FRACTION)
        decimals = step_decimals(fact.step) if fact.type == "decimal" else 0
        return with_unit(
            f"between {format_number(low, decimals)} and {format_number(high, decimals)}",
            fact.unit,
        )
    return f"between {format_typed(fact, low, style)} and {format_typed(fact, high, style)}"


#: How an imprecise yes/no reads: the colleague is unsure of the first of the two options.
UNSURE_BOOLEAN = "unconfirmed: I'm not sure it was recorded as {value}"
_UNSURE = re.compile(r"\bnot sure it was recorded as (yes|no)\b", re.IGNORECASE)


def format_options(fact: TypedFact, options: tuple[Value, ...], style: Style) -> str:
    words = [format_typed(fact, option, style) for option in options]
    if fact.type == "bool" and len(words) == 2:
        return UNSURE_BOOLEAN.format(value=words[0])
    if len(words) == 2:
        return f"either {words[0]} or {words[1]}"
    return "one of " + ", ".join(words[:-1]) + f" or {words[-1]}"


def possessive(name: str) -> str:
    """``Marcus Vance's``, ``Steelspan Structures'``."""
    return name + _possessive_ending(name)


def _possessive_ending(name: str) -> str:
    return "'" if name.endswith("s") else "'s"


def candidate_writers(label: str, style: Style) -> dict[str, Callable[[str, str, str, str], str]]:
    """The line writers of :func:`record_line` for ``label`` in ``style``, by the ending of
    the candidate's possessive (``_possessive_ending``): one fact's lines differ only in
    that (the test of :class:`~._render.ExactLines` compares the lines)."""
    return _frame_writers(style.record_frame, label_is_plural(label))


@functools.lru_cache(maxsize=64)
def _frame_writers(frame: str, plural: bool) -> dict[str, Callable[[str, str, str, str], str]]:
    """:func:`candidate_writers` of a frame and a label's number, made once and shared: a
    fact's writers were a dict made and two look-ups of :func:`_line_writer` for every fact
    of every group (about 4,400 of a fact's 7,700 instructions; the callers only read it)."""
    return {ending: _line_writer(frame, ending, plural) for ending in ("'", "'s")}


def record_line(candidate: str, label: str, context: str, value_text: str, style: Style) -> str:
    write = _line_writer(style.record_frame, _possessive_ending(candidate), label_is_plural(label))
    return write(candidate, label, context, value_text)


@functools.lru_cache(maxsize=64)
def _line_writer(frame: str, ending: str, plural: bool) -> Callable[[str, str, str, str], str]:
    """The writer of ``frame``'s lines (one of :data:`RECORD_FRAMES`) for a candidate whose
    possessive takes ``ending`` and a label of that number, as a function of the candidate,
    label, context and value: the frame's f-string (:func:`_frame_writers_of`), where
    ``str.format`` parsed the frame and gathered its keywords into a dict for every line (a
    third of writing one)."""
    return _frame_writers_of(ending, "are" if plural else "is")[RECORD_FRAMES.index(frame)]


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
    """The dates ``text`` writes, in text order. Something written like a date that is no
    day of the calendar ("2026-13-45", "31 February 2026": a model may write it) is not a
    date: it is skipped, not an error (:func:`strip_dates` still takes it out, so its
    numbers are not read as numbers either)."""
    found: list[tuple[int, _dt.date]] = []
    for m in _ISO_DATE.finditer(text):
        _add_date(found, m.start(), int(m[1]), int(m[2]), int(m[3]))
    for m in _DAY_MONTH.finditer(text):
        _add_date(found, m.start(), int(m[3]), MONTHS.index(m[2]) + 1, int(m[1]))
    for m in _MONTH_DAY.finditer(text):
        _add_date(found, m.start(), int(m[3]), MONTHS.index(m[1]) + 1, int(m[2]))
    return [day for _, day in sorted(found, key=lambda item: item[0])]


def _add_date(found: list[tuple[int, _dt.date]], at: int, year: int, month: int, day: int) -> None:
    with contextlib.suppress(ValueError):  # (no such day: not a date)
        found.append((at, _dt.date(year, month, day)))


def strip_dates(text: str) -> str:
    for pattern in (_ISO_DATE, _DAY_MONTH, _MONTH_DAY):
        text = pattern.sub(" ", text)
    return text


def find_members(text: str, members: tuple[str, ...] | list[str]) -> list[str]:
    """Enum members mentioned in ``text``, longest first, without overlaps, in text order."""
    lowered = text.lower()
    taken = [False] * len(lowered)  # (positions in ``lowered``: "İ".lower() is two characters)
    found: list[tuple[int, str]] = []
    for member in sorted(members, key=len, reverse=True):
        pattern = re.compile(r"(?<![\w])" + re.escape(member.lower()) + r"(?![\w])")
        for m in pattern.finditer(lowered):
            if not any(taken[m.start() : m.end()]):
                found.append((m.start(), member))
                for i in range(m.start(), m.end()):
                    taken[i] = True
    return [member for _, member in sorted(found)]


def find_unsure_boolean(text: str) -> bool | None:
    """The value an unsure yes/no statement (:data:`UNSURE_BOOLEAN`) names first, if any."""
    match = _UNSURE.search(text)
    return None if match is None else match[1].lower() == "yes"


def find_booleans(text: str) -> list[bool]:
    words = re.findall(r"\b(yes|no)\b", text.lower())
    return [word == "yes" for word in words]
