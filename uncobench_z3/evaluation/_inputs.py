"""What makes a group playable, checked for every group of a run before it writes anything.

Reading a group checks it against the schema and its names against its task
(:class:`~uncobench_z3.settings.TaskGroup`); what only playing it would meet - a spec that
fails the structure checks or holds no records, a gold answer its records do not give, a
stored rendering that is not one - is refused here, one line naming the group and the first
problem, before the run writes anything in its folder (it checks them holding the folder's
lock, by itself or in its forked workers: :func:`~._runner.run_evaluation`): a run does not
start, write ``run.json`` and stop on its first sample of such a group.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from ..construct import RenderedTask
from ..errors import ConfigError
from ..settings import TaskGroup
from ..spec import Answer, TypedTask, check_structure


def typed_task(group: TaskGroup) -> TypedTask:
    """The group's typed task; a :class:`ConfigError` naming the group and its first
    structural problem when its spec fails the structure checks or holds no records."""
    report = check_structure(group.spec)
    if report.task is None:
        first = report.problems[0] if report.problems else "no typed task"
        more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
        raise ConfigError(f"group {group.id}: its spec is not structurally valid: {first}{more}")
    if not report.task.has_values:
        raise ConfigError(f"group {group.id}: its spec holds no records to play it with")
    return report.task


def checked_task(group: TaskGroup) -> TypedTask:
    """The group's typed task, once it is known to be playable: a :class:`ConfigError` (one
    line) when its spec fails the structure checks or holds no records, its gold answer is
    not the one its records give, or the rendering it stores is not one."""
    task = typed_task(group)
    # Every sample is scored against the stored gold, and its attribution reads the records:
    # a gold they do not give (a group edited by hand; verify refutes it) would score right
    # answers wrong and label them from evidence that settled another answer. Deciding the
    # records exactly is a small part of the check (about 45 us a group).
    outcome = task.outcome()
    if outcome.kind == "ambiguous":
        raise ConfigError(f"group {group.id}: its records make more than one candidate eligible")
    computed = Answer.from_outcome(task, outcome)
    if computed != group.gold:
        raise ConfigError(
            f"group {group.id}: its gold answer ({group.gold.text()}) is not the one its records"
            f" give ({computed.text()}); `uncobench verify` it"
        )
    if group.rendered is None:
        return task
    try:
        RenderedTask.model_validate(group.rendered)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]
        )
        raise ConfigError(
            f"group {group.id}: its stored rendering is not one ($.rendered{where}: "
            f"{first['msg'].lower()})"
        ) from None
    return task


def check_groups(groups: Iterable[TaskGroup]) -> dict[int, TypedTask]:
    """Refuse (:class:`ConfigError`, one line) the first group no episode could be played
    from (:func:`checked_task`). Returns each group's typed task by ``id(group)``, for a
    player in this process to use rather than make it again."""
    return {id(group): checked_task(group) for group in groups}
