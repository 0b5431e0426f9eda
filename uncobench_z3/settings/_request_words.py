"""The words a reading takes from a message, and the facts that words name by their owners.

:func:`~._request.read_request` reads which things a message names from its matches
(:func:`_to_read`), the message's own words for them (:func:`_span`, :func:`_original`;
noted as its evidence by :func:`_note`), whether a context is named to be rejected
(:func:`_negated`), and the fact of the addressed role that a weak word or a context's words
name when only one of its facts has them (:func:`_facts_from_weak_words`,
:func:`_fact_from_contexts`).
"""

from __future__ import annotations

from bisect import bisect_left

from . import _phrases as P
from ._matching import Match
from ._phrase_hits import _Ordered, _Span
from ._words import END, START, Token

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


_Said = tuple[str, list[int], str, tuple[Token, ...]]
"""``(joined, position, text, tokens)`` of :func:`~._request.read_request`: what
:func:`_original` reads"""


def _in_context(words: list[str], position: list[int], to_read: list[Match]) -> set[str]:
    """The facts of the contexts a message names, but not to reject them."""
    return {
        m.ref[0]
        for m in to_read
        if m.kind == "context" and not _negated(words, position[m.indexes[0]])
    }


def _facts_from_weak_words(
    facts: set[str],
    role_facts: frozenset[str],
    weak: list[tuple[str, str]],
    in_context: set[str],
    evidence: dict[str, list[str]] | None,
) -> None:
    """Add to ``facts`` the fact of the addressed role that weak words name (``weak``: (fact,
    words)), when only one has them, or only one of the contexts named (``in_context``: their
    facts); noting the words in ``evidence``, when given."""
    for word in dict.fromkeys([w for _, w in weak]):
        owners = {f for f, w in weak if w == word}
        mine = owners & role_facts
        if len(mine) > 1 and len(mine & in_context) == 1:
            mine &= in_context  # "the price (best and final offer)": that context's fact
        if len(mine) == 1:
            facts |= mine
            if evidence is not None:
                _note(evidence, f"fact:{next(iter(mine))}", word)


def _fact_from_contexts(
    facts: set[str],
    role_facts: frozenset[str],
    worded: list[tuple[str, str]],
    evidence: dict[str, list[str]] | None,
) -> None:
    """When ``facts`` has none of the addressed role's, add the fact of the role that the
    words of named contexts name (``worded``: (fact, words)), when only one has them; noting
    the words in ``evidence``, when given."""
    by_words: dict[str, set[str]] = {}
    for fact, mention_words in worded:
        by_words.setdefault(mention_words, set()).add(fact)
    for mention_words, owners in by_words.items():
        mine = owners & role_facts
        if len(mine) == 1 and not (facts & role_facts):
            facts |= mine
            if evidence is not None:
                _note(evidence, f"fact:{next(iter(mine))}", mention_words)


def _original(said: _Said, span: _Span | _Ordered) -> str:
    """The message's own words for a phrase's span of the tagged text ``joined`` (characters
    ``start:end``, words ``first:last``: :class:`~._phrase_hits.PhraseHits`): of the tokens
    written at its words (a range: the positions never decrease). ``said``: :data:`_Said`."""
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
        kind = m.kind
        if kind == "candidate":
            continue
        if not m.weak:
            key = (kind, m.ref, m.indexes)
            if key in read:
                continue
            read.add(key)
        out.append(m)
    return out


def _named_and_left_out(
    kinds: frozenset[str],
    matches: tuple[Match, ...],
    excluded: tuple[_Span, ...],
    position: list[int],
) -> tuple[list[str], list[str]]:
    """The candidates (or facts) a message names by matches of ``kinds``, in order, other than
    to leave them out, and those it names only to leave out ("not Marcus - I need Priya's
    years": Priya, and Marcus). ``excluded``: the words that leave one out
    (:attr:`~._phrase_hits.PhraseHits.excluded`), each ending at the candidate's or the fact's
    tag; ``position``: the places of the message's tokens in its tagged words."""
    at = {span[3] - 1 for span in excluded}
    kept: list[str] = []
    out: list[str] = []
    for m in matches:
        if m.kind in kinds:
            (out if position[m.indexes[0]] in at else kept).append(m.ref[0])
    return kept, [c for c in out if c not in kept]


CANDIDATES = frozenset(["candidate"])
FACTS = frozenset(["fact", "member"])
"""the matches that name a candidate, and a fact (a member names its fact)"""


def _negated(words: list[str], at: int) -> bool:
    """A negator within the four words before position ``at`` of the same sentence (read
    back from ``at``: a sentence's end, "but" or a required context ends the look), that
    negates no verb of getting on the way ("I did not get the March one", "you never sent
    March": the context is missing, not rejected; "do not use April" still rejects it)."""
    start = max(0, at - 4)
    for k in range(at - 1, start - 1, -1):
        word = words[k]
        if word in _NEGATORS:
            if k > 0 and word in _LEFT_OUT and words[k - 1] in _UNDONE:
                return False  # "don't forget the March one", "never ignore March": wanted
            return not (k > 0 and words[k - 1] in _DID and words[k + 1] in _SENT)
        if word in _ENDS_NEGATION or word in _GOT:
            return False
    return False


_ENDS_NEGATION = frozenset(["|", "?", "but", "zreq"])
_LEFT_OUT = frozenset(
    ["ignore", "ignoring", "disregard", "discard", "drop", "forget", "skip", "scrap"]
)
_UNDONE = frozenset(["not", "never"])
"""a negator of a verb of leaving out (:data:`_LEFT_OUT`) undoes it: "do not forget March"
names March to be used"""
_GOT = P.word_set(
    """
    get gets got gotten getting receive received receiving have has had having see saw seen
    find found hear heard sent gave given provided supplied shared included quoted used
    checked pulled mentioned reported returned attached listed cited
    """
)
"""verbs of getting or of a reply given: negated, they say a context is missing ("I have not
seen the March one", "you have not sent March"), and the negator before them rejects none"""
_SENT = P.word_set("send give provide supply share include quote use check pull mention")
_DID = frozenset(["did", "have", "has", "had"])
"""(with :data:`_SENT`) "you did not send the March one": a reply not given, as of
:data:`_GOT`; "do not send April" rejects it"""


def _may_say_of_contexts(words: list[str]) -> bool:
    """Whether the tagged words may say of a context that it is wrong by the words after it
    (:func:`_rejected_after`): they have a word that starts such a statement ("is", "was"...;
    most have none, and no context of theirs is read for one: 360 of the first pass over 80
    built groups, 2.6 M of its instructions)."""
    return not _SAID_VERBS.isdisjoint(words)


def _rejected_after(words: list[str], at: int) -> bool:
    """The context whose words end at position ``at`` said to be wrong by the words after it
    ("the March one is superseded", "March 2026 is not what I need": named to be rejected,
    as after "not")."""
    after = words[at + 1 : at + _WORDS_AFTER]
    tags = 0
    while tags < len(after) and after[tags] in _CONTEXT_TAGS:
        tags += 1
    # (what is said of it starts with "is", "was", "has been", "does not"... after the
    # context's other tags and at most three words, "zfact time frame is": else the pattern
    # is not tried)
    if _SAID_VERBS.isdisjoint(after[tags : tags + 4]):
        return False
    return P.CONTEXT_REJECTED_AFTER.match(" " + " ".join(after)) is not None


_WORDS_AFTER = 12
"""the words after a context read for what is said of it (more than any statement of
:data:`~._phrases.CONTEXT_REJECTED_AFTER` reads)"""
_CONTEXT_TAGS = frozenset(["zreq", "zoth"])
_SAID_VERBS = P.word_set("is was are were has have does isn't doesn't")
"""the first words of every statement of :data:`~._phrases.CONTEXT_REJECTED_AFTER`
(``_SAID_NOT_IT``)"""
