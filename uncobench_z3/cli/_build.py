"""``uncobench build`` and ``uncobench stats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..construct import MANIFEST_FILE, build_benchmark
from ..errors import SpecReadError
from ..spec import load_json
from ._app import EXIT_OK, cli
from ._verify import console


@cli.command()
@click.option("--groups", default=1000, show_default=True, help="Task groups to keep.")
@click.option("--seed", default=7, show_default=True, help="Seed of every random choice.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder (manifest.json + groups.jsonl).",
)
@click.option("--workers", type=int, default=None, help="Worker processes [default: all cores].")
@click.option(
    "--none-share",
    default=0.2,
    show_default=True,
    help="Share of groups planned with no eligible candidate.",
)
@click.option("--timeout-ms", default=2000, show_default=True, help="Solver timeout per query.")
@click.option("--force", is_flag=True, help="Discard an output built with another configuration.")
def build(
    groups: int,
    seed: int,
    out: Path,
    workers: int | None,
    none_share: float,
    timeout_ms: int,
    force: bool,
) -> int:
    """Build a verified benchmark offline (resumable: rerun the same command after a stop)."""
    with Progress(
        TextColumn("[bold]building"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("groups kept · {task.fields[candidates]} candidates"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("build", total=groups, candidates=0)

        def hook(candidates: int, retained: int, wanted: int) -> None:
            progress.update(task, completed=retained, total=wanted, candidates=candidates)

        result = build_benchmark(
            out,
            groups=groups,
            seed=seed,
            none_share=none_share,
            workers=workers,
            force=force,
            progress=hook,
            timeout_ms=timeout_ms,
        )
    stats = result.manifest["stats"]
    assert isinstance(stats, dict)
    rates = stats["pass_rates"]
    note = (
        " (already built: nothing to do)"
        if result.reused
        else (
            f" (resumed {result.resumed_chunks} finished chunks)" if result.resumed_chunks else ""
        )
    )
    console.print(
        f"wrote {escape(str(out))}: {stats['groups']} groups from {rates['candidates']} "
        f"candidates ({rates['retained_percent']}% retained){note}"
    )
    return EXIT_OK


def _table(title: str, columns: list[str]) -> Table:
    table = Table(title=title, header_style="bold", title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table


def print_stats(stats: dict[str, Any]) -> None:
    rates = stats["pass_rates"]
    table = _table("pass rates by stage", ["stage", "groups", "%"])
    table.add_row("candidates generated", str(rates["candidates"]), "100.0")
    for stage, label in (
        ("spec_validation", "rejected at spec validation"),
        ("logical_verification", "rejected at logical verification"),
        ("rendering_validation", "rejected at rendering / full-information validation"),
    ):
        table.add_row(label, str(rates["rejected"][stage]), f"{rates['rejected_percent'][stage]}")
    table.add_row("[bold]retained", str(rates["retained"]), f"{rates['retained_percent']}")
    console.print(table)
    if rates.get("drafts_redrawn"):
        codes = ", ".join(f"{k}: {v}" for k, v in rates.get("redraw_problems", {}).items())
        console.print(
            f"  [dim]spec validation: {rates['drafts_redrawn']} draft(s) redrawn by the generator "
            f"before passing ({escape(codes)})[/]"
        )
    for stage, reasons in rates.get("rejection_reasons", {}).items():
        listing = ", ".join(f"{escape(k)}: {v}" for k, v in sorted(reasons.items()))
        console.print(f"  [dim]{stage}: {listing}[/]")
    table = _table("domains", ["domain", "groups", "%"])
    for name, row in stats["domains"].items():
        table.add_row(escape(name), str(row["groups"]), str(row["percent"]))
    console.print(table)
    table = _table("operations", ["operation", "groups", "%"])
    for name, row in stats["operations"].items():
        table.add_row(name, str(row["groups"]), str(row["percent"]))
    console.print(table)
    operations = sorted(stats["operations"])
    table = _table(
        f"domain x operation ({stats['pairs_present']} of "
        f"{len(stats['domains']) * len(operations)} pairs present)",
        ["domain", *[op.replace("_", " ") for op in operations]],
    )
    for name, row in stats["domain_operation"].items():
        table.add_row(escape(name), *[str(row.get(op, 0)) for op in operations])
    console.print(table)
    table = _table("decisions", ["answer", "groups"])
    for name, count in stats["decisions"].items():
        table.add_row(name, str(count))
    console.print(table)
    table = _table("settings available", ["setting", "groups"])
    for name, count in stats["settings_available"].items():
        table.add_row(name, str(count))
    console.print(table)
    for kind, spread in stats["defects_by_fact_type"].items():
        listing = ", ".join(f"{k} {v}" for k, v in spread.items())
        console.print(f"[bold]{kind}[/] defects by fact type: {listing}")
    for kind, spread in stats["defects_by_role"].items():
        top = list(spread.items())[:8]
        listing = ", ".join(f"{escape(k)} {v}" for k, v in top)
        more = f" (+{len(spread) - 8} more roles)" if len(spread) > 8 else ""
        console.print(f"[bold]{kind}[/] defects by role: {listing}{more}")


@cli.command()
@click.argument("bench", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def stats(bench: Path, as_json: bool) -> int:
    """Pass rates per stage and diversity tables of a built benchmark."""
    manifest = load_json(bench / MANIFEST_FILE if bench.is_dir() else bench)
    # statistics are plain numbers (percentages), not exact quantities: re-read as floats
    manifest = json.loads(json.dumps(manifest, default=float))
    if not isinstance(manifest, dict) or "stats" not in manifest:
        raise SpecReadError(str(bench), "is not a built benchmark (no statistics in its manifest)")
    if as_json:
        click.echo(json.dumps(manifest["stats"], indent=2))
    else:
        print_stats(manifest["stats"])
    return EXIT_OK
