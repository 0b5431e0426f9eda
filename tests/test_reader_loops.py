"""The reader's loops written for speed against the plain definitions they replace: the
tagged words written with a match's tag tuple compared by identity first, a reading's
matches read in one pass without ``_to_read``'s once-only rule (which changes nothing a
reading holds), and the numbers in names and contexts left out of a message's values without
comprehensions."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_reader_fast_paths import VOCABULARIES, messages, template_messages
from uncobench_z3._trusted import made_frozen
from uncobench_z3.settings import Vocabulary
from uncobench_z3.settings import _request as RQ
from uncobench_z3.settings import _tagging as T
from uncobench_z3.settings._matching import Match, find_matches_and_doubles, one_reading
from uncobench_z3.settings._request import ParsedMessage, parse_message, read_request


def plain_words_written(layout: T.Layout, tag_at: T.TagAt) -> list[str]:
    """The words of :func:`~uncobench_z3.settings._tagging.words_written`, as first written
    (each tag compared by value)."""
    flat, flat_at = layout
    out: list[str] = []
    done = 0
    last: tuple[str, int] | None = None
    for i in sorted(tag_at):
        tag = tag_at[i]
        at = flat_at[i]
        if at != done:
            out += flat[done:at]
            last = None
        if tag != last:
            last = tag
            out.append(tag[0])
        done = at + 1
    out += flat[done:]
    return out


@st.composite
def layouts_and_tags(draw: st.DrawFn) -> tuple[T.Layout, T.TagAt]:
    """A layout (words with marks between some of them) and tags of some of its tokens:
    a tag's tuple shared by a run of tokens, or equal tuples that are separate objects, or
    another tag."""
    size = draw(st.integers(0, 14))
    flat: list[str] = []
    at: list[int] = []
    for i in range(size):
        flat += ["|"] * draw(st.integers(0, 2))
        at.append(len(flat))
        flat.append(f"w{i}")
    flat += ["|"] * draw(st.integers(0, 1))
    pool = [(tag, first) for tag in ("zfact", "zcand") for first in (0, 1)]
    tag_at: T.TagAt = {}
    for i in draw(st.lists(st.integers(0, max(size - 1, 0)), max_size=size, unique=True)):
        if size:
            kind = draw(st.integers(0, 1))
            chosen = draw(st.sampled_from(pool))
            # the pool's own tuple (shared by the tokens given it) or an equal one made anew
            tag_at[i] = chosen if kind == 0 else (chosen[0], chosen[1] + 0 * i)
    return (tuple(flat), tuple(at)), dict(sorted(tag_at.items(), key=lambda kv: -kv[0]))


@settings(max_examples=500, deadline=None)
@given(layouts_and_tags())
def test_words_written_are_the_plain_words(case: tuple[T.Layout, T.TagAt]) -> None:
    layout, tag_at = case
    assert T.words_written(layout, tag_at) == plain_words_written(layout, tag_at)


def plain_positions_written(layout: T.Layout, tag_at: T.TagAt) -> list[int]:
    """Each token's place in the words, as
    :func:`~uncobench_z3.settings._tagging.positions_written` first worked it out (each tag
    compared by value, ``None`` included)."""
    flat_at = layout[1]
    position: list[int] = []
    written = 0
    done = 0
    free = 0
    last: tuple[str, int] | None = None
    for i in sorted(tag_at):
        tag = tag_at[i]
        at = flat_at[i]
        if at != done:
            if free != i:
                shift = written - done
                position += [k + shift for k in flat_at[free:i]]
            written += at - done
            last = None
        if tag == last:
            position.append(written - 1)
        else:
            last = tag
            position.append(written)
            written += 1
        done = at + 1
        free = i + 1
    position += [k + written - done for k in flat_at[free:]]
    return position


@settings(max_examples=500, deadline=None)
@given(layouts_and_tags())
def test_positions_written_are_the_plain_positions(case: tuple[T.Layout, T.TagAt]) -> None:
    layout, tag_at = case
    position = T.positions_written(layout, tag_at)
    assert position == plain_positions_written(layout, tag_at)
    words = T.words_written(layout, tag_at)  # (and each token is at its word)
    for i, at in enumerate(position):
        assert words[at] == (tag_at[i][0] if i in tag_at else layout[0][layout[1][i]])


def test_equal_tags_of_separate_tuples_are_placed_once_in_a_row() -> None:
    """Two matches' tags equal in value are one word in a row (by value, not identity)."""
    layout = (("a", "b", "|", "c"), (0, 1, 3))
    first, again = ("zfact", 0), ("zfact", int("0"))
    assert first is not again
    assert T.positions_written(layout, {0: first, 1: again}) == [0, 0, 2]
    assert T.positions_written(layout, {0: first, 1: again, 2: again}) == [0, 0, 2]
    assert T.positions_written(layout, {0: first, 1: ("zcand", 1)}) == [0, 1, 3]


def test_equal_tags_of_separate_tuples_are_written_once_in_a_row() -> None:
    """Two matches' tags equal in value (the same tag at the same first token) read as one
    tag in a row, as comparing them by value reads them; a mark between starts a new one."""
    layout = (("a", "b", "|", "c"), (0, 1, 3))
    first, again = ("zfact", 0), ("zfact", int("0"))
    assert first is not again
    assert T.words_written(layout, {0: first, 1: again}) == ["zfact", "|", "c"]
    assert T.words_written(layout, {0: first, 1: again, 2: again}) == ["zfact", "|", "zfact"]
    assert T.words_written(layout, {0: first, 1: ("zcand", 1)}) == ["zfact", "zcand", "|", "c"]


def reference_read(
    vocabulary: Vocabulary, text: str, role: str | None, focus: str | None, parsed: ParsedMessage
) -> tuple[object, ...]:
    """The candidates, pronoun, facts and members of a reading as :func:`read_request` read
    them before its loops were one: the candidates from every match, the rest through
    ``_to_read``."""
    task = vocabulary.task
    tokens, found, matches = parsed.tokens, parsed.found, parsed.matches
    role_facts = vocabulary.facts_read_for(role)
    layout = parsed.layout
    tag_at, named_tag_at = T.tags_of(task, role_facts, matches, found)
    words = T.words_written(layout, tag_at)
    joined = " ".join(words)
    plain = joined if named_tag_at is None else " ".join(T.words_written(layout, named_tag_at))
    hits = RQ.phrase_hits(joined, plain)
    named = [m.ref[0] for m in matches if m.kind == "candidate"]
    pronoun = None
    if not named and focus is not None and focus in task.candidates and hits.pronoun:
        pronoun = focus
        named.append(focus)
    strong: list[str] = []
    weak: list[tuple[str, str]] = []
    members: list[tuple[str, str]] = []
    named_contexts: list[Match] = []
    to_read = RQ._to_read(matches)
    for m in to_read:
        kind, ref = m.kind, m.ref
        if kind == "fact" and m.weak:
            weak.append((ref[0], RQ._span(text, tokens, m.indexes)))
        elif kind == "fact":
            strong.append(ref[0])
        elif kind == "member":
            members.append((ref[0], ref[1]))
        elif kind == "context":
            named_contexts.append(m)
    facts = set(strong)
    facts.update(f for f, _ in members)
    if weak:
        position = T.positions_written(layout, tag_at)
        in_context = RQ._in_context(words, position, to_read)
        RQ._facts_from_weak_words(facts, role_facts, weak, in_context, None)
    if named_contexts and not facts & role_facts:
        worded = [(m.ref[0], RQ._span(text, tokens, m.indexes)) for m in named_contexts]
        RQ._fact_from_contexts(facts, role_facts, worded, None)
    return (
        tuple(c for c in task.candidates if c in named),
        pronoun,
        tuple(f for f in task.facts if f in facts),
        tuple(dict.fromkeys(members)),
    )


def _read_fields(request: RQ.Request) -> tuple[object, ...]:
    return (request.candidates, request.pronoun, request.facts, request.members)


def _with_matches(parsed: ParsedMessage, matches: Sequence[Match]) -> ParsedMessage:
    fields = {name: getattr(parsed, name) for name in ("text", "tokens", "found", "layout")}
    return made_frozen(ParsedMessage, {**fields, "matches": tuple(matches)})


def _copy(match: Match, weak: bool) -> Match:
    made = Match(match.entry, match.indexes)
    made.weak = weak
    return made


@settings(max_examples=300, deadline=None)
@given(messages(), st.data())
def test_a_reading_s_matches_read_in_one_pass_as_through_to_read(
    message: tuple[Vocabulary, str], data: st.DataObject
) -> None:
    """Every match read as before, with the matches given again (the same object or an
    equal one), weak or not, in another order: a thing named again on the same words is
    read once unless weak, candidates every time."""
    vocabulary, text = message
    parsed = parse_message(vocabulary, text)
    task = vocabulary.task
    role = data.draw(st.sampled_from([None, *task.roles]))
    focus = data.draw(st.sampled_from([None, *task.candidates]))
    matches = list(parsed.matches)
    if matches:
        extra = data.draw(st.lists(st.sampled_from(matches), max_size=6))
        matches += [
            m if data.draw(st.booleans()) else _copy(m, data.draw(st.booleans())) for m in extra
        ]
        matches = data.draw(st.permutations(matches))
    changed = _with_matches(parsed, matches)
    for given_parsed in (parsed, changed):
        reading = read_request(vocabulary, text, role, focus, given_parsed)
        assert _read_fields(reading) == reference_read(vocabulary, text, role, focus, given_parsed)


def test_the_template_messages_read_as_through_to_read() -> None:
    for vocabulary, text, role, focus in template_messages():
        parsed = parse_message(vocabulary, text)
        doubled = _with_matches(parsed, [*parsed.matches, *parsed.matches])
        for given_parsed in (parsed, doubled):
            reading = read_request(vocabulary, text, role, focus, given_parsed)
            expected = reference_read(vocabulary, text, role, focus, given_parsed)
            assert _read_fields(reading) == expected


def reference_parse(vocabulary: Vocabulary, text: str) -> tuple[object, ...]:
    """:func:`parse_message`'s values and matches with the numbers in names and contexts
    left out by comprehensions, as first written."""
    kept_tokens, kept_found, token_stems, dates, _layout = RQ._tokens_and_values(text)
    matches, doubles = find_matches_and_doubles(vocabulary, kept_tokens, dates, token_stems)
    found: list[tuple[object, list[int]]] = []
    if kept_found:
        worded = {i for m in matches if m.kind in ("candidate", "context") for i in m.indexes}
        found = [(v, list(ix)) for v, ix in kept_found if worded.isdisjoint(ix)]
    if found:
        numbers = {i for _, indexes in found for i in indexes}
        matches = [m for m in matches if m.kind != "fact" or not numbers.issuperset(m.indexes)]
    kept = one_reading(matches) if doubles else matches
    return tuple(found), [(m.entry, m.indexes) for m in kept]


NUMBERS = ["3", "26", "2026", "FY2026", "26-0103", "1.5", "March 3, 2026", "Form 3", "Lot 7"]


@settings(max_examples=300, deadline=None)
@given(messages(), st.lists(st.sampled_from(NUMBERS), max_size=4), st.randoms())
def test_the_values_outside_names_and_contexts_are_the_plain_ones(
    message: tuple[Vocabulary, str], numbers: list[str], rng: object
) -> None:
    vocabulary, text = message
    words = text.split() + numbers
    rng.shuffle(words)  # type: ignore[attr-defined]
    text = " ".join(words)
    parsed = parse_message(vocabulary, text)
    assert (parsed.found, [(m.entry, m.indexes) for m in parsed.matches]) == reference_parse(
        vocabulary, text
    )


def test_a_number_in_a_context_or_a_name_is_no_value() -> None:
    for vocabulary in VOCABULARIES:
        task = vocabulary.task
        for fact in task.facts.values():
            text = f"Please send the {fact.label} ({fact.context}), 2026 and 3 of them."
            parsed = parse_message(vocabulary, text)
            assert (parsed.found, [(m.entry, m.indexes) for m in parsed.matches]) == (
                reference_parse(vocabulary, text)
            )
