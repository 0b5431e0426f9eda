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

from .._memo import remember
from ..settings import Imprecision, StatedValue, stated_imprecision, stated_value
from ..spec import Outcome, Slot, TypedTask, Value
from ._environment import RoundRecord

StatementKey = tuple[str, ...]


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


Reading = tuple[StatedValue, Slot, int, Value | None, str, StatementKey, bool]
"""How one statement reads (:meth:`EvidenceReader.read`): (the statement, its slot, its kind -
``_OTHER_CONTEXT``, ``_EXACT`` or ``_IMPRECISE`` -, the exact value or None, the exact value's
repr or "", its :func:`statement_key` if it is imprecise (else ``()``: only those are kept
by it), whether the exact value is the record's true value and of its type)"""
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
        return stated, slot, _OTHER_CONTEXT, None, "", (), False
    if stated.value is not None:  # (is_exact, written out: every statement of a group)
        value = stated_value(task, stated)
        truth = task.values.get(slot)
        if type(value) is type(truth) and value == truth:  # (at_true_value, written out)
            # the record's own value object, equal and of its type (so interchangeable, and
            # of the same repr): who checks its domain may tell it by identity
            return stated, slot, _EXACT, truth, repr(value), (), True
        return stated, slot, _EXACT, value, repr(value), (), False
    return stated, slot, _IMPRECISE, None, "", statement_key(stated), False


class ReadingTable(dict[int, Reading]):
    """A :data:`Readings` table that may also know the task's faithful statements
    (``faithful``: :attr:`._record_book.RecordBook.faithful` of a book of the judge's very
    task), so that a statement equal to one is read without parsing (:func:`new_reading`).
    Over the first pass of 80 built groups, 2,622 of the 2,912 statements read were one."""

    __slots__ = ("faithful",)

    def __init__(self) -> None:
        super().__init__()
        self.faithful: Mapping[Slot, StatedValue] | None = None


def new_reading(
    task: TypedTask, stated: StatedValue, faithful: Mapping[Slot, StatedValue] | None
) -> Reading:
    """:func:`read_statement` of a statement not yet read. ``faithful``: the task's faithful
    statements by slot (:class:`ReadingTable`), made from each record's own typed value (its
    ``to_json_scalar``, which reads back as that value) in the required context: one of them,
    or a statement with the same fields and a value of the same type (a resolved reply states
    the truth so), reads as the record's true value, and is not parsed. (The value's type is
    compared: ``1 == True``, and the two parse differently.)"""
    if faithful is not None:
        slot = (stated.candidate, stated.fact)
        known = faithful.get(slot)
        if known is not None and (
            known is stated
            or (known.__dict__ == stated.__dict__ and type(known.value) is type(stated.value))
        ):
            truth = task.values[slot]
            return stated, slot, _EXACT, truth, repr(truth), (), True
    return read_statement(task, stated)


def reading_of(task: TypedTask, stated: StatedValue, readings: Readings) -> Reading:
    """:func:`read_statement`, remembered in ``readings`` (a group's judge keeps the table)."""
    reading = readings.get(id(stated))
    if reading is None or reading[0] is not stated:
        faithful = readings.faithful if isinstance(readings, ReadingTable) else None
        reading = new_reading(task, stated, faithful)
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
        self._faithful = readings.faithful if isinstance(readings, ReadingTable) else None
        # the slots stated at one exact value so far, in the order first stated: their value,
        # and its repr (a slot stated at a second value leaves both for good, for _conflicted)
        self._exact: dict[Slot, Value] = {}
        self._texts: dict[Slot, str] = {}
        self._conflicted: set[Slot] = set()  # the slots stated at two exact values or more
        self._untrue: set[Slot] = set()  # the slots of _exact not at their true value
        self._imprecise: dict[tuple[Slot, StatementKey], StatedValue] = {}
        self._last: FaceValueEvidence | None = None  # the snapshot, while nothing changed
        self.rounds = 0
        """rounds read so far"""

    def read(self, record: RoundRecord) -> None:
        """Take in the statements of one more round."""
        readings, task, texts, faithful = self._readings, self.task, self._texts, self._faithful
        exact, conflicted, untrue, imprecise = (
            self._exact,
            self._conflicted,
            self._untrue,
            self._imprecise,
        )
        changed = False
        for reply in record.replies:
            for stated in reply.stated:
                # (reading_of, written out: a sample reads a few dozen statements)
                reading = readings.get(id(stated))
                if reading is None or reading[0] is not stated:
                    reading = new_reading(task, stated, faithful)
                    remember(readings, id(stated), reading, _READINGS_KEPT)
                kind = reading[2]
                if kind == _EXACT:
                    slot, text = reading[1], reading[4]
                    known = texts.get(slot)
                    if known is None:
                        if slot not in conflicted:
                            texts[slot] = text
                            exact[slot] = reading[3]  # type: ignore[assignment]
                            if not reading[6]:
                                untrue.add(slot)
                            changed = True
                    elif known != text:  # (the same value stated again: no change)
                        conflicted.add(slot)
                        del texts[slot]
                        del exact[slot]
                        untrue.discard(slot)
                        changed = True
                elif kind == _IMPRECISE:
                    key = (reading[1], reading[5])
                    if key not in imprecise:
                        imprecise[key] = stated
                        changed = True
        if changed:
            self._last = None
        self.rounds += 1

    def read_up_to(self, trace: Sequence[RoundRecord]) -> FaceValueEvidence:
        """The evidence of ``trace``, of which the rounds read so far are the first."""
        for record in trace[self.rounds :]:
            self.read(record)
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
            kept = tuple((key[0], s) for key, s in imprecise.items() if key[0] not in exact)
            keys = frozenset(key for key in imprecise if key[0] not in exact)
        # sets, not sorted tuples: equal for equal evidence all the same, and cheaper
        signature = (frozenset(self._texts.items()), keys)
        conflicted = self._conflicted
        self._last = FaceValueEvidence(
            exact,
            kept,
            signature,
            frozenset(self._untrue),
            frozenset(conflicted) if conflicted else _NO_SLOTS,  # (rarely any)
        )
        return self._last


_NOTHING: frozenset[tuple[Slot, StatementKey]] = frozenset()
_NO_SLOTS: frozenset[Slot] = frozenset()


def evidence_by_round(
    task: TypedTask, trace: Sequence[RoundRecord], readings: Readings | None = None
) -> list[FaceValueEvidence]:
    """The face-value evidence after each round of ``trace`` (one snapshot per round; a
    round that changed nothing shares the previous round's)."""
    reader = EvidenceReader(task, readings)
    snapshots: list[FaceValueEvidence] = []
    for record in trace:
        reader.read(record)
        snapshots.append(reader.evidence())
    return snapshots


def final_evidence(
    task: TypedTask, trace: Sequence[RoundRecord], readings: Readings | None = None
) -> FaceValueEvidence:
    """The face-value evidence of the whole trace (none for an empty one)."""
    return EvidenceReader(task, readings).read_up_to(trace)


def values_to_try(task: TypedTask, slot: Slot) -> list[Value]:
    """Values a completion may give a record: every value of a yes/no or a set of members;
    else every candidate's value of the fact and the ends of its domain."""
    fact = task.facts[slot[1]]
    if fact.type == "bool":
        return [False, True]
    if fact.type == "enum":
        return list(fact.members)
    first, last = fact.code_range()
    found = [task.values[(c, slot[1])] for c in task.candidates if (c, slot[1]) in task.values]
    return [*found, fact.value_of(first), fact.value_of(last)]


StoredChanges = Mapping[str, Mapping[str, int | None]]
"""candidate -> decision fact -> the index of the record's first change in the fact's values
to try (:meth:`TaskTables.tries`), None when no value changes the output: a group's
``proofs.decision_changes``"""


class TaskTables:
    """What :func:`differing_completion` reads of a task alone, made once for all the evidence
    a group's judge is asked about (each sample of a group asked it again): the facts the
    conditions read, the decision records in the order tried, and each decision fact's values
    to try that lie in its domain (:func:`values_to_try`, each once, in order), made on first
    use, and each decision record's first change found with the others true (:meth:`changes`;
    a built group stores them: :meth:`store`). The task's records must not change after."""

    __slots__ = (
        "_changes",
        "_imprecisions",
        "_stored",
        "_tries",
        "conditions",
        "decision",
        "decision_slots",
        "task",
    )

    def __init__(self, task: TypedTask) -> None:
        self.task = task
        self.conditions = frozenset(condition.fact for condition in task.conditions)
        self.decision = frozenset(task.decision_facts())
        self.decision_slots = tuple(s for s in task.all_slots() if s[1] in self.decision)
        self._tries: dict[str, list[Value]] = {}
        self._changes: tuple[Outcome, Outcome, dict[Slot, object]] | None = None
        self._imprecisions: dict[int, tuple[StatedValue, Imprecision]] = {}
        self._stored: StoredChanges | None = None

    def imprecision(self, stated: StatedValue) -> Imprecision:
        """``stated_imprecision(task, stated)``, remembered by the statement (immutable): the
        evidence of every later round holds the imprecise statements of the earlier ones, and
        each is asked about again. Raises as that function does (and is then asked again)."""
        kept = self._imprecisions.get(id(stated))
        if kept is None or kept[0] is not stated:
            kept = (stated, stated_imprecision(self.task, stated))
            remember(self._imprecisions, id(stated), kept, _READINGS_KEPT)
        return kept[1]

    def changes(self, gold: Outcome, truth: Outcome) -> dict[Slot, object]:
        """The first change of each decision record that gives an output other than ``gold``
        when every other record is at its true value (``truth``: their output), as
        :func:`differing_completion` finds it, by record (``_NO_CHANGE``: none), for that
        function to fill and read (the table of the last ``gold`` and ``truth`` asked)."""
        kept = self._changes
        if kept is None or kept[0] is not gold or kept[1] is not truth:
            kept = self._changes = (gold, truth, {})
            self._stored = None  # (stored for another gold and truth)
        return kept[2]

    def store(self, gold: Outcome, truth: Outcome, stored: StoredChanges) -> None:
        """Read a group's stored first changes (:func:`._decision_changes.decision_changes`
        of its gold and true records: ``gold`` and ``truth``) instead of searching them, each
        when its record is first asked about (:meth:`stored_change`; most evidence asks few)."""
        self._changes = (gold, truth, {})
        self._stored = stored

    def stored_change(self, slot: Slot) -> object:
        """The stored first change of the decision record ``slot`` (``_NO_CHANGE``: none);
        ``_UNKNOWN`` (searched as before) when none is stored for the table's gold and truth
        or its index lies outside the fact's values to try."""
        stored = self._stored
        if stored is None:
            return _UNKNOWN
        facts = stored.get(slot[0])
        index = -1 if facts is None else facts.get(slot[1], -1)
        if index is None:
            return _NO_CHANGE
        tries = self.tries(slot)
        return tries[index] if 0 <= index < len(tries) else _UNKNOWN

    def tries(self, slot: Slot) -> list[Value]:
        """``values_to_try(task, slot)`` in the fact's domain, each once (do not change it)."""
        found = self._tries.get(slot[1])
        if found is None:
            contains = self.task.facts[slot[1]].contains
            tried = dict.fromkeys(values_to_try(self.task, slot))
            found = self._tries[slot[1]] = [value for value in tried if contains(value)]
        return found


def differing_completion(
    task: TypedTask,
    gold: Outcome,
    evidence: FaceValueEvidence,
    shortcuts: bool = True,
    truth: Outcome | None = None,
    tables: TaskTables | None = None,
) -> dict[Slot, Value] | None:
    """Records that agree with ``evidence`` and give an output other than ``gold``, when one
    is found by evaluation; None when none is (which proves nothing: ask the solver).

    The completions tried are the true records with the evidence's exact values put in, then
    each with one decision record the evidence leaves open changed: to another candidate's
    value of the fact, a bound of its domain, or a bound or option a statement names. A
    completion returned has every value in its fact's domain and every imprecise statement
    true of it, and its output is computed by the task's reference semantics - the ones the
    encoding is cross-checked against - so it is a model of the solver's "does the evidence
    leave another output open?" query: that verdict is ``sat`` without a solver. A range
    stated over an unordered domain is left to the solver.

    A completion that changes a record the output cannot depend on (given the others) is
    skipped unevaluated; ``shortcuts=False`` evaluates every one (the plain definition, which
    the tests compare with: the same completion is returned). ``truth``: ``task.outcome()``
    (the true records' output), when the caller has it; the first completion is the true
    records themselves whenever the evidence is true of them, and is then not evaluated again.
    ``tables``: the task's :class:`TaskTables`, when the caller keeps them.
    """
    values = dict(task.values)
    records_changed = False
    untrue = evidence.untrue
    if untrue is None:
        untrue = frozenset(
            slot
            for slot, value in evidence.exact.items()
            if not at_true_value(value, values.get(slot))
        )
    # the true value is in its domain (check_structure): so is an equal one of its type
    for slot in untrue:
        if not task.facts[slot[1]].contains(evidence.exact[slot]):
            return None  # off the domain: the solver decides what that evidence means
        records_changed = True
    values.update(evidence.exact)
    if tables is None:
        tables = TaskTables(task)
    ranges: dict[Slot, list[tuple[Value, Value]]] = {}
    options: dict[Slot, list[tuple[Value, ...]]] = {}
    for slot, stated in evidence.imprecise:
        try:
            statement = tables.imprecision(stated)
        except Exception:  # unreadable: the solver path says what it makes of it
            return None
        if statement.options is not None:
            options.setdefault(slot, []).append(statement.options)
        elif task.facts[slot[1]].is_ordered:
            assert statement.low is not None and statement.high is not None
            ranges.setdefault(slot, []).append((statement.low, statement.high))
        else:
            return None

    def allowed(slot: Slot, value: Value) -> bool:
        if not task.facts[slot[1]].contains(value):
            return False
        try:
            return all(value in chosen for chosen in options.get(slot, ())) and all(
                low <= value <= high  # type: ignore[operator]
                for low, high in ranges.get(slot, ())
            )
        except TypeError:  # a bound of another type (a date for a number): not this value
            return False

    def alternatives(slot: Slot) -> list[Value]:
        if slot not in options and slot not in ranges:
            return tables.tries(slot)  # (allowed: in the domain)
        found = values_to_try(task, slot)
        for chosen in options.get(slot, ()):
            found += chosen
        for bounds in ranges.get(slot, ()):
            found += bounds
        return [value for value in dict.fromkeys(found) if allowed(slot, value)]

    for slot in {*ranges, *options}:  # the statements must hold of the completion too
        if not allowed(slot, values[slot]):
            fits = alternatives(slot)
            if not fits:
                return None
            values[slot] = fits[0]
            records_changed = True

    def output(completion: dict[Slot, Value]) -> Outcome | None:
        try:
            return task.outcome(completion)
        except Exception:  # the rule cannot evaluate it: no witness
            return None

    base = truth if truth is not None and shortcuts and not records_changed else output(values)
    if base is not None and not base.same_output(gold):
        return values
    # Each completion below changes one record of ``values``, whose output is gold's: the
    # output can change only if that candidate's eligibility does, or if the answer's
    # number reads the record. Those that can are evaluated by the reference semantics, the
    # other candidates' eligibility taken from base's (a condition reads one record of its
    # candidate: theirs are base's records).
    conditions = tables.conditions
    operands = task.rule.operands
    chosen = base.candidate if base is not None and base.kind == "eligible" else None
    eligible = frozenset(base.eligible) if base is not None else frozenset()

    def same_output(slot: Slot) -> bool:
        """Whether no value of ``slot`` can change base's output (it reads no condition)."""
        return shortcuts and base is not None and not (slot[0] == chosen and slot[1] in operands)

    def differs(slot: Slot, changed: dict[Slot, Value]) -> bool:
        """Whether ``changed`` (``values`` with ``slot`` changed) has an output not gold's."""
        if base is None or not shortcuts:
            found = output(changed)
            return found is not None and not found.same_output(gold)
        candidate, fact = slot
        was = candidate in eligible
        try:
            now = task.eligible(candidate, changed) if fact in conditions else was
            if now == was and not (candidate == chosen and fact in operands):
                return False  # base's output
            found = task.outcome_of(
                tuple(c for c in task.candidates if (now if c == candidate else c in eligible)),
                changed,
            )
        except Exception:  # the rule cannot evaluate it: no witness
            return False
        return not found.same_output(gold)

    def first_change(slot: Slot) -> object:
        """The first value of ``slot`` that gives another output (``_NO_CHANGE``: none)."""
        if slot[1] not in conditions and same_output(slot):
            return _NO_CHANGE  # no value of this record changes the output
        for value in alternatives(slot):
            if value != values[slot] and differs(slot, {**values, slot: value}):
                return value
        return _NO_CHANGE

    # With every record at its true value (base is the truth), the first change of a record
    # no statement constrains depends on that record alone: the group's tables keep it, for
    # every evidence asked about after.
    known = tables.changes(gold, truth) if base is truth and truth is not None else None
    exact = evidence.exact
    for slot in tables.decision_slots:
        if slot in exact:
            continue
        if known is None or slot in options or slot in ranges:
            value = first_change(slot)
        else:
            value = known.get(slot, _UNKNOWN)
            if value is _UNKNOWN:
                value = tables.stored_change(slot)  # (a built group stores them)
                if value is _UNKNOWN:
                    value = first_change(slot)
                known[slot] = value
        if value is not _NO_CHANGE:
            return {**values, slot: value}  # type: ignore[dict-item]
    return None


_NO_CHANGE = object()
"""no change of a record gives another output (:meth:`TaskTables.changes`)"""
_UNKNOWN = object()
