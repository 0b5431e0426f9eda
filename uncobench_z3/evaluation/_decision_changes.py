"""Each decision record's first change, computed once at build time and stored in the group.

The evidence judge shows that evidence leaves another output open by a completion found by
evaluation (:func:`._completion.differing_completion`): the true records with the evidence put
in, then each with one decision record the evidence leaves open changed. With every other
record at its true value, the first value of a record that changes the output depends on the
group alone (its task and gold): the judge's tables keep it (:meth:`._completion.TaskTables.
changes`), and searching it was most of each group's first verdicts (17.8 M of a
1,250.3 M first pass over 80 built groups). ``uncobench build`` stores the table in
``proofs.decision_changes`` (:func:`settings_stored_proofs`, the build's hook), an
evaluation hands it to the group's judge (:func:`stored_changes`), and ``uncobench verify``
computes it again and refutes a group whose table differs. A group without it (an older
build, a spec) gets each entry searched on first use, as before.
"""

from __future__ import annotations

from ..construct import StoredProofs
from ..settings import SettingName, TaskGroup
from ..spec import Answer, TypedTask
from ._completion import _NO_CHANGE, StoredChanges, TaskTables, differing_completion
from ._evidence import FaceValueEvidence
from ._inputs import typed_task
from ._min_rounds import settings_minimum_rounds


def decision_changes(task: TypedTask, gold: Answer) -> dict[str, dict[str, int | None]] | None:
    """Candidate -> decision fact -> the index in :meth:`._completion.TaskTables.tries` of the
    first value of the record that gives an output other than ``gold`` when every other record
    is at its true value (None: no value does), as :func:`._completion.differing_completion`
    finds it, in the task's order of decision records. None when the true records do not give
    gold (or cannot be evaluated): a stored table is thus also the proof that they do, which
    the judge takes instead of evaluating them again (verify refutes a table kept by a group
    whose true records no longer give its gold)."""
    try:
        outcome = gold.to_outcome()
        truth = task.outcome()
    except Exception:  # (as the judge: a rule the true records cannot evaluate)
        return None
    if not truth.same_output(outcome):
        return None
    tables = TaskTables(task)
    slots = tables.decision_slots
    values = task.values
    for slot in slots:
        # evidence pinning every other decision record at its true value: the search's one
        # open record is ``slot``, and its first change lands in the tables
        exact = {other: values[other] for other in slots if other != slot and other in values}
        evidence = FaceValueEvidence(exact, (), (), frozenset(), frozenset())
        differing_completion(task, outcome, evidence, truth=truth, tables=tables)
    known = tables.changes(outcome, truth)
    found: dict[str, dict[str, int | None]] = {}
    for slot in slots:
        value = known.get(slot, _NO_CHANGE)
        index = None
        if value is not _NO_CHANGE:  # (the value is an object of the list: find it by identity)
            index = next(i for i, tried in enumerate(tables.tries(slot)) if tried is value)
        found.setdefault(slot[0], {})[slot[1]] = index
    return found


def stored_changes(group: TaskGroup) -> StoredChanges | None:
    """The group's stored first changes (``proofs.decision_changes``), None when it has none."""
    proofs = group.proofs
    return proofs.decision_changes if proofs is not None else None


def settings_stored_proofs(group: TaskGroup, task: TypedTask | None = None) -> StoredProofs:
    """What ``uncobench build`` stores in a group's proofs for an evaluation to read, computed
    afresh (``uncobench verify`` compares them): its settings' minimum rounds
    (:func:`._min_rounds.settings_minimum_rounds`) and its decision records' first changes
    (:func:`decision_changes`). ``task``: the group's typed task, when the caller has it."""
    if task is None or task.spec is not group.spec or not task.has_values:
        task = typed_task(group)
    rounds: dict[SettingName, int] | None = settings_minimum_rounds(group, task)
    return StoredProofs(rounds, decision_changes(task, group.gold))


settings_stored_proofs.stores_decision_changes = True  # type: ignore[attr-defined]
"""(read by the build, which records in its configuration that its groups store them)"""
