"""The construction reader's shortened paths against the plain definitions they replace.

:func:`parenthesised` finds the closing parenthesis with ``str.find``/``str.count`` instead
of a character loop; a key's values are found by a :class:`ValueFinder` (member patterns
compiled once and skipped when absent, the date patterns skipped without four digits in a
row, numbers made from ints) instead of ``find_numbers(strip_dates(...))`` and
``find_members``; a label is looked for with ``in`` before ``find``; a condition's verb and
comparison phrase are matched by one pattern each instead of a loop of ``startswith``; keys,
conditions and statements are made without their frozen ``__init__``. Each must give what the
plain definition gives - the same values of the same types, the same statement, condition or
key or the same error - on random texts and on every task text and record line of the
examples, rendered in every style, exact and imprecise, and with parentheses, labels and
values added.
"""

from __future__ import annotations

import glob
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.stated_helpers import imprecise_stated
from uncobench_z3.construct import _reader as reader_module
from uncobench_z3.construct import parse_task_text, render_task
from uncobench_z3.construct._key_line import _KEY_LINE
from uncobench_z3.construct._reader import (
    _OPS_SPACED,
    _VERBS_SPACED,
    Catalog,
    KeyEntry,
    ReadError,
    Statement,
    parenthesised,
)
from uncobench_z3.construct._render import (
    SECTION_CANDIDATES,
    SECTION_CONDITIONS,
    SECTION_KEYS,
    SECTION_ROLES,
    choose_style,
    statement_text,
)
from uncobench_z3.construct._text import (
    find_booleans,
    find_dates,
    find_members,
    find_numbers,
    strip_dates,
)
from uncobench_z3.construct._value_finder import ValueFinder, value_finder
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import (
    TypedCondition,
    TypedTask,
    Value,
    check_structure,
    load_spec,
    to_json_scalar,
)

ROOT = Path(__file__).resolve().parent.parent
TASKS: list[TypedTask] = []
for _path in sorted(glob.glob(str(ROOT / "examples" / "*.json"))):
    _task = check_structure(load_spec(_path)).task
    assert _task is not None
    TASKS.append(_task)


def plain_parenthesised(text: str, start: int = 0) -> tuple[str, int, int] | None:
    """The first balanced ``( ... )`` group at or after ``start``, character by character."""
    begin = text.find("(", start)
    if begin < 0:
        return None
    depth = 0
    for i in range(begin, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[begin + 1 : i].strip(), begin, i + 1
    return None


def plain_typed_values(entry: KeyEntry, text: str) -> list[Value]:
    """Every value of the entry's type mentioned in ``text``, in order (the definition)."""
    if entry.type in ("int", "decimal"):
        if entry.unit and entry.unit.strip() != "%":
            text = text.replace(entry.unit, " ")
        numbers = find_numbers(strip_dates(text))
        if entry.type == "int":
            return [int(n) for n in numbers if n.denominator == 1]
        return list(numbers)
    if entry.type == "date":
        return list(find_dates(text))
    if entry.type == "enum":
        return list(find_members(text, entry.members))
    return list(find_booleans(text))


class _PlainFinder:
    def __init__(self, entry: KeyEntry) -> None:
        self.entry = entry

    def values(self, text: str) -> list[Value]:
        return plain_typed_values(self.entry, text)


def plain_named(text: str, catalog: Catalog) -> str | None:
    """The candidate a line names: of every name in it, the longest."""
    names = [n for n in catalog._names if n in text]
    return names[0] if names else None


def plain_statement(*fields: object) -> Statement:
    """A statement made by its ``__init__``."""
    return Statement(*fields)  # type: ignore[arg-type]


def plain_find_label(text: str, catalog: Catalog) -> tuple[KeyEntry, int, int] | None:
    """The first label of the catalog's (the longest first) found in ``text``, in any case:
    its entry, where it starts and where it ends."""
    lowered = text.lower()
    for label, entry in catalog._labels:
        position = lowered.find(label)
        if position >= 0:
            return entry, position, position + len(entry.label)
    return None


class _Prefix:
    """What the reader reads of a pattern's match at a text's start: the words, their end."""

    def __init__(self, word: str) -> None:
        self.word = word

    def __getitem__(self, group: int) -> str:
        assert group == 0
        return self.word

    def end(self) -> int:
        return len(self.word)


class FirstPrefix:
    """The first of ``words``, in order, that a text starts with (the loop of ``startswith``
    the reader's verb and phrase patterns replace)."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def match(self, text: str) -> _Prefix | None:
        for word in self.words:
            if text.startswith(word):
                return _Prefix(word)
        return None


PLAIN_VERBS = FirstPrefix(list(_VERBS_SPACED))
PLAIN_PHRASES = FirstPrefix([phrase for phrase, _ in _OPS_SPACED])


def plain_catalog_of(lines: list[str]) -> Catalog:
    """The catalog of a task text's lines, its keys made by their ``__init__`` (the reader's
    definition before keys were made without it)."""
    section = reader_module._section
    candidates = [line[2:].strip() for line in section(lines, SECTION_CANDIDATES)]
    roles = {}
    for line in section(lines, SECTION_ROLES):
        match = reader_module._ROLE_LINE.match(line)
        if not match:
            raise ReadError(f"cannot read the colleague line {line!r}")
        roles[match[2]] = match[1]
    keys = {}
    for line in section(lines, SECTION_KEYS):
        match = _KEY_LINE.fullmatch(line)
        if not match:
            raise ReadError(f"cannot read the record key {line!r}")
        fact_type, unit, members = reader_module._parse_type(match[3])
        keys[match[1]] = KeyEntry(match[1], match[2], fact_type, unit, members, match[4])
    return Catalog(candidates, roles, keys)


def plain_made(cls: type, fields: dict[str, object]) -> TypedCondition:
    """A condition made by its ``__init__`` from its id, fact, operator and operand, its text
    left to the default (the reader's definition before conditions were made without it)."""
    assert cls is TypedCondition
    return TypedCondition(fields["id"], fields["fact"], fields["op"], fields["operand"])  # type: ignore[arg-type]


@contextmanager
def plain_reader() -> Iterator[None]:
    """The reader with the plain definitions in place of the shortened paths."""
    with (
        patch.object(reader_module, "parenthesised", plain_parenthesised),
        patch.object(reader_module, "_named", plain_named),
        patch.object(reader_module, "_statement", plain_statement),
        patch.object(reader_module, "_find_label", plain_find_label),
        patch.object(reader_module, "_catalog_of", plain_catalog_of),
        patch.object(reader_module, "_VERB_AT_START", PLAIN_VERBS),
        patch.object(reader_module, "_OP_AT_START", PLAIN_PHRASES),
        patch.object(reader_module, "made_frozen", plain_made),
        patch.object(Catalog, "_finder", lambda self, entry: _PlainFinder(entry)),
    ):
        yield


def _made(read: object) -> str:
    """A task reading with its keys' and conditions' fields as their ``__init__`` sets them,
    in order (a ``repr`` shows no field another made without it might lack or add)."""
    assert isinstance(read, reader_module.ReadTask)
    made = [*read.catalog.keys.values(), *read.conditions]
    for item in made:
        try:
            item.key = "changed"  # type: ignore[attr-defined]
        except AttributeError:  # (FrozenInstanceError: still frozen)
            pass
        else:
            raise AssertionError(f"{item!r} is not frozen")
    fields = [(type(item).__name__, list(vars(item).items()), hash(item)) for item in made]
    return repr(read) + repr(fields)


def _outcome(fn: Callable[..., object], *args: object) -> str:
    """What ``fn`` gives (its values' types shown: 12 and Fraction(12) differ) or raises
    (either way: an impossible date raises a ValueError, an enum member after a character
    whose lower case is longer an IndexError)."""
    try:
        return repr(fn(*args))
    except (ValueError, IndexError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _reading(line: str, catalog: Catalog) -> str:
    """The reading of ``line`` (the statement's fields as its ``__init__`` sets them, in order)."""
    try:
        made = reader_module.parse_statement(line, catalog)
    except (ValueError, IndexError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return repr(made) + repr(list(vars(made).items()))


def _both(line: str, catalog: Catalog) -> tuple[str, str]:
    found = _reading(line, catalog)
    with plain_reader():
        return found, _reading(line, catalog)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="(() )ab", max_size=24), st.integers(0, 26))
def test_parenthesised_is_the_character_loops(text: str, start: int) -> None:
    assert parenthesised(text, start) == plain_parenthesised(text, start)


NUMBERS = ["1,234", "12.50", "-3", "007", "1.0", "-0.00", "2026", "1,250,000.5", "0.25", "42"]
DATES = ["2026-03-01", "4 March 2026", "March 4, 2026", "31 December 1999", "2026-13-45"]
MEMBERS = ("fit", "fit with restrictions", "unfit", "with restrictions fit", "")
WORDS = [
    "between", "and", "or", "yes", "no", "Yes", "NO", "FIT", "Fit with Restrictions", "unfit",
    "per 100000 hours", "%", "AUD", "years", "İstanbul", "either", "one of", ",", ".", "-",
    "(", ")", "x1", "1x", "fit-out", "not sure it was recorded as yes",
]  # fmt: skip
PIECES = st.sampled_from(NUMBERS + DATES + list(MEMBERS) + WORDS)
ENTRIES = [
    KeyEntry("n", "count", "int", "years", (), "r"),
    KeyEntry("n", "count", "int", "per 100000 hours", (), "r"),
    KeyEntry("d", "cost", "decimal", "AUD", (), "r"),
    KeyEntry("d", "rate", "decimal", "%", (), "r"),
    KeyEntry("d", "rate", "decimal", None, (), "r"),
    KeyEntry("t", "day", "date", None, (), "r"),
    KeyEntry("e", "fitness", "enum", None, MEMBERS[:3], "r"),
    KeyEntry("e", "fitness", "enum", None, MEMBERS, "r"),
    KeyEntry("b", "cleared", "bool", None, (), "r"),
]


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=12), st.lists(st.sampled_from([" ", "", ", ", "; "]), min_size=12))
def test_a_keys_values_are_the_plain_definitions(pieces: list[str], gaps: list[str]) -> None:
    text = "".join(piece + gap for piece, gap in zip(pieces, gaps, strict=False))
    for entry in ENTRIES:
        found = _outcome(ValueFinder(entry.type, entry.unit, entry.members).values, text)
        assert found == _outcome(plain_typed_values, entry, text), (entry, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=12), st.lists(st.sampled_from([" ", "", ", ", "; "]), min_size=12))
def test_a_shared_finder_remembers_the_plain_definitions(
    pieces: list[str], gaps: list[str]
) -> None:
    """:func:`value_finder`: one finder for every key of one type, unit and members (the
    catalogs of different tasks share it), whose values of a text, read first or again after
    other keys' texts, are the plain definition's."""
    text = "".join(piece + gap for piece, gap in zip(pieces, gaps, strict=False))
    for _ in range(2):
        for entry in ENTRIES:
            finder = value_finder(entry.type, entry.unit, tuple(entry.members))
            catalog = Catalog(["A"], {"r": "R"}, {entry.key: entry})
            assert catalog._finder(entry) is finder
            found = _outcome(finder.values, text)
            assert found == _outcome(plain_typed_values, entry, text), (entry, text)


@settings(max_examples=500, deadline=None)
@example("xa-a-a", ["a-a"])  # (a word's occurrence that fails, then one inside it that does not)
@example("fit_ fit", ["fit"])
@given(
    st.text(alphabet="af it_é²٣-İ -", max_size=20),
    st.lists(
        st.sampled_from(["a", "aa", "a-a", "fit", "fit fit", "it f", "t", "é", "a_", ""]),
        max_size=4,
    ),
)
def test_members_are_found_as_find_members_finds_them(text: str, members: list[str]) -> None:
    """Members as words of their own (no word character either side: ``_``, letters and
    digits of any script), overlapping and repeating, in any case."""
    for written in (text, text.upper()):
        finder = ValueFinder("enum", None, tuple(members))
        assert _outcome(finder.values, written) == _outcome(find_members, written, members)


def _lines(task: TypedTask, rng: random.Random) -> list[str]:
    """Record lines of every form and style, exact (true or another candidate's value) and
    imprecise, in the required context and another."""
    lines = []
    for seed in range(4):
        rendered = render_task(task, seed)
        lines += [line for role_lines in rendered.records.values() for line in role_lines]
        style = choose_style(seed, task.id)
        for (candidate, key), value in task.values.items():
            fact = task.facts[key]
            context = rng.choice([fact.context, *fact.other_contexts, "notes (draft (v2))"])
            others = [v for (c, k), v in task.values.items() if k == key]
            exact = StatedValue(
                candidate=candidate,
                fact=key,
                context=context,
                value=to_json_scalar(rng.choice([value, *others])),
            )
            imprecise = imprecise_stated(task, (candidate, key), context, rng)
            lines += [statement_text(task, s, style) for s in (exact, imprecise)]
    return lines


def _mangled(line: str, task: TypedTask, rng: random.Random, names: list[str]) -> str:
    """``line`` with something added: parentheses, another key's label, a candidate's name,
    a value, a word."""
    labels = [fact.label for fact in task.facts.values()]
    additions = [
        "(", ")", "(see (a))", rng.choice(labels), rng.choice(labels).upper(), "between",
        rng.choice(names),
        "12.0", "1,234", "2026-01-05", "yes", "no", "İ", "either", "unconfirmed",
    ]  # fmt: skip
    at = rng.randint(0, len(line))
    return line[:at] + " " + rng.choice(additions) + " " + line[at:]


def test_every_example_line_reads_as_the_plain_definitions() -> None:
    rng = random.Random(25)
    read = differing = 0
    for task in TASKS:
        for seed in range(4):
            text = render_task(task, seed).task_text
            fresh = parse_task_text(text)
            with plain_reader():
                plain = parse_task_text(text)
            assert _made(fresh) == _made(plain)
        catalog = fresh.catalog
        for line in _lines(task, rng):
            mangled = (_mangled(line, task, rng, catalog.candidates) for _ in range(2))
            for variant in (line, *mangled):
                found, expected = _both(variant, catalog)
                assert found == expected, variant
                read += not found.partition(": ")[0].endswith("Error")  # (ReadError too)
                differing += found != _both(line, catalog)[0]
    assert read > 1000 and differing > 100  # (lines read, and changed by what was added)


@st.composite
def _made_line(draw: st.DrawFn) -> tuple[Catalog, str]:
    task = draw(st.sampled_from(TASKS))
    catalog = parse_task_text(render_task(task, 0).task_text).catalog
    words = [
        *catalog.candidates,
        *(entry.label for entry in catalog.keys.values()),
        *(member for entry in catalog.keys.values() for member in entry.members),
        *NUMBERS, *DATES, *WORDS, "(", ")", "(2026 survey)", "((nested) context)",
    ]  # fmt: skip
    return catalog, " ".join(draw(st.lists(st.sampled_from(words), max_size=10)))


@settings(max_examples=400, deadline=None)
@given(_made_line())
def test_a_made_up_line_reads_as_the_plain_definitions(made: tuple[Catalog, str]) -> None:
    catalog, line = made
    found, expected = _both(line, catalog)
    assert found == expected


def test_a_line_no_calendar_has_or_with_a_longer_lower_case_reads_without_crashing() -> None:
    """A model may write a date that is no day ("2026-13-45", "31 February 2026") or a
    character whose lower case is longer ("İ"): each example line with one added reads as a
    statement or a ReadError (a plain ValueError or IndexError escaped before), and a non-date
    is no date."""
    assert find_dates("2026-13-45, 31 February 2026, February 30, 2026 and 2026-02-03") == [
        find_dates("2026-02-03")[0]
    ]
    assert find_members("İ red", ["red"]) == ["red"]
    rng = random.Random(13)
    read = 0
    for task in TASKS:
        catalog = parse_task_text(render_task(task, 0).task_text).catalog
        for line in _lines(task, rng):
            for added in ("2026-13-45", "31 February 2026", "February 30, 2026", "İ"):
                at = rng.randint(0, len(line))
                found = catalog.statement(line[:at] + " " + added + " " + line[at:])
                read += not isinstance(found, ReadError)
    assert read > 100


VERB_PIECES = [
    *_VERBS_SPACED, *(phrase for phrase, _ in _OPS_SPACED), "must", "be ", "on", "or ", " ",
    "one of", "need", "needs to be", "is ", "12 ", "yes", '"fit"',
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(VERB_PIECES), max_size=5))
def test_a_verb_and_a_phrase_are_the_first_the_loops_find(pieces: list[str]) -> None:
    """The verb and comparison phrase a condition's words start with: the first of each list,
    in order, that the words start with ("on " before "on or after ": the longer is first)."""
    text = "".join(pieces)
    for pattern, plain in (
        (reader_module._VERB_AT_START, PLAIN_VERBS),
        (reader_module._OP_AT_START, PLAIN_PHRASES),
    ):
        match, expected = pattern.match(text), plain.match(text)
        assert (match is None) == (expected is None), text
        if match is not None and expected is not None:
            assert (match[0], match.end()) == (expected[0], expected.end()), text
    phrase = reader_module._OP_AT_START.match(text)
    if phrase is not None:
        assert reader_module._OP_OF_PHRASE[phrase[0]] == dict(_OPS_SPACED)[phrase[0]]


@st.composite
def _made_condition(draw: st.DrawFn) -> tuple[Catalog, str]:
    task = draw(st.sampled_from(TASKS))
    read = parse_task_text(render_task(task, draw(st.integers(0, 3))).task_text)
    catalog = read.catalog
    labels = [entry.label for entry in catalog.keys.values()]
    words = [
        *labels, *(label.upper() for label in labels), *VERB_PIECES, *NUMBERS, *DATES,
        *(member for entry in catalog.keys.values() for member in entry.members),
        "(", ")", "(2026 survey)", "((nested) context)", "1. ", "The ", ".",
    ]  # fmt: skip
    return catalog, " ".join(draw(st.lists(st.sampled_from(words), max_size=8)))


def _condition(line: str, catalog: Catalog) -> str:
    try:
        condition, context = reader_module._parse_condition(line, 3, catalog)
    except (ValueError, IndexError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return repr((condition, context)) + repr(list(vars(condition).items()))


def test_every_example_condition_reads_as_the_plain_definitions() -> None:
    """Each example's conditions, rendered in every style, as they are and with a verb, a
    phrase or a value added after their context (where the verb and phrase are read)."""
    rng = random.Random(7)
    read = differing = 0
    for task in TASKS:
        for seed in range(4):
            text = render_task(task, seed).task_text
            catalog = parse_task_text(text).catalog
            lines = reader_module._section(text.splitlines(), SECTION_CONDITIONS)
            for line in lines:
                # (after the context, where the verb is read, and after the verb, where
                # the phrase is)
                context_end = line.index(")") + 1
                places = [context_end, line.find(" be ", context_end) + 4]
                added = [(rng.choice(places), rng.choice(VERB_PIECES)) for _ in range(4)]
                variants = [line[:at] + " " + piece + line[at:] for at, piece in added]
                for variant in (line, *variants):
                    found = _condition(variant, catalog)
                    with plain_reader():
                        assert found == _condition(variant, catalog), variant
                    read += not found.partition(": ")[0].endswith("Error")
                    differing += variant != line and found != _condition(line, catalog)
    assert read > 250 and differing > 200  # (conditions read, and changed by what was added)


@settings(max_examples=400, deadline=None)
@given(_made_condition())
def test_a_made_up_condition_reads_as_the_plain_definitions(made: tuple[Catalog, str]) -> None:
    catalog, line = made
    found = _condition(line, catalog)
    with plain_reader():
        assert found == _condition(line, catalog)
