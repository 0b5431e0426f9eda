"""The intents' patterns looked for in a message as written only where they may read a word
of its names (``_screen.NameTouches``, ``_phrase_hits._may_match_plain``): a pattern that misses
the tagged text and matches the message as written is always among those searched, and the
phrase hits are those of every pattern searched in both texts."""

from __future__ import annotations

import dataclasses
import json
import re
import runpy
import sys
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.name_pieces import module_text, name_pieces, table
from tests.test_phrase_screen import INTENT_TEXTS, VOCABULARY, _plain_phrase_hits
from tests.test_reader_fast_paths import FILLERS, ROOT, _words
from uncobench_z3.evaluation import typed_task
from uncobench_z3.settings import Vocabulary, _touches
from uncobench_z3.settings import _phrase_hits as PH
from uncobench_z3.settings import _phrases as P
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings._model import TaskGroup
from uncobench_z3.settings._request import read_request
from uncobench_z3.spec._io import validate_document

#: words a name may be written with: the intents' own words, the tags, and words that start
#: with, end with or hold one ("orange", "narrowgate", "mismatches")
NAME_WORDS = sorted(
    {w for p in [*P.EXACT, *P.MISMATCH, *P.REPLY_REFERENCE] for w in re.findall(r"[a-z0-9]+", p)}
    | {"zcand", "zfact", "zoth", "zmem", "orange", "narrowgate", "pinewood", "mismatches"}
    | {"xrange", "rangesx", "acme", "x1", "precisely", "oranges", "notx", "xnot", "whichx"}
)
NAMES = st.lists(st.sampled_from(NAME_WORDS), min_size=1, max_size=3)
TAGS = st.sampled_from(["zcand", "zfact"])
TEXTS = st.lists(
    st.one_of(st.sampled_from(VOCABULARY), TAGS, TAGS, TAGS, INTENT_TEXTS), max_size=14
)


def _as_written(words: list[str], names: list[list[str]]) -> tuple[str, list[str]]:
    """``words`` with each tag in turn written as a name, and the names' words."""
    out, left, written = [], list(names), []
    for word in words:
        if word in ("zcand", "zfact") and left:
            name = left.pop(0)
            out += name
            written += name
        else:
            out.append(word)
    return " ".join(out), written


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS, st.lists(NAMES, max_size=4))
def test_a_pattern_that_matches_only_as_written_may_read_a_name(
    words: list[str], names: list[list[str]]
) -> None:
    joined = " ".join(words)
    plain, written = _as_written(words, names)
    if not written:
        return
    for (_, patterns), touches in zip(PH._INTENTS, PH._TOUCHES, strict=True):
        may = touches.may_match(written)
        for k, phrase in enumerate(patterns.phrases):
            if phrase.pattern.search(plain) and not phrase.pattern.search(joined):
                assert k in may, (phrase.pattern.pattern, joined, plain)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS, st.lists(NAMES, max_size=4))
def test_phrase_hits_with_the_names_words_are_the_hits_of_both_texts(
    words: list[str], names: list[list[str]]
) -> None:
    joined = " ".join(words)
    plain, written = _as_written(words, names)
    expected = _plain_phrase_hits(joined, plain)
    PH._tagged_hits.cache_clear()
    for known in (" ".join(written), " ".join(sorted(set(written))), None):
        found = dataclasses.astuple(PH._find_phrase_hits(joined, plain, known))
        assert found == expected, (joined, plain, known)


def test_the_package_s_table_is_the_one_derived_from_the_patterns() -> None:
    # (a changed pattern fails here: write the table again with python -m tests.name_pieces)
    assert table() == {
        "EXACT": _touches.EXACT,
        "MISMATCH": _touches.MISMATCH,
        "REFERENCE": _touches.REFERENCE,
    }


def test_the_documented_command_writes_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/development.md: "python -m tests.name_pieces" writes the table again; it printed it,
    # and the shell redirect a reader would add emptied the package's file before the derivation
    # imported it (here the module's file is a copy, so the package's is never written)
    target = tmp_path / "_touches.py"
    monkeypatch.setattr(_touches, "__file__", str(target))
    # run as a script is, not beside the imported module (runpy warns of the two otherwise)
    monkeypatch.delitem(sys.modules, "tests.name_pieces")
    runpy.run_module("tests.name_pieces", run_name="__main__")
    assert target.read_text(encoding="utf-8") == module_text()
    assert module_text() == Path(_touches.__spec__.origin).read_text(encoding="utf-8")
    assert capsys.readouterr().out == ""


def test_the_pieces_of_a_few_patterns() -> None:
    def pieces(source: str) -> frozenset[tuple[str, bool, bool]] | None:
        return name_pieces(re.compile(source))

    assert pieces(r"\bwrong(?: [a-z]+){0,3} site\b") == {
        ("wrong", True, True),
        ("site", True, True),
    }
    # a piece followed by word characters, or not after \b or a space: not at that end
    assert pieces(r"\bnarrow\w* down\b") == {("narrow", True, False), ("down", True, True)}
    assert pieces(r"(?:range|band)s? is\b") == {
        ("range", False, True),
        ("ranges", False, True),
        ("band", False, True),
        ("bands", False, True),
        ("is", True, True),
    }
    assert pieces(r"\bhow\b[^|]*\bactually\b") == {("how", True, True), ("actually", True, True)}
    assert pieces(r"\bon the records?\b(?= ?\?)") == {
        ("on", True, True),
        ("the", True, True),
        ("record", True, True),
        ("records", True, True),
    }
    # always searched: a back-reference, a run that must read a word, a run at an end, two
    # runs with no letter between, a \b that reads a character before the match, a class
    for source in [
        r"\b(\w+) or not \1\b",
        r"\bx(?: \w+){1,2} y\b",
        r"\bx(?: \w+){0,2}",
        r"[^|]*\bx\b",
        r"\bx(?: \w+){0,2} [^|]*\by\b",
        r"\b y\b",
        r"\bx [a-y]\b",
        r"\bx(?! y)",
    ]:
        assert pieces(source) is None, source


def test_the_pieces_of_strings_cut_where_they_would_be_too_many() -> None:
    # twenty by twenty strings are cut between the two groups: a piece cut in two is at
    # neither side of the cut, and what each string ended with is read on
    letters = "abcdefghijklmnopqrst"
    firsts = "|".join(f"{c}q" for c in letters)
    seconds = "|".join(f"{c}w" for c in letters)
    pieces = name_pieces(re.compile(rf"\b(?:{firsts})(?:{seconds})\b"))
    assert pieces is not None
    assert ("cq", True, False) in pieces and ("hw", False, True) in pieces
    assert not any(start and end for _, start, end in pieces)
    spaced = name_pieces(re.compile(rf"\b(?:{firsts}) (?:{seconds})\b"))
    assert spaced is not None and ("hw", True, True) in spaced
    # a run of words read on after the cut must still be followed by a space
    assert name_pieces(re.compile(rf"\b(?:{firsts})(?: \w+){{0,2}}(?:{seconds})\b")) is None
    assert name_pieces(re.compile(rf"\b(?:{firsts})(?: \w+){{0,2}} (?:{seconds})\b")) is not None


def _renamed(path: Path, names: list[str]) -> Vocabulary:
    """An example task whose candidates are named with the intents' words."""
    data = json.loads(path.read_text())
    for candidate, name in zip(data["spec"]["candidates"], names, strict=False):
        candidate["name"] = name
    return Vocabulary.of(typed_task(validate_document(data, TaskGroup, str(path))))


_NAMED = [
    "Exact Range",
    "Precise Band",
    "Wrong Site",
    "Actual Figure",
    "Narrowgate Estimate",
    "Mismatch Pinewood",
    "Rough Ballpark",
    "Specific Record",
    "Outdated Draft",
    "Previous Answer",
    "Approximations",
    "Which One",
]
RENAMED = [
    _renamed(path, _NAMED[k : k + 3])
    for path in sorted((ROOT / "examples/groups").glob("*.group.json"))
    for k in range(0, len(_NAMED), 3)
]


@st.composite
def named_messages(draw: st.DrawFn) -> tuple[Vocabulary, str]:
    """Messages that write candidates' names (of the intents' words), the tasks' words, the
    intents' words and phrases next to each other."""
    vocabulary = draw(st.sampled_from(RENAMED))
    task = vocabulary.task
    names = [task.candidate_name(c) for c in task.candidates]
    pieces = st.one_of(
        st.sampled_from(names),
        st.sampled_from(names),
        st.sampled_from(_words(vocabulary) + FILLERS + NAME_WORDS),
        INTENT_TEXTS,
    )
    return vocabulary, " ".join(draw(st.lists(pieces, max_size=12)))


def _unscreened(joined: str, plain: str, names: str) -> PH.PhraseHits:
    return PH._find_phrase_hits(joined, plain)  # (no names' words: every pattern searched)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(named_messages(), st.booleans())
def test_a_reading_with_the_screen_is_the_reading_with_every_pattern_searched(
    message: tuple[Vocabulary, str], to_role: bool
) -> None:
    vocabulary, text = message
    role = vocabulary.task.roles[0] if to_role else None
    focus = next(iter(vocabulary.task.candidates))
    screened = read_request(vocabulary, text, role, focus)
    assert screened.intents is not None  # (read now, with the screen)
    with patch.object(RQ, "phrase_hits", _unscreened):
        searched = read_request(vocabulary, text, role, focus)
        assert searched.intents is not None
    assert screened == searched and screened.evidence == searched.evidence


def test_a_name_of_intent_words_is_read_as_an_intent() -> None:
    # (the reading above is not the same by nothing found: a name finds an intent)
    vocabulary = RENAMED[0]
    assert "exact" in read_request(vocabulary, "what is Exact Range 's score ?", None).intents
