"""Which kind of document a path holds, and how each kind is verified."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .._executor import ExecutorOptions
from ..errors import SpecReadError
from ..settings import GROUP_KIND, TaskGroup, verify_group_task
from ..solver import Evidence, SolverBudget, VerificationReport, verify_spec
from ..spec import TaskSpec, load_json, validate_document


def verify_path(
    path: str,
    budget: SolverBudget,
    certificates: dict[str, dict[str, str]] | None,
    progress: Callable[[int, int], None] | None = None,
    executor: ExecutorOptions | None = None,
    evidence: Evidence = "full",
) -> list[VerificationReport]:
    """Verify one file (a spec or a task group) or a built benchmark folder (told to
    ``progress`` as it goes, proved where ``executor`` says) and return its report(s).

    A single document is reported check by check, so it gets full evidence; a built
    benchmark is proved verdict-first unless ``evidence`` is ``"full"`` (its groups that are
    not proved get full evidence either way).
    """
    if Path(path).is_dir():
        from ..construct import verify_benchmark
        from ..evaluation import settings_stored_proofs  # what a group stores for eval

        return verify_benchmark(path, budget, progress=progress, executor=executor,
                                evidence=evidence, certificates=certificates,
                                minimum_rounds=settings_stored_proofs)  # fmt: skip
    data = load_json(path)
    if not isinstance(data, dict):
        raise SpecReadError(path, "expected a JSON object (a task spec or group)", json_path="$")
    files: dict[str, str] | None = {} if certificates is not None else None
    if data.get("kind") == GROUP_KIND:
        group = validate_document(data, TaskGroup, path)
        from ..construct import with_minimum_rounds_check, with_rendering_check
        from ..evaluation import settings_stored_proofs

        report, task = verify_group_task(group, path, budget, files, evidence="full")
        report = with_rendering_check(report, group, task)
        report = with_minimum_rounds_check(report, group, settings_stored_proofs, task)
        task_id = group.id
    else:
        spec = validate_document(data, TaskSpec, path)
        report = verify_spec(spec, path, budget, files, evidence="full")
        task_id = spec.id
    if certificates is not None and files:
        certificates[task_id] = files
    return [report]
