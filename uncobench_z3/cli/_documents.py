"""Which kind of document a path holds, and how each kind is verified."""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecReadError
from ..solver import SolverBudget, VerificationReport, verify_spec
from ..spec import TaskSpec, load_json, validate_document


def verify_path(
    path: str,
    budget: SolverBudget,
    certificates: dict[str, dict[str, str]] | None,
) -> list[VerificationReport]:
    """Verify one file (a spec) and return its report(s)."""
    if Path(path).is_dir():
        raise SpecReadError(path, "is a directory, not a spec file")
    data = load_json(path)
    if not isinstance(data, dict):
        raise SpecReadError(path, "expected a JSON object (a task spec)", json_path="$")
    spec = validate_document(data, TaskSpec, path)
    files: dict[str, str] | None = {} if certificates is not None else None
    report = verify_spec(spec, path, budget, files)
    if certificates is not None and files:
        certificates[spec.id] = files
    return [report]
