"""``uncobench perturb``: the paired task group of one spec."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from .._outdir import LOCK_FILE
from ..construct import GROUPS_FILE, MANIFEST_FILE
from ..errors import ConfigError
from ..evaluation import RUN_FILE, SAMPLES_FILE
from ..report import HTML_FILE, METRICS_FILE
from ..settings import DefectKind, parse_pin
from ..settings import perturb as build_group
from ..solver import SolverBudget, Verdict
from ..spec import dump_json, load_spec, write_text_atomic
from ._app import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, cli
from ._options import timeout_ms_option
from ._output import format_option, output_for
from ._verify import print_report

_MADE_FOLDERS = (
    ("a benchmark folder", (MANIFEST_FILE, GROUPS_FILE)),
    ("a run folder", (RUN_FILE, SAMPLES_FILE)),
    ("a report folder", (HTML_FILE, METRICS_FILE)),
)
"""the folders this package makes, each with the files that together say it is one"""


def check_group_out(out: Path) -> None:
    """Refuse an ``--out`` inside a folder this package made: its lock file is there (every
    writer of a folder leaves it), or the files of a benchmark, a run or a report are. A
    group file written there replaces a benchmark's ``groups.jsonl`` (whose manifest then
    refuses it), a run's or report's file, or is one more file where the writer of the
    folder expects only its own. Any other file is replaced, as a command's output is."""
    folder = out.parent
    if not folder.is_dir():
        return
    names = {entry.name for entry in folder.iterdir()}
    made = LOCK_FILE in names or any(set(files) <= names for _, files in _MADE_FOLDERS)
    if not made:
        return
    kind = next((kind for kind, files in _MADE_FOLDERS if names & set(files)), "an output folder")
    raise ConfigError(
        f"{out} is inside {folder}, {kind} that uncobench made; choose an --out outside it"
    )


@cli.command()
@click.argument("spec_path", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the task group (JSON).",
)
@click.option("--seed", default=0, show_default=True, help="Chooses the designated defects.")
@timeout_ms_option
@click.option("--quiet", is_flag=True, help="Print only a one-line summary.")
@click.option(
    "--misaligned",
    multiple=True,
    metavar="ROLE.FACT@CANDIDATE[:CONTEXT]",
    help="Pin the Misaligned defect: the role states the candidate's fact for CONTEXT.",
)
@click.option(
    "--incomplete",
    multiple=True,
    metavar="ROLE.FACT@CANDIDATE[:LOW-HIGH|:OPT,OPT]",
    help="Pin the Incomplete defect: the role states a range or a set of options.",
)
@click.option(
    "--missed",
    multiple=True,
    metavar="ROLE",
    help="Pin the Missed defect: the role misses a request.",
)
@format_option
def perturb(
    spec_path: str,
    out: Path,
    seed: int,
    timeout_ms: int,
    quiet: bool,
    misaligned: tuple[str, ...],
    incomplete: tuple[str, ...],
    missed: tuple[str, ...],
    output_format: str,
    as_json: bool,
) -> int:
    """Derive the Reliable/Misaligned/Incomplete/Missed/Mixed group of a verified spec.

    Every defect comes with a solver proof that it matters; the group is written only when
    the spec itself is well-posed. A pinned defect is proved like a chosen one, and refused
    (exit 1, with the reason) when it does not matter.
    """
    named: list[tuple[DefectKind, tuple[str, ...]]] = [
        ("misaligned", misaligned),
        ("incomplete", incomplete),
        ("missed", missed),
    ]
    for kind, texts in named:
        if len(texts) > 1:  # click would keep the last one silently
            raise ConfigError(f"--{kind} given {len(texts)} times: a group has one {kind} defect")
    pins = [parse_pin(kind, texts[0]) for kind, texts in named if texts]
    check_group_out(out)
    spec = load_spec(spec_path)
    result = build_group(
        spec, seed=seed, budget=SolverBudget(timeout_ms=timeout_ms), source=spec_path, pins=pins
    )
    output = output_for(output_format, as_json)
    refused = EXIT_UNKNOWN if result.report.verdict == Verdict.UNKNOWN else EXIT_REFUTED
    if result.group is not None:
        write_text_atomic(out, dump_json(result.group.model_dump(mode="json", exclude_none=True)))
    available = [s.name for s in result.group.settings if s.available] if result.group else []
    if output.is_json:
        output.json({
            "written": None if result.group is None else str(out),
            "available": available,
            "unavailable": result.unavailable,
            "refused": result.refused,
            "report": result.report.model_dump(mode="json", exclude_none=True),
        })  # fmt: skip
    elif not quiet:
        print_report(output, result.report)
    if result.refused is not None:
        output.say(f"[bold red]no group written:[/] {escape(result.refused)}")
        return refused
    if result.group is None:
        output.say("[bold red]no group written:[/] the spec is not well-posed")
        return refused
    output.say(f"wrote {escape(str(out))}: settings {', '.join(available)}")
    for name, reason in result.unavailable.items():
        output.say(f"  [yellow]{name} unavailable:[/] {escape(reason)}")
    return EXIT_OK if result.report.verdict == Verdict.PROVED else EXIT_UNKNOWN
