"""``uncobench audit``: sample candidates per construction stage, record human verdicts,
report the agreement of the automated decisions with them."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click
from rich.markup import escape

from ..construct import (
    REJECTED_FILE,
    AuditDecision,
    StageAgreement,
    audit_agreement,
    read_audit,
    record_verdict,
    sample_audit,
    write_audit,
)
from ..stats import percent_text
from ._app import EXIT_OK, cli
from ._output import Output, OutputTable, format_option, output_for

VERDICTS = {"accept": "accepted", "reject": "rejected"}


@cli.group()
def audit() -> None:
    """Human audit of the construction stages: sample, record verdicts, report agreement."""


@audit.command("sample")
@click.argument("bench", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--per-stage", default=100, show_default=True, help="Items to draw per stage.")
@click.option("--seed", default=0, show_default=True, help="Seed of the draw.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Audit file to write (JSON Lines).",
)
@click.option("--force", is_flag=True, help="Replace an audit file that holds human verdicts.")
@format_option
def sample_command(
    bench: Path,
    per_stage: int,
    seed: int,
    out: Path,
    force: bool,
    output_format: str,
    as_json: bool,
) -> int:
    """Draw up to N accepted and rejected candidates per stage of the built benchmark BENCH."""
    items, has_rejected = sample_audit(bench, per_stage, seed)
    write_audit(out, items, force=force)
    output = output_for(output_format, as_json)
    table = OutputTable.of("audit sample", ["stage", "accepted", "rejected"])
    for stage in dict.fromkeys(item.stage for item in items):
        chosen = [item for item in items if item.stage == stage]
        accepted = sum(item.automated == "accepted" for item in chosen)
        table.add_row(stage, str(accepted), str(len(chosen) - accepted))
    if output.is_json:
        output.json({"out": str(out), "items": len(items), "has_rejected": has_rejected,
                     "stages": table.records()})  # fmt: skip
    else:
        output.table(table)
    if not has_rejected:
        output.say(
            f"[yellow]note:[/] {escape(str(bench))} has no {REJECTED_FILE} (built before "
            "rejections were recorded): only accepted candidates were drawn; rebuild it with "
            "--force to record them"
        )
    output.say(
        f"wrote {len(items)} item(s) to {escape(str(out))}; record verdicts with "
        f"`uncobench audit record {escape(str(out))} ITEM accept|reject`"
    )
    return EXIT_OK


@audit.command("record")
@click.argument("audit_file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("item")
@click.argument("verdict", type=click.Choice(sorted(VERDICTS)))
@click.option("--note", default=None, help="A note kept with the verdict.")
def record_command(audit_file: Path, item: str, verdict: str, note: str | None) -> int:
    """Record a human verdict (accept or reject) for ITEM of AUDIT_FILE."""
    decision = cast("AuditDecision", VERDICTS[verdict])
    recorded = record_verdict(audit_file, item, decision, note)
    agrees = "agrees with" if recorded.human == recorded.automated else "differs from"
    Output().say(
        f"{escape(recorded.item)}: human {recorded.human}, {agrees} the automated "
        f"{recorded.automated}"
    )
    return EXIT_OK


def agreement_table(rows: list[StageAgreement]) -> OutputTable:
    headers = ["stage", "judged", "agreed", "agreement", "95% CI",
               "auto rejected, human accepted", "auto accepted, human rejected"]  # fmt: skip
    table = OutputTable.of("human vs automated decisions", headers)
    for row in rows:
        low, high = percent_text(row.ci_low), percent_text(row.ci_high)
        interval = "–" if row.ci_low is None else f"{low}-{high}"
        table.add_row(
            row.stage,
            f"{row.judged}/{row.items}",
            str(row.agreed),
            percent_text(row.agreement),
            interval,
            str(len(row.rejected_but_human_accepted)),
            str(len(row.accepted_but_human_rejected)),
        )
    return table


def disagreement_lines(rows: list[StageAgreement]) -> list[str]:
    """The disagreeing items, per stage and direction."""
    lines = []
    for row in rows[:-1]:  # the last row repeats them all
        for direction, found in (
            ("automated rejected, human accepted", row.rejected_but_human_accepted),
            ("automated accepted, human rejected", row.accepted_but_human_rejected),
        ):
            if found:
                lines.append(f"{row.stage}: {direction}: {', '.join(found)}")
    return lines


@audit.command("report")
@click.argument("audit_file", type=click.Path(dir_okay=False, path_type=Path))
@format_option
def report_command(audit_file: Path, output_format: str, as_json: bool) -> int:
    """Agreement of the human verdicts in AUDIT_FILE with the automated decisions, per stage."""
    rows = audit_agreement(read_audit(audit_file))
    output = output_for(output_format, as_json)
    if output.is_json:
        output.json([row.model_dump(mode="json") for row in rows])
    else:
        output.table(agreement_table(rows))
        for line in disagreement_lines(rows):
            output.say(escape(line))
    return EXIT_OK
