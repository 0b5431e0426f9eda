"""The reader's searches against their plain definitions: the value finder's numbers
(construct/_value_finder.py: :data:`_NUMBER_AT` finds the matches of
:data:`~uncobench_z3.construct._text._NUMBER`, a number's fraction made on its two slots is
``Fraction`` of its digits), and in construct/_reader.py a record line's group split by
``partition`` and the labels and names a line is searched for (the first found, in the
catalog's order: a ``filter`` was tried in their place and dropped); a statement made field by
field in its own ``__dict__``, a record key's line split by ``str`` methods, and the finder's
test for four digits in a row (written ``\\d\\d\\d\\d`` to start with a character set)."""

from __future__ import annotations

import dataclasses
import datetime
import re
from fractions import Fraction
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.test_construct_reader_paths import plain_find_label, plain_named, plain_parenthesised
from uncobench_z3.construct._key_line import _KEY_LINE, _key_fields
from uncobench_z3.construct._reader import (
    Catalog,
    KeyEntry,
    Statement,
    _find_label,
    _named,
    _statement,
    parenthesised,
)
from uncobench_z3.construct._text import _NUMBER
from uncobench_z3.construct._value_finder import _FOUR_DIGITS, _NUMBER_AT, _number, _whole

# digits of two scripts ("٣" is a digit to ``re``), and what decides a number's ends
ALPHABET = "0123456789٣-.,_ a\né"


@settings(max_examples=3000, deadline=None)
@example("-1,234.5")
@example("a-1 1a -1,23 1,234,5 .5 ,5 5, x,123 1.2.3 --1 -,1")
@example("12,345,678.90-7")
@example(".-1,234 a.-12 ,-12 ,-1,234 _-1,234 é-1 1-1,234")
@example("-٣,٣٣٣ ٣.5")
@given(st.text(alphabet=ALPHABET, max_size=24))
def test_numbers_are_the_matches_of_the_plain_pattern(text: str) -> None:
    """The same matches, where each starts and ends (every alternative of ``_NUMBER``: with
    and without thousands' commas, after a "-" or a digit, at the start or after any
    character)."""
    found = [(m.span(), m[0]) for m in _NUMBER_AT.finditer(text)]
    assert found == [(m.span(), m[0]) for m in _NUMBER.finditer(text)]
    assert _NUMBER_AT.findall(text) == [m[0] for m in _NUMBER.finditer(text)]


@settings(max_examples=400, deadline=None)
@example("-0.00")
@example("0")
@example("-10.50")
@example("007.0")
@example("٣.25")
@given(st.from_regex(r"-?[0-9٣]{1,14}(\.[0-9]{1,8})?", fullmatch=True))
def test_a_number_s_fraction_is_the_fraction_of_its_digits(digits: str) -> None:
    """``Fraction(digits)``: its type, its two terms (in lowest terms, the denominator
    positive), equality and hash; and a whole number's ``int``."""
    made, plain = _number(digits), Fraction(digits)
    assert type(made) is Fraction
    assert (made.numerator, made.denominator) == (plain.numerator, plain.denominator)
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert _whole(digits) == (int(plain) if plain.denominator == 1 else None)


# labels that contain one another, differ in case alone, or lower to a longer text ("İ")
LABELS = ["cost", "Cost", "total cost", "COST total", "İd", "id", "rate", "a"]
NAMES = ["Ann", "Anna", "Ann Lee", "Lee", "ann", "Bo"]


@settings(max_examples=600, deadline=None)
@example(["cost", "Cost"], "the COST (2026): 1", ["Ann", "Anna"], "Anna said")
@given(
    st.lists(st.sampled_from(LABELS), min_size=1, max_size=6, unique=True),
    st.text(alphabet="costalCOSTİdi rel", max_size=24),
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True),
    st.text(alphabet="AnnaLeBo e", max_size=16),
)
def test_labels_and_names_are_the_first_found_in_order(
    labels: list[str], text: str, names: list[str], named: str
) -> None:
    """The entry, start and end of the first label found (the longest first, the catalog's
    order among labels of one length, in any case), and the first name found (the longest
    first), as the loops of the plain definitions find them."""
    keys = {
        f"k{i}": KeyEntry(f"k{i}", label, "int", None, (), "r") for i, label in enumerate(labels)
    }
    catalog = Catalog(names, {"r": "R"}, keys)
    assert _find_label(text, catalog) == plain_find_label(text, catalog)
    for written in (text, named, text + named):
        assert _named(written, catalog) == plain_named(written, catalog)


@settings(max_examples=1500, deadline=None)
@example("a (b (c) d) (e)")
@example("(a")
@given(st.text(alphabet="(() )ab", max_size=24))
def test_a_group_from_the_start_is_the_character_loops(text: str) -> None:
    """A record line's group (from the start: split by ``partition`` when it holds no other
    group), as the character loop finds it."""
    assert parenthesised(text) == plain_parenthesised(text)


@settings(max_examples=2000, deadline=None)
@example("2026")
@example("a123 4567b")
@example("12٣4")
@example("1 2 3 4 123")
@given(st.text(alphabet="0123456789٣ a-é\n", max_size=16))
def test_four_digits_are_found_where_the_repeat_finds_them(text: str) -> None:
    """``\\d\\d\\d\\d`` finds the first four digits in a row (of any script) where ``\\d{4}``
    finds them."""
    found, plain = _FOUR_DIGITS.search(text), re.search(r"\d{4}", text)
    assert (found and found.span()) == (plain and plain.span())


STATEMENT_FIELDS = [
    ("Ann", "cost", "2026 budget", 12, None, None, None),
    ("Ann Lee", "rate", "Q1", Fraction(5, 2), None, None, None),
    ("Bo", "cost", "x (y)", None, 1, Fraction(7, 2), None),
    ("Bo", "start", "plan", None, datetime.date(2026, 1, 2), datetime.date(2026, 3, 1), None),
    ("Cy", "ok", "", None, None, None, (True, False)),
    ("Cy", "kind", "now", None, None, None, ("a", "b", "c")),
    ("Cy", "kind", "now", None, None, None, None),
]


@pytest.mark.parametrize("fields", STATEMENT_FIELDS)
def test_a_statement_made_field_by_field_is_its_init_s(fields: tuple[object, ...]) -> None:
    """:func:`_statement`: what ``Statement(...)`` makes: equal, with an equal hash and
    ``repr``, the same fields in the same order, and still frozen."""
    made, plain = _statement(*fields), Statement(*fields)  # type: ignore[arg-type]
    assert type(made) is Statement
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert list(vars(made).items()) == list(vars(plain).items())
    assert dataclasses.astuple(made) == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.value = 1  # type: ignore[misc]


def plain_key_fields(line: str) -> tuple[str, ...] | None:
    match = _KEY_LINE.fullmatch(line)
    return None if match is None else match.groups()


KEY_LINES = [
    "- catchment_patients: dialysis patients in the catchment; a whole number in patients; "
    "held by Health service planning [planning]",
    '- feedwater: feedwater test result; one of "a; b", "c"; held by Water [water]',
    "- k: a; b; c; held by R [r]",
    "- k: a; held by x; held by y [r]",
    "- k: a;; b; held by R [r] [s]",
    "- k: a; b; held by R [r]x",
    "- k: a; b; held by  [r]",
    "- k: a; b; held by [r]",
    "- k_é٣: a; b; held by R [r_1]",
    "- k-1: a; b; held by R [r]",
    "- k: a; b; held by R [r-1]",
    "- k: a\nb; c; held by R [r]",
    "- k: a\x0bb; c; held by R [r]",
    "- : a; b; held by R [r]",
    "- k: ; b; held by R [r]",
    "- k: a; ; held by R [r]",
    "- k: a: x; b; held by R [r]",
    "- k:: a; b; held by R [r]",
]
KEY_CHUNKS = ["- ", ": ", "; ", "held by ", " [", "]", "[", ":", ";", " ", "-", "k", "_", "é", "٣"]
KEY_CHUNKS += ["\n", "\x0b", "a b"]


@settings(max_examples=4000, deadline=None)
@given(
    st.lists(st.sampled_from(KEY_CHUNKS), max_size=14).map("".join),
    st.lists(st.sampled_from(KEY_CHUNKS), max_size=6).map("".join),
)
def test_a_key_line_s_fields_are_the_pattern_s_groups(middle: str, owner: str) -> None:
    """:func:`_key_fields`: ``_KEY_LINE.fullmatch``'s groups (or None), on lines that start
    and end as key lines do, with any chunks of key lines, words and newlines between."""
    for line in ("- k: " + middle + " [" + owner + "]", "- " + middle + "]", middle):
        assert _key_fields(line) == plain_key_fields(line), line


@pytest.mark.parametrize("line", KEY_LINES)
def test_key_lines_fields_are_the_pattern_s_groups(line: str) -> None:
    """The same on key lines, two "; " and more or fewer, keys and owners of word characters
    of any script or not, newlines, empty fields."""
    assert _key_fields(line) == plain_key_fields(line)


class _Unused:
    def fullmatch(self, line: str) -> None:
        raise AssertionError(f"the pattern was asked of {line!r}")


@pytest.mark.parametrize("line", [KEY_LINES[0], KEY_LINES[8], "- k2_x: a; b; held by R [r_2]"])
def test_a_plain_key_line_is_split_without_the_pattern(line: str) -> None:
    """A key line with "; " twice and a key and owner of word characters (letters of any
    script, digits, "_") is read without the pattern (the shortcut is taken)."""
    expected = plain_key_fields(line)
    with patch("uncobench_z3.construct._key_line._KEY_LINE", _Unused()):
        assert _key_fields(line) == expected
