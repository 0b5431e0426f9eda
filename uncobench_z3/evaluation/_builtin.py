"""The built-in agents: reference points that read only the text they are shown.

Both parse the task text and every reply line with the construction reader
(:func:`~uncobench_z3.construct.parse_task_text`, :func:`~uncobench_z3.construct.parse_statement`)
and decide with exact arithmetic. They are pure functions of the conversation, like an LLM
agent that re-reads its history each turn.

* ``builtin/naive`` asks every colleague once for all their records, takes whatever value a
  reply states for a record (whatever context it names; the midpoint of a range - the middle
  day for dates; the first of a set of options), never follows up, and answers in round 2.
* ``builtin/careful`` asks each colleague for its decision-relevant records *in the required
  contexts*, then checks every reply line against the task text: a line in another context
  gets a follow-up naming the fact and the required context; a range or a set of options gets
  a follow-up asking for the exact value; a record that never arrived (a silent colleague) is
  asked for again. All problems of one colleague go into one question, all colleagues with
  problems are asked in the same round. It answers once every record is exact and in the
  required context, or when only the answering round is left.
* ``builtin/patient`` is ``careful`` that first waits one round after a colleague stays
  silent before asking again: the silent colleague's request is pending, and with the
  default policy (one wait round) the wait delivers its reply; with ``--missed-wait 0`` or
  more than one round it asks again after its one wait.

Three *guessing* agents skip part of the work; the group's proofs hold the exact accuracy
each can expect (its guessing floor, :mod:`uncobench_z3.settings._guessing`):

* ``builtin/optimist`` is ``careful`` with only the colleagues that own rule operands: it
  never asks the others, so every condition on their records is assumed to hold.
* ``builtin/midpoint`` is ``careful`` that takes a range's midpoint (the middle day of a date
  range) and the first of a set of options instead of asking for the exact value.
* ``builtin/face-value`` asks every colleague once, as ``careful`` does, and answers from the
  first replies at face value, as ``naive`` does.

A decision from incomplete or contradictory facts (naive after a silence or a wrong-context
reply, careful out of rounds) skips the conditions whose facts are unknown; when several
candidates pass, it picks one by a choice seeded with the agent's seed and the task text (not
the first in the directory, which would favour whatever order the directory has); it gives
no number if one of the chosen candidate's operands is unknown.

Each action is what reading the whole conversation again would give, but what depends on the
task text alone or on one reply text is worked out once for every episode that reads it
(:class:`_Knowledge`: each reply text's lines and how each reads, the decisions by the values
they read, each agent class's first and follow-up questions), and careful keeps what the
turns said line by line as they arrive (the values it believes, the records not settled).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping

from .._memo import remember
from .._trusted import trusted_maker
from ..construct import ReadTask, Statement
from ..spec import Value
from ._builtin_reading import (
    _READINGS_KEPT,
    ReadSlot,
    _Knowledge,
    _knowledge_of,
    _Known,
    _Line,
    _Problem,
)
from ._builtin_reading import _eligible as _eligible
from ._builtin_reading import _parse_line as _parse_line
from ._builtin_reading import decide as decide
from ._builtin_reading import face_value as face_value
from ._builtin_reading import latest_statements as latest_statements
from ._builtin_reading import midpoint as midpoint
from ._builtin_reading import parse_task as parse_task
from ._builtin_reading import reply_statements as reply_statements
from ._builtin_reading import text_statements as text_statements
from ._protocol import (
    Action,
    AnswerAction,
    AskAction,
    Briefing,
    Conversation,
    RoleRequest,
    Turn,
    WaitAction,
)

NAIVE_QUESTION = "Please send me all your records for every candidate."
# The agents' actions are made from values they have typed themselves (their reading's
# names, their own questions): without validation, as the environment makes its records.
_ask = trusted_maker(AskAction)
_request = trusted_maker(RoleRequest)
_ASKS_KEPT = 256
"""follow-up questions an agent class remembers per task reading, by the problems they ask
about"""


class _TextAgent:
    """Parses the task text once (it never changes within an episode)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._read: ReadTask | None = None
        self._text: str | None = None
        self._knows: _Knowledge | None = None

    def tie_break(self, conversation: Conversation) -> random.Random:
        """The choice among several eligible candidates: seeded with the agent's seed and the
        task text alone (a decision is remembered by them: :meth:`_Knowledge.decision`)."""
        digest = hashlib.sha256(conversation.briefing.task_text.encode()).hexdigest()[:16]
        return random.Random(f"{self.seed}:{digest}")

    def tie_breaker(self, conversation: Conversation) -> Callable[[], random.Random]:
        """:meth:`tie_break`, made only if :func:`decide` needs it."""
        return lambda: self.tie_break(conversation)

    def read(self, conversation: Conversation) -> ReadTask:
        text = conversation.briefing.task_text
        if self._read is None or self._text != text:
            self._read, self._text = parse_task(text), text
        return self._read

    def knowledge(self, conversation: Conversation) -> _Knowledge:
        """What the agents know of the task text's reading (:meth:`read`)."""
        read = self.read(conversation)
        knows = self._knows
        if knows is None or knows.read is not read:
            knows = self._knows = _knowledge_of(read)
        return knows

    def decision(
        self,
        conversation: Conversation,
        values: Mapping[ReadSlot, Value],
        tokens: Mapping[ReadSlot, int | None],
    ) -> AnswerAction:
        """:func:`decide` on the conversation's task with the agent's tie-break, remembered
        by the values it reads (:meth:`_Knowledge.decision`)."""
        knows = self.knowledge(conversation)
        return knows.decision(values, tokens, self.seed, self.tie_breaker(conversation))


_naive_asks: dict[int, tuple[Briefing, AskAction]] = {}
"""id of a briefing -> the briefing (kept) and naive's first question to its roles"""


class NaiveAgent(_TextAgent):
    """Asks everyone once, trusts every reply, never follows up."""

    async def act(self, conversation: Conversation) -> Action:
        if not conversation.turns:
            # the same frozen action for every episode that shares the briefing (a group's)
            briefing = conversation.briefing
            found = _naive_asks.get(id(briefing))
            if found is None or found[0] is not briefing:
                requests = tuple(
                    _request(role=card.id, question=NAIVE_QUESTION) for card in briefing.roles
                )
                found = (briefing, _ask(requests=requests))
                remember(_naive_asks, id(briefing), found, _READINGS_KEPT)
            return found[1]
        values, tokens = _face_values(conversation, self.knowledge(conversation))
        return self.decision(conversation, values, tokens)


def face_values(conversation: Conversation, read: ReadTask) -> dict[ReadSlot, Value]:
    """Every stated record at face value (the last statement of each wins)."""
    return _face_values(conversation, _knowledge_of(read))[0]


def _face_values(
    conversation: Conversation, knows: _Knowledge
) -> tuple[dict[ReadSlot, Value], dict[ReadSlot, int | None]]:
    """:func:`face_values`, and their tokens (:meth:`_Knowledge.token`)."""
    values: dict[ReadSlot, Value] = {}
    tokens: dict[ReadSlot, int | None] = {}
    for turn in conversation.turns:
        for reply in turn.observation.replies:
            faces, face_tokens = knows.face_values(reply.text)
            values.update(faces)
            tokens.update(face_tokens)
    return values, tokens


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


class _Latest:
    """What the turns of a conversation read so far say (the turns kept): the latest line of
    each record, the values the agent believes (:meth:`CarefulAgent.believed`) and the
    records it needs that are not settled (those :meth:`CarefulAgent.problems` lists)."""

    __slots__ = ("believed", "lines", "read", "tokens", "turns", "unsettled")

    def __init__(self, read: ReadTask, needed: tuple[ReadSlot, ...]) -> None:
        self.read = read
        self.turns: tuple[Turn, ...] = ()
        self.lines: dict[ReadSlot, _Line] = {}
        self.believed: dict[ReadSlot, Value] = {}
        self.tokens: dict[ReadSlot, int | None] = {}  # (of the believed values)
        self.unsettled = set(needed)


class CarefulAgent(_TextAgent):
    """Checks every reply against the task text and follows up until every record is exact."""

    takes_imprecise = False
    """whether an imprecise statement in the required context settles a record, at face
    value (the midpoint agent's); what :meth:`problems` and :meth:`believed` say, read line
    by line as the turns arrive"""

    def __init__(self, seed: int = 0, wait_for_silence: bool = False) -> None:
        super().__init__(seed)
        self.wait_for_silence = wait_for_silence
        self._latest: _Latest | None = None
        self._last_known: tuple[ReadTask, _Known] | None = None
        """the task reading :meth:`_known` last read, and what it found (kept with it)"""

    def _known(self, read: ReadTask) -> _Known:
        last = self._last_known
        if last is not None and last[0] is read:
            return last[1]
        knows = _knowledge_of(read)
        found = knows.classes.get(type(self))
        if found is None:
            needed = self.needed(read)
            names = read.catalog.candidates
            slots = tuple((name, key) for keys in needed.values() for key in keys for name in names)
            found = knows.classes[type(self)] = _Known(needed, slots, frozenset(slots))
        self._last_known = (read, found)
        return found

    def needed_of(self, read: ReadTask) -> dict[str, list[str]]:
        """:meth:`needed`, worked out once per class and task reading (asked every turn)."""
        return self._known(read).needed

    def first_questions_of(self, read: ReadTask) -> AskAction:
        """:meth:`first_questions`, asked once per class and task reading (a frozen action:
        every episode of the task asks the same)."""
        known = self._known(read)
        if known.first is None:
            known.first = self.first_questions(read)
        return known.first

    def latest_of(self, conversation: Conversation, read: ReadTask) -> dict[ReadSlot, Statement]:
        """:func:`latest_statements`, reading only the turns it has not read before: each turn
        of an episode's conversation is the previous one's with a turn more (the same turn
        objects, frozen)."""
        lines = self._read_up_to(conversation, read).lines
        return {slot: line.statement for slot, line in lines.items()}

    def _read_up_to(self, conversation: Conversation, read: ReadTask) -> _Latest:
        """What the conversation's turns say (:class:`_Latest`), reading only the turns not
        read before (:meth:`latest_of`)."""
        turns = conversation.turns
        state = self._latest
        if (
            state is None
            or state.read is not read
            or len(state.turns) > len(turns)
            # (a tuple compares its items by identity first: a turn is compared whole only
            # when another object, and an equal turn says the same)
            or turns[: len(state.turns)] != state.turns
        ):
            state = self._latest = _Latest(read, self._known(read).slots)
        takes_imprecise = self.takes_imprecise
        lines, believed, tokens = state.lines, state.believed, state.tokens
        unsettled = state.unsettled
        knows = _knowledge_of(read) if self._knows is None else self._knows
        effects = knows.effects[takes_imprecise]
        for turn in turns[len(state.turns) :]:
            for reply in turn.observation.replies:
                text = reply.text
                if text is None:  # (a silence: no line, nothing changes)
                    continue
                effect = effects.get(text)
                if effect is None:
                    effect = knows.effect(text, takes_imprecise)
                lines.update(effect.lines)
                believed.update(effect.believed)
                tokens.update(effect.tokens)
                if effect.forgotten:
                    for slot in effect.forgotten:
                        believed.pop(slot, None)
                        tokens.pop(slot, None)
                if effect.settled:
                    unsettled -= effect.settled
                if effect.unsettled:
                    unsettled |= effect.unsettled  # (also records it does not need)
        state.turns = turns
        return state

    def _problems(self, read: ReadTask, state: _Latest) -> list[_Problem]:
        """:meth:`problems` of the conversation read so far (its lines read once)."""
        known = self._known(read)
        unsettled = state.unsettled
        if unsettled.isdisjoint(known.slot_set):
            return []
        found = []
        lines, takes_imprecise = state.lines, self.takes_imprecise
        for slot in known.slots:
            if slot in unsettled:
                line = lines.get(slot)
                name, key = slot
                if line is None:
                    found.append(_Problem("missing", name, key))
                elif not line.in_context:
                    found.append(_Problem("context", name, key, line.statement.context))
                elif not takes_imprecise:  # (and stated imprecisely: else settled)
                    found.append(_Problem("imprecise", name, key))
        return found

    def needed(self, read: ReadTask) -> dict[str, list[str]]:
        """Decision-relevant facts per owning role, in record-key order."""
        by_role: dict[str, list[str]] = {}
        for key, entry in read.catalog.keys.items():
            if key in read.required_context:
                by_role.setdefault(entry.owner, []).append(key)
        return by_role

    def fact_text(self, read: ReadTask, key: str) -> str:
        return f"{read.catalog.keys[key].label} ({read.required_context[key]})"

    def first_questions(self, read: ReadTask) -> AskAction:
        requests = []
        for role, keys in self.needed_of(read).items():
            wanted = "; ".join(self.fact_text(read, key) for key in keys)
            requests.append(
                _request(
                    role=role,
                    question=f"For every candidate, please send your records of: {wanted}. "
                    "I need exactly these contexts and exact values.",
                )
            )
        return _ask(requests=tuple(requests))

    def problems(self, read: ReadTask, latest: dict[ReadSlot, Statement]) -> list[_Problem]:
        found = []
        for keys in self.needed_of(read).values():
            for key in keys:
                required = read.required_context[key]
                for name in read.catalog.candidates:
                    statement = latest.get((name, key))
                    if statement is None:
                        found.append(_Problem("missing", name, key))
                    elif statement.context.lower() != required.lower():
                        found.append(_Problem("context", name, key, statement.context))
                    elif statement.value is None:
                        found.append(_Problem("imprecise", name, key))
        return found

    def believed(self, read: ReadTask, latest: dict[ReadSlot, Statement]) -> dict[ReadSlot, Value]:
        """The values it decides with: exact values stated in the required context."""
        return {
            slot: s.value
            for slot, s in latest.items()
            if s.value is not None
            and s.context.lower() == read.required_context.get(s.fact, "").lower()
        }

    def follow_up(self, read: ReadTask, problems: list[_Problem]) -> str:
        """One question covering every problem of one colleague."""
        sentences = []
        for key in dict.fromkeys(p.fact for p in problems):
            label = read.catalog.keys[key].label
            required = read.required_context[key]
            of_fact = [p for p in problems if p.fact == key]
            for given in dict.fromkeys(p.given_context for p in of_fact if p.kind == "context"):
                names = _names([p.candidate for p in of_fact if p.given_context == given])
                sentences.append(
                    f"Your reply gave the {label} of {names} for the {given}, but the task "
                    f"needs the {required}. Please send the {label} ({required}) of {names}."
                )
            imprecise = [p.candidate for p in of_fact if p.kind == "imprecise"]
            if imprecise:
                sentences.append(
                    f"Please give the exact {label} ({required}) of {_names(imprecise)}: a "
                    "single value, not a range or a set of options."
                )
            missing = [p.candidate for p in of_fact if p.kind == "missing"]
            if missing:
                sentences.append(f"Please send the {label} ({required}) of {_names(missing)}.")
        return " ".join(sentences)

    def follow_ups(self, read: ReadTask, problems: list[_Problem]) -> AskAction:
        """One question to each colleague with problems (:meth:`follow_up`), in the order of
        the problems; remembered per class and task reading by the problems (a frozen
        action)."""
        known = self._known(read)
        key = tuple(problems)
        found = known.asks.get(key)
        if found is None:
            by_role: dict[str, list[_Problem]] = {}
            for problem in problems:
                by_role.setdefault(read.catalog.keys[problem.fact].owner, []).append(problem)
            requests = tuple(
                self._request_of(read, known, role, tuple(of_role))
                for role, of_role in by_role.items()
            )
            found = remember(known.asks, key, _ask(requests=requests), _ASKS_KEPT)
        return found

    def _request_of(
        self, read: ReadTask, known: _Known, role: str, problems: tuple[_Problem, ...]
    ) -> RoleRequest:
        """The request of :meth:`follow_up` to ``role`` about its ``problems``, remembered per
        class and task reading by them: the settings of a group, and the rounds of an
        episode, ask one colleague the same in questions that differ for the others."""
        found = known.requests.get(problems)
        if found is None:
            request = _request(role=role, question=self.follow_up(read, list(problems)))
            found = remember(known.requests, problems, request, _ASKS_KEPT)
        return found

    async def act(self, conversation: Conversation) -> Action:
        read = self.read(conversation)
        if not conversation.turns:
            return self.first_questions_of(read)
        state = self._read_up_to(conversation, read)
        if conversation.rounds_left > 1:
            problems = self._problems(read, state)
            if problems:
                last = conversation.turns[-1]
                silent = any(reply.text is None for reply in last.observation.replies)
                if self.wait_for_silence and silent and not isinstance(last.action, WaitAction):
                    return _WAIT
                return self.follow_ups(read, problems)
        return self.decision(conversation, state.believed, state.tokens)


_WAIT = WaitAction()


class OptimistAgent(CarefulAgent):
    """``careful`` with only the colleagues that own rule operands (the others are never
    asked: conditions on their records are assumed to hold)."""

    def needed(self, read: ReadTask) -> dict[str, list[str]]:
        owners = {read.catalog.keys[key].owner for key in read.rule.operands}
        return {role: keys for role, keys in super().needed(read).items() if role in owners}


class MidpointAgent(CarefulAgent):
    """``careful`` that takes an imprecise statement at face value instead of asking."""

    takes_imprecise = True

    def problems(self, read: ReadTask, latest: dict[ReadSlot, Statement]) -> list[_Problem]:
        return [p for p in super().problems(read, latest) if p.kind != "imprecise"]

    def believed(self, read: ReadTask, latest: dict[ReadSlot, Statement]) -> dict[ReadSlot, Value]:
        values = super().believed(read, latest)
        for slot, statement in latest.items():
            in_context = (
                statement.context.lower() == read.required_context.get(statement.fact, "").lower()
            )
            value = face_value(statement)
            if slot not in values and in_context and value is not None:
                values[slot] = value
        return values


class FaceValueAgent(CarefulAgent):
    """Asks every colleague once for its decision-relevant records, takes every first reply
    at face value (whatever context it names; a range's midpoint, a first option), never
    follows up, and answers in round 2."""

    async def act(self, conversation: Conversation) -> Action:
        read = self.read(conversation)
        if not conversation.turns:
            return self.first_questions_of(read)
        values, tokens = _face_values(conversation, self.knowledge(conversation))
        return self.decision(conversation, values, tokens)
