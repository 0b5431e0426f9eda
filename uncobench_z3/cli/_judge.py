"""``uncobench judge``: role-agent validity of a run's colleague replies."""

from __future__ import annotations

import asyncio
from fractions import Fraction
from pathlib import Path

import click
from rich.markup import escape

from ..construct import load_benchmark, model_with_defaults
from ..errors import ConfigError
from ..evaluation import (
    RUN_FILE,
    SAMPLES_FILE,
    GroupJudges,
    JudgeAgreement,
    JudgeRun,
    SampleRecord,
    UnreadableStatement,
    ValidityCell,
    benchmark_digest,
    judge_run,
    read_log,
    run_benchmark_path,
    unreadable_sample_error,
    validity_cells,
)
from ..models import Model
from ..settings import TaskGroup
from ..spec import load_json
from ..stats import BootstrapConfig, Interval, decimal_text, percent_text
from ._app import EXIT_OK, cli
from ._eval import bootstrap_options
from ._output import OutputTable, format_option, output_for


def make_judge_model(name: str, cache: bool) -> Model:
    """The judge model from ``provider/model[,key=value...]``, with the provider's defaults
    an agent of that name gets (``local/...``: at most 512 tokens; the tests replace this)."""
    return model_with_defaults(name, cache=cache).create()


def _share(value: Fraction | None) -> str:
    return "–" if value is None else decimal_text(value, 3)


def _interval(interval: Interval | None, percent: bool) -> str:
    if interval is None:
        return ""
    low, high = interval
    if percent:
        return f" [{percent_text(low, 0)}, {percent_text(high, 0)}]"
    return f" [{decimal_text(low, 2)}, {decimal_text(high, 2)}]"


def validity_table(cells: list[ValidityCell]) -> OutputTable:
    """Table 7: one row per colleague (and mode) x main agent x setting."""
    headers = ["colleague", "agent", "setting", "judged", "fidelity", "mean coverage", "full",
               "silences kept", "samples broke policy", "unverifiable", "missed"]  # fmt: skip
    title = "role-agent validity (programmatic judge, 95% intervals)"
    table = OutputTable.of(title, headers, left=3)
    for cell in cells:
        table.add_row(
            cell.row,
            cell.agent,
            cell.setting,
            str(cell.judged),
            percent_text(cell.fidelity) + _interval(cell.fidelity_ci, True),
            _share(cell.mean_coverage) + _interval(cell.coverage_ci, False),
            f"{cell.full_coverage}/{cell.judged}",
            f"{cell.silences_kept}/{cell.silences_required}" if cell.mode == "policy" else "–",
            f"{cell.breached}/{cell.samples}" if cell.mode == "policy" else "–",
            str(cell.unverifiable_lines),
            str(cell.missed),
        )
    return table


def agreement_lines(agreement: JudgeAgreement) -> list[str]:
    return [
        f"compared {agreement.compared} of {agreement.lines} judged replies "
        f"({agreement.no_verdict} without a usable LLM verdict)",
        f"fidelity agreement: {percent_text(agreement.fidelity_agreement)} "
        f"({agreement.fidelity_agreed}/{agreement.compared}; only the LLM found faithful: "
        f"{agreement.only_llm_faithful}, only the program: {agreement.only_program_faithful})",
        f"mean |coverage difference|: {_share(agreement.mean_coverage_difference)}",
        f"LLM judge: fidelity {percent_text(agreement.llm_fidelity_rate)}, mean coverage "
        f"{_share(agreement.llm_mean_coverage)}",
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
    # the log names the judge with the settings it writes with (a different temperature or
    # token limit is a different judge: refused, not mixed into the same agreement)
    writer = model_with_defaults(name, cache).writer
    try:
        return await judge_run(
            run,
            model,
            groups,
            limit=limit,
            seed=seed,
            out=out,
            concurrency=concurrency,
            judge_name=writer,
        )
    finally:
        await model.aclose()


def _check_same_benchmark(run: Path, benchmark: Path, digest: str) -> None:
    """Refuse a benchmark other than the run's: none of its replies would find their group,
    and the judge would report "judged 0" everywhere as if that were a result."""
    meta = load_json(run / RUN_FILE)
    config = meta.get("config") if isinstance(meta, dict) else None
    recorded = config.get("benchmark_hash") if isinstance(config, dict) else None
    if isinstance(recorded, str) and recorded and recorded != digest:
        raise ConfigError(
            f"{benchmark} is not the benchmark {run} was evaluated on (its groups' content "
            f"hash is {digest[:12]}, the run's {recorded[:12]})"
        )


def _unfinished(run: Path, samples: list[SampleRecord]) -> str | None:
    """A note when the run holds fewer samples than its ``run.json`` plans: ``eval`` still
    writing it (the programmatic judge reads without its lock) or interrupted. The table
    looked like the whole run's."""
    meta = load_json(run / RUN_FILE)
    planned = meta.get("samples") if isinstance(meta, dict) else None
    held = len({sample.key for sample in samples})
    if type(planned) is not int or not 0 < held < planned:
        return None
    return (
        f"{run} holds {held} of its {planned} planned samples (a run still being written, or "
        "interrupted): the figures are of those"
    )


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
@bootstrap_options
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
    bootstrap_samples: int,
    bootstrap_seed: int,
    output_format: str,
    as_json: bool,
) -> int:
    """Judge the colleague replies of the run RUN for fidelity and coverage.

    The programmatic judge reads every reply against the role's records and what the
    scripted policy prescribes for that request (values, contexts, ranges, silence); figures
    per colleague x main agent x setting, with 95% bootstrap intervals over groups. With
    --judge-model an LLM judges the replies too (appending to judge.jsonl, resumable) and the
    agreement of the two judges is printed.
    """
    if judge_model is None and (limit is not None or out is not None or no_cache):
        raise ConfigError(
            "--limit, --out and --no-cache concern the LLM judge: name it with --judge-model"
        )
    # the judge model as called, the provider's defaults added (a bad setting fails now)
    called = (
        "" if judge_model is None else model_with_defaults(judge_model, not no_cache).describe()
    )
    benchmark = bench if bench is not None else run_benchmark_path(run)
    groups, digests = load_benchmark(benchmark)
    _check_same_benchmark(run, benchmark, benchmark_digest(groups, digests))
    samples, _ = read_log(run / SAMPLES_FILE)
    config = BootstrapConfig(samples=bootstrap_samples, seed=bootstrap_seed)
    try:
        validity = validity_cells(samples, GroupJudges(groups, digests), config)
    except UnreadableStatement as exc:
        raise unreadable_sample_error(run / SAMPLES_FILE, exc) from None
    result: JudgeRun | None = None
    if judge_model is not None:
        result = asyncio.run(
            _run_llm_judge(run, judge_model, groups, not no_cache, limit, seed, out, concurrency)
        )
    output = output_for(output_format, as_json)
    if (unfinished := _unfinished(run, samples)) is not None:
        output.say(f"[yellow]note:[/] {escape(unfinished)}")  # (stderr with --json)
    if output.is_json:
        data: dict[str, object] = {
            "programmatic": [cell.model_dump(mode="json") for cell in validity]
        }
        if result is not None:
            data["llm"] = {
                "model": called,
                "out": str(result.out),
                "judged": result.judged,
                "reused": result.reused,
                "agreement": result.agreement.model_dump(mode="json"),
            }
        output.json(data)
        return EXIT_OK
    if not samples:
        note = f"{escape(str(run))} holds no finished samples: nothing to judge"
        output.say(f"[yellow]note:[/] {note}")
    output.table(validity_table(validity))
    if result is not None:
        output.say(
            f"LLM judge {escape(called)}: {result.judged} reply(ies) judged now, "
            f"{result.reused} reused; log in {escape(str(result.out))}"
        )
        for line in agreement_lines(result.agreement):
            output.say(escape(line))
    return EXIT_OK
