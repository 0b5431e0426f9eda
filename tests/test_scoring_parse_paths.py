"""The answer parser's shortcuts against their plain definitions, on random input:

* a phrase's spans found with ``str.find`` equal the inflection pattern's matches;
* a candidate field read by name or id in order, then from the directory's table of name
  words (made once a directory), equals the loop over the candidates;
* a decision remembered by its text and phrases equals a fresh reading, whatever was read
  before with other phrases or as another kind of text;
* a number's value made from ints equals ``Fraction`` of its digits (times its scale);
* normalising a text without an apostrophe skips the contraction patterns, with the same
  result.
"""

from __future__ import annotations

import re
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.evaluation import AnswerKey
from uncobench_z3.evaluation._scoring import (
    _NUMBER,
    _SCALE,
    _SEPARATORS,
    _candidate_mentions,
    _decision_of,
    _norm,
    _norm_cased,
    _scaled,
    _spans,
    parse_candidate_field,
    parse_decision,
)


def _plain_spans(haystack: str, phrase: str) -> list[tuple[int, int]]:
    """The definition: the phrase's words, its last one inflected or not, as a pattern."""
    words = _norm(phrase).split()
    if not words:
        return []
    pattern = re.compile(" " + " ".join(re.escape(w) for w in words) + r"(?:s|es|d|ed|ing)? ")
    found = []
    position = 0
    while (match := pattern.search(haystack, position)) is not None:
        found.append((match.start(), match.end()))
        position = match.end() - 1
    return found


_WORDS = ["appoint", "appoints", "appointed", "appointing", "not", "no", "one", "s", "es",
          "ed", "d", "ing", "grant", "granted", "grants", "es s", "a", "%", "50%", "x1",
          "eligible", "candidate", "nobody", "none"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_WORDS), st.text("aesdingo% ", max_size=8)), max_size=14),
    st.lists(st.sampled_from(_WORDS), max_size=3).map(" ".join),
)
def test_spans_equal_the_inflection_pattern(words: list[str], phrase: str) -> None:
    haystack = _norm(" ".join(words))
    assert _spans(haystack, phrase) == _plain_spans(haystack, phrase)
    assert _spans(haystack, phrase.upper() + "!") == _plain_spans(haystack, phrase)


def _plain_candidate_field(text: str, key: AnswerKey) -> tuple[str | None, bool]:
    """The definition: the candidates in order, by name or id, then one word of one name."""
    field = _norm(text).strip()
    if field in {"", "none", "null", "n a", "na", "nil", "nobody", "no one", "no candidate", "-"}:
        return None, True
    tokens: dict[str, list[str]] = {}
    for cid, name in key.candidates.items():
        if field in (_norm(name).strip(), _norm(cid).strip()):
            return cid, True
        for token in _norm(name).split():
            if len(token) >= 3:
                tokens.setdefault(token, []).append(cid)
    if len(tokens.get(field, [])) == 1:
        return tokens[field][0], True
    mentions = {cid for _, cid in _candidate_mentions(text, key)}
    if len(mentions) == 1:
        return mentions.pop(), True
    return None, False


_NAME_WORDS = st.sampled_from(["Ruiz", "Geelong", "Ann", "Bo", "North", "Clinic", "C1", "c2",
                               "O'Neil", "Ruiz-Vance", "ann"])  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_candidate_field_read_from_the_table_equals_the_loop(data: st.DataObject) -> None:
    names = data.draw(
        st.lists(st.lists(_NAME_WORDS, min_size=1, max_size=3).map(" ".join), max_size=4)
    )
    ids = data.draw(st.lists(st.sampled_from(["c1", "C1", "c2", "ruiz", "geelong", "x"]),
                             min_size=len(names), max_size=len(names), unique=True))  # fmt: skip
    key = AnswerKey("Appoint", "Do not appoint", dict(zip(ids, names, strict=True)),
                    "Allowance", "AUD", 2, "half_up")  # fmt: skip
    pieces = st.one_of(_NAME_WORDS, st.sampled_from([*names, *ids, "none", "", "n/a"]))
    text = data.draw(st.lists(pieces, max_size=3).map(" ".join))
    for field in (text, text.upper(), f"**{text}**"):
        assert parse_candidate_field(field, key) == _plain_candidate_field(field, key)


_PHRASES = ["Appoint", "Do not appoint", "Hold", "Release", "Do not hold", "none", "Select"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_PHRASES), st.sampled_from(_PHRASES), st.booleans(),
                       st.lists(st.sampled_from([*_PHRASES, *_WORDS]), max_size=4)
                       .map(" ".join)), min_size=1, max_size=6),
)  # fmt: skip
def test_a_remembered_decision_equals_a_fresh_reading(
    cases: list[tuple[str, str, bool, str]],
) -> None:
    """The same texts read with other phrases, or as a field and as free text, one after
    the other: each gives what reading it afresh gives."""
    for positive, negative, field, text in cases:
        key = AnswerKey(positive, negative, {}, "Allowance", "AUD", 2, "half_up")
        fresh = _decision_of.__wrapped__(text, negative, positive, field)
        assert parse_decision(text, key, field=field) == fresh


def test_a_decision_depends_on_the_phrases_and_the_kind_of_text() -> None:
    release = AnswerKey("Release", "Hold", {}, "Allowance", "AUD", 2, "half_up")
    hold = AnswerKey("Hold", "Do not hold", {}, "Allowance", "AUD", 2, "half_up")
    assert parse_decision("Hold", release) == "negative"
    assert parse_decision("Hold", hold) == "positive"
    assert parse_decision("none", release, field=True) == "negative"
    assert parse_decision("none", release) is None


_DIGITS = st.text("0123456789\u0663", min_size=1, max_size=9)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(_DIGITS, min_size=1, max_size=3),
    st.sampled_from(["", *_SEPARATORS]),
    st.one_of(st.just(""), _DIGITS.map(lambda d: "." + d)),
    st.sampled_from(["", "-", "−"]),
    st.sampled_from(["", " k", "K", " thousand", " Million", "bn", " billion", " kg"]),
)
def test_a_number_made_from_ints_equals_fraction_of_its_digits(
    groups: list[str], separator: str, fraction: str, sign: str, suffix: str
) -> None:
    for match in _NUMBER.finditer(sign + separator.join(groups) + fraction + suffix):
        digits = match.group(2)
        for sep in _SEPARATORS:
            digits = digits.replace(sep, "")
        plain = Fraction(digits) * _SCALE.get((match.group(3) or "").lower(), 1)
        value = _scaled(match)
        assert value == (-plain if match.group(1) else plain) and type(value) is Fraction


def _plain_norm_cased(text: str) -> str:
    """The definition: every contraction pattern applied, whatever the text."""
    text = text.replace("’", "'").replace("‘", "'")
    text = re.sub(
        r"\b(won|can)'t\b",
        lambda m: "will not" if m[1].lower() == "won" else "can not",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(r"\b(\w+)n't\b", r"\1 not", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(can)(not)\b", r"\1 \2", text, flags=re.IGNORECASE)
    return " " + " ".join(re.sub(r"[^0-9A-Za-z%]+", " ", text).split()) + " "


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["won't", "can't", "Cannot", "Don't", "isn’t", "o'clock", "n't", "‘t", "'"]
            ),
            st.text("aeinotw' ’‘%1", max_size=8),
        ),
        max_size=8,
    ).map(" ".join)
)
def test_normalising_equals_applying_every_contraction_pattern(text: str) -> None:
    assert _norm_cased(text) == _plain_norm_cased(text)
