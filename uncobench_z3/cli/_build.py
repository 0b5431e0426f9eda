"""``uncobench build`` and ``uncobench stats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from ..construct import (
    MANIFEST_FILE,
    LLMStages,
    ModelRef,
    build_benchmark,
    check_benchmark,
    model_with_defaults,
)
from ..construct._stats_schema import check_build_stats
from ..errors import ConfigError, SpecReadError
from ._app import EXIT_OK, cli, err_console
from ._options import (
    executor_from,
    executor_options,
    rlimit_option,
    solver_seed_type,
    timeout_ms_option,
    workers_option,
)
from ._output import Output, OutputTable, Styled, format_option, output_for, progress_bar


@cli.command()
@click.option("--groups", default=1000, show_default=True, help="Task groups to keep.")
@click.option(
    "--seed", default=7, show_default=True, help="Seed of every random choice of the drafting."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder (manifest.json + groups.jsonl).",
)
@workers_option("all cores, or every CPU of the Ray cluster")
@executor_options
@click.option(
    "--none-share",
    default=0.2,
    show_default=True,
    help="Share of groups planned with no eligible candidate.",
)
@timeout_ms_option
@rlimit_option
@click.option(
    "--solver-seed", default=0, show_default=True, type=solver_seed_type, help="Solver random seed."
)
@click.option("--force", is_flag=True, help="Discard an output built with another configuration.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option(
    "--generator-model",
    default=None,
    help="A model writes each spec (provider/model[,key=value...]) [default: the offline "
    "generator].",
)
@click.option(
    "--renderer-model",
    default=None,
    help="A model phrases the question and the records [default: the templates].",
)
@click.option(
    "--validator-model",
    default=None,
    help="A model runs the full-information check [default: the renderer model with "
    "--renderer-model, else the deterministic reader].",
)
@click.option("--no-cache", is_flag=True, help="Do not use the model response cache.")
def build(
    groups: int,
    seed: int,
    out: Path,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    none_share: float,
    timeout_ms: int,
    rlimit: int,
    solver_seed: int,
    force: bool,
    no_progress: bool,
    generator_model: str | None,
    renderer_model: str | None,
    validator_model: str | None,
    no_cache: bool,
) -> int:
    """Build a verified benchmark, offline or with language models for the generator, the
    renderer and the validator (resumable: rerun the same command after a stop).

    The solver options are part of the build's configuration (a different budget can keep
    different groups); --workers and --executor are not (any number of workers, here or on
    a Ray cluster, writes the same bytes).
    """
    # each group stores its minimum rounds and decision records' first changes
    from ..evaluation import settings_stored_proofs

    stages = llm_stages(generator_model, renderer_model, validator_model, no_cache)
    where = executor_from(executor, ray_address, workers)
    with progress_bar("building", "groups kept", enabled=not no_progress) as bar:

        def hook(candidates: int, retained: int, wanted: int) -> None:
            bar.update(retained, wanted, f"· {candidates} candidates")

        result = build_benchmark(
            out,
            groups=groups,
            seed=seed,
            none_share=none_share,
            executor=where,
            force=force,
            progress=hook,
            timeout_ms=timeout_ms,
            rlimit=rlimit,
            solver_seed=solver_seed,
            stages=stages,
            minimum_rounds=settings_stored_proofs,
        )
    if result.stale_lock:
        err_console.print(f"[yellow]note:[/] {escape(result.stale_lock)}")
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
    Output().say(
        f"wrote {escape(str(out))}: {stats['groups']} groups from {rates['candidates']} "
        f"candidates ({rates['retained_percent']}% retained){note}"
    )
    return EXIT_OK


def llm_stages(
    generator: str | None, renderer: str | None, validator: str | None, no_cache: bool
) -> LLMStages:
    """The LLM stages the options name (each parsed, so a bad setting fails now), with the
    provider's defaults an agent of that name gets (``local/...``: at most 512 tokens)."""
    if no_cache and not (generator or renderer or validator):
        raise ConfigError(
            "--no-cache concerns the LLM stages: name one with --generator-model, "
            "--renderer-model or --validator-model"
        )

    def ref(name: str | None) -> ModelRef | None:
        return None if name is None else model_with_defaults(name, cache=not no_cache)

    return LLMStages(generator=ref(generator), renderer=ref(renderer), validator=ref(validator))


def stats_tables(stats: dict[str, Any]) -> list[OutputTable]:
    """The statistics' tables, in the order ``uncobench stats`` prints them."""
    rates = stats["pass_rates"]
    table = OutputTable.of("pass rates by stage", ["stage", "groups", "%"])
    table.add_row("candidates generated", str(rates["candidates"]), "100.0")
    for stage, label in (
        ("spec_validation", "rejected at spec validation"),
        ("logical_verification", "rejected at logical verification"),
        ("rendering_validation", "rejected at rendering / full-information validation"),
    ):
        table.add_row(label, str(rates["rejected"][stage]), f"{rates['rejected_percent'][stage]}")
    table.add_row("retained", str(rates["retained"]), f"{rates['retained_percent']}")
    tables = [table]
    for key, title, first in (
        ("domains", "domains", "domain"),
        ("operations", "operations", "operation"),
    ):
        table = OutputTable.of(title, [first, "groups", "%"])
        for name, row in stats[key].items():
            table.add_row(name, str(row["groups"]), str(row["percent"]))
        tables.append(table)
    operations = sorted(stats["operations"])
    table = OutputTable.of(
        f"domain x operation ({stats['pairs_present']} of "
        f"{len(stats['domains']) * len(operations)} pairs present)",
        ["domain", *operations],
    )
    for name, row in stats["domain_operation"].items():
        table.add_row(name, *[str(row.get(op, 0)) for op in operations])
    tables.append(table)
    for key, title, first in (
        ("decisions", "decisions", "answer"),
        ("settings_available", "settings available", "setting"),
    ):
        table = OutputTable.of(title, [first, "groups"])
        for name, count in stats[key].items():
            table.add_row(name, str(count))
        tables.append(table)
    return tables


NATURALNESS_ROWS = (
    ("names_off_domain", "candidate names from another domain's pool"),
    ("names_from_no_pool", "candidate names from no pool (not judged)"),
    ("money_answers", "answers in money"),
    ("money_answers_nonpositive", "money answers <= 0"),
    ("money_answers_nonpositive_signed", "money answers <= 0 where the rule states a sign"),
    ("money_records_nonpositive", "record values in money <= 0"),
)


def print_naturalness(out: Output, natural: dict[str, Any]) -> None:
    """Would a domain expert accept the tasks (see construct/_natural.py)?"""
    table = OutputTable.of("naturalness", ["measure", "count"])
    for key, label in NATURALNESS_ROWS:
        table.add_row(label, str(natural[key]))
    out.table(table)
    for key, examples in natural["examples"].items():
        if examples and key != "money_answers_nonpositive_signed":
            out.say(f"  [dim]{key}: {escape('; '.join(examples))}[/]")


def print_stats(out: Output, stats: dict[str, Any]) -> None:
    rates = stats["pass_rates"]
    first, *rest = stats_tables(stats)
    out.table(first)
    if rates.get("drafts_redrawn"):
        codes = ", ".join(f"{k}: {v}" for k, v in rates.get("redraw_problems", {}).items())
        out.say(
            f"  [dim]spec validation: {rates['drafts_redrawn']} draft(s) redrawn by the generator "
            f"before passing ({escape(codes)})[/]"
        )
    for stage, reasons in rates.get("rejection_reasons", {}).items():
        listing = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items()))
        out.say(f"  [dim]{stage}: {escape(listing)}[/]")
    for table in rest:
        out.table(table)
    if "naturalness" in stats:
        print_naturalness(out, stats["naturalness"])
    for kind, spread in stats["defects_by_fact_type"].items():
        listing = ", ".join(f"{k} {v}" for k, v in spread.items())
        out.say(f"[bold]{kind}[/] defects by fact type: {escape(listing)}")
    for kind, spread in stats["defects_by_role"].items():
        top = list(spread.items())[:8]
        listing = ", ".join(f"{k} {v}" for k, v in top)
        more = f" (+{len(spread) - 8} more roles)" if len(spread) > 8 else ""
        out.say(f"[bold]{kind}[/] defects by role: {escape(listing)}{more}")
    if "validity" in stats:
        print_validity(out, stats["validity"])


def validity_tables(validity: dict[str, Any]) -> list[OutputTable]:
    """Guessing floors, operator and rounding-mode shares, and the validity targets."""
    settings = ("reliable", "misaligned", "incomplete", "missed", "mixed")
    floors = OutputTable.of("guessing floors (exact mean accuracy, %)", ["strategy", *settings])
    for strategy, row in validity["guessing_floors"].items():
        floors.add_row(strategy, *[str(row.get(s, {}).get("percent", "-")) for s in settings])
    tables = [floors]
    for title, key in (("operators", "operators"), ("rounding modes", "rounding_modes")):
        table = OutputTable.of(title, [title[:-1], "count", "%"])
        for name, row in validity[key].items():
            table.add_row(name, str(row["count"]), str(row["percent"]))
        tables.append(table)
    targets = OutputTable.of("validity targets", ["target", "value", "wanted", "met"])
    for target in validity["targets"]:
        met = "yes" if target["met"] else Styled("NO", "red")
        targets.add_row(target["name"], str(target["value"]), target["target"], met)
    tables.append(targets)
    return tables


def print_validity(out: Output, validity: dict[str, Any]) -> None:
    floors, operators, modes, targets = validity_tables(validity)
    out.table(floors)
    chances = validity["gold_chances"]
    out.say(
        f"gold chance of Incomplete replies: mean {chances['mean_percent']}%, "
        f"max {chances['max']} (at most {chances['at_most']}), "
        f"exactly 1/2 in {chances['exactly_half']} of {chances['replies']}"
    )
    out.table(operators)
    out.table(modes)
    rounding = validity["rounding"]
    ties = ", ".join(f"{mode} {n}" for mode, n in rounding["ties"].items())
    out.say(
        f"rounding changes {rounding['changed']} of {rounding['numeric_answers']} numeric "
        f"answers ({rounding['changed_percent']}%); exact ties: {ties}"
    )
    for reason, ids in validity["mixed_unavailable"].items():
        out.say(f"[bold]no mixed[/] ({len(ids)}): {escape(reason)}")
        out.say(f"  [dim]{escape(', '.join(ids))}[/]")
    out.table(targets)


@cli.command()
@click.argument("bench", type=click.Path(path_type=Path))
@format_option
def stats(bench: Path, output_format: str, as_json: bool) -> int:
    """Pass rates per stage and diversity tables of a built benchmark."""
    folder = bench if bench.is_dir() else bench.parent
    if not bench.exists():
        raise SpecReadError(str(bench), "does not exist; name a built benchmark folder")
    if not bench.is_dir() and bench.name != MANIFEST_FILE:
        raise SpecReadError(str(bench), f"name a built benchmark folder or its {MANIFEST_FILE}")
    if not (folder / MANIFEST_FILE).is_file():  # (eval's advice, to name the file, cannot help)
        raise SpecReadError(
            str(folder),
            f"is not a built benchmark (no {MANIFEST_FILE}): statistics are what "
            "`uncobench build` records there",
        )
    manifest: Any = check_benchmark(folder)
    # statistics are plain numbers (percentages), not exact quantities: re-read as floats
    manifest = json.loads(json.dumps(manifest, default=float))
    if not isinstance(manifest, dict) or "stats" not in manifest:
        raise SpecReadError(str(bench), "is not a built benchmark (no statistics in its manifest)")
    if "pass_rates" not in manifest["stats"]:  # groups written by write_benchmark, not built
        source = manifest["stats"].get("source")
        made = f" (its groups: {source})" if source else ""
        raise SpecReadError(
            str(bench), f"has no build statistics{made}: only `uncobench build` records them"
        )
    check_build_stats(manifest, str(folder / MANIFEST_FILE))
    out = output_for(output_format, as_json)
    if out.is_json:
        out.json(manifest["stats"])
    else:
        print_stats(out, manifest["stats"])
    return EXIT_OK
