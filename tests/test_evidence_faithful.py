"""A judge's readings take the record book's faithful statements as read (round 34).

:func:`uncobench_z3.evaluation._evidence.new_reading` reads a statement that is one of the
book's faithful statements, or has the same fields and a value of the same type, as its
record's true value without parsing it. Here it is compared with the plain
:func:`read_statement` on every example group's faithful statements, every defect's
statements, and copies whose value is equal but of another type (``1`` and ``True``), and
the evidence of traces read through a table that knows the book with the evidence read
without it.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_eval_evidence import GROUPS, TASKS
from uncobench_z3.evaluation import PreparedGroup, ReplyRecord, RoundRecord, _evidence
from uncobench_z3.evaluation._evidence import (
    FaceValueEvidence,
    Reading,
    ReadingTable,
    _snapshot,
    evidence_by_round,
    new_reading,
    read_statement,
)
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import TypedTask

BOOKS = [PreparedGroup.of(group, task).book for group, task in zip(GROUPS, TASKS, strict=True)]


def _read(task: TypedTask, stated: StatedValue, book_index: int | None) -> object:
    """The reading (the plain one when ``book_index`` is None), or the error's type."""
    try:
        if book_index is None:
            return _typed(read_statement(task, stated))
        return _typed(new_reading(task, stated, BOOKS[book_index].faithful))
    except Exception as error:  # the plain reading's error must be the shortcut's too
        return type(error)


def _typed(reading: Reading) -> tuple[object, ...]:
    """A reading with its value's type (``1 == True``: equal tuples may read differently)."""
    return (*reading, type(reading[3]))


def _defect_statements(index: int) -> list[StatedValue]:
    return [
        stated
        for setting in GROUPS[index].settings
        for defect in setting.defects
        for stated in [*(defect.first_reply or ()), *(defect.resolved_reply or ())]
    ]


def _other_types(stated: StatedValue) -> list[StatedValue]:
    """Copies of ``stated`` whose value is equal but of another type (``1`` and ``True``)."""
    value = stated.value
    if isinstance(value, bool):
        return [stated.model_copy(update={"value": int(value)})]
    if isinstance(value, int) and value in (0, 1):
        return [stated.model_copy(update={"value": bool(value)})]
    return []


def test_a_faithful_statement_reads_as_the_plain_reading() -> None:
    compared = 0
    for index, task in enumerate(TASKS):
        for stated in BOOKS[index].faithful.values():
            # the book's own statement, and a copy (the same fields: a resolved reply's)
            for one in (stated, stated.model_copy()):
                assert _read(task, one, index) == _read(task, one, None)
                # the reading holds the statement read (a table knows it by identity)
                assert new_reading(task, one, BOOKS[index].faithful)[0] is one
                compared += 1
    assert compared > 100


def test_a_faithful_statement_or_its_copy_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut finds a statement's faithful twin by its slot (read from its fields), so
    neither the book's statement nor a copy of it goes to the plain reading."""

    def parsed(task: TypedTask, stated: StatedValue) -> Reading:
        raise AssertionError(f"{stated} was parsed")

    monkeypatch.setattr(_evidence, "read_statement", parsed)
    for index, task in enumerate(TASKS):
        for slot, stated in BOOKS[index].faithful.items():
            for one in (stated, stated.model_copy()):
                reading = new_reading(task, one, BOOKS[index].faithful)
                assert reading[1] == slot and reading[3] is task.values[slot]


def test_a_table_that_knows_the_book_holds_each_statement_read_as_new() -> None:
    """:meth:`ReadingTable.know` reads the book's statements as :func:`new_reading` reads
    each, into the table (by the statement's id) with its record's shared pair."""
    compared = 0
    for index, task in enumerate(TASKS):
        faithful = BOOKS[index].faithful
        table = ReadingTable()
        table.know(task, faithful)
        assert table.faithful is faithful and len(table) == len(faithful)
        for slot, stated in faithful.items():
            kept = table[id(stated)]
            assert _typed(kept) == _typed(new_reading(task, stated, faithful, ReadingTable()))
            assert kept[0] is stated and kept[3] is task.values[slot]
            assert kept[7] is table.truths[slot] is table.shared_pair(kept[7])
            compared += 1
    assert compared > 50


def test_a_table_that_knows_a_second_book_keeps_the_first_books_pairs() -> None:
    """A table that knows a second book of the task (copies of the first's statements)
    reads it as the first (each record's pair looked up, not made again)."""
    task, faithful = TASKS[0], BOOKS[0].faithful
    table = ReadingTable()
    table.know(task, faithful)
    pairs, truths = dict(table.pairs), dict(table.truths)
    assert len(pairs) == len(faithful) and all(pairs[pair] is pair for pair in truths.values())
    copies = {slot: stated.model_copy() for slot, stated in faithful.items()}
    table.know(task, copies)
    assert table.faithful is copies and len(table) == 2 * len(faithful)
    assert table.pairs == pairs and table.truths == truths
    for slot, stated in copies.items():
        kept, first = table[id(stated)], table[id(faithful[slot])]
        assert kept[0] is stated and kept[1:] == first[1:] and kept[7] is truths[slot]


def test_a_full_table_reads_the_book_on_demand() -> None:
    task, faithful = TASKS[0], BOOKS[0].faithful
    table = ReadingTable()
    for number in range(_evidence._READINGS_KEPT - len(faithful)):
        table[-1 - number] = table.get(-1, ())  # type: ignore[assignment]
    table.know(task, faithful)
    assert table.faithful is faithful and not table.truths


def test_a_defects_statements_read_as_the_plain_reading() -> None:
    kinds = set()
    for index, task in enumerate(TASKS):
        for stated in _defect_statements(index):
            assert _read(task, stated, index) == _read(task, stated, None)
            reading = read_statement(task, stated)
            kinds.add((reading[2], reading[6]))
    # wrong-context, exact at the truth (resolved replies), imprecise and exact untrue values
    assert len(kinds) >= 3


def test_an_equal_value_of_another_type_is_parsed() -> None:
    compared = 0
    for index, task in enumerate(TASKS):
        for stated in BOOKS[index].faithful.values():
            for other in _other_types(stated):
                assert _read(task, other, index) == _read(task, other, None)
                compared += 1
    assert compared > 0


def _pool(index: int) -> list[StatedValue]:
    faithful = list(BOOKS[index].faithful.values())
    copies = [s.model_copy() for s in faithful[:3]]
    others = [other for s in faithful for other in _other_types(s)]
    return faithful + copies + others + _defect_statements(index)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_evidence_read_with_the_book_equals_reading_without_it(data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(GROUPS) - 1))
    task, pool = TASKS[index], _pool(index)
    trace = []
    for number in range(1, data.draw(st.integers(1, 4)) + 1):
        stated = tuple(data.draw(st.lists(st.sampled_from(pool), max_size=10)))
        reply = ReplyRecord(role="r", question="q", text="t", stated=stated)
        trace.append(RoundRecord(round=number, action="ask", replies=(reply,)))
    table = ReadingTable()
    if data.draw(st.booleans()):  # the book's statements read as they come, or all at once
        table.faithful = BOOKS[index].faithful
    else:
        table.know(task, BOOKS[index].faithful)
    try:
        plain = evidence_by_round(task, trace, {})
    except Exception as error:  # an unreadable statement raises with the book too
        raised = type(error)
        try:
            evidence_by_round(task, trace, table)
        except Exception as again:
            assert type(again) is raised
            return
        raise AssertionError("read with the book, an unreadable statement was read") from None
    found = evidence_by_round(task, trace, table)
    assert found == plain
    for ours, theirs in zip(found, plain, strict=True):
        assert list(ours.exact.items()) == list(theirs.exact.items())
        assert [type(v) for v in ours.exact.values()] == [type(v) for v in theirs.exact.values()]
        assert ours.untrue == theirs.untrue and ours.conflicted == theirs.conflicted
        assert ours.imprecise == theirs.imprecise


def test_a_snapshot_made_directly_is_the_class_made_one() -> None:
    """The reader's snapshots are made without the frozen class's ``__init__``
    (``_snapshot``): every field set, in the class's order, to the value given (the fields
    not compared, ``untrue`` and ``conflicted``, too), still frozen and without a ``__dict__``."""
    names = [f.name for f in dataclasses.fields(FaceValueEvidence)]
    assert list(inspect.signature(_snapshot).parameters) == names
    stated = StatedValue(candidate="c", fact="f", context="x", low="1", high="3")
    values = (
        {("c", "g"): 2, ("d", "g"): 5},
        ((("c", "f"), stated),),
        (frozenset({(("c", "g"), "2")}), frozenset({(("c", "f"), ("c",))})),
        frozenset({("d", "g")}),
        frozenset({("e", "g")}),
    )
    made = _snapshot(*values)  # type: ignore[arg-type]
    expected = FaceValueEvidence(*values)  # type: ignore[arg-type]
    assert type(made) is FaceValueEvidence and made == expected
    assert [getattr(made, name) for name in names] == list(values)
    assert all(getattr(made, n) is getattr(expected, n) for n in names)
    assert not hasattr(made, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.untrue = None  # type: ignore[misc]
