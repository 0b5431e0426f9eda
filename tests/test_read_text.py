"""A new message's tokens, stems and layout read in one loop (``_message.read_text``).

For a text of ASCII whose only white space is " ", the tokenizer's loop between spaces notes
each token's stem, word and places as it makes it, and the layout's marks where it reads them;
any other text, one longer than the shared places and one whose period is written in a piece
the raw pattern reads ("(FY26", "2026-27") are read in the two steps. Every text must give
exactly what :func:`~._words.tokenize` and :func:`~._message.stems_and_layout` of its tokens
give (the stems' places in the same order, every part an exact tuple where it was one).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import template_messages
from tests.test_words_fast import ALPHABET, PIECES, SEPARATORS, corpus_texts
from uncobench_z3.settings import _message as MS
from uncobench_z3.settings import _words as W


def assert_read_as_in_two_steps(text: str) -> None:
    tokens = W.tokenize(text)
    token_stems, layout = MS.stems_and_layout(tokens)
    read = MS.read_text(text)
    assert read == (tokens, token_stems, layout), text
    assert list(read[1][2]) == list(token_stems[2]), text  # (the stems in the order met)
    assert [type(part) for part in read[1]] == [type(part) for part in token_stems], text
    assert [type(part) for part in read[2]] == [type(part) for part in layout], text
    assert type(read[0]) is list
    assert all(type(places) is tuple for places in read[1][2].values()), text


# (marked words, hyphens, contractions, periods, questions, clauses, numbers, repeated words)
WORDS = [*PIECES, "records", "certification", "1234567", "Marcus:", "pass?", "(FY2026",
         "(2026-27", "(Q1", "fit-out", "vessel's", "O&M", "P60", "the", "the", "of", "of",
         "value,", "(2026", "estimate).", "Did", "he?", "it", "--", "-", "?!", "(", "((a),",
         "1st", "second", "quarter", "rev.", "Mar", "12", "a.b", "x:y"]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=16),
    st.text(alphabet=ALPHABET, max_size=8),
    st.booleans(),
)
def test_random_texts_read_as_in_two_steps(
    pieces: list[tuple[str, str]], noise: str, lead: bool
) -> None:
    text = "".join(piece + separator for piece, separator in pieces)
    assert_read_as_in_two_steps(noise + text if lead else text + noise)
    # (spaces alone between the pieces, the one loop's texts, and repeated spaces)
    spaced = " ".join(piece for piece, _ in pieces)
    assert_read_as_in_two_steps(spaced)
    assert_read_as_in_two_steps(spaced.replace(" ", "  "))
    assert_read_as_in_two_steps(" " + spaced + " ")


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=ALPHABET + "   ", max_size=40))
def test_random_characters_read_as_in_two_steps(text: str) -> None:
    assert_read_as_in_two_steps(text)
    assert_read_as_in_two_steps(text.replace("\n", " ").replace("\t", " ").replace("\x1c", " "))


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_any_text_read_as_in_two_steps(text: str) -> None:
    assert_read_as_in_two_steps(text)


def test_some_texts_read_as_in_two_steps() -> None:
    for text in [
        "",
        " ",
        "  ",
        "-",
        "a - - b",
        "- a",
        "a -",
        "Marcus: did he pass? Yes - he did.",
        "Did he pass?? Yes. . ? no!",
        "(March 2026)). Next: (FY26) v2; rev C!",
        "For every candidate, please send your records of: fit-out cost estimate "
        "(2026-27 quantity surveyor estimate). I need exactly these contexts and exact values.",
        "the (Q1 figure? and the (Q3 one: yes.",
        "a fit-out. a fit-out? a-b-c: d-e. f",
        "it's 26-0175. Next",
        "x (FY2026 y. z",
        "first quarter, 3rd quarter and the second half; rev C, v2 and Mar 2026",
        "a.: b a;: b a?: b a!: b a.): b a:.: b a:: b a,: b",
        "Zoé: did he pass? yes",
    ]:
        assert_read_as_in_two_steps(text)


def test_the_corpus_and_template_messages_read_as_in_two_steps() -> None:
    texts = corpus_texts()
    assert sum(t.isascii() and W._only_spaces(t) for t in texts) > 0.8 * len(texts)
    for text in texts:
        assert_read_as_in_two_steps(text)
    for _, text, _, _ in template_messages():
        assert_read_as_in_two_steps(text)


def test_texts_about_as_long_as_the_shared_places_read_as_in_two_steps() -> None:
    """A text of up to 1,024 characters has as many tokens at most, each with a shared place
    (:data:`MS._ONE_PLACE`); a longer one is read in the two steps."""
    shared = len(MS._ONE_PLACE)
    digits_and_letters = "".join(itertools.islice(itertools.cycle("a1"), shared))
    assert len(W.tokenize(digits_and_letters)) == shared  # (a token a character)
    assert_read_as_in_two_steps(digits_and_letters)
    assert_read_as_in_two_steps(digits_and_letters + "b")
    words = ["".join(w) for w in itertools.product("bcdfghjklm", repeat=3)]
    for size in (shared // 4 - 1, shared // 4, shared // 4 + 1, shared):
        text = " ".join(w + ("." if k % 10 == 9 else "") for k, w in enumerate(words[:size]))
        assert_read_as_in_two_steps(text + " bcd bcd.")


def test_a_plain_word_notes_whether_it_is_a_typo_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain words' memo notes a word of six characters or more, not digits (what
    ``TokenStems`` calls correctable), and a marked piece's entry carries its word's."""
    monkeypatch.setattr(W, "_PLAIN", {})
    monkeypatch.setattr(W, "_MARKED", {})
    for raw in ["Marcus", "Vance", "records", "123456", "12345", "abcdef", "ABCDE", "2026"]:
        W.tokenize(raw)
        word = raw.lower()
        assert W._PLAIN[raw] == (
            word,
            W.stem(word),
            raw[0].isupper(),
            W._starts_period(word),
            len(word) >= 6 and not word.isdigit(),
        )
        W.tokenize(f"({raw}),")
        assert W._MARKED[f"({raw}),"][:5] == W._PLAIN[raw]
    # (read with memos a test set: the one loop reads the tokenizer's memos as they are now)
    assert_read_as_in_two_steps("(Marcus), records: 123456 Vance?")


def test_the_tokenizer_resumes_between_spaces_as_it_reads_from_the_start() -> None:
    """``_tokens_by_spaces`` from a place after a space, with the sentence, its first token
    and the clause read before it, makes the tokens it makes reading from the start."""
    text = "Marcus: did he pass? Yes - he did (FY26), rev C. Next: x -"
    whole: list[W.Token] = []
    whole_periods: list[int] = []
    W._tokens_by_spaces(text, whole, whole_periods)
    for at in [0] + [k + 1 for k, c in enumerate(text) if c == " "]:
        tokens: list[W.Token] = []
        periods: list[int] = []
        W._tokens_by_spaces(text[: max(at - 1, 0)], tokens, periods)
        state = _state_after(text[: max(at - 1, 0)], tokens) if at else (0, 0, False)
        W._tokens_by_spaces(text, tokens, periods, at, *state)
        assert (tokens, periods) == (whole, whole_periods), at


def _state_after(head: str, tokens: list[W.Token]) -> tuple[int, int, bool]:
    """The sentence number, its first token and the clause flag after ``head``'s tokens
    (the tokens of ``head + " x"`` tell them: its last token's sentence and clause)."""
    more: list[W.Token] = []
    W._tokens_by_spaces(head + " x", more, [])
    last = more[-1]
    first = next(k for k, t in enumerate(more) if t[W.SENTENCE] == last[W.SENTENCE])
    return last[W.SENTENCE], first, last[W.CLAUSE]
