"""``uncobench verify`` and ``uncobench schema``."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..errors import SpecReadError
from ..solver import SolverBudget, Verdict, VerificationReport
from ..spec import TaskSpec, write_text_atomic
from ._app import EXIT_INPUT, EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, cli, err_console
from ._documents import verify_path

console = Console(highlight=False, soft_wrap=True)

VERDICT_STYLE = {
    Verdict.PROVED: "[green]proved[/]",
    Verdict.REFUTED: "[bold red]refuted[/]",
    Verdict.UNKNOWN: "[yellow]unknown[/]",
}


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


def _print_report(report: VerificationReport) -> None:
    title = f"{escape(report.source)}  [dim]({escape(report.task_id or '?')})[/]"
    console.print(f"\n[bold]{title}[/]  {VERDICT_STYLE[report.verdict]}")
    if report.gold is not None:
        console.print(f"  gold answer: [bold]{escape(report.gold.text())}[/]")
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("verdict", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("evidence")
    for check in report.checks:
        evidence = escape(check.summary)
        if check.reason:
            evidence += f" [dim](solver: {escape(check.reason)})[/]"
        table.add_row(VERDICT_STYLE[check.verdict], escape(check.name), evidence)
        for problem in check.problems or []:
            table.add_row("", "", f"  [red]-[/] {escape(problem.path)}: {escape(problem.message)}")
    console.print(table)
    for note in report.notes:
        console.print(f"  [dim]note: {escape(note)}[/]")


def _print_summary(reports: list[VerificationReport], unreadable: list[str]) -> None:
    table = Table(title="verification summary", header_style="bold")
    table.add_column("file")
    table.add_column("task")
    table.add_column("verdict")
    table.add_column("proved", justify="right")
    table.add_column("refuted", justify="right")
    table.add_column("unknown", justify="right")
    for report in reports:
        counts = {v: sum(1 for c in report.checks if c.verdict == v) for v in Verdict}
        table.add_row(
            escape(report.source),
            escape(report.task_id or "?"),
            VERDICT_STYLE[report.verdict],
            str(counts[Verdict.PROVED]),
            str(counts[Verdict.REFUTED]),
            str(counts[Verdict.UNKNOWN]),
        )
    for source in unreadable:
        table.add_row(escape(source), "-", "[bold red]unreadable[/]", "", "", "")
    console.print(table)


def _print_aggregate(reports: list[VerificationReport], unreadable: list[str]) -> None:
    """For a built benchmark: counts instead of a thousand rows."""
    table = Table(title="verification summary", header_style="bold")
    table.add_column("documents")
    for verdict in Verdict:
        table.add_column(verdict.label, justify="right")
    table.add_column("checks", justify="right")
    counts = {v: sum(1 for r in reports if r.verdict == v) for v in Verdict}
    checks = sum(len(r.checks) for r in reports)
    table.add_row(str(len(reports)), *[str(counts[v]) for v in Verdict], str(checks))
    console.print(table)
    if unreadable:
        console.print(f"[bold red]{len(unreadable)} unreadable input(s)[/]")


def exit_code_of(reports: list[VerificationReport], unreadable: int) -> int:
    if unreadable:
        return EXIT_INPUT
    worst = min((r.verdict for r in reports), default=Verdict.PROVED)
    return {Verdict.PROVED: EXIT_OK, Verdict.REFUTED: EXIT_REFUTED, Verdict.UNKNOWN: EXIT_UNKNOWN}[
        worst
    ]


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report(s) as JSON on stdout.")
@click.option(
    "--emit-smt2",
    "emit_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write every solver query as a standalone SMT-LIB2 file: DIR/<task id>/<query>.smt2.",
)
@click.option("--timeout-ms", default=2000, show_default=True, help="Solver timeout per query.")
@click.option(
    "--rlimit", default=50_000_000, show_default=True, help="Solver resource limit per query."
)
@click.option("--seed", default=0, show_default=True, help="Solver random seed.")
def verify(
    inputs: tuple[str, ...],
    as_json: bool,
    emit_dir: Path | None,
    timeout_ms: int,
    rlimit: int,
    seed: int,
) -> int:
    """Prove that task specs (or task groups, or a built benchmark) are well-posed.

    INPUTS are files, directories or glob patterns. Exit code 0: everything proved;
    1: something refuted; 2: an input cannot be read; 3: something unknown.
    """
    budget = SolverBudget(timeout_ms=timeout_ms, rlimit=rlimit, seed=seed)
    reports: list[VerificationReport] = []
    unreadable: list[str] = []
    errors: list[dict[str, str | None]] = []
    for path in expand_inputs(inputs):
        certificates: dict[str, dict[str, str]] | None = {} if emit_dir is not None else None
        try:
            found = verify_path(path, budget, certificates)
        except SpecReadError as exc:
            unreadable.append(path)
            errors.append({"source": exc.path, "json_path": exc.json_path, "error": exc.detail})
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
            continue
        reports.extend(found)
        if emit_dir is not None and certificates:
            for task_id, files in certificates.items():
                for name, text in files.items():
                    write_text_atomic(emit_dir / task_id / f"{name}.smt2", text)
    if as_json:
        docs = [r.model_dump(mode="json", exclude_none=True) for r in reports]
        if len(docs) == 1 and not errors:
            click.echo(json.dumps(docs[0], indent=2))
        else:
            verdict = min((r.verdict for r in reports), default=Verdict.PROVED)
            click.echo(
                json.dumps(
                    {"verdict": verdict.label, "reports": docs, "unreadable": errors}, indent=2
                )
            )
    else:
        many = len(reports) > 20
        for report in reports:
            if not many or report.verdict != Verdict.PROVED:
                _print_report(report)
        if many:
            _print_aggregate(reports, unreadable)
        elif len(reports) + len(unreadable) > 1:
            _print_summary(reports, unreadable)
        if emit_dir is not None:
            console.print(f"[dim]certificates written under {escape(str(emit_dir))}[/]")
    return exit_code_of(reports, len(unreadable))


@cli.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write to a file.")
def schema(out: Path | None) -> None:
    """Print the JSON Schema of a task spec."""
    text = json.dumps(TaskSpec.model_json_schema(), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(out, text)
