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
    phrase's own words, most readings never). A reading takes the first from
    :func:`first_tags`, and this when it reads its intents."""
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
            name = kind == "candidate" or (kind == "fact" and len(indexes) == 1)
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


def first_tags(
    task: TypedTask,
    role_facts: AbstractSet[str],
    matches: Sequence[Match],
    values: Sequence[tuple[FoundValue, Sequence[int]]],
) -> tuple[TagAt, bool]:
    """The first :data:`TagAt` of :func:`tags_of`, and whether a candidate name or a one-word
    fact name is among the tags (only then may its second differ). The reader writes the
    second only when a reading's intents are read (a fifth of the first pass's readings):
    its tags are then :func:`tags_of`'s again.

    One loop: a context's tag is written with the contexts read on its words so far, and
    the last match written on a token is the last on its words (matches on the same tokens
    have the same ``indexes``), so it holds them all, as :func:`tags_of`'s does."""
    contexts: dict[tuple[int, ...], int] = {}
    tag_at: TagAt = {}
    named = False
    for match in matches:
        kind = match.kind
        indexes = match.indexes
        if kind == "context":
            read = _context_read(task, role_facts, match) | contexts.get(indexes, 0)
            contexts[indexes] = read
            at = (_CONTEXT_TAGS[read], indexes[0])
        else:
            if kind == "candidate" or (kind == "fact" and len(indexes) == 1):
                named = True
            at = (_TAGS[kind], indexes[0])  # (a match's tokens are in order)
        for i in indexes:
            tag_at[i] = at
    for value, written in values:
        at = ("zdate" if isinstance(value.value, _dt.date) else "znum", -1 - written[0])
        for i in written:
            tag_at[i] = at
    return tag_at, named


def words_and_names(
    task: TypedTask,
    role_facts: AbstractSet[str],
    matches: Sequence[Match],
    values: Sequence[tuple[FoundValue, Sequence[int]]],
    layout: Layout,
) -> tuple[list[str], bool]:
    """:func:`words_written` of :func:`first_tags`' tags, and whether a name is among them,
    written a match at a time when each match's tokens are one stretch of the layout (no
    mark between them) and no two matches share a token and the message writes no value
    (most messages): each match is then one tag in place of its stretch. Else (or when the
    stretches, in order, overlap) through the tags of each token."""
    if not values:
        flat, flat_at = layout
        runs: list[tuple[int, int, str]] = []
        named = False
        for match in matches:
            kind = match.kind
            indexes = match.indexes
            start = flat_at[indexes[0]]
            end = flat_at[indexes[-1]] + 1
            if end - start != len(indexes):
                break  # (its tokens apart, or a mark between them: token by token)
            if kind == "context":  # (no other match on its tokens: its own context alone)
                runs.append((start, end, _CONTEXT_TAGS[_context_read(task, role_facts, match)]))
            else:
                if kind == "candidate" or (kind == "fact" and len(indexes) == 1):
                    named = True
                runs.append((start, end, _TAGS[kind]))
        else:
            runs.sort()
            out: list[str] = []
            done = 0
            for start, end, tag in runs:
                if start < done:
                    break  # two matches on a token: token by token
                if start != done:
                    out += flat[done:start]
                out.append(tag)
                done = end
            else:
                out += flat[done:]
                return out, named
    tag_at, named = first_tags(task, role_facts, matches, values)
    return words_written(layout, tag_at), named


def _written(layout: Layout, tag_at: TagAt) -> tuple[list[str], list[int]]:
    """The tokens as words, each match written as its tag once (a match's tokens written in
    a row, with no mark between them), sentences ended by ``|``; and each token's place in
    them (:func:`words_written`, :func:`positions_written`)."""
    return words_written(layout, tag_at), positions_written(layout, tag_at)


def positions_written(layout: Layout, tag_at: TagAt) -> list[int]:
    """Each token's place in :func:`words_written` (never decreasing), worked out without
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
    last: tuple[str, int] | None = None
    for i in sorted(tag_at):
        tag = tag_at[i]
        at = flat_at[i]
        if at != done:  # untagged words or marks before this token: a new tag
            if free != i:  # the untagged tokens' places: shifted as their words are
                shift = written - done
                position += [k + shift for k in flat_at[free:i]] if shift else flat_at[free:i]
            written += at - done
            last = None
        # (by identity first: a match's tokens share one tuple, and a tuple compared with
        # another or with None takes the unspecialised way; the 201 calls of a first pass
        # over 80 built groups, replayed, 8.05 to 7.72 million instructions)
        if tag is last or (last is not None and tag == last):
            position.append(written - 1)  # the same match goes on: one tag for it
        else:
            last = tag
            position.append(written)
            written += 1
        done = at + 1
        free = i + 1
    if free != len(flat_at):
        shift = written - done
        position += [k + shift for k in flat_at[free:]] if shift else flat_at[free:]
    return position


def words_written(layout: Layout, tag_at: TagAt) -> list[str]:
    """The words of :func:`_written`: the layout's ``flat`` with each match's words and marks
    written as its tag once, the words no tag takes copied a stretch at a time."""
    flat, flat_at = layout
    out: list[str] = []
    done = 0
    last: tuple[str, int] | None = None
    for i in sorted(tag_at):
        tag = tag_at[i]
        at = flat_at[i]
        if at != done:  # untagged words or marks before this token: a new tag
            out += flat[done:at]
            last = tag
            out.append(tag[0])
        elif tag is not last and tag != last:  # (a match's tokens share one tuple: most)
            last = tag
            out.append(tag[0])
        done = at + 1
    out += flat[done:]
    return out


def _written_twice(
    layout: Layout,
    tag_at: TagAt,
    named_tag_at: TagAt,
) -> tuple[list[str], list[int], list[str]]:
    """:func:`_written` with ``tag_at`` (the words and their positions) and with
    ``named_tag_at`` (the words)."""
    return (*_written(layout, tag_at), words_written(layout, named_tag_at))
