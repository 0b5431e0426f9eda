"""What a group's judge keeps between the evidence it decides (round 37).

- A stored first change is read from :meth:`TaskTables.stored_change` without making the
  fact's whole list of values to try: it is the entry :meth:`TaskTables.tries` would give.
- The first change of a record that imprecise statements constrain is kept by the record and
  the statements (their :func:`statement_key`, in order): equal constraints, the same change.
- Evidence of true values alone is answered from the kept first changes without copying the
  records (:func:`differing_completion`'s completion is the plain search's), and the kept
  changes find a completion exactly where the plain search does.
- A reading table shares one ``(slot, repr)`` pair object among equal exact readings, so the
  signatures of two samples' equal evidence hold the very same items.
"""

from __future__ import annotations

import dataclasses

from tests.test_eval_evidence import GROUPS, TASKS, _statements
from tests.test_evidence_faithful import BOOKS
from uncobench_z3.evaluation import ReplyRecord, RoundRecord, decision_changes
from uncobench_z3.evaluation._completion import (
    _NO_CHANGE,
    _UNKNOWN,
    TaskTables,
    differing_completion,
    values_to_try,
)
from uncobench_z3.evaluation._evidence import (
    FaceValueEvidence,
    ReadingTable,
    evidence_by_round,
    final_evidence,
)
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Outcome, Slot, TypedTask, Value


def _entry(tries: list[Value], index: int) -> object:
    return tries[index] if 0 <= index < len(tries) else _UNKNOWN


def _same(found: object, expected: object) -> bool:
    return found is expected or (type(found) is type(expected) and found == expected)


def _with_values(task: TypedTask, changes: dict[Slot, Value]) -> TypedTask:
    """``task`` with some records changed (not a valid task: only its tables are read)."""
    return dataclasses.replace(task, values={**task.values, **changes})


def _tasks_with_repeats_and_strays() -> list[TypedTask]:
    """The example tasks, and each with a numeric decision fact's second candidate at the
    first's value (a value to try twice: the very object, or an equal one made again) or at
    a value off the domain (not tried)."""
    found = list(TASKS)
    for task in TASKS:
        for fact in sorted(task.decision_facts()):
            typed = task.facts[fact]
            if typed.type not in ("int", "decimal") or len(task.candidates) < 2:
                continue
            first, second = ((c, fact) for c in task.candidates[:2])
            high = typed.code_range()[1]
            found.append(_with_values(task, {second: task.values[first]}))
            again = typed.value_of(typed.code(task.values[first]))  # (equal, not the same)
            found.append(_with_values(task, {second: again}))
            found.append(_with_values(task, {first: typed.value_of(high + 1)}))
            break
    return found


def test_a_stored_change_is_the_entry_of_the_values_to_try() -> None:
    compared = repeats = strays = 0
    for task in _tasks_with_repeats_and_strays():
        full = TaskTables(task)
        gold = truth = Outcome("none")  # (the store's gold and truth: not read here)
        for slot in full.decision_slots:
            tries = full.tries(slot)
            # the definition: the first of equal values to try, each in the fact's domain
            contains = task.facts[slot[1]].contains
            definition = [v for v in dict.fromkeys(values_to_try(task, slot)) if contains(v)]
            assert len(tries) == len(definition) and all(map(_same, tries, definition)), slot
            listed = [task.values.get((c, slot[1])) for c in task.candidates]
            repeats += len(listed) != len(set(map(repr, listed)))
            strays += any(not task.facts[slot[1]].contains(v) for v in listed if v is not None)
            for index in range(-1, len(tries) + 2):
                stored = {slot[0]: {slot[1]: index}} if index >= 0 else {slot[0]: {}}
                lazy = TaskTables(task)  # (no list made yet: read without it)
                lazy.store(gold, truth, stored)
                assert _same(lazy.stored_change(slot), _entry(tries, index)), (slot, index)
                lazy.tries(slot)  # (the list made: read from it)
                assert _same(lazy.stored_change(slot), _entry(tries, index)), (slot, index)
                compared += 1
            none = TaskTables(task)
            none.store(gold, truth, {slot[0]: {slot[1]: None}})
            assert none.stored_change(slot) is _NO_CHANGE
    assert compared > 500 and repeats and strays


def _constrained_cases(index: int) -> list[FaceValueEvidence]:
    """Evidence of every decision record but one exactly at its true value, and the one
    stated by one imprecise statement true of it: several statements for each record."""
    task = TASKS[index]
    decision = task.decision_facts()
    found = []
    for stated in _statements(index):
        slot = (stated.candidate, stated.fact)
        if stated.value is not None or stated.fact not in decision:
            continue
        trace = [RoundRecord(round=1, action="ask",
                             replies=(ReplyRecord(role="r", question="q", text="t",
                                                  stated=(stated,)),))]  # fmt: skip
        imprecise = final_evidence(task, trace).imprecise
        exact = {s: v for s, v in task.values.items() if s != slot and s[1] in decision}
        found.append(FaceValueEvidence(exact, imprecise, ()))
    return found


def test_a_kept_change_of_a_constrained_record_is_the_plain_searchs() -> None:
    """Every statement of a record is asked of one table (as a group's judge asks them):
    each completion is the plain search's, and statements alike share one entry."""
    compared = 0
    for index, task in enumerate(TASKS):
        gold, truth = GROUPS[index].gold.to_outcome(), task.outcome()
        tables = TaskTables(task)
        for evidence in _constrained_cases(index) * 2:
            kept = differing_completion(task, gold, evidence, truth=truth, tables=tables)
            plain = differing_completion(task, gold, evidence, shortcuts=False)
            assert kept == plain
            compared += 1
        assert len(tables._constrained) <= len(_constrained_cases(index))
    assert compared > 50


def test_evidence_of_true_values_is_answered_from_the_kept_changes() -> None:
    """With every record but one at its true value, the completion is the one open record
    at its first change (or none), read from the kept table without a search; for a gold the
    true records do not give, the true records themselves."""
    for index, task in enumerate(TASKS):
        gold, truth = GROUPS[index].gold.to_outcome(), task.outcome()
        tables = TaskTables(task)
        decision = tables.decision_slots
        for open_slot in (*decision, None):
            exact = {s: task.values[s] for s in decision if s != open_slot}
            evidence = FaceValueEvidence(exact, (), (), frozenset(), frozenset())
            kept = differing_completion(task, gold, evidence, truth=truth, tables=tables)
            assert kept == differing_completion(task, gold, evidence, shortcuts=False)
            if open_slot is None:
                assert kept is None
        other = Outcome("none") if truth.kind != "none" else Outcome("ambiguous")
        evidence = FaceValueEvidence(dict(task.values), (), (), frozenset(), frozenset())
        # (asked of the same table: what it keeps for one gold is not read for another)
        found = differing_completion(task, other, evidence, truth=truth, tables=tables)
        assert found == task.values


def test_equal_evidence_of_two_samples_shares_its_signature_items() -> None:
    for index, task in enumerate(TASKS):
        book = BOOKS[index].faithful
        # two records stated at a wrong value (read by parsing), the others faithfully
        wrong = list({(s.candidate, s.fact): s for s in _statements(index)
                      if s.value is not None and s not in book.values()}.values())[:2]  # fmt: skip
        faithful = [
            s for slot, s in book.items() if slot not in {(w.candidate, w.fact) for w in wrong}
        ]
        table = ReadingTable()
        table.faithful = book
        signatures = []
        for pool in (faithful + wrong, [s.model_copy() for s in faithful + wrong]):
            reply = ReplyRecord(role="r", question="q", text="t", stated=tuple(pool))
            trace = [RoundRecord(round=1, action="ask", replies=(reply,))]
            evidence = evidence_by_round(task, trace, table)[-1]
            assert evidence == final_evidence(task, trace)  # (read without the table)
            items = evidence.signature[0]
            assert items == frozenset((s, repr(v)) for s, v in evidence.exact.items())
            signatures.append(items)
        first, second = signatures
        assert first == second and len(wrong) == 2
        by_item = {item: item for item in first}
        assert all(by_item[item] is item for item in second)


def test_a_constrained_record_starts_from_its_free_first_change() -> None:
    """A record that imprecise statements constrain, in a table that knows (or stores) its
    first change with no statement: that change, when the statements allow it, is the
    completion (the values tried before it gave gold), else the record is searched; either
    way the plain search's completion, for every statement of every record."""
    allowed = refused = none = 0
    for index, task in enumerate(TASKS):
        gold, truth = GROUPS[index].gold.to_outcome(), task.outcome()
        stored = decision_changes(task, GROUPS[index].gold)
        assert stored is not None
        for evidence in _constrained_cases(index):
            ((slot, stated),) = evidence.imprecise
            free = TaskTables(task)
            free.store(gold, truth, stored)
            change = free.stored_change(slot)
            if change is _NO_CHANGE:
                none += 1
            elif _allows(free, stated, change):
                allowed += 1
            else:
                refused += 1
            plain = differing_completion(task, gold, evidence, shortcuts=False)
            searched = TaskTables(task)  # (its free change found by a search first)
            open_evidence = FaceValueEvidence(evidence.exact, (), (), frozenset(), frozenset())
            differing_completion(task, gold, open_evidence, truth=truth, tables=searched)
            for tables in (free, searched):
                kept = differing_completion(task, gold, evidence, truth=truth, tables=tables)
                assert kept == plain, (task.id, slot, stated)
    assert allowed > 10 and refused > 10 and none, (allowed, refused, none)


def test_a_kept_constrained_change_answers_only_the_statements_it_was_found_for() -> None:
    """Evidence asked again with the same statements of its open record is answered from the
    kept entry; with another statement beside them, of a record the evidence pins (true of
    it, or not: then the true records are not a completion), it is the plain search's."""
    compared = contradicted = 0
    for index, task in enumerate(TASKS):
        gold, truth = GROUPS[index].gold.to_outcome(), task.outcome()
        tables = TaskTables(task)
        cases = _constrained_cases(index)
        for evidence in cases:
            plain = differing_completion(task, gold, evidence, shortcuts=False)
            assert differing_completion(task, gold, evidence, truth=truth, tables=tables) == plain
            ((open_slot, _),) = evidence.imprecise
            for other in cases:
                ((slot, stated),) = other.imprecise
                if slot == open_slot or slot not in evidence.exact:
                    continue
                stating = (*evidence.imprecise, (slot, stated))
                both = dataclasses.replace(evidence, imprecise=stating)
                kept = differing_completion(task, gold, both, truth=truth, tables=tables)
                assert kept == differing_completion(task, gold, both, shortcuts=False)
                contradicted += not _allows(tables, stated, task.values[slot])
                compared += 1
    assert compared > 50 and contradicted > 10, (compared, contradicted)


def _allows(tables: TaskTables, stated: StatedValue, value: object) -> bool:
    """Whether the imprecise statement ``stated`` allows ``value`` of its record."""
    statement = tables.imprecision(stated)
    if statement.options is not None:
        return value in statement.options
    return statement.low <= value <= statement.high  # type: ignore[operator]


def test_whether_a_completion_is_found_is_whether_the_search_finds_one() -> None:
    """Whether the judge's kept changes find a completion, against the plain search, on one
    table per gold as the judge asks: evidence of true values (kept changes, searched
    first), constrained records, evidence at a wrong value, and a gold the true records do
    not give."""
    seen = set()
    for index, task in enumerate(TASKS):
        truth = task.outcome()
        decision = TaskTables(task).decision_slots
        cases = [
            FaceValueEvidence({s: task.values[s] for s in decision if s != open_slot}, (), ())
            for open_slot in (*decision, None)
        ]
        cases += _constrained_cases(index)
        wrong = next(iter(decision))
        cases.append(FaceValueEvidence({wrong: "not a value"}, (), ()))
        other = Outcome("none") if truth.kind != "none" else Outcome("ambiguous")
        for gold in (GROUPS[index].gold.to_outcome(), other):
            tables = TaskTables(task)
            for evidence in cases * 2:  # (the second time from what the tables kept)
                plain = differing_completion(task, gold, evidence, shortcuts=False)
                kept = differing_completion(task, gold, evidence, truth=truth, tables=tables)
                found = kept is not None
                assert found == (plain is not None)
                seen.add(found)
    assert seen == {True, False}
