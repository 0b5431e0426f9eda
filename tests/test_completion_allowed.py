"""A completion found by evaluation keeps every imprecise statement true (round 47: the
statements' check, ``allowed`` in :func:`differing_completion`, written as loops).

For every imprecise statement of every decision record the example groups' replies can make,
alone and with a second statement of the same record (two options or ranges to meet), the
completion found, when there is one, has each record in its fact's domain and each stated
record inside every statement about it; the statements refuse some first changes, so a
check that let everything through (or nothing) would be seen.
"""

from __future__ import annotations

import dataclasses

from tests.test_eval_evidence import GROUPS, TASKS
from tests.test_scoring_kept import _allows, _constrained_cases
from uncobench_z3.evaluation._completion import TaskTables, differing_completion


def test_a_completion_keeps_every_statement_true() -> None:
    found = refused = none = 0
    for index, task in enumerate(TASKS):
        gold, truth = GROUPS[index].gold.to_outcome(), task.outcome()
        cases = _constrained_cases(index)
        by_slot: dict[object, list[object]] = {}
        for evidence in cases:
            by_slot.setdefault(evidence.imprecise[0][0], []).append(evidence.imprecise[0])
        for evidence in cases:
            (stated_pair,) = evidence.imprecise
            for second in (None, *by_slot[stated_pair[0]]):
                imprecise = evidence.imprecise if second is None else (stated_pair, second)
                case = dataclasses.replace(evidence, imprecise=imprecise)
                tables = TaskTables(task)
                completion = differing_completion(task, gold, case, truth=truth, tables=tables)
                assert completion == differing_completion(task, gold, case, shortcuts=False)
                if completion is None:
                    none += 1
                    continue
                found += 1
                for slot, value in completion.items():
                    assert task.facts[slot[1]].contains(value), (slot, value)
                for slot, stated in imprecise:
                    assert _allows(tables, stated, completion[slot]), (slot, stated)
                # the statements refused the record's value in the plain order somewhere
                slot = stated_pair[0]
                refused += any(
                    not _allows(tables, stated, task.values[slot]) for _, stated in imprecise
                )
    assert found > 50 and none > 10 and refused > 10, (found, none, refused)
