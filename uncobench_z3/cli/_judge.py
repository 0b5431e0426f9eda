"""``uncobench judge``: role-agent validity of a run's colleague replies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.markup import escape

from ..construct import ModelRef, load_groups
from ..errors import ConfigError
from ..evaluation import (
    SAMPLES_FILE,
    ColleagueValidity,
    JudgeAgreement,
    JudgeRun,
    judge_run,
    read_log,
    role_validity,
    run_benchmark_path,
)
from ..models import Model
from ..settings import TaskGroup
from ._app import EXIT_OK, cli
from ._output import OutputTable, format_option, output_for


def make_judge_model(name: str, cache: bool) -> Model:
    """The judge model from ``provider/model[,key=value...]`` (the tests replace this)."""
    return ModelRef.parse(name, cache=cache).create()


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def validity_table(rows: list[ColleagueValidity]) -> OutputTable:
    headers = ["colleague", "judged", "missed", "fidelity", "mean coverage", "full coverage",
               "unverifiable lines"]  # fmt: skip
    table = OutputTable.of("programmatic judge", headers)
    for row in rows:
        table.add_row(
            row.colleague,
            str(row.judged),
            str(row.missed),
            f"{_percent(row.fidelity_rate)} ({row.faithful})",
            "–" if row.mean_coverage is None else f"{row.mean_coverage:.3f}",
            str(row.full_coverage),
            str(row.unverifiable_lines),
        )
    return table


def agreement_lines(agreement: JudgeAgreement) -> list[str]:
    coverage = agreement.mean_coverage_difference
    return [
        f"compared {agreement.compared} of {agreement.lines} judged replies "
        f"({agreement.no_verdict} without a usable LLM verdict)",
        f"fidelity agreement: {_percent(agreement.fidelity_agreement)} "
        f"({agreement.fidelity_agreed}/{agreement.compared}; only the LLM found faithful: "
        f"{agreement.only_llm_faithful}, only the program: {agreement.only_program_faithful})",
        "mean |coverage difference|: " + ("–" if coverage is None else f"{coverage:.3f}"),
        f"LLM judge: fidelity {_percent(agreement.llm_fidelity_rate)}, mean coverage "
        + ("–" if agreement.llm_mean_coverage is None else f"{agreement.llm_mean_coverage:.3f}"),
    ]


async def _run_llm_judge(
    run: Path,
    name: str,
    groups: list[TaskGroup],
    cache: bool,
    limit: int | None,
    seed: int,
    out: Path | None,
    concurrency: int,
) -> JudgeRun:
    model = make_judge_model(name, cache)
    try:
        return await judge_run(
            run, model, groups, limit=limit, seed=seed, out=out, concurrency=concurrency
        )
    finally:
        await model.aclose()


@cli.command("judge")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--judge-model",
    default=None,
    help="Also ask this model (provider/model[,key=value...]) to judge every reply.",
)
@click.option("--limit", type=int, default=None, help="LLM judge: a seeded sample of N replies.")
@click.option("--seed", default=0, show_default=True, help="Seed of the --limit sample.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="LLM judge log [default: RUN/judge.jsonl]; an existing one is resumed.",
)
@click.option(
    "--bench",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="The benchmark of the run [default: the one run.json names].",
)
@click.option("--concurrency", default=4, show_default=True, help="LLM calls in flight.")
@click.option("--no-cache", is_flag=True, help="Do not use the model response cache.")
@format_option
def judge_command(
    run: Path,
    judge_model: str | None,
    limit: int | None,
    seed: int,
    out: Path | None,
    bench: Path | None,
    concurrency: int,
    no_cache: bool,
    output_format: str,
    as_json: bool,
) -> int:
    """Judge the colleague replies of the run RUN for fidelity and coverage.

    The programmatic judge reads every reply against the role's records and the policy's
    required items; with --judge-model an LLM judges them too (appending to judge.jsonl,
    resumable) and the agreement of the two judges is printed.
    """
    if judge_model is None and (limit is not None or out is not None):
        raise ConfigError("--limit and --out concern the LLM judge: name it with --judge-model")
    groups = load_groups(bench if bench is not None else run_benchmark_path(run))
    samples, _ = read_log(run / SAMPLES_FILE)
    validity = role_validity(samples, groups)
    result: JudgeRun | None = None
    if judge_model is not None:
        result = asyncio.run(
            _run_llm_judge(run, judge_model, groups, not no_cache, limit, seed, out, concurrency)
        )
    output = output_for(output_format, as_json)
    if output.is_json:
        data: dict[str, object] = {"programmatic": [row.model_dump() for row in validity]}
        if result is not None:
            data["llm"] = {
                "out": str(result.out),
                "judged": result.judged,
                "reused": result.reused,
                "agreement": result.agreement.model_dump(),
            }
        output.json(data)
        return EXIT_OK
    if not samples:
        note = f"{escape(str(run))} holds no finished samples: nothing to judge"
        output.say(f"[yellow]note:[/] {note}")
    output.table(validity_table(validity))
    if result is not None:
        output.say(
            f"LLM judge {escape(judge_model or '')}: {result.judged} reply(ies) judged now, "
            f"{result.reused} reused; log in {escape(str(result.out))}"
        )
        for line in agreement_lines(result.agreement):
            output.say(escape(line))
    return EXIT_OK
