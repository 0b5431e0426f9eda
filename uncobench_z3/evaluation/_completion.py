"""Completions found by evaluation: records that agree with face-value evidence and give an
output other than gold (:func:`differing_completion`), a model of the solver's "does the
evidence leave another output open?" query found without a solver, and what it reads of a
task alone, made once a group (:class:`TaskTables`; a built group stores each decision record's
first change: :mod:`._decision_changes`). The evidence itself is :mod:`._evidence`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .._memo import remember
from ..settings import Imprecision, StatedValue, stated_imprecision
from ..spec import Outcome, Slot, TypedTask, Value
from ._evidence import _READINGS_KEPT, FaceValueEvidence, StatementKey, at_true_value, statement_key


def values_to_try(task: TypedTask, slot: Slot) -> list[Value]:
    """Values a completion may give a record: every value of a yes/no or a set of members;
    else every candidate's value of the fact and the ends of its domain.

    Built groups store indexes into this order (``proofs.decision_changes``, read as an
    evaluation trusts a group's other stored proofs; ``verify`` recomputes them): a change
    of the order or of the values needs a new field, or old benchmarks read other values."""
    return list(_values_in_order(task, slot))


def _values_in_order(task: TypedTask, slot: Slot) -> Iterator[Value]:
    """:func:`values_to_try`, one at a time: a stored first change is most often one of the
    first values, and the ends of a numeric domain are new fractions (made only if reached)."""
    fact = task.facts[slot[1]]
    if fact.type == "bool":
        yield from (False, True)
        return
    if fact.type == "enum":
        yield from fact.members
        return
    yield from [task.values[(c, slot[1])] for c in task.candidates if (c, slot[1]) in task.values]
    first, last = fact.code_range()
    yield fact.value_of(first)
    yield fact.value_of(last)


ConstraintKey = tuple[Slot, tuple[StatementKey, ...]]
"""a record and the :func:`statement_key` of each statement constraining it, in order"""

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
        "_constrained",
        "_gives",
        "_imprecisions",
        "_keys",
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
        # (only the decision slots made, not every slot to be filtered)
        self.decision_slots = tuple(task.all_slots(self.decision))
        self._tries: dict[str, list[Value]] = {}
        self._changes: tuple[Outcome, Outcome, dict[Slot, object]] | None = None
        # the first change of a record constrained by imprecise statements, by the record and
        # the statements' keys, with the others true (read by differing_completion, which
        # fills it; a group's samples state the same constraints, in its mixed setting too)
        self._constrained: dict[ConstraintKey, object] = {}
        self._gives: tuple[Outcome, Outcome, bool] | None = None
        self._imprecisions: dict[int, tuple[StatedValue, Imprecision]] = {}
        self._keys: dict[int, tuple[StatedValue, StatementKey]] = {}
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

    def constraint_key(
        self, slot: Slot, imprecise: tuple[tuple[Slot, StatedValue], ...]
    ) -> ConstraintKey:
        """The statements of ``imprecise`` about ``slot``, as the key of its constrained first
        change: their :func:`statement_key`, in order, each remembered by the statement (as
        :meth:`imprecision`: every later round's evidence holds them again)."""
        keys = []
        for at, stated in imprecise:
            if at == slot:
                kept = self._keys.get(id(stated))
                if kept is None or kept[0] is not stated:
                    kept = (stated, statement_key(stated))
                    remember(self._keys, id(stated), kept, _READINGS_KEPT)
                keys.append(kept[1])
        return (slot, tuple(keys))

    def changes(self, gold: Outcome, truth: Outcome) -> dict[Slot, object]:
        """The first change of each decision record that gives an output other than ``gold``
        when every other record is at its true value (``truth``: their output), as
        :func:`differing_completion` finds it, by record (``_NO_CHANGE``: none), for that
        function to fill and read (the table of the last ``gold`` and ``truth`` asked)."""
        kept = self._changes
        if kept is None or kept[0] is not gold or kept[1] is not truth:
            kept = self._changes = (gold, truth, {})
            self._stored = None  # (stored for another gold and truth)
            self._constrained = {}
        return kept[2]

    def store(self, gold: Outcome, truth: Outcome, stored: StoredChanges) -> None:
        """Read a group's stored first changes (:func:`._decision_changes.decision_changes`
        of its gold and true records: ``gold`` and ``truth``) instead of searching them, each
        when its record is first asked about (:meth:`stored_change`; most evidence asks few)."""
        self._changes = (gold, truth, {})
        self._stored = stored
        self._constrained = {}

    def gives(self, gold: Outcome, truth: Outcome) -> bool:
        """``truth.same_output(gold)`` (the true records' output, ``truth``, gives ``gold``),
        computed once for the table's gold and truth (:meth:`changes`)."""
        kept = self._gives
        if kept is None or kept[0] is not gold or kept[1] is not truth:
            kept = self._gives = (gold, truth, truth.same_output(gold))
        return kept[2]

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
        if index < 0:
            return _UNKNOWN
        tries = self._tries.get(slot[1])
        if tries is not None:
            return tries[index] if index < len(tries) else _UNKNOWN
        return self._try_at(slot, index)

    def _try_at(self, slot: Slot, index: int) -> object:
        """:meth:`tries`' value at ``index`` (``_UNKNOWN``: none), found without making the
        values after it: :meth:`_tries_in_order` written out, without its generators (a
        group's judge asks this about 3 records, each of another fact: nothing to keep)."""
        task = self.task
        fact = task.facts[slot[1]]
        contains = fact.contains
        kind = fact.type
        seen: list[Value] = []  # (a list: see _tries_in_order)
        if kind == "bool" or kind == "enum":
            for value in (False, True) if kind == "bool" else fact.members:
                if value not in seen:
                    seen.append(value)
                    if contains(value):
                        if not index:
                            return value
                        index -= 1
            return _UNKNOWN
        values, key = task.values, slot[1]
        for candidate in task.candidates:
            found = values.get((candidate, key), _UNKNOWN)  # (one look-up of a new tuple)
            if found is not _UNKNOWN and found not in seen:
                seen.append(found)  # type: ignore[arg-type]
                if contains(found):  # type: ignore[arg-type]
                    if not index:
                        return found
                    index -= 1
        first, last = fact.code_range()
        for code in (first, last):
            end = fact.value_of(code)
            if end not in seen:
                seen.append(end)
                if contains(end):
                    if not index:
                        return end
                    index -= 1
        return _UNKNOWN

    def kept_change(self, known: dict[Slot, object], slot: Slot) -> object:
        """The first change of ``slot`` in ``known`` (:meth:`changes`), else its stored one
        (:meth:`stored_change`), then kept in ``known``; ``_UNKNOWN``: neither (searched)."""
        value = known.get(slot, _UNKNOWN)
        if value is _UNKNOWN:
            value = self.stored_change(slot)  # (a built group stores them)
            if value is not _UNKNOWN:
                known[slot] = value
        return value

    def tries(self, slot: Slot) -> list[Value]:
        """``values_to_try(task, slot)`` in the fact's domain, each once (do not change it)."""
        found = self._tries.get(slot[1])
        if found is None:
            found = self._tries[slot[1]] = list(self._tries_in_order(slot))
        return found

    def _tries_in_order(self, slot: Slot) -> Iterator[Value]:
        """:meth:`tries`, one at a time: each value of ``values_to_try`` once (as
        ``dict.fromkeys`` keeps it: the first of equal values), if in the fact's domain."""
        contains = self.task.facts[slot[1]].contains
        # (a list, not a set: a handful of values, and a Fraction's hash costs a modular
        # inverse; equal values hash alike, so both keep the same first ones)
        seen: list[Value] = []
        for value in _values_in_order(self.task, slot):
            if value not in seen:
                seen.append(value)
                if contains(value):
                    yield value


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
    untrue = _untrue(task, evidence)
    if not untrue and truth is not None and shortcuts:
        change = _kept_change(task, gold, evidence, truth, tables)
        if change is not _UNKNOWN:
            return None if change is None else {**task.values, **change}  # type: ignore[dict-item]
    return _searched_completion(task, gold, evidence, untrue, shortcuts, truth, tables)


def _untrue(task: TypedTask, evidence: FaceValueEvidence) -> frozenset[Slot]:
    """The evidence's exact records not at their true values (as its reader noted them)."""
    untrue = evidence.untrue
    if untrue is None:
        untrue = frozenset(
            slot
            for slot, value in evidence.exact.items()
            if not at_true_value(value, task.values.get(slot))
        )
    return untrue


def _searched_completion(
    task: TypedTask,
    gold: Outcome,
    evidence: FaceValueEvidence,
    untrue: frozenset[Slot],
    shortcuts: bool,
    truth: Outcome | None,
    tables: TaskTables | None,
) -> dict[Slot, Value] | None:
    """:func:`differing_completion` where the tables' kept first changes do not answer
    (``untrue``: the evidence's exact records not at their true values). A function of its
    own because its closures' 17 cells are made on entry: 225 of the 305 calls of the first
    pass over 80 built groups are answered before this, and made them for nothing
    (``differing_completion`` counted alone over them, 21.16 to 20.32 million instructions)."""
    values = dict(task.values)
    records_changed = False
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
        # (loops, not all() over generators: each generator made and resumed cost more than
        # the one or two statements a record has)
        try:
            for chosen in options.get(slot, ()):
                if value not in chosen:
                    return False
            for low, high in ranges.get(slot, ()):
                if not low <= value <= high:  # type: ignore[operator]
                    return False
        except TypeError:  # a bound of another type (a date for a number): not this value
            return False
        return True

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
    if base is truth and truth is not None:
        if not tables.gives(gold, truth):
            return values
    elif base is not None and not base.same_output(gold):
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
        if known is None:
            value = first_change(slot)
        elif slot in options or slot in ranges:
            key = tables.constraint_key(slot, evidence.imprecise)
            constrained = tables._constrained
            value = constrained.get(key, _UNKNOWN)
            if value is _UNKNOWN:
                # The record's first change with no statement (kept or stored), when the
                # statements allow it, is its first change under them: each value tried before
                # it here was tried before it there (the statements' own values come last) and
                # gave gold.
                free = tables.kept_change(known, slot)
                if free is _UNKNOWN or free is _NO_CHANGE or not allowed(slot, free):  # type: ignore[arg-type]
                    free = first_change(slot)
                value = constrained[key] = free
        else:
            value = tables.kept_change(known, slot)
            if value is _UNKNOWN:
                value = known[slot] = first_change(slot)
        if value is not _NO_CHANGE:
            return {**values, slot: value}  # type: ignore[dict-item]
    return None


def _kept_change(
    task: TypedTask,
    gold: Outcome,
    evidence: FaceValueEvidence,
    truth: Outcome,
    tables: TaskTables | None,
) -> object:
    """:func:`differing_completion` of evidence that pins records at their true values only,
    and whose imprecise statements constrain open records the tables have kept a first change
    for under the same statements: its first completion is the true records, whose output is
    ``truth``, and each other one changes one open decision record from its true value, so
    the tables' kept (or stored) first changes answer it without copying the records. The
    completion as the change of the true records: ``{}`` (none: the true records
    themselves) or ``{slot: value}``; None: no completion; ``_UNKNOWN``: a first change not
    yet known (the search finds it)."""
    if tables is None:
        return _UNKNOWN
    known = tables.changes(gold, truth)
    exact = evidence.exact
    constrained: dict[Slot, object] = {}
    if evidence.imprecise:
        # A kept entry was made only by a search of these very statements that started from
        # the true records: they were readable and true of them (else none was kept).
        kept = tables._constrained
        for slot, _ in evidence.imprecise:
            if slot in exact:
                return _UNKNOWN  # (a statement of a pinned record: not what is kept)
            if slot not in constrained:
                constrained[slot] = kept.get(
                    tables.constraint_key(slot, evidence.imprecise), _UNKNOWN
                )
                if constrained[slot] is _UNKNOWN:
                    return _UNKNOWN
    if not tables.gives(gold, truth):
        return {}  # (the evidence's exact values equal the true ones)
    for slot in tables.decision_slots:
        if slot in exact:
            continue
        value = constrained[slot] if slot in constrained else tables.kept_change(known, slot)
        if value is _UNKNOWN:
            return _UNKNOWN
        if value is not _NO_CHANGE:
            return {slot: value}
    return None


_NO_CHANGE = object()
"""no change of a record gives another output (:meth:`TaskTables.changes`)"""
_UNKNOWN = object()
