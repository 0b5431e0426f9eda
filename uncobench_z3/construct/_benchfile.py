"""Reading task groups from disk: a built benchmark folder, a JSON Lines file or group files.

A built benchmark is a folder with ``manifest.json`` and ``groups.jsonl`` (one task group a
line). Errors name the file, the line and the JSON path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..errors import SpecReadError
from ..settings import GROUP_KIND, TaskGroup, verify_group
from ..solver import (
    CheckResult,
    Evidence,
    SolverBudget,
    SolverContext,
    Verdict,
    VerificationReport,
)
from ..spec import TypedTask, check_structure, load_json, parse_json_text, validate_document
from ._render import RenderedTask, render_task

GROUPS_FILE = "groups.jsonl"
MANIFEST_FILE = "manifest.json"
VERIFY_BATCH = 25
"""groups per Z3 context when a benchmark is re-proved (fixed, so that full evidence does not
depend on the number of workers)"""


def iter_jsonl_groups(path: Path) -> list[TaskGroup]:
    groups = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecReadError(str(path), f"cannot be read ({exc.strerror})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{path}:{number}"
        data = parse_json_text(line, source)
        if not isinstance(data, dict) or data.get("kind") != GROUP_KIND:
            raise SpecReadError(source, "expected a task group object", json_path="$")
        groups.append(validate_document(data, TaskGroup, source))
    return groups


def load_groups(path: str | Path) -> list[TaskGroup]:
    """Task groups from a benchmark folder, a ``.jsonl`` file or a single group file."""
    target = Path(path)
    if target.is_dir():
        jsonl = target / GROUPS_FILE
        if not jsonl.exists():
            raise SpecReadError(str(target), f"is not a built benchmark (no {GROUPS_FILE})")
        return iter_jsonl_groups(jsonl)
    if target.suffix == ".jsonl":
        return iter_jsonl_groups(target)
    data = load_json(target)
    if not isinstance(data, dict) or data.get("kind") != GROUP_KIND:
        raise SpecReadError(
            str(target), "expected a task group (kind: uncobench-task-group)", json_path="$"
        )
    return [validate_document(data, TaskGroup, str(target))]


def rendered_of(group: TaskGroup, task: TypedTask | None = None) -> RenderedTask:
    """The group's rendered text (rendered now, from its seed, if the file has none).

    ``task`` may pass the group's typed task when the caller has it already.
    """
    if group.rendered is not None:
        return RenderedTask.model_validate(group.rendered)
    task = task or check_structure(group.spec).task
    if task is None:
        raise SpecReadError(group.id, "the group's spec is not structurally valid")
    return render_task(task, group.seed)


def _verify_chunk(
    lines: list[str], source: str, budget: SolverBudget, evidence: Evidence = "verdict"
) -> list[VerificationReport]:
    """Re-prove a fixed batch of groups on one Z3 context.

    With verdict-only evidence a group that is not proved is proved again with full evidence
    on a context of its own, so that every check of a failing group is reported with its
    witness or core, and that evidence depends on the group alone.
    """
    reports = []
    with SolverContext() as context:
        for line in lines:
            group = TaskGroup.model_validate_json(line)
            name = f"{source}#{group.id}"
            report = verify_group(group, name, budget, context=context, evidence=evidence)
            if report.verdict != Verdict.PROVED and evidence != "full":
                report = verify_group(group, name, budget, evidence="full")
            reports.append(report)
    return reports


VerifyProgress = Callable[[int, int], None]
"""``(groups verified, groups in the benchmark)``"""


def verify_benchmark(
    path: str | Path,
    budget: SolverBudget,
    workers: int | None = None,
    progress: VerifyProgress | None = None,
    evidence: Evidence = "verdict",
) -> list[VerificationReport]:
    """Re-prove every group of a built benchmark (in parallel), and its content hash.

    The first report is the manifest's (``document="manifest"``: the content hash), then one
    per group in file order. ``progress`` is told after each chunk of groups. Groups are
    proved in fixed batches of ``VERIFY_BATCH`` that share a Z3 context; ``evidence`` is
    verdict-only by default (groups that are not proved are reported with full evidence
    anyway) or ``"full"`` for every check.
    """
    target = Path(path)
    groups_file = target / GROUPS_FILE
    load_groups(target)  # validates every line first: bad input is an error, not a verdict
    text = groups_file.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    reports: list[VerificationReport] = []
    manifest = load_json(target / MANIFEST_FILE) if (target / MANIFEST_FILE).exists() else None
    expected = manifest.get("content_hash") if isinstance(manifest, dict) else None
    actual = hashlib.sha256(text.encode()).hexdigest()
    reports.append(
        VerificationReport(
            source=str(target / MANIFEST_FILE),
            document="manifest",
            task_id="manifest",
            verdict=Verdict.PROVED if expected == actual else Verdict.REFUTED,
            checks=[
                CheckResult(
                    name="content-hash",
                    kind="consistency",
                    verdict=Verdict.PROVED if expected == actual else Verdict.REFUTED,
                    summary="groups.jsonl matches the manifest's content hash"
                    if expected == actual
                    else f"groups.jsonl hash {actual[:12]} differs from the manifest's "
                    f"{str(expected)[:12]}",
                )
            ],
        )
    )
    workers = max(1, workers or os.cpu_count() or 1)
    chunks = [lines[i : i + VERIFY_BATCH] for i in range(0, len(lines), VERIFY_BATCH)]
    source = str(groups_file)

    def add(found: list[VerificationReport]) -> None:
        reports.extend(found)
        if progress is not None:
            progress(len(reports) - 1, len(lines))

    if progress is not None:
        progress(0, len(lines))
    if workers == 1 or len(chunks) == 1:
        for chunk in chunks:
            add(_verify_chunk(chunk, source, budget, evidence))
        return reports
    with ProcessPoolExecutor(max_workers=workers) as pool:
        n = len(chunks)
        for found in pool.map(_verify_chunk, chunks, [source] * n, [budget] * n, [evidence] * n):
            add(found)
    return reports
