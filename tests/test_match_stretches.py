"""A message's tagged words, its tokens' places and its second writing (names left as
written) from its matches a stretch at a time (``_tagging.match_stretches``, the one writer
that a reading and its rest share), against the writing token by token from the tags
(``tags_of``, ``positions_written``, ``words_written``) wherever it applies."""

from __future__ import annotations

import datetime as _dt
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import VOCABULARIES, messages, template_messages
from tests.test_reader_lazy_plain import _Found, _Match, layouts, tagging_cases
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings import _tagging as T
from uncobench_z3.settings._request import parse_message, read_request


def _by_the_tags(
    task: object, role_facts: frozenset[str], matches: list, values: list, layout: T.Layout
) -> tuple[list[str], list[int], list[str], list[str]]:
    """The words, the places, the second writing and the names' words (in the order they
    are written), token by token from :func:`tags_of`'s tags."""
    first, second = T.tags_of(task, role_facts, matches, values)  # type: ignore[arg-type]
    flat, flat_at = layout
    names = [] if second is None else [flat[flat_at[i]] for i in sorted(first) if i not in second]
    return (
        T.words_written(layout, first),
        T.positions_written(layout, first),
        T.words_written(layout, first if second is None else second),
        names,
    )


def _by_the_stretches(
    stretches: list[T.Stretch], layout: T.Layout
) -> tuple[list[str], list[int], list[str], list[str]]:
    flat = layout[0]
    names = [word for start, end, _, _, name in stretches if name for word in flat[start:end]]
    return (
        T.stretch_words(layout, stretches),
        T.stretch_positions(layout, stretches),
        T.stretch_words(layout, stretches, as_written=True),
        names,
    )


def _apart(matches: list, values: list, layout: T.Layout) -> bool:
    """Each match's and value's tokens one stretch of the layout, and no two on a token but
    contexts on the same tokens: where the writing a match at a time applies."""
    flat_at = layout[1]
    items = [(m.kind, tuple(m.indexes)) for m in matches]
    items += [("value", tuple(written)) for _, written in values]
    for _, indexes in items:
        if flat_at[indexes[-1]] + 1 - flat_at[indexes[0]] != len(indexes):
            return False
    for k, (kind, indexes) in enumerate(items):
        for other_kind, other in items[:k]:
            if set(indexes) & set(other) and not (
                kind == other_kind == "context" and indexes == other
            ):
                return False
    return True


def _check(vocabulary: Vocabulary, role_facts: frozenset[str], matches, values, layout) -> None:
    task = vocabulary.task
    stretches = T.match_stretches(task, role_facts, matches, values, layout)
    expected = _by_the_tags(task, role_facts, matches, values, layout)
    if _apart(matches, values, layout):
        assert stretches is not None
        assert _by_the_stretches(stretches, layout) == expected
    else:
        assert stretches is None
    # token by token: the tags' stretches write the tags' words and places
    tag_stretches = T.tag_stretches(layout, T.tags_of(task, role_facts, matches, values)[0])
    assert _by_the_stretches(tag_stretches, layout)[:2] == expected[:2]


@settings(max_examples=1000, deadline=None)
@given(tagging_cases(), layouts())
def test_match_stretches_write_what_the_tags_write_where_they_apply(
    case: tuple[Vocabulary, frozenset[str], list, list], layout: T.Layout
) -> None:
    """Matches of every kind and values on any tokens (apart, on the same tokens,
    overlapping, out of order, marks between a match's tokens): the same words, places,
    second writing and names as token by token, or ``None`` exactly where not apart."""
    vocabulary, role_facts, matches, values = case
    _check(vocabulary, role_facts, matches, values, layout)


@st.composite
def apart_cases(draw: st.DrawFn) -> tuple[Vocabulary, frozenset[str], list, list, T.Layout]:
    """Matches and values on stretches of their own (contexts of several facts on the same
    stretch among them), in any order: the cases written a match at a time."""
    vocabulary = draw(st.sampled_from(VOCABULARIES))
    task = vocabulary.task
    facts = sorted(task.facts)
    role_facts = frozenset(draw(st.lists(st.sampled_from(facts), max_size=3)))
    layout = draw(layouts())
    flat_at = layout[1]
    cuts = sorted(draw(st.sets(st.integers(1, 9), max_size=6)))
    stretches = [
        tuple(range(a, b))
        for a, b in zip([0, *cuts], [*cuts, 10], strict=True)
        if flat_at[b - 1] + 1 - flat_at[a] == b - a  # (no mark between its tokens)
    ]
    matches: list = []
    values: list = []
    for indexes in stretches:
        kind = draw(st.sampled_from(["candidate", "fact", "member", "context", "value", ""]))
        if kind == "value":
            found = _Found(draw(st.sampled_from([Fraction(3), _dt.date(2026, 3, 1)])))
            values.append((found, list(indexes)))
        elif kind == "context":
            for fact in draw(st.lists(st.sampled_from(facts), min_size=1, max_size=3)):
                context = draw(st.sampled_from([task.facts[fact].context, "another period"]))
                matches.append(_Match(kind, (fact, context), indexes))
        elif kind:
            matches.append(_Match(kind, (draw(st.sampled_from(facts)), "member"), indexes))
    order = draw(st.permutations(range(len(matches))))
    return vocabulary, role_facts, [matches[k] for k in order], values, layout


@settings(max_examples=1000, deadline=None)
@given(apart_cases())
def test_matches_apart_are_written_a_stretch_at_a_time(
    case: tuple[Vocabulary, frozenset[str], list, list, T.Layout],
) -> None:
    vocabulary, role_facts, matches, values, layout = case
    assert _apart(matches, values, layout)
    _check(vocabulary, role_facts, matches, values, layout)


def test_contexts_on_the_same_words_are_one_tag_of_all_they_read() -> None:
    """Two facts' contexts on one stretch: one tag, ``zreq`` when either is required; the
    names left as written in the second writing, their words in the order written."""
    vocabulary = VOCABULARIES[0]
    task = vocabulary.task
    fact = next(iter(task.facts))
    required = task.facts[fact].context
    layout = (("a", "b", "c", "|", "d", "e", "?", "|"), (0, 1, 2, 4, 5))
    matches = [
        _Match("candidate", (fact,), (4,)),
        _Match("context", (fact, "another period"), (1, 2)),
        _Match("context", (fact, required), (1, 2)),
        _Match("fact", (fact, "member"), (0,)),
    ]
    stretches = T.match_stretches(task, frozenset(), matches, [], layout)
    assert stretches is not None
    got = _by_the_stretches(stretches, layout)
    assert got == (
        ["zfact", "zreq", "|", "d", "zcand", "?", "|"],
        [0, 1, 1, 3, 4],
        ["a", "zreq", "|", "d", "e", "?", "|"],
        ["a", "e"],
    )
    assert got == _by_the_tags(task, frozenset(), matches, [], layout)


def _check_reading(vocabulary: Vocabulary, text: str, role: str | None) -> None:
    """A reading's words, and its rest's places and writings, as token by token."""
    request = read_request(vocabulary, text, role, None, parse_message(vocabulary, text))
    rest = request.__dict__[RQ._REST]
    task, role_facts = vocabulary.task, vocabulary.facts_read_for(role)
    words, (joined, layout, _, _), (matches, found, _) = rest[2], rest[3], rest[4]
    expected, places, written, names = _by_the_tags(
        task, role_facts, list(matches), list(found), layout
    )
    assert words == expected and joined == " ".join(expected)
    position, name_words, as_written = RQ._positions_and_names(task, role_facts, rest)
    assert position == places
    assert RQ._written_as_is(joined, layout, as_written) == (" ".join(written) if names else joined)
    assert name_words == (names or None)


@settings(max_examples=300, deadline=None)
@given(messages(), st.booleans())
def test_a_reading_s_words_places_and_writings_are_token_by_token_s(
    message: tuple[Vocabulary, str], to_role: bool
) -> None:
    vocabulary, text = message
    _check_reading(vocabulary, text, vocabulary.task.roles[0] if to_role else None)


def test_the_template_messages_words_places_and_writings() -> None:
    for vocabulary, text, role, _ in template_messages():
        _check_reading(vocabulary, text, role)
