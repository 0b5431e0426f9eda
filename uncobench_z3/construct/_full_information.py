"""Full-information validation (construction stage 6): a task's rendering read back with every
role's records, as a validator who sees everything would read it, must give gold.

:func:`read_full_information` reads the task text (:mod:`._reader`) and every record line; and
:func:`validate_rendering` does so over three independently shuffled record orders and
compares each answer with gold. A record lost or altered in rendering becomes a rejection
that names the fact.
"""

from __future__ import annotations

import random

from ..spec import Outcome, TypedTask, Value
from ._reader import ReadError, ReadTask, read_task_text
from ._render import RenderedTask


def read_full_information(
    task_text: str,
    records: dict[str, list[str]],
    parsed: ReadTask | None = None,
) -> ReadTask:
    """Recover every decision-relevant fact from the text; problems are listed, not raised.

    ``parsed``: the reading of ``task_text`` when the caller has it (else the shared one,
    :func:`read_task_text`). Each line is read on
    its own, and remembered by the catalog (:meth:`Catalog.statement`): repeated readings of
    the same text (shuffled records) read each line once, and only the aggregation depends
    on the order.
    """
    base = parsed or read_task_text(task_text)
    read = ReadTask(
        base.catalog,
        base.required_context,
        base.conditions,
        base.rule,
        base.positive,
        base.negative,
    )
    seen: dict[tuple[str, str], Value] = {}
    for role, lines in records.items():
        for line in lines:
            statement = read.catalog.statement(line)
            if isinstance(statement, ReadError):
                read.problems.append(f"unreadable record of {role}: {statement}")
                continue
            if read.catalog.keys[statement.fact].owner != role:
                read.problems.append(
                    f"{role} holds a record of {statement.fact}, owned by another role"
                )
            if statement.context != read.required_context.get(statement.fact):
                continue
            slot = (statement.candidate, statement.fact)
            if statement.value is None:
                read.problems.append(f"the record of {slot} is not exact")
            elif slot in seen and seen[slot] != statement.value:
                read.problems.append(f"two different values for {slot} in the required context")
            else:
                seen[slot] = statement.value
    needed = {c.fact for c in read.conditions} | set(read.rule.operands)
    for name in read.catalog.candidates:
        for key in sorted(needed):
            if (name, key) not in seen:
                read.problems.append(
                    f"fact lost: {name}'s {read.catalog.keys[key].label} "
                    f"({read.required_context[key]})"
                )
    read.values = seen
    return read


def validate_rendering(
    task: TypedTask, rendered: RenderedTask, gold: Outcome, seed: int, runs: int = 3
) -> list[str]:
    """Full-information validation: ``runs`` readings over shuffled records must give gold.

    Returns the reasons for rejection (empty when the rendering is valid).
    """
    problems: list[str] = []
    names = {task.candidate_name(c): c for c in task.candidates}
    try:
        parsed = read_task_text(rendered.task_text)
    except ReadError as exc:
        return [f"unreadable task text: {exc}"]
    for run in range(runs):
        rng = random.Random(f"validate:{seed}:{task.id}:{run}")
        roles = list(rendered.records)
        rng.shuffle(roles)
        shuffled = {}
        for role in roles:
            lines = list(rendered.records[role])
            rng.shuffle(lines)
            shuffled[role] = lines
        read = read_full_information(rendered.task_text, shuffled, parsed)
        if read.problems:
            return sorted(set(read.problems))
        for (name, key), value in read.values.items():
            if task.values.get((names[name], key)) != value:
                problems.append(f"fact altered: {name}'s {task.facts[key].label}")
        if problems:
            return sorted(set(problems))
        outcome = read.outcome()
        translated = Outcome(
            outcome.kind,
            names.get(outcome.candidate or ""),
            outcome.number,
            tuple(names[n] for n in outcome.eligible),
        )
        if not translated.same_output(gold):
            return [
                f"reading {run + 1} gives {outcome.kind} {outcome.candidate} "
                f"{outcome.number}, not the gold answer"
            ]
    return []
