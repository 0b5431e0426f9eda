"""The reader's second writing (candidate names and one-word fact names left as written)
made only when a reading's intents or evidence are read, against the whole writing
(``_tagging.tagged``), and ``_tagging.tags_of``'s second tags."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import VOCABULARIES, messages, template_messages
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings import _tagging as T
from uncobench_z3.settings._phrase_hits import phrase_hits
from uncobench_z3.settings._request import parse_message, read_request


@dataclass
class _Match:
    """What the tagging reads of a match."""

    kind: str
    ref: tuple[str, ...]
    indexes: tuple[int, ...]


@dataclass
class _Found:
    """What the tagging reads of a found value."""

    value: object


@st.composite
def tagging_cases(draw: st.DrawFn) -> tuple[Vocabulary, frozenset[str], list, list]:
    """Matches of every kind on any tokens (overlapping, on the same tokens as others, out of
    order: more than a reading's matches ever are) and values on any tokens."""
    vocabulary = draw(st.sampled_from(VOCABULARIES))
    task = vocabulary.task
    facts = sorted(task.facts)
    role_facts = frozenset(draw(st.lists(st.sampled_from(facts), max_size=3)))
    pool = draw(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=3, unique=True)
                         .map(lambda ix: tuple(sorted(ix))), min_size=1, max_size=4))  # fmt: skip
    matches = []
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["candidate", "fact", "member", "context"]))
        indexes = draw(st.sampled_from(pool))  # (often the same tokens as another's)
        fact = draw(st.sampled_from(facts))
        if kind == "context":
            context = draw(st.sampled_from([task.facts[fact].context, "some other period"]))
            ref: tuple[str, ...] = (fact, context)
        else:
            ref = (fact, "member")
        matches.append(_Match(kind, ref, indexes))
    values = [
        (_Found(draw(st.sampled_from([Fraction(3), _dt.date(2026, 3, 1)]))), list(ix))
        for ix in draw(st.lists(st.sampled_from(pool), max_size=2))
    ]
    return vocabulary, role_facts, matches, values


@settings(max_examples=1000, deadline=None)
@given(tagging_cases())
def test_the_second_tags_differ_only_with_a_name(
    case: tuple[Vocabulary, frozenset[str], list, list],
) -> None:
    vocabulary, role_facts, matches, values = case
    second = T.tags_of(vocabulary.task, role_facts, matches, values)[1]
    named = any(
        m.kind == "candidate" or (m.kind == "fact" and len(m.indexes) == 1) for m in matches
    )
    assert named or second is None


def _check_written_as_is(vocabulary: Vocabulary, text: str, role: str | None) -> None:
    """The reading's second writing, made from what it keeps, is :func:`tagged`'s."""
    parsed = parse_message(vocabulary, text)
    request = read_request(vocabulary, text, role, None, parsed)
    rest = request.__dict__[RQ._REST]
    role_facts = vocabulary.facts_read_for(role)
    words, _, as_written = T.tagged(
        vocabulary.task, role_facts, parsed.tokens, parsed.matches, parsed.found, parsed.layout
    )
    joined = " ".join(words)
    assert rest[2] == words and rest[3][0] == joined
    as_written_from = RQ._positions_and_names(vocabulary.task, role_facts, rest)[2]
    plain = RQ._written_as_is(joined, parsed.layout, as_written_from)
    assert plain == " ".join(as_written)
    # what the reading reads of the phrases before its rest: the hits of both writings'
    hits = phrase_hits(joined, " ".join(as_written))
    assert request.all_candidates == (hits.all_candidates is not None)


@settings(max_examples=300, deadline=None)
@given(messages(), st.booleans())
def test_the_second_writing_made_on_demand_is_tagged_s(
    message: tuple[Vocabulary, str], to_role: bool
) -> None:
    vocabulary, text = message
    _check_written_as_is(vocabulary, text, vocabulary.task.roles[0] if to_role else None)


def test_the_template_messages_second_writing_is_tagged_s() -> None:
    for vocabulary, text, role, _ in template_messages():
        _check_written_as_is(vocabulary, text, role)


@st.composite
def layouts(draw: st.DrawFn) -> T.Layout:
    """A layout of ten tokens with marks between some of them (and after the last)."""
    flat: list[str] = []
    at: list[int] = []
    for i in range(10):
        flat += ["|"] * draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else []
        at.append(len(flat))
        flat.append(f"w{i}")
    flat += ["|"] * draw(st.integers(0, 1))
    return tuple(flat), tuple(at)
