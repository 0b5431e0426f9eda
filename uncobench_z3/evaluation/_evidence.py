"""Face-value evidence, round by round, in one pass over a trace.

What the replies of rounds ``1..r`` state about the required-context records, taken
literally (the definitions are :mod:`._attribution`'s): the records stated exactly, once or
always alike (a record stated with two different values counts as not received), and the
imprecise required-context statements of the records not received exactly, as constraints.
A wrong-context value states nothing about the required context.

Scoring asks this after every round of a sample (the round notes), once for its
justification, and the minimum-rounds search after every round of an ideal agent; reading the
trace once, in order, and keeping a snapshot per round costs what one reading of the whole
trace did. The ``signature`` of a snapshot is equal for equal evidence, so a judge decides
equal evidence once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice

from .._memo import remember
from .._trusted import slot_setter
from ..settings import StatedValue, stated_value
from ..spec import Slot, TypedTask, Value
from ._environment import RoundRecord

StatementKey = tuple[str, ...]
_new = object.__new__


def statement_key(stated: StatedValue) -> StatementKey:
    """Everything a statement says, as a hashable key (equal keys, equal statements)."""
    return (
        stated.candidate,
        stated.fact,
        stated.context,
        repr(stated.value),
        repr(stated.low),
        repr(stated.high),
        repr(stated.options),
    )


StatementKeys = dict[int, tuple[StatedValue, StatementKey]]
"""statements and their :func:`statement_key`, by ``id`` of the statement (as
:data:`Readings`)"""


@dataclass(frozen=True, slots=True)
class FaceValueEvidence:
    """The face-value evidence after one round (module docstring)."""

    exact: dict[Slot, Value]
    """records received exactly in the required context, at the value stated"""
    imprecise: tuple[tuple[Slot, StatedValue], ...]
    """imprecise required-context statements of the records not in ``exact``, first-seen
    order, each once"""
    signature: tuple[object, ...]
    """equal for equal evidence: the key a judge remembers its verdict by"""
    untrue: frozenset[Slot] | None = field(default=None, compare=False)
    """the slots of ``exact`` whose value is not the record's true value of the same type
    (None: not known, compare them); :class:`EvidenceReader` knows it from its readings. Derived
    from ``exact``: not compared (equal evidence is equal however it was made)"""
    conflicted: frozenset[Slot] | None = field(default=None, compare=False)
    """the slots stated exactly at two values or more (so left out of ``exact``), as
    :class:`EvidenceReader` read them (None: not known). With ``exact``'s, the records stated
    exactly in the required context so far: what :func:`._behaviour.behaviour_of` counts as
    received. Not compared (the evidence is the same without them)"""


_set_exact, _set_imprecise, _set_signature, _set_untrue, _set_conflicted = (
    slot_setter(FaceValueEvidence, name)
    for name in ("exact", "imprecise", "signature", "untrue", "conflicted")
)


def _snapshot(
    exact: dict[Slot, Value],
    imprecise: tuple[tuple[Slot, StatedValue], ...],
    signature: tuple[object, ...],
    untrue: frozenset[Slot],
    conflicted: frozenset[Slot],
) -> FaceValueEvidence:
    """``FaceValueEvidence(exact, imprecise, signature, untrue, conflicted)``, made without the
    frozen class's ``__init__``, which sets each field through ``object.__setattr__`` (about
    9k instructions a snapshot, 690 snapshots in a first pass over 80 built groups): each
    field set through its slot's descriptor instead (a test compares the two)."""
    made = _new(FaceValueEvidence)
    _set_exact(made, exact)
    _set_imprecise(made, imprecise)
    _set_signature(made, signature)
    _set_untrue(made, untrue)
    _set_conflicted(made, conflicted)
    return made


ExactPair = tuple[Slot, str]
"""(slot, repr of the value) of an exact statement: what an evidence's signature holds of it"""
Reading = tuple[StatedValue, Slot, int, Value | None, str, StatementKey, bool, ExactPair | None]
"""How one statement reads (:meth:`EvidenceReader.read`): (the statement, its slot, its kind -
``_OTHER_CONTEXT``, ``_EXACT`` or ``_IMPRECISE`` -, the exact value or None, the exact value's
repr or "", its :func:`statement_key` if it is imprecise (else ``()``: only those are kept
by it), whether the exact value is the record's true value and of its type, its
:data:`ExactPair` if it is exact (else None))"""
Readings = dict[int, Reading]
"""readings by ``id`` of the statement (each reading holds its statement, so an id cannot be
another object's while its reading is kept)"""
_OTHER_CONTEXT, _EXACT, _IMPRECISE = 0, 1, 2
_READINGS_KEPT = 4096
"""readings a :class:`Readings` table keeps (then it starts again): the scripted colleagues
state a few hundred statement objects per group; other colleagues may state new ones"""


def at_true_value(value: Value, truth: Value | None) -> bool:
    """Whether a stated exact value is the record's true value ``truth``, of the same type
    (equal values of two types, ``True`` and ``1``, are not the same record value)."""
    return type(value) is type(truth) and value == truth


def read_statement(task: TypedTask, stated: StatedValue) -> Reading:
    """How ``stated`` reads in ``task`` (see :data:`Reading`)."""
    fact = stated.fact
    slot = (stated.candidate, fact)
    if stated.context != task.facts[fact].context:
        return stated, slot, _OTHER_CONTEXT, None, "", (), False, None
    if stated.value is not None:  # (is_exact, written out: every statement of a group)
        value = stated_value(task, stated)
        truth = task.values.get(slot)
        text = repr(value)
        if type(value) is type(truth) and value == truth:  # (at_true_value, written out)
            # the record's own value object, equal and of its type (so interchangeable, and
            # of the same repr): who checks its domain may tell it by identity
            return stated, slot, _EXACT, truth, text, (), True, (slot, text)
        return stated, slot, _EXACT, value, text, (), False, (slot, text)
    return stated, slot, _IMPRECISE, None, "", statement_key(stated), False, None


class ReadingTable(dict[int, Reading]):
    """A :data:`Readings` table that may also know the task's faithful statements
    (``faithful``: :attr:`._record_book.RecordBook.faithful` of a book of the judge's very
    task), so that a statement equal to one is read without parsing (:func:`new_reading`).
    Over the first pass of 80 built groups, 2,622 of the 2,912 statements read were one.

    Its readings share one :data:`ExactPair` object among equal ones (``pairs``; ``truths``:
    each record's pair at its true value, by slot), so that two samples' equal evidence has
    signatures whose items are the same objects: a judge finds a verdict or a note kept for
    another sample by identity, item by item, not by comparing every slot and text.

    ``slots``: the one object of each record its readings name it by (a judge's table: each
    decision record's, the object the judge's tables and notes name it by). A dict finds a
    key that is the very object at once, and compares an equal tuple item by item: the
    notes' open records and exact evaluation look each decision record up in every
    snapshot's exact values."""

    __slots__ = ("faithful", "pairs", "slots", "truths")

    def __init__(self) -> None:
        super().__init__()
        self.faithful: Mapping[Slot, StatedValue] | None = None
        self.pairs: dict[ExactPair, ExactPair] = {}
        self.truths: dict[Slot, ExactPair] = {}
        self.slots: dict[Slot, Slot] = {}

    def know(self, task: TypedTask, faithful: Mapping[Slot, StatedValue]) -> None:
        """Take ``faithful`` as the task's faithful statements (:attr:`faithful`) and read each
        now, in one loop: as :func:`new_reading` would read it (the record's true value), for
        the scripted colleagues state every one of them in a group's samples (all 1,752 of
        the first pass over 80 built groups), and reading each on its own costs several times
        more (a call, its table look-ups, the slot made again)."""
        self.faithful = faithful
        values, kept = task.values, len(self) + len(faithful)
        if kept >= _READINGS_KEPT or len(self.pairs) + len(faithful) >= _READINGS_KEPT:
            return  # (the tables would start again while they are filled: read on demand)
        # (truth_reading and shared_pair written out: the check above keeps the tables from
        # starting again in the loop; a table's first book finds no record's pair in
        # ``truths``, so it is not looked up. This method 13.5 to 9.3 M over the first pass of
        # 80 built groups, counted alone; the pass 940.1 to 935.9 M with the look-up kept)
        truths, pairs, slots = self.truths, self.pairs, self.slots
        fresh = not truths
        for slot, stated in faithful.items():
            truth = values[slot]
            pair = None if fresh else truths.get(slot)
            if pair is None:
                pair = (slots.get(slot, slot), repr(truth))
                pair = truths[slot] = pairs.setdefault(pair, pair)
            # (the record named by the pair's object: the table's own, see ``slots``)
            self[id(stated)] = (stated, pair[0], _EXACT, truth, pair[1], (), True, pair)

    def truth_reading(self, stated: StatedValue, slot: Slot, truth: Value) -> Reading:
        """The reading of ``stated`` as the record ``slot``'s true value ``truth``, with the
        table's pair of it (its ``repr`` made once a table: a record's own)."""
        pair = self.truths.get(slot)
        if pair is None:
            pair = self.truths[slot] = self.shared_pair((self.slots.get(slot, slot), repr(truth)))
        return stated, pair[0], _EXACT, truth, pair[1], (), True, pair

    def shared_pair(self, pair: ExactPair) -> ExactPair:
        """The table's object equal to ``pair`` (``pair`` itself, kept, if it has none)."""
        found = self.pairs.get(pair)
        return remember(self.pairs, pair, pair, _READINGS_KEPT) if found is None else found


def new_reading(
    task: TypedTask,
    stated: StatedValue,
    faithful: Mapping[Slot, StatedValue] | None,
    shared: ReadingTable | None = None,
) -> Reading:
    """:func:`read_statement` of a statement not yet read. ``faithful``: the task's faithful
    statements by slot (:class:`ReadingTable`), made from each record's own typed value (its
    ``to_json_scalar``, which reads back as that value) in the required context: one of them,
    or a statement with the same fields and a value of the same type (a resolved reply states
    the truth so), reads as the record's true value, and is not parsed. (The value's type is
    compared: ``1 == True``, and the two parse differently.) ``shared``: the table the reading
    goes to, whose :data:`ExactPair` objects it takes (:class:`ReadingTable`)."""
    if faithful is not None:
        # (the statement's fields read from its __dict__, once: see _trusted's docstring)
        fields = stated.__dict__
        slot = (fields["candidate"], fields["fact"])
        known = faithful.get(slot)
        if known is not None and (
            known is stated
            or (
                (known_fields := known.__dict__) == fields
                and type(known_fields["value"]) is type(fields["value"])
            )
        ):
            truth = task.values[slot]
            if shared is None:
                text = repr(truth)
                return stated, slot, _EXACT, truth, text, (), True, (slot, text)
            return shared.truth_reading(stated, slot, truth)
    reading = read_statement(task, stated)
    if shared is None:
        return reading
    # (the record named by the table's object of it, see ReadingTable)
    slot = shared.slots.get(reading[1], reading[1])
    if reading[7] is None:
        return (stated, slot, *reading[2:])
    return (stated, slot, *reading[2:7], shared.shared_pair((slot, reading[4])))


def reading_of(task: TypedTask, stated: StatedValue, readings: Readings) -> Reading:
    """:func:`read_statement`, remembered in ``readings`` (a group's judge keeps the table)."""
    reading = readings.get(id(stated))
    if reading is None or reading[0] is not stated:
        if isinstance(readings, ReadingTable):
            reading = new_reading(task, stated, readings.faithful, readings)
        else:
            reading = new_reading(task, stated, None)
        remember(readings, id(stated), reading, _READINGS_KEPT)
    return reading


def is_exact_reading(reading: Reading) -> bool:
    """Whether a reading is of an exact value in the required context."""
    return reading[2] == _EXACT


class EvidenceReader:
    """Reads a trace round by round and gives the face-value evidence so far: the minimum-
    rounds search asks after every round of a growing trace, and reading only the new round
    keeps that linear in the trace's length.

    ``readings`` is a table of statement readings to share (a group's judge keeps one): the
    scripted colleagues state the same statement objects in every round and sample of a
    group, so each is parsed once. A round that changes nothing gives the previous snapshot
    again (the search and the notes ask after every round)."""

    def __init__(self, task: TypedTask, readings: Readings | None = None) -> None:
        self.task = task
        self._readings: Readings = {} if readings is None else readings
        self._shared = readings if isinstance(readings, ReadingTable) else None
        self._faithful = None if self._shared is None else self._shared.faithful
        # the slots stated at one exact value so far, in the order first stated: their value,
        # and its ExactPair (a slot stated at a second value leaves both for good, for
        # _conflicted)
        self._exact: dict[Slot, Value] = {}
        self._pairs: dict[Slot, ExactPair] = {}
        # the last snapshot's pairs (None: a slot has left _pairs since): the first len() of
        # _pairs, which only grows at its end while no slot leaves (see evidence)
        self._signed: frozenset[ExactPair] | None = _NO_PAIRS
        self._conflicted: set[Slot] = set()  # the slots stated at two exact values or more
        self._untrue: set[Slot] = set()  # the slots of _exact not at their true value
        self._imprecise: dict[tuple[Slot, StatementKey], StatedValue] = {}
        self._last: FaceValueEvidence | None = None  # the snapshot, while nothing changed
        self.rounds = 0
        """rounds read so far"""

    def read(self, record: RoundRecord) -> None:
        """Take in the statements of one more round."""
        self.read_rounds((record,))

    def read_rounds(
        self, records: Sequence[RoundRecord], snapshots: list[FaceValueEvidence] | None = None
    ) -> None:
        """Take in the statements of ``records``, one round after the other, appending the
        evidence after each to ``snapshots`` when given (:meth:`read`, then :meth:`evidence`,
        of each round): the tables are looked up once for all the rounds (a trace's rounds
        are read in one call: 1,075 rounds of 385 traces in the first pass over 80 built
        groups)."""
        readings, task, pairs, faithful = self._readings, self.task, self._pairs, self._faithful
        exact, conflicted, untrue, imprecise = (
            self._exact,
            self._conflicted,
            self._untrue,
            self._imprecise,
        )
        for record in records:
            changed = False
            for reply in record.replies:
                for stated in reply.stated:
                    # (reading_of, written out: a sample reads a few dozen statements; a reading
                    # found by the id is the statement's own, since the reading it holds keeps
                    # the statement alive: see Readings)
                    reading = readings.get(id(stated))
                    if reading is None:
                        reading = new_reading(task, stated, faithful, self._shared)
                        remember(readings, id(stated), reading, _READINGS_KEPT)
                    # (the reading's fields taken in one step: a statement reads five of them)
                    _, slot, kind, value, text, said, true, pair = reading
                    if kind == _EXACT:
                        # (the slot looked up and, when new, kept in one hash of it: a slot is a
                        # tuple, hashed again at every look-up, and most statements state a new one)
                        held = len(pairs)
                        known = pairs.setdefault(slot, pair)  # type: ignore[arg-type]
                        if len(pairs) != held:
                            if conflicted and slot in conflicted:  # (rarely any)
                                del pairs[slot]
                            else:
                                exact[slot] = value  # type: ignore[assignment]
                                if not true:
                                    untrue.add(slot)
                                changed = True
                        elif known[1] != text:  # (the same value stated again: no change)
                            conflicted.add(slot)
                            del pairs[slot]
                            self._signed = None
                            del exact[slot]
                            untrue.discard(slot)
                            changed = True
                    elif kind == _IMPRECISE:
                        key = (slot, said)
                        if key not in imprecise:
                            imprecise[key] = stated
                            changed = True
            if changed:
                self._last = None
            self.rounds += 1
            if snapshots is not None:
                snapshots.append(self.evidence())

    def read_up_to(self, trace: Sequence[RoundRecord]) -> FaceValueEvidence:
        """The evidence of ``trace``, of which the rounds read so far are the first."""
        self.read_rounds(trace[self.rounds :])
        return self.evidence()

    def evidence(self) -> FaceValueEvidence:
        """The evidence of the rounds read so far."""
        if self._last is not None:
            return self._last
        exact = dict(self._exact)
        imprecise = self._imprecise
        kept: tuple[tuple[Slot, StatedValue], ...] = ()
        keys: frozenset[tuple[Slot, StatementKey]] = _NOTHING
        if imprecise:  # (most evidence has no imprecise statement)
            # (a loop, not two generators: a snapshot holds one or two, and each generator
            # made and resumed cost more than the statements read)
            statements: list[tuple[Slot, StatedValue]] = []
            found: list[tuple[Slot, StatementKey]] = []
            for key, stated in imprecise.items():
                if key[0] not in exact:
                    statements.append((key[0], stated))
                    found.append(key)
            kept, keys = tuple(statements), frozenset(found)
        # sets, not sorted tuples: equal for equal evidence all the same, and cheaper
        # (the pairs are the items of slot -> repr, shared by the table: see ReadingTable).
        # The last snapshot's set and the pairs added since: a frozenset copies another's
        # items with their hashes, where each pair (a tuple: its hash is not kept) was hashed
        # again in every snapshot that held it (14,257 pairs in 690 snapshots, 8,409 of them
        # new, over the first pass of 80 built groups). With the loop above and the untrue
        # slots' set made only when there are any: this method 16.4 to 13.7 M, counted alone
        pairs, signed = self._pairs, self._signed
        if not signed:
            signed = frozenset(pairs.values())
        elif len(signed) != len(pairs):
            signed = signed.union(islice(pairs.values(), len(signed), None))
        self._signed = signed
        signature = (signed, keys)
        conflicted = self._conflicted
        self._last = _snapshot(
            exact,
            kept,
            signature,
            frozenset(untrue) if (untrue := self._untrue) else _NO_SLOTS,  # (rarely any)
            frozenset(conflicted) if conflicted else _NO_SLOTS,  # (rarely any)
        )
        return self._last


_NO_PAIRS: frozenset[ExactPair] = frozenset()
_NOTHING: frozenset[tuple[Slot, StatementKey]] = frozenset()
_NO_SLOTS: frozenset[Slot] = frozenset()


def evidence_by_round(
    task: TypedTask, trace: Sequence[RoundRecord], readings: Readings | None = None
) -> list[FaceValueEvidence]:
    """The face-value evidence after each round of ``trace`` (one snapshot per round; a
    round that changed nothing shares the previous round's)."""
    snapshots: list[FaceValueEvidence] = []
    EvidenceReader(task, readings).read_rounds(trace, snapshots)
    return snapshots


def final_evidence(
    task: TypedTask, trace: Sequence[RoundRecord], readings: Readings | None = None
) -> FaceValueEvidence:
    """The face-value evidence of the whole trace (none for an empty one)."""
    return EvidenceReader(task, readings).read_up_to(trace)
