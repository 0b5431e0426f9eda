"""Writing a message as words with tags (candidates, facts, members, contexts and values
written as the tags the phrase inventories are written against: :mod:`._phrases`), from its
tokens and what :func:`~._matching.find_matches` read in them.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from ..spec import TypedTask
from ._matching import Match
from ._words import CLAUSE, QUESTION, SENTENCE, WORD, FoundValue, Token

Layout = tuple[tuple[str, ...], tuple[int, ...]]
"""How a message's tokens are written as words (:func:`tagged`), whatever is tagged: the
same for every reading of the text, so made once with its tokens. ``(flat, at)``: the
message written with no tag, each token's word with the marks written before it (``|``
where a sentence - ``? |`` a question - or a clause after a colon or a dash, "Marcus: did
he pass?", ends) and after the last token; each token's word's place in ``flat``. An exact
tuple (see :data:`TokenStems`)."""


def layout_of(tokens: Sequence[Token]) -> Layout:
    """The :data:`Layout` of ``tokens``, as defined."""
    flat: list[str] = []
    at: list[int] = []
    previous: Token | None = None
    for token in tokens:
        if previous is not None:
            if token[SENTENCE] != previous[SENTENCE]:
                flat += _ASKED if previous[QUESTION] else _ENDED
            elif token[CLAUSE]:
                flat.append("|")
        at.append(len(flat))
        flat.append(token[WORD])
        previous = token
    if previous is not None:
        flat += _ASKED if previous[QUESTION] else _ENDED
    return (tuple(flat), tuple(at))


_ASKED = ("?", "|")
_ENDED = ("|",)
_TAGS = {"candidate": "zcand", "fact": "zfact", "member": "zmem"}
_CONTEXT_TAGS = ("zoth", "zreq", "zoth", "zreq", "zoth", "zoth", "zreq", "zreq")
"""the tag of words read as contexts, by what they are read as: 4 when a context of the
addressed role's facts is among them, then 2 when one of those is required, else 1 when
any is required ("2026" is ``zreq`` when it is the required period of the role's fact)"""


def tagged(
    task: TypedTask,
    role_facts: AbstractSet[str],
    tokens: Sequence[Token],
    matches: Sequence[Match],
    values: Sequence[tuple[FoundValue, Sequence[int]]],
    layout: Layout | None = None,
) -> tuple[list[str], list[int], list[str]]:
    """The message as words with tags (see :mod:`._phrases`), each token's position in it
    (never decreasing), and
    the message tagged with its candidate names and one-word fact names left as written.
    ``layout``: :func:`layout_of` the tokens, when the caller has it.

    Words naming contexts of several facts are tagged for the addressed role's facts first:
    "2026" is ``zreq`` when it is the required period of the role's fact.

    The whole writing at once, as defined: the reader takes its parts as it needs them
    (:func:`tags_of`, :func:`words_written`, :func:`positions_written`), and the tests check
    them against this.
    """
    if layout is None:
        layout = layout_of(tokens)
    tag_at, named_tag_at = tags_of(task, role_facts, matches, values)
    if named_tag_at is None:
        out, position = _written(layout, tag_at)
        return out, position, out
    return _written_twice(layout, tag_at, named_tag_at)


TagAt = dict[int, tuple[str, int]]
"""token -> the tag written for it, with its match's first token (a match's tokens written in a
row are one tag: :func:`_written`)"""


def _context_read(task: TypedTask, role_facts: AbstractSet[str], match: Match) -> int:
    """The bits of :data:`_CONTEXT_TAGS` a context's match reads: 1 its fact's required context,
    4 (with it, 6) a fact read for the role."""
    fact, context = match.ref
    read = 1 if context == task.facts[fact].context else 0  # the required context
    if fact in role_facts:
        read = 6 if read else 4
    return read


def _left_as_written(kind: str, indexes: Sequence[int]) -> bool:
    """Whether the second writing leaves a match's words as written: a candidate's name or a
    one-word fact's (:func:`tags_of`, :func:`match_stretches`)."""
    return kind == "candidate" or (kind == "fact" and len(indexes) == 1)


def tags_of(
    task: TypedTask,
    role_facts: AbstractSet[str],
    matches: Sequence[Match],
    values: Sequence[tuple[FoundValue, Sequence[int]]],
) -> tuple[TagAt, TagAt | None]:
    """The tags :func:`tagged` writes the message with, as :data:`TagAt`: of every match and
    value, and of all but candidate names and one-word fact names (``None`` when those are
    the same). The words are written by :func:`words_written`; the tokens' positions in them
    by :func:`positions_written` (a reading needs them only when it reads a weak word's or a
    phrase's own words, most readings never). A reading writes its words from the first
    when its matches are not written a stretch at a time (:func:`match_stretches`), and
    the rest of it from both then."""
    # the contexts read on each match's words, as the bits of _CONTEXT_TAGS
    contexts: dict[tuple[int, ...], int] = {}
    for match in matches:
        if match.kind == "context":
            indexes = match.indexes
            contexts[indexes] = contexts.get(indexes, 0) | _context_read(task, role_facts, match)
    tag_at: TagAt = {}
    # each tag written and its tokens, and whether they are a name (see below)
    ats: list[tuple[tuple[str, int], Sequence[int], bool]] = []
    named = False  # a name is among them
    for match in matches:
        kind = match.kind
        indexes = match.indexes
        name = False
        if kind == "context":
            tag = _CONTEXT_TAGS[contexts[indexes]]
        else:
            tag = _TAGS[kind]
            name = _left_as_written(kind, indexes)
            named = named or name
        at = (tag, indexes[0])  # (a match's tokens are in order)
        ats.append((at, indexes, name))
        for i in indexes:
            tag_at[i] = at
    for value, written in values:
        tag = "zdate" if isinstance(value.value, _dt.date) else "znum"
        at = (tag, -1 - written[0])
        ats.append((at, written, False))
        for i in written:
            tag_at[i] = at
    if not named:  # (most messages) the second writing is the first
        return tag_at, None
    named_tag_at: TagAt = {}  # the tags but names', in the same order
    for at, covered, name in ats:
        if not name:
            for i in covered:
                named_tag_at[i] = at
    return tag_at, (None if named_tag_at == tag_at else named_tag_at)


Stretch = tuple[int, int, int, str, bool]
"""One tag as written in place of a stretch of a message's tokens (with no mark between
them): the stretch's start and end in the layout's ``flat``, its first token, the tag, and
whether it is a candidate name or a one-word fact name (left as written in the second
writing). A message's words and its tokens' places are written from its stretches, in
order (:func:`stretch_words`, :func:`stretch_positions`)."""


def match_stretches(
    task: TypedTask,
    role_facts: AbstractSet[str],
    matches: Sequence[Match],
    values: Sequence[tuple[FoundValue, Sequence[int]]],
    layout: Layout,
) -> list[Stretch] | None:
    """The stretches of :func:`tags_of`'s tags worked out a match (or a value) at a time,
    when each one's tokens are one stretch of the layout (no mark between them) and no two
    share a token but contexts read on the same words (one tag of all their bits, as
    :func:`tags_of` writes them): most messages (all but 25 of the 723 readings of a first
    pass over 80 built groups, each of those with a number read as a value in a fact's
    words; 151 of its 160 follow-ups' rests). ``None`` when they are not: then token by
    token, from the tags (:func:`tag_stretches`). A reading keeps them for its rest, whose
    places and second writing are written from them, not from the tags again (that pass,
    counted: 759.3 to 750.5 million instructions; its 160 follow-up decisions, replayed:
    58.4 to 49.2 million; contexts on the same words written token by token: 755.2)."""
    flat_at = layout[1]
    stretches: list[Stretch] = []
    # (a context's words -> its stretch's place and the bits read on them)
    contexts: dict[tuple[int, ...], tuple[int, int]] = {}
    for match in matches:
        kind = match.kind
        indexes = match.indexes
        first = indexes[0]
        start = flat_at[first]
        end = flat_at[indexes[-1]] + 1
        if end - start != len(indexes):
            return None  # (its tokens apart, or a mark between them: token by token)
        if kind == "context":
            read = _context_read(task, role_facts, match)
            seen = contexts.get(indexes)
            if seen is None:
                contexts[indexes] = (len(stretches), read)
                stretches.append((start, end, first, _CONTEXT_TAGS[read], False))
            else:  # (another fact's context on the same words: one tag of all they read)
                read |= seen[1]
                contexts[indexes] = (seen[0], read)
                stretches[seen[0]] = (start, end, first, _CONTEXT_TAGS[read], False)
        else:
            stretches.append((start, end, first, _TAGS[kind], _left_as_written(kind, indexes)))
    for value, written in values:
        first = written[0]
        start = flat_at[first]
        end = flat_at[written[-1]] + 1
        if end - start != len(written):
            return None
        tag = "zdate" if isinstance(value.value, _dt.date) else "znum"
        stretches.append((start, end, first, tag, False))
    stretches.sort()
    done = 0
    for start, end, _, _, _ in stretches:
        if start < done:
            return None  # (two on a token: token by token)
        done = end
    return stretches


def tag_stretches(layout: Layout, tag_at: TagAt) -> list[Stretch]:
    """The stretches of the tags ``tag_at``, token by token: a token's tag goes on the
    stretch of the token before it when it is the same tag (a match's tokens share one
    tuple: compared by identity first) and no word or mark comes between them. None is
    taken for a name (what is a name is not told by the tags)."""
    flat_at = layout[1]
    stretches: list[Stretch] = []
    start = end = first = -1
    last: tuple[str, int] | None = None
    for i in sorted(tag_at):
        tag = tag_at[i]
        at = flat_at[i]
        if at == end and (tag is last or tag == last):
            end += 1  # the same match goes on: one tag for it
            continue
        if last is not None:
            stretches.append((start, end, first, last[0], False))
        start, end, first, last = at, at + 1, i, tag
    if last is not None:
        stretches.append((start, end, first, last[0], False))
    return stretches


def stretch_words(
    layout: Layout, stretches: Sequence[Stretch], as_written: bool = False
) -> list[str]:
    """The layout's ``flat`` with each stretch's words and marks written as its tag once,
    the words no tag takes copied a stretch at a time; ``as_written``: with names' stretches
    left as written (the second writing, when the stretches are
    :func:`match_stretches`')."""
    flat = layout[0]
    out: list[str] = []
    done = 0
    for start, end, _, tag, name in stretches:
        if name and as_written:
            continue
        if start != done:
            out += flat[done:start]
        out.append(tag)
        done = end
    out += flat[done:]
    return out


def stretch_positions(layout: Layout, stretches: Sequence[Stretch]) -> list[int]:
    """Each token's place in :func:`stretch_words` (never decreasing), worked out without
    writing them: a reading needs the places only to find the message's own words for a
    phrase or a weak word (a fifth of the first pass's readings), its words every time. The
    untagged tokens' places are their layout's, shifted as the tags before them shorten the
    words, a stretch at a time (most of a message's words are tagged, its other words come
    in stretches)."""
    flat_at = layout[1]
    position: list[int] = []
    written = 0  # the words written so far
    done = 0  # the words and marks of the layout's ``flat`` written (or written as a tag)
    free = 0  # the first token whose place is not known yet
    for start, end, first, _, _ in stretches:
        if free != first:  # the untagged tokens' places: shifted as their words are
            shift = written - done
            position += [k + shift for k in flat_at[free:first]] if shift else flat_at[free:first]
        written += start - done  # (the untagged words and marks before it)
        position += [written] * (end - start)
        written += 1
        done = end
        free = first + end - start
    if free != len(flat_at):
        shift = written - done
        position += [k + shift for k in flat_at[free:]] if shift else flat_at[free:]
    return position


def _written(layout: Layout, tag_at: TagAt) -> tuple[list[str], list[int]]:
    """The tokens as words, each match written as its tag once (a match's tokens written in
    a row, with no mark between them), sentences ended by ``|``; and each token's place in
    them (:func:`words_written`, :func:`positions_written`)."""
    return words_written(layout, tag_at), positions_written(layout, tag_at)


def positions_written(layout: Layout, tag_at: TagAt) -> list[int]:
    """Each token's place in :func:`words_written`: :func:`stretch_positions` of the tags'
    stretches."""
    return stretch_positions(layout, tag_stretches(layout, tag_at))


def words_written(layout: Layout, tag_at: TagAt) -> list[str]:
    """The words of :func:`_written`: :func:`stretch_words` of the tags' stretches."""
    return stretch_words(layout, tag_stretches(layout, tag_at))


def _written_twice(
    layout: Layout,
    tag_at: TagAt,
    named_tag_at: TagAt,
) -> tuple[list[str], list[int], list[str]]:
    """:func:`_written` with ``tag_at`` (the words and their positions) and with
    ``named_tag_at`` (the words)."""
    return (*_written(layout, tag_at), words_written(layout, named_tag_at))
