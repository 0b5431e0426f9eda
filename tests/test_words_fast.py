"""The tokenizer and the value scanner against their plain definitions.

``tokenize`` reads a text of ASCII whose only white space is " " between its spaces
(``_tokens_by_spaces``) and other texts with the raw-token pattern alone; it notes the tokens a
period's rewrite may start with as it makes them. ``scan_values`` starts each pattern where its
first character can be and searches a text of ASCII in lower case. Both must give what the
plain definitions below give (the code before round 28: the raw-token pattern over the whole
text, every date and number pattern tried on the whole text), token for token and value for
value, compared by ``repr`` (types too), on random texts and on every message the built-in
agents sent in the frozen readings corpus (the examples and the first 150 groups of a built
benchmark), its mutants, and the tasks' names, labels and contexts. So must the tokens each
value covers (``value_tokens``: a run of tokens found by ``bisect``, where the plain definition
looks at every token for every value).
"""

from __future__ import annotations

import runpy
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uncobench_z3.settings import _values as V
from uncobench_z3.settings import _words as W
from uncobench_z3.settings._matching import value_tokens

ROOT = Path(__file__).resolve().parent.parent


# -- the plain definitions ------------------------------------------------------------------------
def plain_tokenize(text: str) -> list[W.Token]:
    """Every raw token of the pattern over the whole text, one at a time."""
    tokens: list[W.Token] = []
    sentence = 0
    first = 0
    clause = False
    for m in W._RAW_TOKEN.finditer(text):
        raw = m[0]
        if raw.isalpha() or raw.isdigit():
            word = raw.lower()
            start, end = m.span()
            tokens.append(
                (word, W.stem(word), start, end, raw[0].isupper(), sentence, False, clause)
            )
            clause = False
            continue
        if raw in ("?", ".", "!", ";", "\n"):
            if raw == "?":
                tokens[first:] = [(*t[:6], True, t[7]) for t in tokens[first:]]
            sentence += 1
            first = len(tokens)
            clause = False
            continue
        if raw.strip() in (":", "-", "–", "—"):
            clause = len(tokens) > first
            continue
        start, end = m.span()
        for piece in W._pieces(raw):
            tokens.append(
                (piece, W.stem(piece), start, end, raw[0].isupper(), sentence, False, clause)
            )
            clause = False
    return plain_periods(tokens)


def plain_periods(tokens: list[W.Token]) -> list[W.Token]:
    """The period rewrites, every token looked at in turn (any token may start one: those
    that :func:`_starts_period` not are kept as they are)."""
    return W._canonical_periods(tokens, list(range(len(tokens))))


def plain_scan_values(text: str) -> list[V.FoundValue]:
    """Every date pattern, the month-end pattern and the number pattern over the whole text."""
    found: list[V.FoundValue] = []
    taken: list[tuple[int, int]] = []
    for pattern in V._DATE_PATTERNS:
        for m in pattern.finditer(text):
            day = V._date_value(m)
            if day is not None and not any(s < m.end() and m.start() < e for s, e in taken):
                taken.append(m.span())
                found.append(V.FoundValue(day, *m.span()))
    for m in V._MONTH_END.finditer(text):
        taken.append(m.span())
        found.append(V.FoundValue(V._month_end_value(m), *m.span()))
    for m in V._NUMBER.finditer(text):
        value = V._number_value(text, m)
        if value is not None and not any(s < m.end() and m.start() < e for s, e in taken):
            found.append(V.FoundValue(value, *m.span()))
    found.sort(key=lambda v: v.start)
    return found


def plain_value_tokens(
    tokens: list[W.Token], found: list[V.FoundValue]
) -> list[tuple[V.FoundValue, list[int]]]:
    """Each value with every token that overlaps it, a value overlapping none left out."""
    out = []
    for value in found:
        indexes = [
            i for i, t in enumerate(tokens) if t[W.START] < value.end and value.start < t[W.END]
        ]
        if indexes:
            out.append((value, indexes))
    return out


def assert_read_as_defined(text: str) -> None:
    expected = repr(plain_tokenize(text))
    assert repr(W.tokenize(text)) == expected, text
    # the raw-token reading alone, which the other texts get, gives them too
    tokens: list[W.Token] = []
    periods: list[int] = []
    W._read_raw_tokens(text, 0, len(text), tokens, periods, 0, 0, False)
    assert repr(W._canonical_periods(tokens, periods)) == expected, text
    assert repr(W._canonical_periods(tokens)) == expected, text
    assert W.words_of(text) == tuple(t[W.WORD] for t in plain_tokenize(text))
    values = repr(plain_scan_values(text))
    assert repr(W.scan_values(text)) == values, text
    # the same text, not ASCII now, is read by the other paths (and the mark adds nothing)
    assert repr(W.scan_values(text + " é")) == values, text
    assert repr(W.tokenize(text + "\t")) == expected, text
    tokens = W.tokenize(text)
    found = W.scan_values(text)
    assert value_tokens(tokens, found) == plain_value_tokens(tokens, found), text
    # (spans that start or end inside a token or between two, or at a token's end or start:
    # each value's span from three characters earlier to one later)
    shifted = [V.FoundValue(v.value, max(0, v.start - 3), v.end + 1) for v in found]
    assert value_tokens(tokens, shifted) == plain_value_tokens(tokens, shifted), text


# -- random texts ---------------------------------------------------------------------------------
PIECES = ["March", "mar", "MAR", "Sept.", "sept", "dec", "Dec", "May", "june", "JANUARY", "jan.",
          "end", "of", "start", "beginning", "middle", "the", "end of", "Vance's", "don't",
          "O'Connor", "he's", "fy", "FY26", "fy 2026", "Q3", "q", "h", "H1", "first", "3rd",
          "quarter", "half", "rev", "v2", "v", "2026", "26", "27", "2026-27", "2026-03-01",
          "3/4/2026", "1 August 2026", "May 3, 2026", "3rd of May, 2026", "12 dec 2026",
          "1,250", "1,200.50", "3.5", "-3", "12k", "5 million", "2.5bn", "40 thousand", "7",
          "a1b2", "C26", "x", "(", ")", ",", ".", ":", "?", "!", ";", "–", "—", "'", "’", "’s",
          "/", "-", " - ", " – ", "--", "(March", "2026)).", "records:", "values.", "it?",
          "Zoé", "é", "_", "\n", "\t", "  ", "..", "5.", ".5", "v.2", "-\n", "\t-", "end of",
          "end of March 2026", "send of March 2026", "xstart of may 2026", "END\tOF Jan 2026",
          "Middle of sept 2026", "amiddle of dec. 2025", "end of  March 2026",
          "start of\tMay 2026", "end of Sept. 2026", "12/11/2026", "31/12/2025", "x12/4/2026",
          "2026-3-14", "12026-03-01", "1 2 May 2026"]  # fmt: skip
SEPARATORS = ["", " ", " ", " ", "  ", "\n", "\t", " - ", ", ", ". ", "\xa0"]
# (with ASCII's control characters that are not white space, "\x07" and "\x7f", and one that
# is, "\x1c": a text of ASCII whose only white space is " " is read between its spaces)
ALPHABET = "0123456789 .:?!;–—'’/-,()\n\tabcdefjmnostuyMAYDECJanOf_é\x07\x7f\x1c"


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=14),
    st.text(alphabet=ALPHABET, max_size=8),
    st.booleans(),
)
def test_random_texts_read_as_defined(
    pieces: list[tuple[str, str]], noise: str, lead: bool
) -> None:
    text = "".join(piece + separator for piece, separator in pieces)
    assert_read_as_defined(noise + text if lead else text + noise)
    assert_read_as_defined(text.strip(" ") + noise)


@settings(max_examples=700, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_random_characters_read_as_defined(text: str) -> None:
    assert_read_as_defined(text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "(", "(("]),
            st.sampled_from(["a", "B", "1", "Marcus", "2026", "", "-"]),
            st.text(alphabet=".:;?!(),", max_size=3),
        ),
        max_size=6,
    )
)
def test_words_and_their_marks_between_spaces_read_as_defined(
    chunks: list[tuple[str, str, str]],
) -> None:
    """A word with "("s before it and marks after it, between spaces, is read between the
    spaces (``_tokens_by_spaces``): its marks as the pattern reads them, in every order (a
    colon after a sentence's end, "a.: b", opens no clause: the sentence has no token)."""
    assert_read_as_defined(" ".join(lead + word + marks for lead, word, marks in chunks))


# -- every message of the frozen readings corpus ----------------------------------------------
@cache
def corpus_texts() -> list[str]:
    recorder = runpy.run_path(str(ROOT / "tests/data/readings/record_agent_readings.py"))
    texts: dict[str, None] = {}
    tasks = {}
    for _, (task, (_, _, text, _)) in recorder["mutants"]():
        texts[text] = None
        tasks[id(task)] = task
    for task in tasks.values():
        texts.update(dict.fromkeys(recorder["_names"](task)))
    return list(texts)


def test_the_corpus_messages_read_as_defined() -> None:
    texts = corpus_texts()
    assert len(texts) > 3000
    # most are ASCII whose only white space is " ", read between their spaces
    assert sum(t.isascii() and W._only_spaces(t) for t in texts) > 0.8 * len(texts)
    for text in texts:
        assert_read_as_defined(text)


def test_some_texts_read_as_defined() -> None:
    for text in [
        "",
        " ",
        "-",
        " - ",
        "a - - b",
        "a -  - b",
        "- a",
        "a -",
        "Marcus: did he pass? Yes - he did.",
        "(March 2026)). Next: (FY26) v2; rev C!",
        "the 2026-27 figure, 1,250.5 and -3 at 12k",
        "Is it 1 August 2026 or end of March 2026?",
        "v.2 x.5 3.5. 5.",
        "records of: fit-out cost (2026 quantity surveyor estimate). ",
        "he's O'Connor's, don't; Vance's?",
        "START OF MAR 2026 and middle of sept. 2027",
        "Jan 3rd, 2026 12 of december 2025",
        "mar dec Mar 12",
        "a -\nb",
        "a\t-\tb",
        "a -\tb",
        "end\tof March 2026",
        "END\nOF jan 2026 and end of  May 2026",
        "send of March 2026, mend of jan 2026; xstart of may 2026",
        "end of  March 2026, start of\tMay 2026 and middle of Sept. 2026",
        "12/11/2026 31/12/2025 x12/4/2026 2026-3-14 12026-03-01",
        "Noted.: he did; : she did",
        "a.: b a;: b a?: b a!: b a.): b a:.: b a:: b a,: b",
    ]:
        assert_read_as_defined(text)


def test_marked_pieces_read_again_from_the_memo_as_defined(monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece between spaces is read the same when its reading comes from the memo of
    marked pieces (``_MARKED``: a word with "("s and marks, or one the raw pattern reads),
    and the memo is emptied when it holds ``MARKED_PIECES_KEPT`` pieces."""
    monkeypatch.setattr(W, "_MARKED", {})
    monkeypatch.setattr(W, "MARKED_PIECES_KEPT", 5)
    texts = [
        "Lot, pass? (FY26) value. cost: x.5 he's (March 2026)). rev C!",
        "pass? pass? Lot, (FY26), ((FY26). value.: b he's? v2; 3.5.",
    ]
    for _ in range(2):  # (the second time each piece's reading may come from the memo)
        for text in texts:
            assert_read_as_defined(text)
            assert len(W._MARKED) <= 5
    W._MARKED.clear()
    W.tokenize("pass? Lot, he's")
    assert W._MARKED["pass?"][5:] == (0, 4, "?")
    assert W._MARKED["he's"] == ()  # (the raw pattern reads it)
    W.tokenize("((March),")
    assert W._MARKED["((March),"][5:] == (2, 5, "),")
