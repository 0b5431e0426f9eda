"""A new message's values as the text memo keeps them, and the scan's steps skipped on most texts.

``_message._read_tokens_and_values`` finds each value's tokens itself (``value_tokens``
written out: a tuple at once, a value of one token given its shared place, the dates' tokens
gathered in the same loop); ``scan_values`` zips its date patterns once, reads the text in
lower case only when a month is named before a digit, tries the date patterns only with a
month named and a day's run, a "-" or a "/", and starts the numbers at the text's runs when
it has no "-". Each must give what the plain steps give (tests/test_words_fast.py compares
the whole scan with the patterns over the whole text).
"""

from __future__ import annotations

import datetime as _dt
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.settings import _message as M
from uncobench_z3.settings import _values as VA
from uncobench_z3.settings._matching import value_tokens
from uncobench_z3.settings._values import FoundValue, scan_values

PIECES = ["2026", "(2026", "2026)).", "26", "7", "1,250", "3.5", ".5", "a.5", "x.12", "-3",
          "12k", "5 million", "FY26", "2026-27", "2026-03-01", "3/4/2026", "1 August 2026",
          "May 3, 2026", "3rd of May, 2026", "end of March 2026", "MIDDLE of Sept. 2026",
          "Mar 3, 2026", "DEC 12 2026", "(March 2026", "records:", "the", "x", "_", ".", ",",
          "Zoé", "é", "end", "of", "fit-out", "2026-3-14", "12/4/2026"]  # fmt: skip
SEPARATORS = ["", " ", " ", " ", "  ", "\t", ", ", ". ", "-", "/"]
TEXTS = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=12).map(
    lambda pieces: "".join(piece + separator for piece, separator in pieces)
)


def plainly_kept(
    tokens: list[tuple[object, ...]], values: list[FoundValue]
) -> tuple[tuple[tuple[FoundValue, tuple[int, ...]], ...], frozenset[int]]:
    """What ``_read_tokens_and_values`` kept before: ``value_tokens``' lists made tuples,
    and the tokens of the dates among them."""
    kept = tuple([(value, tuple(ix)) for value, ix in value_tokens(tokens, values)])  # type: ignore[arg-type]
    dated = [i for v, ix in kept if isinstance(v.value, _dt.date) for i in ix]
    return kept, frozenset(dated)


def assert_kept_as_plainly(text: str, values: list[FoundValue] | None = None) -> None:
    M._tokens_and_values.cache_clear()
    if values is None:
        reading = M._read_tokens_and_values(text)
        values = scan_values(text)
    else:
        with patch.object(M, "scan_values", lambda _: values):
            reading = M._read_tokens_and_values(text)
    tokens, kept, _, dates, _ = reading
    expected, expected_dates = plainly_kept(list(tokens), values)
    assert kept == expected, text
    assert [tuple(map(type, ix)) for _, ix in kept] == [tuple(map(type, ix)) for _, ix in expected]
    assert all(type(ix) is tuple for _, ix in kept), text
    assert dates == expected_dates, text
    if not expected_dates:
        assert dates is M._NO_DATES


@settings(max_examples=800, deadline=None)
@given(TEXTS)
def test_a_text_s_values_are_kept_with_the_tokens_value_tokens_gives(text: str) -> None:
    assert_kept_as_plainly(text)
    # (spans that start or end inside a token or between two: each from three characters
    # earlier to one later, and values of no token)
    found = scan_values(text)
    shifted = [FoundValue(v.value, max(0, v.start - 3), v.end + 1) for v in found]
    assert_kept_as_plainly(text, shifted)
    assert_kept_as_plainly(text, [FoundValue(v.value, len(text) + 5, len(text) + 9) for v in found])


def test_values_kept_in_examples() -> None:
    for text in ["", "no digit", "(2026 renal registry extract).", "on 1 August 2026 and 2025",
                 "end of March 2026, 3/4/2026 or 2026-03-01",
                 "fit-out 2026-27 FY26 12k -3"]:  # fmt: skip
        assert_kept_as_plainly(text)
    # a value of one token past the shared places' end gets a tuple of its own
    long_text = "x " * 1100 + "2026"
    assert_kept_as_plainly(long_text)
    (_, places), *_ = M._read_tokens_and_values(long_text)[1]
    assert places == (1100,)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_the_scan_s_shortcuts_find_what_its_full_steps_find(text: str) -> None:
    """The date patterns tried on every text and the numbers started at
    :func:`_number_starts_ascii`'s places always (``_SIGN`` "", in every text): the same
    values (with every screen off and a month always named: tests/test_reader_fast_paths.py)."""
    expected = repr(scan_values(text))
    every_try = tuple(
        ("" if sep is not None else None, *rest) for sep, *rest in VA._DATE_TRIES_ASCII
    )
    with patch.multiple(VA, _DATE_TRIES_ASCII=every_try, _SIGN=""):
        assert repr(scan_values(text)) == expected, text


@settings(max_examples=800, deadline=None)
@given(TEXTS)
def test_every_date_has_a_day_s_run(text: str) -> None:
    """Every match of a date pattern in a text of ASCII holds one of its runs of one or two
    digits (:func:`_day_runs`: a day, or an ISO date's month), so a text with a month named
    and no such run tries no date pattern."""
    if not text.isascii():
        return
    days = VA._day_runs(text, VA._digit_runs(text))
    for pattern in (*VA._DATE_PATTERNS, *VA._DATE_PATTERNS_ASCII):
        for m in pattern.finditer(text):
            assert any(m.start() <= day < m.end() for day in days), (text, m)


def test_a_run_after_a_period_is_no_number() -> None:
    """What the scan tries at a run after a "." (in a text without a "-", the runs are the
    numbers' starts): no number, as :func:`_number_starts_ascii` leaves it out."""
    for text in ["a.5", "x.12 and 3", "1,200.50", "v.2", "(.5)", "3.5"]:
        runs = VA._digit_runs(text)
        assert "-" not in text
        for run in runs:
            if run and text[run - 1] == ".":
                assert VA._plain_digits(text, run) == ""
                assert VA._NUMBER.match(text, run) is None, text
                assert run not in VA._number_starts_ascii(text, runs)


@settings(max_examples=800, deadline=None)
@given(TEXTS)
def test_a_month_is_found_before_a_digit_in_either_case(text: str) -> None:
    """The month check reads the text as written as the pattern reads it in lower case."""
    if not text.isascii():
        return
    runs = VA._digit_runs(text)
    expected = VA._MONTH_BEFORE_DIGIT_LOWER.search(text.lower()) is not None
    assert VA._names_a_month_before_digit(text, runs) == expected, text
    assert VA._names_a_month_before_digit(text.upper(), runs) == expected, text
    assert (VA._MONTH_BEFORE_DIGIT.search(text) is not None) == expected, text


def test_the_date_tries_are_the_patterns_zipped() -> None:
    columns = (VA._DATE_SEPARATORS, VA._DATE_SCREENS, VA._DATE_PATTERNS, VA._DATE_STARTS)
    assert [*map(tuple, VA._DATE_TRIES)] == [*zip(*columns, strict=True)]
    ascii_columns = (*columns[:2], VA._DATE_PATTERNS_ASCII, columns[3])
    assert [*map(tuple, VA._DATE_TRIES_ASCII)] == [*zip(*ascii_columns, strict=True)]
