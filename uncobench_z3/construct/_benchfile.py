"""Reading task groups from disk: a built benchmark folder, a JSON Lines file or group files.

A built benchmark is a folder with ``manifest.json`` and ``groups.jsonl`` (one task group a
line). Every reader checks the groups against the manifest's content hash and group count
(hashing while reading), so a cut or edited benchmark is refused, not evaluated. Errors name
the file, the line and the JSON path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._executor import ExecutorOptions, open_executor
from .._gc import paused
from ..errors import SpecReadError
from ..settings import (
    GROUP_DIGEST_SCHEME,
    GROUP_KIND,
    TaskGroup,
    group_digest,
    verify_group_task,
)
from ..solver import (
    CheckResult,
    Evidence,
    SolverBudget,
    SolverContext,
    Verdict,
    VerificationReport,
    combine,
)
from ..spec import (
    TypedTask,
    check_structure,
    load_json,
    parse_json_text,
    read_utf8,
    read_utf8_bytes,
    validate_document,
)
from ._candidate import MinimumRounds
from ._integrity import with_check, with_rendering_check
from ._render import RenderedTask, render_task
from ._rounds_check import with_minimum_rounds_check

GROUPS_FILE = "groups.jsonl"
MANIFEST_FILE = "manifest.json"
DIGESTS_KEY = "group_digests"
"""the manifest's entry with every group's content hash, in file order (:func:`digests_entry`)"""
VERIFY_BATCH = 25
"""groups per Z3 context (and per local or Ray task) when a benchmark is re-proved: fixed,
so that full evidence does not depend on the number of workers or nodes"""


def parse_group_line(line: str, source: str) -> TaskGroup:
    """One line of a JSON Lines file of groups (``source``: ``file:line``), decimals exact."""
    data = parse_json_text(line, source)
    if not isinstance(data, dict) or data.get("kind") != GROUP_KIND:
        raise SpecReadError(source, "expected a task group object", json_path="$")
    return validate_document(data, TaskGroup, source)


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """The lines of ``text`` that are not blank, with their line numbers (from 1)."""
    return [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]


def iter_jsonl_groups(path: Path, text: str | None = None) -> list[TaskGroup]:
    """The groups of a JSON Lines file (``text``: its content, if already read)."""
    if text is None:
        text = read_utf8(path)
    return _parse_lines(numbered_lines(text), path)


def _parse_lines(lines: list[tuple[int, str]], path: Path | str) -> list[TaskGroup]:
    """The groups of numbered lines of ``path``. Reading makes thousands of objects a group
    and no garbage cycle, so no collection runs meanwhile (eval and report pause the
    collector around :func:`load_benchmark` already: see uncobench_z3/_gc.py); at the usual
    pace its passes were 0.7 M of the 5.3 M instructions a group of ``load_benchmark``."""
    with paused():
        return [parse_group_line(line, f"{path}:{n}") for n, line in lines]


def manifest_problems(
    folder: Path, text: str, *, sha256: str | None = None, count: int | None = None
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The benchmark's manifest, and what in ``text`` (its ``groups.jsonl``) disagrees with
    it: ``(check name, problem)`` pairs for the content hash and the group count.

    ``sha256`` (the hex digest of the bytes ``text`` was decoded from) and ``count`` (its
    lines that are not blank), when the caller has them, are not computed again: encoding a
    benchmark's text to hash it, and splitting it into lines a second time, cost about a
    tenth of reading it."""
    manifest_path = folder / MANIFEST_FILE
    if not manifest_path.is_file():
        raise SpecReadError(
            str(folder),
            f"is not a built benchmark (no {MANIFEST_FILE}); to use its groups unchecked, "
            f"name the file itself ({folder / GROUPS_FILE})",
        )
    manifest = load_json(manifest_path)
    if not isinstance(manifest, dict):
        raise SpecReadError(str(manifest_path), "a manifest is a JSON object", json_path="$")
    problems = []
    expected = manifest.get("content_hash")
    actual = sha256 if sha256 is not None else hashlib.sha256(text.encode()).hexdigest()
    if not isinstance(expected, str):  # (not "differs from the manifest's (None)")
        problems.append((
            "content-hash",
            f"the manifest holds no content hash of {GROUPS_FILE} (its content_hash is "
            f"{'missing' if expected is None else 'not a string'}): it was not written by "
            "`uncobench build`, or was edited",
        ))  # fmt: skip
    elif expected != actual:
        problems.append((
            "content-hash",
            f"the content hash of {GROUPS_FILE} ({actual[:12]}) differs from the manifest's "
            f"({expected[:12]}): the benchmark changed after it was built",
        ))  # fmt: skip
    stats = manifest.get("stats")
    wanted = stats.get("groups") if isinstance(stats, dict) else None
    if isinstance(wanted, int) and count is None:
        count = sum(1 for line in text.splitlines() if line.strip())
    if isinstance(wanted, int) and wanted != count:
        problems.append((
            "group-count",
            f"{GROUPS_FILE} holds {count} group(s), the manifest's group count is {wanted}",
        ))  # fmt: skip
    return manifest, problems


def check_benchmark(
    folder: str | Path,
    text: str | None = None,
    *,
    sha256: str | None = None,
    count: int | None = None,
) -> dict[str, Any]:
    """The manifest of the built benchmark ``folder`` once its ``groups.jsonl`` (``text``, if
    already read; ``sha256`` and ``count`` as :func:`manifest_problems` takes them) matches
    the manifest's content hash and group count; a :class:`SpecReadError` naming the first
    mismatch otherwise."""
    target = Path(folder)
    if text is None:
        data, text = read_utf8_bytes(target / GROUPS_FILE)
        sha256 = hashlib.sha256(data).hexdigest()
    manifest, problems = manifest_problems(target, text, sha256=sha256, count=count)
    if problems:
        _, problem = problems[0]
        raise SpecReadError(
            str(target / MANIFEST_FILE), f"{problem}; rebuild it, or `uncobench verify` it"
        )
    return manifest


def digests_entry(digests: list[str]) -> dict[str, object]:
    """The manifest's :data:`DIGESTS_KEY` entry for ``digests`` (the groups', in file order)."""
    return {"scheme": GROUP_DIGEST_SCHEME, "sha256": digests}


def group_digests(groups: list[TaskGroup], manifest: dict[str, Any] | None = None) -> list[str]:
    """The content hashes of ``groups`` (:func:`~uncobench_z3.settings.group_digest`).

    Taken from the manifest of the built benchmark they were read from when it stores them
    for the current :data:`~uncobench_z3.settings.GROUP_DIGEST_SCHEME`, one a group, and
    four of them (the first, the last and two between) come out the same when computed
    again; computed for every group otherwise (a benchmark built before the hashes were
    stored, or by a version that hashed otherwise). The stored hashes are as trustworthy as
    the manifest's content hash, which the file was checked against while it was read.
    """
    stored = stored_digests(manifest) if manifest is not None else None
    if stored is not None and len(stored) == len(groups):
        last = len(groups) - 1
        spots = {0, last, last // 3, 2 * last // 3} if groups else set()
        if all(group_digest(groups[i]) == stored[i] for i in sorted(spots)):
            return list(stored)
    return [group_digest(group) for group in groups]


def stored_digests(manifest: dict[str, Any]) -> list[str] | None:
    """The manifest's stored content hashes when they are of the current scheme (a list of
    strings; how many is for the reader to compare), else None."""
    entry = manifest.get(DIGESTS_KEY)
    if not isinstance(entry, dict) or entry.get("scheme") != GROUP_DIGEST_SCHEME:
        return None
    stored = entry.get("sha256")
    if not isinstance(stored, list) or not all(isinstance(d, str) for d in stored):
        return None
    return stored


DIGEST_CHECK = "content-digest"
"""a group's check in ``verify``: the manifest's stored content hash is the group's"""


def digest_check(group: TaskGroup, stored: str) -> CheckResult:
    """Is ``stored`` (the manifest's hash of this group) the group's content hash?"""
    actual = group_digest(group)
    summary = "the manifest's stored content hash is the group's"
    if actual != stored:
        summary = (
            f"the manifest stores content hash {stored[:12]} for this group; its own is "
            f"{actual[:12]} (an evaluation would record the wrong one)"
        )
    verdict = Verdict.PROVED if actual == stored else Verdict.REFUTED
    return CheckResult(name=DIGEST_CHECK, kind="consistency", verdict=verdict, summary=summary)


def load_benchmark(path: str | Path) -> tuple[list[TaskGroup], list[str]]:
    """:func:`load_groups`, with the groups' content hashes (:func:`group_digests`: stored
    in a built benchmark's manifest, computed for a file)."""
    groups, manifest = _load(Path(path))
    return groups, group_digests(groups, manifest)


def load_groups(path: str | Path) -> list[TaskGroup]:
    """Task groups from a benchmark folder, a ``.jsonl`` file or a single group file.

    A folder must be a built benchmark whose ``groups.jsonl`` matches its manifest (content
    hash and group count, checked while reading); a file is read as it is.
    """
    return _load(Path(path))[0]


def _load(target: Path) -> tuple[list[TaskGroup], dict[str, Any] | None]:
    """The groups at ``target``, and its manifest when it is a built benchmark."""
    if target.is_dir():
        jsonl = target / GROUPS_FILE
        if not jsonl.exists():
            raise SpecReadError(str(target), f"is not a built benchmark (no {GROUPS_FILE})")
        data, text = read_utf8_bytes(jsonl)
        lines = numbered_lines(text)
        sha256 = hashlib.sha256(data).hexdigest()
        del data
        manifest = check_benchmark(target, text, sha256=sha256, count=len(lines))
        return _parse_lines(lines, jsonl), manifest
    if target.suffix == ".jsonl":
        return iter_jsonl_groups(target), None
    data = load_json(target)
    if not isinstance(data, dict) or data.get("kind") != GROUP_KIND:
        raise SpecReadError(
            str(target), "expected a task group (kind: uncobench-task-group)", json_path="$"
        )
    return [validate_document(data, TaskGroup, str(target))], None


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


ChunkProof = tuple[list[VerificationReport], dict[str, dict[str, str]]]
"""a batch's reports, and the certificates of its groups (id -> file name -> SMT-LIB2) when
they were asked for"""


def _verify_chunk(
    lines: list[tuple[int, str]],
    source: str,
    budget: SolverBudget,
    evidence: Evidence = "verdict",
    certify: bool = False,
    minimum_rounds: MinimumRounds | None = None,
    digests: list[str] | None = None,
) -> ChunkProof:
    """Re-prove a fixed batch of groups (numbered lines of ``source``) on one Z3 context.

    Every line is read first, as :func:`iter_jsonl_groups` reads it: the first line that is
    not a group is a :class:`SpecReadError` naming ``source:line``, whoever reads it. With
    verdict-only evidence a group that is not proved is proved again with full evidence on a
    context of its own, so that every check of a failing group is reported with its witness
    or core, and that evidence depends on the group alone. ``digests``: the manifest's stored
    content hashes of these lines, each checked (:func:`digest_check`).
    """
    groups = _parse_lines(lines, source)
    reports = []
    certificates: dict[str, dict[str, str]] = {}
    with SolverContext() as context:
        for at, group in enumerate(groups):
            name = f"{source}#{group.id}"
            files: dict[str, str] | None = {} if certify else None
            report, task = verify_group_task(
                group, name, budget, files, context=context, evidence=evidence
            )
            if report.verdict != Verdict.PROVED and evidence != "full":
                files = {} if certify else None
                report, task = verify_group_task(group, name, budget, files, evidence="full")
            report = with_rendering_check(report, group, task)
            report = with_minimum_rounds_check(report, group, minimum_rounds, task)
            if digests is not None:
                report = with_check(report, digest_check(group, digests[at]))
            reports.append(report)
            if files:
                certificates[group.id] = files
    return reports, certificates


VerifyProgress = Callable[[int, int], None]
"""``(groups verified, groups in the benchmark)``"""


def verify_benchmark(
    path: str | Path,
    budget: SolverBudget,
    workers: int | None = None,
    progress: VerifyProgress | None = None,
    executor: ExecutorOptions | None = None,
    evidence: Evidence = "verdict",
    certificates: dict[str, dict[str, str]] | None = None,
    minimum_rounds: MinimumRounds | None = None,
) -> list[VerificationReport]:
    """Re-prove every group of a built benchmark (in parallel), and its content hash.

    ``certificates``, when given, receives every group's solver queries as standalone
    SMT-LIB2 files (group id -> file name -> text), as ``verify --emit-smt2`` writes them.

    The first report is the manifest's (``document="manifest"``: the content hash), then one
    per group in file order. ``progress`` is told after each chunk of groups. Groups are
    proved in fixed batches of ``VERIFY_BATCH`` that share a Z3 context; ``evidence`` is
    verdict-only by default (groups that are not proved are reported with full evidence
    anyway) or ``"full"`` for every check. ``executor`` says where batches are proved (local
    worker processes, the default, or Ray tasks); ``workers`` is the shorthand for local
    workers. The reports depend on neither. ``minimum_rounds`` (the command line passes
    :func:`uncobench_z3.evaluation.settings_stored_proofs`) computes what each group stores
    for an evaluation again (its minimum rounds, its decision records' first changes) for
    :func:`._rounds_check.stored_proofs_checks`.
    """
    target = Path(path)
    groups_file = target / GROUPS_FILE
    if not groups_file.exists():
        raise SpecReadError(str(target), f"is not a built benchmark (no {GROUPS_FILE})")
    data, text = read_utf8_bytes(groups_file)
    # each batch reads its own lines; bad input is an error, not a verdict: the first bad
    # line's (batches are read in file order, and each reads all its lines before proving)
    lines = numbered_lines(text)
    sha256 = hashlib.sha256(data).hexdigest()
    del data
    manifest, problems = manifest_problems(target, text, sha256=sha256, count=len(lines))
    stored = stored_digests(manifest)
    if stored is not None and len(stored) != len(lines):
        problems.append((
            "group-digests",
            f"the manifest stores {len(stored)} content hash(es) for {len(lines)} group(s)",
        ))  # fmt: skip
    refuted = dict(problems)
    checks = [
        CheckResult(
            name=name,
            kind="consistency",
            verdict=Verdict.REFUTED if name in refuted else Verdict.PROVED,
            summary=refuted.get(name, proved),
        )
        for name, proved in (
            ("content-hash", f"{GROUPS_FILE} matches the manifest's content hash"),
            ("group-count", f"{GROUPS_FILE} holds the manifest's {len(lines)} group(s)"),
            *(
                [("group-digests", "the manifest stores a content hash for every group")]
                if stored is not None
                else []
            ),
        )
    ]
    checked = stored if stored is not None and len(stored) == len(lines) else None
    reports: list[VerificationReport] = [
        VerificationReport(
            source=str(target / MANIFEST_FILE),
            document="manifest",
            task_id="manifest",
            verdict=combine([c.verdict for c in checks]),
            checks=checks,
        )
    ]
    starts = range(0, len(lines), VERIFY_BATCH)
    chunks = [lines[i : i + VERIFY_BATCH] for i in starts]
    where = (executor or ExecutorOptions()).with_workers(workers).for_items(len(chunks))
    local = where.kind == "local"
    slots = (where.workers or os.cpu_count() or 1) if local else None
    chunk_digests = [checked[i : i + VERIFY_BATCH] if checked else None for i in starts]
    source = str(groups_file)

    certify = certificates is not None

    def add(found: ChunkProof) -> None:
        reports.extend(found[0])
        if certificates is not None:
            certificates.update(found[1])
        if progress is not None:
            progress(len(reports) - 1, len(lines))

    if progress is not None:
        progress(0, len(lines))
    if local and (slots == 1 or len(chunks) == 1):
        for chunk, digests in zip(chunks, chunk_digests, strict=True):
            add(_verify_chunk(chunk, source, budget, evidence, certify, minimum_rounds, digests))
        return reports
    with open_executor(where) as pool:
        n = len(chunks)
        same: list[list[Any]] = [[source], [budget], [evidence], [certify], [minimum_rounds]]
        for found in pool.map(_verify_chunk, chunks, *(each * n for each in same), chunk_digests):
            add(found)
    return reports
