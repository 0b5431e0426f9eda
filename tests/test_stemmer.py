"""The stems the request reader and the vocabularies use come from PyStemmer (Snowball in C).
The reading rules were written and tuned against the pure-Python Snowball stemmer
(``snowballstemmer``), so the C stems must be the same: here for every word of the shipped
scenario library, names, prompts and docs, and for generated words with the suffixes the
English algorithm rewrites."""

from __future__ import annotations

import re
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer

from uncobench_z3.settings._words import stem, words_of

_REFERENCE = EnglishStemmer()  # the pure-Python module itself, never PyStemmer behind it
_ROOT = Path(__file__).resolve().parent.parent
_SUFFIXES = [
    "", "s", "es", "ies", "ed", "ied", "ing", "ings", "ly", "ness", "ful", "less", "ment",
    "ments", "ation", "ational", "ations", "ative", "ize", "ise", "izer", "ity", "ities",
    "ance", "ence", "able", "ible", "ous", "ive", "al", "ally", "er", "ers", "est", "ism",
    "ist", "ists", "eed", "eedly", "ingly", "edly", "y", "'s",
]  # fmt: skip


def _shipped_words() -> set[str]:
    words: set[str] = set()
    folders = ("generators", "evaluators", "docs")
    for path in (p for folder in folders for p in (_ROOT / folder).rglob("*") if p.is_file()):
        if path.suffix in {".json", ".md", ".txt", ".yaml", ".yml"}:
            words |= set(re.findall(r"[a-z]+", path.read_text(errors="ignore").lower()))
    return words


def test_every_shipped_word_has_the_reference_stem() -> None:
    words = sorted(_shipped_words())
    assert len(words) > 3000  # the library, names, prompts and docs were found
    expected = {w: _REFERENCE.stemWord(w) for w in words}
    assert {w: stem(w) for w in words if stem(w) != expected[w]} == {}


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=12),
    st.sampled_from(_SUFFIXES),
)
def test_generated_words_have_the_reference_stem(head: str, suffix: str) -> None:
    word = (head + suffix).replace("'", "")
    assert stem(word) == _REFERENCE.stemWord(word)


def test_words_of_stems_and_keeps_digits() -> None:
    assert stem("clearances") == "clearanc"
    assert stem("2026") == "2026"  # digits are never stemmed
    assert [stem(w) for w in words_of("Security clearances, verified 2026")] == [
        "secur", "clearanc", "verifi", "2026",
    ]  # fmt: skip
