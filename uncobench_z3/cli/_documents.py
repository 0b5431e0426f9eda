"""Which kind of document a path holds, and how each kind is verified."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import SpecReadError
from ..settings import GROUP_KIND, TaskGroup, verify_group
from ..solver import SolverBudget, VerificationReport, verify_spec
from ..spec import TaskSpec, load_json, validate_document


def verify_path(
    path: str,
    budget: SolverBudget,
    certificates: dict[str, dict[str, str]] | None,
    progress: Callable[[int, int], None] | None = None,
) -> list[VerificationReport]:
    """Verify one file (a spec or a task group) or a built benchmark folder (told to
    ``progress`` as it goes) and return its report(s)."""
    if Path(path).is_dir():
        from ..construct import verify_benchmark

        return verify_benchmark(path, budget, progress=progress)
    data = load_json(path)
    if not isinstance(data, dict):
        raise SpecReadError(path, "expected a JSON object (a task spec or group)", json_path="$")
    files: dict[str, str] | None = {} if certificates is not None else None
    if data.get("kind") == GROUP_KIND:
        group = validate_document(data, TaskGroup, path)
        from ..construct import with_rendering_check

        report = with_rendering_check(verify_group(group, path, budget, files), group)
        task_id = group.id
    else:
        spec = validate_document(data, TaskSpec, path)
        report = verify_spec(spec, path, budget, files)
        task_id = spec.id
    if certificates is not None and files:
        certificates[task_id] = files
    return [report]
