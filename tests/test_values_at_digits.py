"""The value scanner's readings at a text's digits against the patterns they stand for.

``scan_values`` reads a text of ASCII at its digits not after a word character (its runs):
a number of digits alone between spaces without :data:`_NUMBER` (``_plain_digits``), the
date patterns with a day first only at the runs of one or two digits (``_day_runs``), and
whether a month is named before a digit at the runs after white space
(``_names_a_month_before_digit``). Each must give what its pattern gives, at every place of
random texts (tests/test_words_fast.py compares whole scans with the patterns over the whole
text, and tests/test_reader_fast_paths.py with every screen off).
"""

from __future__ import annotations

from fractions import Fraction
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.settings import _values as VA
from uncobench_z3.settings._words import scan_values

PIECES = ["2026", "26", "7", "123", "0", "1,250", "3.5", "5.", ",5", "-3", "12k", "k", "m",
          "K", "million", "Thousand", "bn", "team", "meal", "x", "_", "(", ")", "))", ".",
          ",", ";", ":", "?", "!", "-", "/", "fy", "Q", "h", "April", "mar.", "Sept,",
          "of", "3rd", "1st"]  # fmt: skip
SEPARATORS = ["", " ", " ", " ", "  ", "\t", "\n", "\x1c", ", ", ". ", "-", "/"]
TEXTS = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=10).map(
    lambda pieces: "".join(piece + separator for piece, separator in pieces)
)
ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=16)


def assert_plain_digits_as_the_pattern_reads(text: str) -> None:
    for start in range(len(text) + 1):
        digits = VA._plain_digits(text, start)
        if not digits:
            continue
        written = VA._NUMBER.match(text, start)
        assert written is not None and written.span() == (start, start + len(digits)), text
        assert written["num"] == digits and not written["sign"] and not written["scale"], text
        assert VA._number_value(text, written) == Fraction(int(digits)), text


@settings(max_examples=1500, deadline=None)
@given(TEXTS, ASCII)
def test_digits_read_alone_are_the_number_the_pattern_reads(text: str, noise: str) -> None:
    """Where ``_plain_digits`` reads a number, at any place of a text of ASCII (not only its
    runs), :data:`_NUMBER` matches those digits there and :func:`_number_value` reads them."""
    assert_plain_digits_as_the_pattern_reads(text)
    assert_plain_digits_as_the_pattern_reads(text + noise)
    assert_plain_digits_as_the_pattern_reads(noise + text)


def test_most_numbers_are_read_without_the_pattern() -> None:
    """The common numbers between spaces are read alone; those with a sign, a separator, a
    scale or a period's mark before them are left to the pattern."""
    for text, start in [("2026", 0), ("(2026 x", 1), ("April 2026).", 6), ("the 26, x", 4),
                        ("7? y", 0), ("1 (2026 meal)", 0), ("123:", 0)]:  # fmt: skip
        assert VA._plain_digits(text, start) == text[start:].split(" ")[0].rstrip(").,:?"), text
    for text, start in [("-3", 0), ("-3", 1), ("1,250", 0), ("3.5", 0), ("12k", 0),
                        ("5 million", 0), ("2026 team", 0), ("5 K", 0), ("2026-27", 5),
                        ("x 2026/27", 7), ("a.5", 2), ("a5", 1), ("26th", 0),
                        ("3\tmillion", 0)]:  # fmt: skip
        assert VA._plain_digits(text, start) == "", text
    assert_plain_digits_as_the_pattern_reads("fy 2026 (2026 12k 5 million -3 2026-27.")


@settings(max_examples=1000, deadline=None)
@given(TEXTS, ASCII)
def test_a_day_first_date_is_tried_only_at_one_or_two_digits(text: str, noise: str) -> None:
    """The date patterns that start with a day match at no run of three digits, and every
    match of the one with the month first has its day at a run of one or two digits."""
    for read in (text, text + noise, noise + text):
        runs = VA._digit_runs(read)
        days = VA._day_runs(read, runs)
        assert set(days) <= set(runs)
        for run in set(runs) - set(days):
            assert read[run : run + 3].isdigit() and len(read[run : run + 3]) == 3
            for pattern in (VA._DATE_PATTERNS_ASCII[1], VA._DATE_PATTERNS_ASCII[3]):
                assert pattern.match(read, run) is None, read
        for m in VA._DATE_PATTERNS[2].finditer(read):  # (its screen is read at the days)
            assert m.start("d") in days, read
            assert VA._DAY_BEFORE_YEAR_AT.match(read, m.start("d")), read


@settings(max_examples=1000, deadline=None)
@given(TEXTS, ASCII)
def test_a_month_before_a_digit_is_found_where_the_pattern_finds_it(text: str, noise: str) -> None:
    for read in (text, text + noise, noise + text):
        found = VA._names_a_month_before_digit(read.lower(), VA._digit_runs(read))
        assert found == (VA._MONTH_BEFORE_DIGIT_LOWER.search(read.lower()) is not None), read


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_values_read_at_the_digits_are_those_the_patterns_read(text: str) -> None:
    """The whole scan with the three readings at the digits against the scan without them."""
    expected = repr(scan_values(text))
    with patch.multiple(
        VA,
        _plain_digits=lambda text, start: "",
        _day_runs=lambda text, runs: runs,
        _names_a_month_before_digit=lambda lowered, runs: True,
    ):
        assert repr(scan_values(text)) == expected, text


def test_a_month_before_a_digit_in_examples_as_the_pattern_finds_it() -> None:
    """A word's first letters after "_" or a digit, marks between the month and the digit,
    other white space, a word that starts with a month's letters."""
    for text in ["April 3", "x_april 3", "_April 3", "2mar 5", "(march 5", "Mar., 5", "mar,. 5",
                 "mar.\t 5", "marketing 5", "amarch 5", "ma 5", "sep\x1c5", "Dec.5", "dec 5x",
                 "(jan)  7"]:  # fmt: skip
        found = VA._names_a_month_before_digit(text.lower(), VA._digit_runs(text))
        assert found == (VA._MONTH_BEFORE_DIGIT_LOWER.search(text.lower()) is not None), text
