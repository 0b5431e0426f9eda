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
is read and remembered in :mod:`._message`.
"""

from __future__ import annotations

import datetime as _dt
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from .._trusted import made_frozen
from ..spec import TypedTask
from . import _phrases as P
from ._matching import Layout, Match, find_matches, one_reading, tagged
from ._message import _Ordered, _Span, _tokens_and_values, phrase_hits
from ._vocabulary import Vocabulary
from ._words import END, START, FoundValue, Token

INTENTS = ("exact", "mismatch", "reference", "request")
_NEGATORS = frozenset(
    [
        "not",
        "no",
        "never",
        "nor",
        "without",
        "instead",
        "rather",
        "other",
        "except",
        "excluding",
        "ignore",
        "ignoring",
        "disregard",
        "discard",
        "drop",
        "forget",
        "skip",
        "scrap",
    ]
)


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
    matches = find_matches(vocabulary, kept_tokens, dates, token_stems)
    found: list[tuple[FoundValue, list[int]]] = []
    if kept_found:  # (most messages write no value: 28 in the 723 readings of 80 built groups)
        # a number inside a name ("Lot 26-0103") or a context ("revision 3") is not a value
        worded = {i for m in matches if m.entry.kind in ("candidate", "context") for i in m.indexes}
        found = [(v, list(ix)) for v, ix in kept_found if worded.isdisjoint(ix)]
    if found:  # a fact word that is one of the message's numbers (a label: "Form 3")
        numbers = {i for _, indexes in found for i in indexes}
        matches = [
            m for m in matches if m.entry.kind != "fact" or not numbers.issuperset(m.indexes)
        ]
    return made_frozen(
        ParsedMessage,
        {
            "text": text,
            "tokens": kept_tokens,
            "found": tuple(found),
            "matches": tuple(one_reading(matches)),
            "layout": layout,
        },
    )


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
    words, position, as_written = tagged(task, role_facts, tokens, matches, found, parsed.layout)
    joined = " ".join(words)
    # the message is also read with its fact and candidate words left as written, so that a
    # label word that is also an intent word ("actual batch cost") still shows the intent
    plain = " ".join(as_written)
    hits = phrase_hits(joined, plain)

    evidence: dict[str, list[str]] = {}
    # (the helpers below are module functions given what they read: closures made for
    # every reading, with their cells, cost more than the calls' extra arguments)
    said = (joined, position, text, tokens)  # what :func:`_original` reads

    # -- candidates --------------------------------------------------------------------------
    named: list[str] = []
    for m in matches:
        if m.entry.kind == "candidate":
            named.append(m.entry.ref[0])
            _note(evidence, f"candidate:{m.entry.ref[0]}", _span(text, tokens, m.indexes))
    all_candidates = False
    if hits.all_candidates is not None:
        all_candidates = True
        _note(evidence, "all candidates", _original(said, hits.all_candidates))
    pronoun = None
    if not named and focus is not None and focus in task.candidates and hits.pronoun:
        pronoun = focus
        named.append(focus)
        _note(evidence, f"candidate:{focus}", _original(said, hits.pronoun))
    # -- facts, members, contexts -------------------------------------------------------------
    strong: list[str] = []
    weak: list[tuple[str, str]] = []
    members: list[tuple[str, str]] = []
    mentions: list[ContextMention] = []
    for m in _to_read(matches):
        kind, ref = m.entry.kind, m.entry.ref
        if kind == "fact" and m.entry.weak:
            weak.append((ref[0], _span(text, tokens, m.indexes)))
        elif kind == "fact":
            strong.append(ref[0])
            _note(evidence, f"fact:{ref[0]}", _span(text, tokens, m.indexes))
        elif kind == "member":
            members.append((ref[0], ref[1]))
            _note(evidence, f"member:{ref[0]}:{ref[1]}", _span(text, tokens, m.indexes))
        elif kind == "context":
            first = position[m.indexes[0]]
            negated = _negated(words, first)
            mentions.append(
                _mention(
                    ref[0],
                    ref[1],
                    ref[1] == task.facts[ref[0]].context,
                    negated,
                    _span(text, tokens, m.indexes),
                )
            )
    # (a comprehension is a call: each below is made only when it has something to read;
    # most readings name no member and no weak word)
    facts = set(strong)
    if members:
        facts.update([f for f, _ in members])
    # weak words and contexts name a fact of the addressed role when only one has them
    if weak:
        in_context = {m.fact for m in mentions if not m.negated}
        for word in dict.fromkeys([w for _, w in weak]):
            owners = {f for f, w in weak if w == word}
            mine = owners & role_facts
            if len(mine) > 1 and len(mine & in_context) == 1:
                mine &= in_context  # "the price (best and final offer)": that context's fact
            if len(mine) == 1:
                facts |= mine
                _note(evidence, f"fact:{next(iter(mine))}", word)
    by_words: dict[str, set[str]] = {}
    for mention in mentions:
        by_words.setdefault(mention.words, set()).add(mention.fact)
    for mention_words, owners in by_words.items():
        mine = owners & role_facts
        if len(mine) == 1 and not (facts & role_facts):
            facts |= mine
            _note(evidence, f"fact:{next(iter(mine))}", mention_words)
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
    return made_frozen(
        Request,
        {
            "text": text,
            "role": role,
            "candidates": tuple(filter(named.__contains__, task.candidates)) if named else (),
            "all_candidates": all_candidates,
            "pronoun": pronoun,
            "facts": tuple(filter(facts.__contains__, task.facts)) if facts else (),
            "contexts": tuple(dict.fromkeys(mentions)) if len(mentions) > 1 else tuple(mentions),
            "members": tuple(dict.fromkeys(members)) if len(members) > 1 else tuple(members),
            "values": tuple([v.value for v, _ in found]) if found else (),
            "intents": frozenset(intents),
            "evidence": dict(zip(evidence, map(tuple, evidence.values()), strict=True)),
        },
    )


def _original(said: tuple[str, list[int], str, tuple[Token, ...]], span: _Span | _Ordered) -> str:
    """The message's own words for a phrase's span of the tagged text ``joined`` (characters
    ``start:end``, words ``first:last``: :class:`PhraseHits`): of the tokens written at its
    words (a range: the positions never decrease). ``said``: ``(joined, position, text,
    tokens)`` of :func:`read_request`."""
    joined, position, text, tokens = said
    start, end, first, last = span[:4]
    low, high = bisect_left(position, first), bisect_left(position, last)
    if low >= high:
        return joined[start:end].strip("| ?")
    return text[tokens[low][START] : tokens[high - 1][END]]


def _note(evidence: dict[str, list[str]], item: str, match_text: str) -> None:
    """Note ``match_text`` as read for ``item`` (once, in the order read)."""
    noted = evidence.get(item)
    if noted is None:
        evidence[item] = [match_text]
    elif match_text not in noted:
        noted.append(match_text)


def _span(text: str, tokens: tuple[Token, ...], indexes: tuple[int, ...]) -> str:
    """The message's words for a match's tokens (in order: :class:`Match`): from the first's
    start to the last's end."""
    return text[tokens[indexes[0]][START] : tokens[indexes[-1]][END]]


def _to_read(matches: tuple[Match, ...]) -> list[Match]:
    """The matches of facts, members and contexts, in order, each but a weak fact's once for
    the thing it names and its words: a label's or a context's words read in order and in
    any order are two matches of one thing on the same words (about a third of the
    matches), and what a reading takes from a match it keeps in sets or notes once (a
    context's mention would be the same; a weak fact's words are counted by owner)."""
    out = []
    read = set()
    for m in matches:
        entry = m.entry
        kind = entry.kind
        if kind == "candidate":
            continue
        if not entry.weak:
            key = (kind, entry.ref, m.indexes)
            if key in read:
                continue
            read.add(key)
        out.append(m)
    return out


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


def _negated(words: list[str], at: int) -> bool:
    """A negator within the four words before position ``at`` of the same sentence (read
    back from ``at``: a sentence's end, "but" or a required context ends the look)."""
    for word in reversed(words[max(0, at - 4) : at]):
        if word in _NEGATORS:
            return True
        if word in _ENDS_NEGATION:
            return False
    return False


_ENDS_NEGATION = frozenset(["|", "?", "but", "zreq"])


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
