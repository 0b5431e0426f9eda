"""Reading a message into a structured request against the task's own vocabulary.

:func:`read_request` turns free text into a :class:`Request`: the candidates it concerns
(names, a pronoun for the candidate in focus, "all candidates"), the facts it names (see
:mod:`._vocabulary`), the contexts it names for them (and which of those it rejects: "not
the April one"), the numbers and dates it quotes, and its intents:

* ``exact`` - it asks for a single, exact value: "exact", "precise", "a single figure",
  "narrow it down", "which one is it", "pass or fail?", a yes/no question about one option
  or about a threshold ("Did he pass?", "Is it at least 12 years?");
* ``mismatch`` - it says a reply was for the wrong context: "wrong period", "that's the
  April one", "not April";
* ``reference`` - it points at the reply it follows up: "that range", "those options",
  "you said", the bounds or options of the reply quoted;
* ``request`` - every message to a colleague is a request (a re-request after a silence).

The reading does not depend on any rule: the rules (:mod:`._followup`) decide on it. What a
message's text alone gives the reading (its tokens and values, the phrases of its tagged words)
is read and remembered in :mod:`._message`. A reading's contexts, intents and evidence are made
the first time one of them is read (:func:`_rest_of_reading`); until then, what they are made
from is kept in its ``__dict__`` (``vars()`` shows it), and a pickle or a copy holds them made.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from fractions import Fraction

from .._trusted import made_frozen
from ..spec import TypedTask
from . import _phrases as P
from ._matching import Match, find_matches_and_doubles, one_reading
from ._message import _tokens_and_values
from ._phrase_hits import _tagged_hits, phrase_hits, tagged_phrase_hits
from ._request_words import (
    CANDIDATES,
    FACTS,
    _fact_from_contexts,
    _facts_from_weak_words,
    _in_context,
    _may_say_of_contexts,
    _named_and_left_out,
    _negated,
    _note,
    _original,
    _rejected_after,
    _Said,
    _span,
    _to_read,
)
from ._tagging import (
    Layout,
    Stretch,
    match_stretches,
    positions_written,
    stretch_positions,
    stretch_words,
    tag_stretches,
    tags_of,
)
from ._vocabulary import Vocabulary
from ._words import FoundValue, Token

INTENTS = ("exact", "mismatch", "reference", "request")


@dataclass(frozen=True)
class ContextMention:
    """A context of one fact that the message names."""

    fact: str
    context: str
    required: bool
    negated: bool
    """named to be rejected: "not the April one", "rather than April", "ignore April\""""
    words: str


@dataclass(frozen=True)
class Request:
    """What a message asks, read against one task (see the module docstring)."""

    text: str
    role: str | None
    candidates: tuple[str, ...]
    """candidates named (or the candidate in focus, for a pronoun), in directory order"""
    all_candidates: bool
    """it says "all candidates" (or names none: then it concerns every candidate)"""
    pronoun: str | None
    """the candidate a personal pronoun was read as (the one in focus)"""
    facts: tuple[str, ...]
    """facts named, of any role, in the task's order"""
    contexts: tuple[ContextMention, ...]
    members: tuple[tuple[str, str], ...]
    values: tuple[Fraction | _dt.date, ...]
    intents: frozenset[str]
    evidence: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """what was read, by item ("candidate:vance", "fact:clearance", "exact"...): the words"""

    def __getstate__(self) -> dict[str, object]:
        """What a pickle or a copy holds: every field, as of ``Request(...)``."""
        self.evidence  # noqa: B018 (made when first read)
        return self.__dict__

    def concerns_all(self) -> bool:
        return self.all_candidates or not self.candidates

    def concerned_candidates(self, everyone: Iterable[str]) -> list[str]:
        everyone = list(everyone)
        if self.concerns_all():
            return everyone
        return [c for c in everyone if c in self.candidates]

    def context_mention(self, fact: str, context: str) -> ContextMention | None:
        """The first mention that names ``fact``'s ``context`` (not to reject it), if any."""
        for mention in self.contexts:
            if mention.fact == fact and mention.context == context and not mention.negated:
                return mention
        return None

    def names_context(self, fact: str, context: str) -> bool:
        return self.context_mention(fact, context) is not None

    def rejects_context(self, fact: str, context: str) -> bool:
        return any(m.fact == fact and m.context == context and m.negated for m in self.contexts)


_MADE_ON_DEMAND = ("contexts", "intents", "evidence")
"""the fields a reading makes when one is first read, in :func:`_rest_of_reading`'s order"""
_FIELDS = tuple(f.name for f in fields(Request))
_set_attribute = object.__setattr__


class _MadeOnDemand:
    """A field of :data:`_MADE_ON_DEMAND` on :class:`Request`: the contexts, intents and
    evidence of a reading by :func:`read_request`, made the first time one is read
    (:func:`_rest_of_reading`); the fields are then what ``Request(...)`` holds, in the
    fields' order. A descriptor without ``__set__``: a field the instance holds is read
    before it, so Python 3.11 specialises a reading's attributes, which a ``__getattr__``
    hook on the class kept from it (9,065 reads through the hook in the first pass over 80
    built groups)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, request: Request | None, owner: type | None = None) -> object:
        name = self.name
        if request is None:  # (as with no such attribute)
            of = Request if owner is None else owner
            raise AttributeError(f"type object {of.__name__!r} has no attribute {name!r}")
        held = request.__dict__
        rest = held.get(_REST)
        if rest is None:
            raise AttributeError(
                f"{type(request).__name__!r} object has no attribute {name!r}",
                name=name,
                obj=request,
            )
        made = dict(
            zip(
                _MADE_ON_DEMAND,
                _rest_of_reading(rest, held["pronoun"], held["candidates"], held["facts"]),
                strict=True,
            )
        )
        made.update(held)
        # (a new dict set at once: a reader of the old one meanwhile reads it as unmade)
        _set_attribute(request, "__dict__", {field: made[field] for field in _FIELDS})
        return made[name]


for _name in _MADE_ON_DEMAND:
    setattr(Request, _name, _MadeOnDemand(_name))


@dataclass(frozen=True)
class ParsedMessage:
    """What a reading takes from a message before the addressee matters: its tokens, the
    values it writes and the vocabulary it names (the same for every colleague it is sent
    to, so a caller reading one message for several may parse it once)."""

    text: str
    tokens: tuple[Token, ...]
    found: tuple[tuple[FoundValue, list[int]], ...]
    matches: tuple[Match, ...]
    layout: Layout


def parse_message(vocabulary: Vocabulary, text: str) -> ParsedMessage:
    """The addressee-free part of :func:`read_request`."""
    kept_tokens, kept_found, token_stems, dates, layout = _tokens_and_values(text)
    # a date's words are the date; a plain number may still belong to a name or a context
    matches, doubles = find_matches_and_doubles(vocabulary, kept_tokens, dates, token_stems)
    found: list[tuple[FoundValue, list[int]]] = []
    # (most messages write a number, 654 of the 723 readings of 80 built groups, but mostly in
    # a name or a context: 25 keep a value)
    if kept_found:
        # a number inside a name ("Lot 26-0103") or a context ("revision 3") is not a value
        # (loops, not comprehensions: a comprehension is a call, and these are short)
        worded: set[int] = set()
        for m in matches:
            if m.kind in _WORDED:
                worded.update(m.indexes)
        for v, ix in kept_found:
            if worded.isdisjoint(ix):
                found.append((v, list(ix)))
    if found:  # a fact word that is one of the message's numbers (a label: "Form 3")
        numbers = {i for _, indexes in found for i in indexes}
        matches = [m for m in matches if m.kind != "fact" or not numbers.issuperset(m.indexes)]
    return made_frozen(
        ParsedMessage,
        {
            "text": text,
            "tokens": kept_tokens,
            "found": tuple(found),
            # (a word read as a fact and as a context is read once; no other, most messages)
            "matches": tuple(one_reading(matches) if doubles else matches),
            "layout": layout,
        },
    )


_WORDED = frozenset(["candidate", "context"])
"""the kinds of match whose words a number in them belongs to (not a value)"""


def read_request(
    vocabulary: Vocabulary,
    text: str,
    role: str | None = None,
    focus: str | None = None,
    parsed: ParsedMessage | None = None,
) -> Request:
    """Read ``text`` (addressed to ``role``) against the task's vocabulary.

    ``focus`` is the candidate the conversation with this colleague is about, if one: a
    personal pronoun ("did he pass?") is read as that candidate. ``parsed``: the message
    already parsed against the same vocabulary (:func:`parse_message`).
    """
    task = vocabulary.task
    if parsed is None or parsed.text != text:
        parsed = parse_message(vocabulary, text)
    tokens, found, matches = parsed.tokens, parsed.found, parsed.matches
    role_facts = vocabulary.facts_read_for(role)
    # the words as :func:`~._tagging.tagged` writes them, a match at a time (most); the
    # tokens' positions in them are worked out only when a weak word or the rest of the
    # reading needs them (most never. Each match written as one tag, not each token's tag
    # looked up: the 723 readings replayed, 49.5 to 43.2 million)
    layout = parsed.layout
    stretches = match_stretches(task, role_facts, matches, found, layout)
    written = stretches
    if written is None:  # (not a match at a time: token by token, from the tags)
        written = tag_stretches(layout, tags_of(task, role_facts, matches, found)[0])
    words = stretch_words(layout, written)
    joined = " ".join(words)
    # the phrases read here (all candidates, a pronoun) are the tagged text's alone; the
    # message with its candidate names and one-word fact names left as written is written,
    # and the phrases of both looked up, only when the intents are read
    # (:func:`_rest_of_reading`)
    hits = _tagged_hits(joined).alone

    # -- candidates, facts and members ---------------------------------------------------------
    # (one pass over the matches. Not through :func:`_to_read`: a thing read again on the
    # same words changes nothing here, as the strong facts go into a set, the members are
    # kept once in the order first read, and the contexts' words are grouped in that order
    # too. With the tags' tuples compared by identity first (:func:`words_written`): the
    # 723 readings of the first pass over 80 built groups, replayed, 68.1 to 60.6 million
    # instructions)
    named: list[str] = []
    strong: list[str] = []
    weak: list[tuple[str, str]] = []
    members: list[tuple[str, str]] = []
    named_contexts: list[Match] = []
    for m in matches:
        kind, ref = m.kind, m.ref
        if kind == "candidate":
            named.append(ref[0])
        elif kind == "fact":
            if m.weak:
                weak.append((ref[0], _span(text, tokens, m.indexes)))
            else:
                strong.append(ref[0])
        elif kind == "member":
            members.append((ref[0], ref[1]))
        elif kind == "context":
            named_contexts.append(m)
    pronoun = None
    if not named and focus is not None and focus in task.candidates and hits.pronoun:
        pronoun = focus
        named.append(focus)
    all_candidates = hits.all_candidates is not None
    # (the tokens' places in the tagged words, made once when a reading below needs them)
    position: list[int] | None = None
    if hits.excluded and named:  # (a candidate named to be left out: few messages)
        position = stretch_positions(layout, written)
        kept, out = _named_and_left_out(CANDIDATES, matches, hits.excluded, position)
        if (
            out
            and not kept
            and focus in (None, *out)
            and P.PRONOUNS.search(joined, hits.excluded[0][1])
        ):
            out = []  # "everything is clear except Marcus - his exact years?": "his" is him
        if out:  # "not Marcus - Priya's years": Priya; "all but Marcus", "not Marcus": the others
            named = (
                kept
                if kept and not all_candidates
                else [c for c in task.candidates if c not in out]
            )
            all_candidates = False
    # (a comprehension is a call: each below is made only when it has something to read;
    # most readings name no member and no weak word)
    facts = set(strong)
    if members:
        facts.update([f for f, _ in members])
    if weak:
        if position is None:
            position = stretch_positions(layout, written)
        in_context = _in_context(words, position, _to_read(matches))
        _facts_from_weak_words(facts, role_facts, weak, in_context, None)
    if named_contexts and not facts & role_facts:  # (else the contexts' words name no fact)
        worded = [(m.ref[0], _span(text, tokens, m.indexes)) for m in named_contexts]
        _fact_from_contexts(facts, role_facts, worded, None)
    if hits.excluded and facts:  # "forget the allowance - his availability date?"
        if position is None:
            position = stretch_positions(layout, written)
        facts.difference_update(_named_and_left_out(FACTS, matches, hits.excluded, position)[1])
    # (made as :func:`made_frozen` makes one, but for the fields :class:`_MadeOnDemand`
    # makes from what is kept under _REST when one is first read)
    request = _new(Request)
    request.__dict__.update(
        {
            "text": text,
            "role": role,
            "candidates": tuple(filter(named.__contains__, task.candidates)) if named else (),
            "all_candidates": all_candidates,
            "pronoun": pronoun,
            "facts": tuple(filter(facts.__contains__, task.facts)) if facts else (),
            "members": tuple(dict.fromkeys(members)) if len(members) > 1 else tuple(members),
            "values": tuple([v.value for v, _ in found]) if found else (),
            _REST: (
                vocabulary,
                role_facts,
                words,
                (joined, layout, text, tokens),
                (matches, found, stretches),
            ),
        }
    )
    return request


_REST = "_rest"
"""the key, in a reading's ``__dict__`` until its contexts, intents or evidence are read, of
what they are made from (:data:`_Rest`)"""
_new = object.__new__


_Rest = tuple[
    Vocabulary,
    frozenset[str],
    list[str],
    tuple[str, Layout, str, tuple[Token, ...]],
    tuple[tuple[Match, ...], tuple[tuple[FoundValue, list[int]], ...], list[Stretch] | None],
]
"""what :func:`read_request` keeps for the rest of a reading: the vocabulary, the facts read
for the role, the tagged words, what was said (the tagged text, the layout it was written
from, the text and its tokens: :data:`_Said` once the tokens' positions are worked out),
and the matches, the values and their stretches when written a match at a time (what the
tokens' positions and the message as written are written from:
:func:`_positions_and_names`)"""


def _rest_of_reading(
    rest: _Rest, pronoun: str | None, candidates: tuple[str, ...], facts_named: tuple[str, ...]
) -> tuple[tuple[ContextMention, ...], frozenset[str], dict[str, tuple[str, ...]]]:
    """A reading's contexts, intents and evidence, read from what :func:`read_request` kept
    (``rest``) in the order it reads them (the evidence is noted in that order; a candidate or
    a fact named to be left out, not among the reading's ``candidates`` or ``facts_named``,
    under "excluded"). Made on
    demand: the colleagues decide most requests by the records they concern alone (the
    first pass over 80 built groups decides 160 of its 723 readings as follow-ups, which read
    the rest; making it for all was 12-15 M of the pass's 1,201-1,205 M instructions)."""
    vocabulary, role_facts, words, (joined, layout, text, tokens), (matches, _, _) = rest
    task = vocabulary.task
    position, names, as_written = _positions_and_names(task, role_facts, rest)
    hits = tagged_phrase_hits(joined, names)
    if hits is None:  # the message as written may show an intent: written and looked up
        assert names is not None
        hits = phrase_hits(joined, _written_as_is(joined, layout, as_written), " ".join(names))
    said: _Said = (joined, position, text, tokens)
    evidence: dict[str, list[str]] = {}
    # -- candidates --------------------------------------------------------------------------
    for m in matches:
        if m.kind == "candidate":
            named = m.ref[0]
            item = f"candidate:{named}" if named in candidates else f"excluded:{named}"
            _note(evidence, item, _span(text, tokens, m.indexes))
    if hits.all_candidates is not None:
        _note(evidence, "all candidates", _original(said, hits.all_candidates))
    if pronoun is not None and hits.pronoun:
        _note(evidence, f"candidate:{pronoun}", _original(said, hits.pronoun))
    # -- facts, members, contexts -------------------------------------------------------------
    facts: set[str] = set()
    weak: list[tuple[str, str]] = []
    mentions: list[ContextMention] = []
    said_of = _may_say_of_contexts(words)  # (most readings: no context is said to be wrong)
    for m in _to_read(matches):
        kind, ref = m.kind, m.ref
        if kind == "fact" and m.weak:
            weak.append((ref[0], _span(text, tokens, m.indexes)))
        elif kind == "fact" and ref[0] not in facts_named:  # (named to be left out)
            _note(evidence, f"excluded:{ref[0]}", _span(text, tokens, m.indexes))
        elif kind == "fact":
            facts.add(ref[0])
            _note(evidence, f"fact:{ref[0]}", _span(text, tokens, m.indexes))
        elif kind == "member":
            facts.add(ref[0])
            _note(evidence, f"member:{ref[0]}:{ref[1]}", _span(text, tokens, m.indexes))
        elif kind == "context":
            mentions.append(
                _mention(
                    ref[0],
                    ref[1],
                    ref[1] == task.facts[ref[0]].context,
                    _negated(words, said[1][m.indexes[0]])
                    or (said_of and _rejected_after(words, said[1][m.indexes[-1]])),
                    _span(text, tokens, m.indexes),
                )
            )
    if weak:
        in_context = {m.fact for m in mentions if not m.negated}
        _facts_from_weak_words(facts, role_facts, weak, in_context, evidence)
    if mentions and not facts & role_facts:
        _fact_from_contexts(facts, role_facts, [(m.fact, m.words) for m in mentions], evidence)
    # "the latest clearance": the last of the fact's ordered contexts
    for spans, pick in ((hits.latest, -1), (hits.earliest, 0)):
        for ordered in spans:
            targets = (facts & role_facts) or role_facts
            at, after = ordered[2], ordered[4]  # (its first word; the words after it)
            for fact in sorted(targets):
                order = vocabulary.order.get(fact)
                ends = not after or after[0] == "?"  # "we need this year's."
                if order is None or not (
                    ends or set(after) & (P.ORDER_TARGETS | vocabulary.context_words[fact])
                ):
                    continue
                context = order[pick]
                mentions.append(
                    ContextMention(
                        fact,
                        context,
                        context == task.facts[fact].context,
                        _negated(words, at),
                        _original(said, ordered),
                    )
                )
    for mention in mentions:
        _note(evidence, f"context:{mention.fact}:{mention.context}", mention.words)
    # -- intents ------------------------------------------------------------------------------
    intents = {"request"} if text.strip() else set()
    for name, which, intent_span, matched in hits.intents:
        intents.add(name)
        _note(evidence, name, _original(said, intent_span) if which == 0 else matched.strip("| ?"))
    for question_span in hits.questions:
        intents.add("exact")
        _note(evidence, "exact", _original(said, question_span))
    if hits.yes_no:
        bool_facts = [f for f in task.facts if f in facts and task.facts[f].type == "bool"]
        if bool_facts:
            intents.add("exact")
            _note(evidence, "exact", "a yes/no question about " + task.facts[bool_facts[0]].label)
    for mention in mentions:
        if mention.negated and not mention.required:
            intents.add("mismatch")
            _note(evidence, "mismatch", mention.words)
            break
    return (
        tuple(dict.fromkeys(mentions)) if len(mentions) > 1 else tuple(mentions),
        frozenset(intents),
        dict(zip(evidence, map(tuple, evidence.values()), strict=True)),
    )


def _positions_and_names(
    task: TypedTask, role_facts: frozenset[str], rest: _Rest
) -> tuple[list[int], list[str] | None, tuple[list[Stretch], bool] | None]:
    """The places of a reading's tokens in its tagged words; the names' words (the words of
    the tokens tagged only as a candidate name or a one-word fact name, in order), which
    :func:`~._phrase_hits.tagged_phrase_hits` screens the intents' patterns with, None when it
    names none; and what its message as written (its names left as written: a label word
    that is also an intent word, "actual batch cost", still shows the intent in it) is
    written from when that screen cannot rule it out: :func:`~._tagging.stretch_words`'
    stretches and ``as_written``, None with no name. Made when the intents are read, not
    for every reading: the 723 readings of the first pass over 80 built groups, replayed,
    60.6 to 49.5 million instructions (160 of them read their intents).

    From the stretches the reading kept (:func:`~._tagging.match_stretches`: 151 of the 160
    rests of that pass); else from the tags of each token, both writings from one
    :func:`~._tagging.tags_of` (the 160 rests, replayed, 60.07 to 56.65 million, against
    the tags made twice)."""
    _, _, _, (_, layout, _, _), (matches, found, stretches) = rest
    flat = layout[0]
    if stretches is not None:
        # (a name's word twice is read twice: no set made, 2.3 M of the pass's 160 rests)
        names = [word for start, end, _, _, name in stretches if name for word in flat[start:end]]
        position = stretch_positions(layout, stretches)
        if not names:  # (no name is tagged: the two writings are one)
            return position, None, None
        return position, names, (stretches, True)
    tag_at, named_tag_at = tags_of(task, role_facts, matches, found)
    position = positions_written(layout, tag_at)
    if named_tag_at is None:
        return position, None, None
    flat_at = layout[1]
    # (in the order written, as the stretches give them)
    names = [flat[flat_at[i]] for i in sorted(tag_at) if i not in named_tag_at]
    return position, names, (tag_stretches(layout, named_tag_at), False)


def _written_as_is(
    joined: str, layout: Layout, as_written: tuple[list[Stretch], bool] | None
) -> str:
    """A reading's message as written, from what :func:`_positions_and_names` gives for it
    (``joined``, its tagged text, when it names nothing)."""
    return joined if as_written is None else " ".join(stretch_words(layout, *as_written))


def _mention(fact: str, context: str, required: bool, negated: bool, words: str) -> ContextMention:
    """``ContextMention(fact, context, required, negated, words)``, made as
    :func:`made_frozen` makes one (a reading names a context or two)."""
    return made_frozen(
        ContextMention,
        {
            "fact": fact,
            "context": context,
            "required": required,
            "negated": negated,
            "words": words,
        },
    )


def request_json(task: TypedTask, request: Request) -> dict[str, object]:
    """The reading as plain JSON (for ``uncobench followup --json`` and traces)."""
    return {
        "role": request.role,
        "candidates": list(request.candidates),
        "all_candidates": request.concerns_all(),
        "pronoun": request.pronoun,
        "facts": list(request.facts),
        "contexts": [
            {
                "fact": m.fact,
                "context": m.context,
                "required": m.required,
                "negated": m.negated,
                "words": m.words,
            }
            for m in request.contexts
        ],
        "members": [{"fact": f, "member": m} for f, m in request.members],
        "values": [str(v) if isinstance(v, Fraction) else v.isoformat() for v in request.values],
        "intents": sorted(request.intents),
        "evidence": {k: list(v) for k, v in request.evidence.items()},
    }
