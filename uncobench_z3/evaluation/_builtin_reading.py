"""What the built-in agents read (:mod:`._builtin`): a task text's reading, each reply
text's record lines as a task reading reads them, a statement's face value, and the decision
from the facts at hand.

What depends on the task text alone or on one reply text is worked out once for every
episode that reads it and kept with the reading (:class:`_Knowledge`): each reply text's lines
and how each reads (:class:`_Line`), the decisions by the values they read, what each agent
class works out from the reading (:class:`_Known`). Each is what working it out again would
give (tests/test_eval_builtin_memo.py).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from .._memo import remember
from .._trusted import trusted_maker
from ..construct import ReadError, ReadTask, Statement, read_task_text
from ..settings import range_midpoint
from ..spec import Value, format_fraction
from ..spec._values import INT_OR_FRACTION
from ._protocol import AnswerAction, AskAction, Conversation, RoleRequest

_answer = trusted_maker(AnswerAction)
_READINGS_KEPT = 256
"""task readings whose reply texts' statements are remembered (as many as read_task_text's)"""
_TEXTS_KEPT = 256
"""reply texts whose statements one task reading remembers (a group's scripted replies are a few
dozen; a model colleague's are all new, and the bound keeps them from piling up)"""
_DECISIONS_KEPT = 256
"""decisions one task reading remembers, by the values they were made from (careful decides
from the same values in every sample of a group; a model colleague's may all differ)"""
_LINES_KEPT = 4096
"""reply lines one task reading remembers how it reads (:meth:`_Knowledge.line`)"""
_PASSES_KEPT = 4096
"""candidates' verdicts one task reading remembers, by the values of their condition records
(:meth:`_Knowledge.eligible`)"""
_TOKENS_KEPT = 4096
"""values one task reading remembers the token of (:meth:`_Knowledge.token`)"""
_tokens = itertools.count()
"""a new token for each value a task reading meets (never one another value had)"""

ReadSlot = tuple[str, str]
"""(candidate name, fact key): how the agents index what they read."""


class _Line(NamedTuple):
    """One readable record line of a reply, as a task reading reads it: what every agent
    takes from it, worked out once per reading and reply text."""

    slot: ReadSlot
    statement: Statement
    face: Value | None
    """:func:`face_value`: what a trusting reader takes it to say"""
    in_context: bool
    """whether it names the context the task requires of its fact (in any case)"""
    exact: Value | None
    """its exact value, if it is stated exactly in the required context (careful believes it)"""
    token: int | None
    """its face value's token (:meth:`_Knowledge.token`; None: no face value), which is also
    its exact value's"""


_new_line = tuple.__new__


def parse_task(text: str) -> ReadTask:
    """The reading of a task text, shared by the agents of every episode
    (:func:`~uncobench_z3.construct.read_task_text`: read-only, remembered for the last
    few): an agent re-reads the same text every episode and the same reply lines every turn."""
    return read_task_text(text)


def _parse_line(line: str, read: ReadTask) -> Statement | None:
    """The statement of a reply line (None: not a record), remembered by the reading's
    catalog."""
    statement = read.catalog.statement(line)
    return None if isinstance(statement, ReadError) else statement


def text_statements(text: str | None, read: ReadTask) -> tuple[Statement, ...]:
    """The readable record lines of one reply text, in order. Remembered per task reading and
    text: an agent reads every reply again each turn, and the replies of a group repeat
    across its settings and episodes."""
    return _knowledge_of(read).text(text)[0]


def reply_statements(conversation: Conversation, read: ReadTask) -> Iterator[Statement]:
    """Every readable record line of every reply, in the order received."""
    for turn in conversation.turns:
        for reply in turn.observation.replies:
            yield from text_statements(reply.text, read)


def latest_statements(conversation: Conversation, read: ReadTask) -> dict[ReadSlot, Statement]:
    latest: dict[ReadSlot, Statement] = {}
    for statement in reply_statements(conversation, read):
        latest[(statement.candidate, statement.fact)] = statement
    return latest


def midpoint(low: Value, high: Value) -> Value:
    """The middle of a range (the one definition the guessing floors use too)."""
    return range_midpoint(low, high)


def face_value(statement: Statement) -> Value | None:
    """What a trusting reader takes a statement to say."""
    if statement.value is not None:
        return statement.value
    if statement.low is not None and statement.high is not None:
        return midpoint(statement.low, statement.high)
    if statement.options:
        return statement.options[0]
    return None


def decide(
    read: ReadTask,
    values: Mapping[ReadSlot, Value],
    tie_break: random.Random | Callable[[], random.Random],
) -> AnswerAction:
    """The answer from the facts at hand, exactly (unknown facts: see the module docstring).
    ``tie_break``: the choice among several eligible candidates, or what makes it when it is
    needed (seeding one costs more than most decisions)."""
    eligible = _eligible(read, values)
    if not eligible:
        return _answer(decision=read.negative, candidate=None, number=None)
    if len(eligible) == 1:
        chosen = eligible[0]
    else:
        rng = tie_break if isinstance(tie_break, random.Random) else tie_break()
        chosen = rng.choice(eligible)
    return _answer_for(read, values, chosen)


def _eligible(read: ReadTask, values: Mapping[ReadSlot, Value]) -> list[str]:
    """The candidates no known fact rules out, in the directory's order."""
    return [name for name in read.catalog.candidates if _passes(read, values, name)]


def _passes(read: ReadTask, values: Mapping[ReadSlot, Value], name: str) -> bool:
    """Whether no known fact of candidate ``name`` fails a condition."""
    for condition in read.conditions:
        value = values.get((name, condition.fact))
        if value is not None and not condition.holds(value):
            return False
    return True


def _answer_for(read: ReadTask, values: Mapping[ReadSlot, Value], chosen: str) -> AnswerAction:
    """The positive answer naming ``chosen``, with its number when every operand is known."""
    operands: list[Fraction] = []
    for key in read.rule.operands:
        value = values.get((chosen, key))
        if not isinstance(value, INT_OR_FRACTION) or isinstance(value, bool):
            return _answer(decision=read.positive, candidate=chosen, unit=read.rule.unit)
        operands.append(Fraction(value))
    try:
        number = read.rule.rounded(operands)
    except ZeroDivisionError:
        return _answer(decision=read.positive, candidate=chosen, unit=read.rule.unit)
    return _answer(
        decision=read.positive,
        candidate=chosen,
        number=format_fraction(number, max(read.rule.digits, 0)),
        unit=read.rule.unit,
    )


class _Effect(NamedTuple):
    """What one reply text does to what careful keeps (:class:`._builtin._Latest`), read
    line by line: the last line of each record decides it (every line sets its record's
    latest line, belief and settledness), so a text's lines come down to these updates."""

    lines: dict[ReadSlot, _Line]
    """the last line of each record, in the order the records first appear"""
    believed: dict[ReadSlot, Value]
    """the values believed (of the records whose last line gives one)"""
    tokens: dict[ReadSlot, int | None]
    """their tokens"""
    forgotten: tuple[ReadSlot, ...]
    """the records whose last line gives no value to believe"""
    settled: frozenset[ReadSlot]
    unsettled: frozenset[ReadSlot]


def _effect_of(lines: tuple[_Line, ...], takes_imprecise: bool) -> _Effect:
    """:class:`_Effect` of a reply text's lines (``takes_imprecise``: an imprecise line in
    the required context settles its record at face value, as the midpoint agent reads)."""
    last: dict[ReadSlot, _Line] = {}
    for line in lines:  # (a loop: a comprehension makes and calls a function)
        last[line.slot] = line
    believed: dict[ReadSlot, Value] = {}
    tokens: dict[ReadSlot, int | None] = {}
    forgotten: list[ReadSlot] = []
    settled: set[ReadSlot] = set()
    unsettled: set[ReadSlot] = set()
    for slot, line in last.items():
        if takes_imprecise:
            is_settled = line.in_context
            value = line.face if is_settled else None
        else:
            value = line.exact
            is_settled = value is not None
        if value is None:
            forgotten.append(slot)
        else:
            believed[slot] = value
            tokens[slot] = line.token  # (its value's)
        (settled if is_settled else unsettled).add(slot)
    return _Effect(
        last, believed, tokens, tuple(forgotten), frozenset(settled), frozenset(unsettled)
    )


class _Decided:
    """What :func:`decide` made of one set of decision values: the eligible candidates, the
    answer naming each one chosen so far (None: the negative one), the choice by seed."""

    __slots__ = ("answers", "chosen", "eligible")

    def __init__(self, eligible: list[str]) -> None:
        self.eligible = eligible
        self.answers: dict[str | None, AnswerAction] = {}
        self.chosen: dict[int, str] = {}


class _Knowledge:
    """What the agents work out from one task reading alone, once for every episode that
    reads the same task text (nothing may change it): each reply text's lines, the decisions
    by the values they were made from, and what each agent class knows of it (:class:`_Known`)."""

    __slots__ = (
        "candidate_slots",
        "classes",
        "decision_slots",
        "decisions",
        "effects",
        "faces",
        "lines",
        "passes",
        "read",
        "required",
        "texts",
        "tokens",
    )

    def __init__(self, read: ReadTask) -> None:
        self.read = read
        self.texts: dict[str | None, tuple[tuple[Statement, ...], tuple[_Line, ...]]] = {}
        self.lines: dict[str, _Line | None] = {}
        self.required = {fact: context.lower() for fact, context in read.required_context.items()}
        """the context each fact is required in, in lower case"""
        self.effects: tuple[dict[str | None, _Effect], dict[str | None, _Effect]] = ({}, {})
        """:meth:`effect` of each text, read without and with ``takes_imprecise``"""
        self.faces: dict[str | None, tuple[dict[ReadSlot, Value], dict[ReadSlot, int | None]]]
        self.faces = {}
        self.decisions: dict[tuple[int | None, ...], _Decided] = {}
        self.tokens: dict[tuple[object, ...], int] = {}
        self.classes: dict[type, _Known] = {}
        names, rule = read.catalog.candidates, read.rule
        facts = dict.fromkeys([*(c.fact for c in read.conditions), *rule.operands])
        self.decision_slots = tuple((name, fact) for name in names for fact in facts)
        """every record :func:`decide` reads"""
        conditions = read.conditions
        self.candidate_slots = tuple(
            (name, tuple((name, condition.fact) for condition in conditions)) for name in names
        )
        """each candidate, and the record each condition reads of it"""
        self.passes: dict[tuple[str | int | None, ...], bool] = {}

    def text(self, text: str | None) -> tuple[tuple[Statement, ...], tuple[_Line, ...]]:
        """The readable record lines of one reply text, in order: their statements, and how
        each reads (:class:`_Line`)."""
        found = self.texts.get(text)
        if found is None:
            lines, statements = [], []
            known = self.lines
            for raw in (text or "").splitlines():
                # (a line repeated in another reply text, as the settings of a group repeat
                # their true records, is read once: :meth:`line`)
                line = known[raw] if raw in known else self.line(raw)
                if line is not None:
                    lines.append(line)
                    statements.append(line.statement)  # (in the loop: no generator made)
            found = (tuple(statements), tuple(lines))
            remember(self.texts, text, found, _TEXTS_KEPT)
        return found

    def line(self, raw: str) -> _Line | None:
        """How one line of a reply text reads (None: not a record, or blank), remembered by
        its text."""
        statement = _parse_line(raw, self.read) if raw.strip() else None
        line = None if statement is None else self._line_of(statement)
        return remember(self.lines, raw, line, _LINES_KEPT)

    def effect(self, text: str | None, takes_imprecise: bool) -> _Effect:
        """What the lines of one reply text do to what careful keeps (:class:`_Effect`)."""
        effects = self.effects[takes_imprecise]
        found = effects.get(text)
        if found is None:
            found = _effect_of(self.text(text)[1], takes_imprecise)
            remember(effects, text, found, _TEXTS_KEPT)
        return found

    def face_values(
        self, text: str | None
    ) -> tuple[dict[ReadSlot, Value], dict[ReadSlot, int | None]]:
        """What a trusting reader takes one reply text to say: the face value of each record
        its lines give one (the last line's that does), and their tokens."""
        found = self.faces.get(text)
        if found is None:
            values: dict[ReadSlot, Value] = {}
            tokens: dict[ReadSlot, int | None] = {}
            for line in self.text(text)[1]:
                face = line.face
                if face is not None:
                    values[line.slot] = face
                    tokens[line.slot] = line.token
            found = remember(self.faces, text, (values, tokens), _TEXTS_KEPT)
        return found

    def token(self, value: Value) -> int:
        """A number that stands for ``value`` and its type: equal numbers stand for equal
        values of one type (a value may get a new number once the table starts again, and
        no number ever stands for two values). A decision is remembered by the numbers of the
        values it reads: an integer hashes in a step, where a fraction's hash is computed
        in Python."""
        kind = type(value)
        # (a fraction by its two ints: its own hash and equality are computed in Python; read
        # from its slots, as ``numerator`` and ``denominator`` do, without their property
        # calls: 0.6k instructions a key against 1.8k)
        key: tuple[object, ...] = (
            (kind, value._numerator, value._denominator)  # type: ignore[union-attr]
            if kind is Fraction
            else (kind, value)
        )
        found = self.tokens.get(key)
        if found is None:
            found = remember(self.tokens, key, next(_tokens), _TOKENS_KEPT)
        return found

    def _line_of(self, statement: Statement) -> _Line:
        fact = statement.fact
        in_context = statement.context.lower() == self.required.get(fact, "")
        exact = statement.value if in_context else None
        face = face_value(statement)
        token = None if face is None else self.token(face)
        # (``_Line(...)`` without its ``__new__``, a function in Python that makes the same
        # tuple: 1.6k instructions a line against 3.5k)
        return _new_line(
            _Line, ((statement.candidate, fact), statement, face, in_context, exact, token)
        )

    def eligible(
        self, values: Mapping[ReadSlot, Value], tokens: Mapping[ReadSlot, int | None]
    ) -> list[str]:
        """:func:`_eligible`, each candidate's verdict remembered by the tokens of the records
        its conditions read (``tokens``: as :meth:`decision`'s): the settings of a group, and
        an agent's turns, state most of a candidate's records alike."""
        passes, read, eligible = self.passes, self.read, []
        for name, slots in self.candidate_slots:
            key = (name, *map(tokens.get, slots))
            found = passes.get(key)
            if found is None:
                found = remember(passes, key, _passes(read, values, name), _PASSES_KEPT)
            if found:
                eligible.append(name)
        return eligible

    def decision(
        self,
        values: Mapping[ReadSlot, Value],
        tokens: Mapping[ReadSlot, int | None],
        seed: int,
        tie_break: Callable[[], random.Random],
    ) -> AnswerAction:
        """:func:`decide`, remembered by the values it reads (each record's in
        :attr:`decision_slots`, by its token in ``tokens``: :meth:`token` of its value in
        ``values``, none where there is none) and, among several eligible candidates, the
        seed of the choice: ``tie_break`` makes the agent's choice, which must depend on
        ``seed`` and the task text alone (as :meth:`._builtin._TextAgent.tie_break` does)."""
        key = tuple(map(tokens.get, self.decision_slots))
        decided = self.decisions.get(key)
        if decided is None:
            decided = _Decided(self.eligible(values, tokens))
            remember(self.decisions, key, decided, _DECISIONS_KEPT)
        eligible = decided.eligible
        if not eligible:
            chosen = None
        elif len(eligible) == 1:
            chosen = eligible[0]
        else:
            chosen = decided.chosen.get(seed)
            if chosen is None:
                chosen = decided.chosen[seed] = tie_break().choice(eligible)
        answer = decided.answers.get(chosen)
        if answer is None:
            read = self.read
            answer = decided.answers[chosen] = (
                _answer(decision=read.negative, candidate=None, number=None)
                if chosen is None
                else _answer_for(read, values, chosen)
            )
        return answer


class _Problem(NamedTuple):
    kind: str  # "missing", "context" or "imprecise"
    candidate: str
    fact: str
    given_context: str | None = None


@dataclass
class _Known:
    """What an agent of one class works out from a task reading alone, once for every episode
    that reads the same task text (nothing may change it)."""

    needed: dict[str, list[str]]
    slots: tuple[ReadSlot, ...]
    """the records of :attr:`needed`, of every candidate, in the order :meth:`CarefulAgent.
    problems` lists them"""
    slot_set: frozenset[ReadSlot]
    """the same records, as a set"""
    first: AskAction | None = None
    asks: dict[tuple[_Problem, ...], AskAction] = field(default_factory=dict)
    """the follow-up questions asked, by the problems they ask about"""
    requests: dict[tuple[_Problem, ...], RoleRequest] = field(default_factory=dict)
    """the requests of the follow-up questions to one colleague, by its problems"""


_knowledge: dict[int, _Knowledge] = {}
"""id of a task reading -> what the agents know of it (which keeps the reading: its id is not
reused meanwhile)"""


def _knowledge_of(read: ReadTask) -> _Knowledge:
    found = _knowledge.get(id(read))
    if found is None or found.read is not read:
        found = remember(_knowledge, id(read), _Knowledge(read), _READINGS_KEPT)
    return found
