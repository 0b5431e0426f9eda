"""``uncobench verify`` and ``uncobench schema``."""

from __future__ import annotations

import glob
import json
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import click
from rich.markup import escape

from .._executor import ExecutorOptions
from .._outdir import check_output_folder, contained, lock_output
from ..errors import SpecReadError
from ..solver import Evidence, SolverBudget, Verdict, VerificationReport
from ..spec import TaskSpec, dump_json, write_text_atomic
from ._app import EXIT_INPUT, EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, cli, err_console
from ._documents import verify_path
from ._options import (
    executor_from,
    executor_options,
    rlimit_option,
    solver_seed_type,
    timeout_ms_option,
    workers_option,
)
from ._output import Column, Output, OutputTable, Styled, format_option, output_for, progress_bar

VERDICT_STYLE = {Verdict.PROVED: "green", Verdict.REFUTED: "bold red", Verdict.UNKNOWN: "yellow"}
SHOWN_ORDER = (Verdict.PROVED, Verdict.REFUTED, Verdict.UNKNOWN)
PER_DOCUMENT_ROWS = 20
"""above this many inputs the summary counts verdicts instead of listing every file"""
SMT2_MARKER = "smt2.json"
"""written into an ``--emit-smt2`` folder before its first certificate: the folder is
verify's, so a later verify may write there again (no version in it: ``encodings/`` commits
it, and regenerating must not change it)"""


def verdict_cell(verdict: Verdict) -> Styled:
    return Styled(verdict.label, VERDICT_STYLE[verdict])


def expand_inputs(patterns: tuple[str, ...]) -> list[str]:
    """Files, directories and glob patterns (quoted globs are expanded here)."""
    paths: list[str] = []
    for pattern in patterns:
        if any(ch in pattern for ch in "*?[") and not Path(pattern).exists():
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise SpecReadError(pattern, "no file matches this pattern")
            paths.extend(matches)
        else:
            paths.append(pattern)
    return paths


def report_table(report: VerificationReport) -> OutputTable:
    """One row per check (and one per structural problem), the evidence in full."""
    table = OutputTable("", [Column("verdict"), Column("check"), Column("evidence")], boxed=False)
    for check in report.checks:
        evidence = check.summary + (f" (solver: {check.reason})" if check.reason else "")
        table.add_row(verdict_cell(check.verdict), check.name, evidence)
        for problem in check.problems or []:
            table.add_row("", "", f"  - {problem.path}: {problem.message}")
    return table


def print_report(out: Output, report: VerificationReport) -> None:
    out.blank()
    out.heading(f"{report.source}  ({report.task_id or '?'})", verdict_cell(report.verdict))
    if report.gold is not None:
        out.say(f"  gold answer: [bold]{escape(report.gold.text())}[/]")
    out.table(report_table(report))
    for note in report.notes:
        out.say(f"  [dim]note: {escape(note)}[/]")


def summary_table(
    documents: list[VerificationReport], unreadable: list[str], benchmark: bool = False
) -> OutputTable:
    """A few files: one row each. Many, or a built benchmark: the verdicts counted."""
    if benchmark or len(documents) + len(unreadable) > PER_DOCUMENT_ROWS:
        labels = [v.label for v in SHOWN_ORDER]
        table = OutputTable.of("verification summary", ["documents", *labels, "checks"], left=0)
        counts = [sum(1 for r in documents if r.verdict == v) for v in SHOWN_ORDER]
        checks = sum(len(r.checks) for r in documents)
        table.add_row(str(len(documents)), *map(str, counts), str(checks))
        if unreadable:
            table.add_row(f"{len(unreadable)} unreadable", "", "", "", "")
        return table
    labels = [v.label for v in SHOWN_ORDER]
    table = OutputTable.of("verification summary", ["file", "task", "verdict", *labels], left=3)
    for report in documents:
        counts = [sum(1 for c in report.checks if c.verdict == v) for v in SHOWN_ORDER]
        table.add_row(
            report.source, report.task_id or "?", verdict_cell(report.verdict), *map(str, counts)
        )
    for source in unreadable:
        table.add_row(source, "-", Styled("unreadable", "bold red"), "", "", "")
    return table


def exit_code_of(reports: list[VerificationReport], unreadable: int) -> int:
    if unreadable:
        return EXIT_INPUT
    worst = min((r.verdict for r in reports), default=Verdict.PROVED)
    return {Verdict.PROVED: EXIT_OK, Verdict.REFUTED: EXIT_REFUTED, Verdict.UNKNOWN: EXIT_UNKNOWN}[
        worst
    ]


def verification_json(
    reports: list[VerificationReport], errors: list[dict[str, str | None]]
) -> dict[str, object]:
    """The one JSON shape of ``verify --json``, whatever the number of inputs (``verdict`` is
    the weakest report's, ``null`` when nothing could be read)."""
    documents = [r for r in reports if r.document != "manifest"]
    return {
        "verdict": min(r.verdict for r in reports).label if reports else None,
        "documents": len(documents),
        "counts": {v.label: sum(1 for r in documents if r.verdict == v) for v in SHOWN_ORDER},
        "reports": [r.model_dump(mode="json", exclude_none=True) for r in reports],
        "unreadable": errors,
    }


def print_verification(
    out: Output, reports: list[VerificationReport], unreadable: list[str], verbose: bool
) -> None:
    """One document: its full report. Several: the reports that are not proved (every
    report with ``verbose``), then the summary and each benchmark's content-hash check."""
    documents = [r for r in reports if r.document != "manifest"]
    manifests = [r for r in reports if r.document == "manifest"]
    single = len(documents) == 1 and not unreadable and not manifests
    for report in documents:
        if single or verbose or report.verdict != Verdict.PROVED:
            print_report(out, report)
    if single:
        return
    out.blank()
    out.table(summary_table(documents, unreadable, benchmark=bool(manifests)))
    if manifests:
        out.blank()
    for manifest in manifests:
        check = manifest.checks[0]
        style = VERDICT_STYLE[manifest.verdict]
        out.say(
            f"{escape(manifest.source)}: [{style}]{manifest.verdict.label}[/] "
            f"({escape(check.summary)})"
        )


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@format_option
@click.option("--verbose", is_flag=True, help="Print every report, the proved ones too.")
@click.option(
    "--emit-smt2",
    "emit_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write every solver query as a standalone SMT-LIB2 file: DIR/<task id>/<query>.smt2.",
)
@timeout_ms_option
@rlimit_option
@click.option(
    "--seed", default=0, show_default=True, type=solver_seed_type, help="Solver random seed."
)
@workers_option("all cores, or every CPU of the Ray cluster; a built benchmark only")
@executor_options
@click.option("--no-progress", is_flag=True, help="No progress bar on a benchmark.")
def verify(
    inputs: tuple[str, ...],
    output_format: str,
    as_json: bool,
    verbose: bool,
    emit_dir: Path | None,
    timeout_ms: int,
    rlimit: int,
    seed: int,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    no_progress: bool,
) -> int:
    """Prove that task specs (or task groups, or a built benchmark) are well-posed.

    INPUTS are files, directories (a built benchmark) or glob patterns. One document prints
    its full report; several print the reports that are not proved (all with --verbose), then
    a summary. A benchmark's manifest (its content hash) is checked, not counted as a document.

    \b
    Exit codes:
      0  everything proved
      1  something refuted
      2  an input cannot be read
      3  nothing refuted but something unknown (a solver budget ran out)
      4  an internal inconsistency (a bug: please report)
    """
    out = output_for(output_format, as_json)
    where = executor_from(executor, ray_address, workers)
    budget = SolverBudget(timeout_ms=timeout_ms, rlimit=rlimit, seed=seed)
    # before any work: one writer of any kind in DIR, which is new, empty or verify's own
    folder: AbstractContextManager[object] = nullcontext()
    if emit_dir is not None:
        target = emit_dir
        folder = lock_output(target, "verify", check=lambda: check_certificate_folder(target))
    with folder:
        reports, unreadable, errors, certificates = _verify_inputs(
            inputs, budget, where, out.is_json or verbose, emit_dir is not None, no_progress
        )
        # every input is read before the first certificate is written: an unreadable one
        # writes none, not those of the inputs before it
        written = 0
        if emit_dir is not None and certificates and not unreadable:
            write_text_atomic(emit_dir / SMT2_MARKER, dump_json({"kind": "uncobench-smt2"}))
            for task_id, files in certificates.items():
                for name, text in files.items():
                    write_text_atomic(contained(emit_dir, task_id, f"{name}.smt2"), text)
                    written += 1
                _drop_other_certificates(contained(emit_dir, task_id), files)
    if out.is_json:
        out.json(verification_json(reports, errors))
    else:
        print_verification(out, reports, unreadable, verbose)
    if emit_dir is not None:
        # say what was written: an unreadable input writes no certificate at all
        if written:
            out.say(f"[dim]{written} certificate file(s) written under {escape(str(emit_dir))}[/]")
        elif unreadable:
            out.say("[dim]no certificate written: an input could not be read[/]")
        else:
            out.say("[dim]no certificate written[/]")
    return exit_code_of(reports, len(unreadable))


def check_certificate_folder(folder: Path) -> None:
    """Refuse an ``--emit-smt2`` folder unless it is new, empty or one verify wrote."""
    check_output_folder(folder, (SMT2_MARKER,), "certificate folder", option="--emit-smt2")


def _drop_other_certificates(folder: Path, kept: dict[str, str]) -> None:
    """Remove the certificates in a task's folder that this verify did not write: those of
    an earlier verify of the same task id (another version of the task, say) would
    otherwise lie beside the new ones, with nothing to tell them apart."""
    for path in folder.glob("*.smt2"):
        if path.stem not in kept:
            path.unlink(missing_ok=True)


def _verify_inputs(
    inputs: tuple[str, ...],
    budget: SolverBudget,
    where: ExecutorOptions,
    shown_in_full: bool,
    emit: bool,
    no_progress: bool,
) -> tuple[
    list[VerificationReport], list[str], list[dict[str, str | None]], dict[str, dict[str, str]]
]:
    """Every input verified: the reports, the unreadable inputs (and their errors, printed
    as they come) and, with ``emit``, every certificate by task id."""
    reports: list[VerificationReport] = []
    unreadable: list[str] = []
    errors: list[dict[str, str | None]] = []
    every_certificate: dict[str, dict[str, str]] = {}
    certificate_source: dict[str, str] = {}  # task id -> the input whose certificates it has
    for path in expand_inputs(inputs):
        certificates: dict[str, dict[str, str]] | None = {} if emit else None
        try:
            # every check that will be shown gets its evidence; a benchmark's proved groups
            # are only counted unless asked for (--verbose, JSON, certificates)
            evidence: Evidence = "full" if shown_in_full or emit else "verdict"
            with progress_bar("verifying", "groups", enabled=not no_progress) as bar:
                found = verify_path(path, budget, certificates, bar.update, where, evidence)
            _merge_certificates(every_certificate, certificate_source, certificates or {}, path)
        except SpecReadError as exc:
            unreadable.append(path)
            errors.append({"source": exc.path, "json_path": exc.json_path, "error": exc.detail})
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
            continue
        reports.extend(found)
    return reports, unreadable, errors, every_certificate


def _merge_certificates(
    every: dict[str, dict[str, str]],
    sources: dict[str, str],
    found: dict[str, dict[str, str]],
    path: str,
) -> None:
    """Add one input's certificates to those of the inputs before it.

    Certificates are written as ``DIR/<task id>/<query>.smt2``, so two inputs with one task
    id share a folder: the same query must then be the same text (a spec and its group), or
    one input's certificate would silently replace the other's. Checked before ``every`` is
    changed, so a refused input adds nothing."""
    for task_id, files in found.items():
        known = every.get(task_id, {})
        for name, text in files.items():
            if known.get(name, text) != text:
                raise SpecReadError(
                    path,
                    f"task id {task_id!r} is also that of {sources[task_id]}, whose "
                    f"certificate {name}.smt2 differs: --emit-smt2 writes one folder per "
                    "task id",
                )
    for task_id, files in found.items():
        every.setdefault(task_id, {}).update(files)
        sources.setdefault(task_id, path)


@cli.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write to a file.")
def schema(out: Path | None) -> None:
    """Print the JSON Schema of a task spec."""
    text = json.dumps(TaskSpec.model_json_schema(), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(out, text)
