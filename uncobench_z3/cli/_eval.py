"""``uncobench eval`` and ``uncobench demo`` (``report``: :mod:`._report`)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import click
from rich.markup import escape

from .._gc import long_lived
from ..construct import load_benchmark
from ..errors import ConfigError, UncobenchError
from ..evaluation import (
    DEFAULT_BUDGET,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRY_WAIT,
    INTERVENTION_ARMS,
    MAX_EPOCHS,
    CallPolicy,
    ColleagueMode,
    EvalOptions,
    FollowUpReader,
    InterventionArm,
    RunConfig,
    RunSummary,
    SettingMetrics,
    compute_metrics,
    error_counts,
    is_error,
    is_model_agent,
    make_config,
    reader_agreement,
    run_evaluation,
)
from ..models import DEFAULT_MAX_ATTEMPTS
from ..settings import SETTING_NAMES, SettingName
from ..stats import DEFAULT_SAMPLES, MAX_SAMPLES, decimal_text, percent_text
from ._app import EXIT_OK, cli
from ._options import executor_from, executor_options, workers_option
from ._output import Output, OutputTable, format_option, output_for


def _interval(m: SettingMetrics) -> str:
    if m.accuracy_ci is None:
        return "–"
    low, high = m.accuracy_ci
    return f"{decimal_text(100 * low, 0)}-{decimal_text(100 * high, 0)}"


MODEL_COLUMNS_NOTE = "inv: invalid actions, share of rounds; ctx: samples whose context ran out"


def _summary(metrics: list[SettingMetrics], models: bool = False) -> OutputTable:
    """One row per configuration and setting: accuracy with its 95% interval, justified
    accuracy, n = groups x epochs, mean rounds; with language models (``models``), or when
    either is non-zero, the share of invalid actions and the samples whose context ran out."""
    extra = models or any(m.invalid_actions or m.context_exhausted for m in metrics)
    headers = ["agent", "setting", "accuracy", "95% CI", "justif.", "n", "rounds"]
    table = OutputTable.of("results", headers + (["inv", "ctx"] if extra else []), left=2)
    for m in metrics:
        if m.arm != "none":
            continue
        cells = [
            m.agent,
            m.setting,
            percent_text(m.accuracy),
            _interval(m),
            percent_text(m.justified_accuracy),
            f"{m.n_groups}x{m.epochs}",
            "–" if m.mean_rounds is None else decimal_text(m.mean_rounds, 2),
        ]
        if extra:
            cells += [percent_text(m.invalid_rate, 0), str(m.context_exhausted)]
        table.add_row(*cells)
    return table


def _print_pending(
    output: Output, metrics: list[SettingMetrics], summary: RunSummary, reader: str
) -> None:
    """Missed recovery (pending requests) and, with a model reader, the readers' agreement."""
    for m in metrics:
        if m.arm != "none" or not (m.missed_cases or m.answered_pending):
            continue
        share = m.missed_multi_contact_share
        output.say(
            f"{escape(m.agent)} {m.setting}: answered with a request pending "
            f"{m.answered_pending}/{m.samples}; Missed cases with more than one contact to the "
            f"silent colleague {m.missed_multi_contact}/{m.missed_cases}"
            + (f" ({percent_text(share)})" if share is not None else "")
        )
    if reader == "model":
        agreement = reader_agreement(summary.iter_records())  # one trace at a time
        output.say(
            f"follow-up readers agree on {agreement.agreed}/{agreement.readings} follow-ups "
            f"({percent_text(agreement.agreement)}); model answers unreadable: "
            f"{agreement.unreadable}"
        )


def _print_breaches(output: Output, metrics: list[SettingMetrics], mode: str) -> None:
    """Policy colleagues: the samples they broke the policy in (left out of the figures)."""
    if mode != "policy":
        return
    broken = sum(m.colleague_breaches for m in metrics)
    total = broken + sum(m.samples + m.errors for m in metrics)
    output.say(
        f"the colleague model broke its policy in {broken} of {total} sample(s): reported "
        "apart, not scored (`uncobench judge` gives fidelity and coverage per reply)"
    )


@dataclass(frozen=True)
class EvalRequest:
    """What ``uncobench eval`` (and ``demo``) asks for: the benchmark, the agents, the run
    folder, what to run (the fields :func:`make_config` takes) and how
    (:class:`EvalOptions`)."""

    bench: str
    agents: tuple[str, ...]
    out: Path
    settings: tuple[str, ...] = ()
    seed: int = 0
    budget: int = DEFAULT_BUDGET
    limit: int | None = None
    colleague: str = "scripted"
    interventions: tuple[str, ...] = ()
    epochs: int = 1
    missed_wait: int | None = None
    followup_reader: str = "rules"
    colleague_mode: str = "phrase"
    options: EvalOptions = field(default_factory=EvalOptions)


def run_eval(request: EvalRequest, output: Output | None = None) -> list[SettingMetrics]:
    """Evaluate the request's agents on its benchmark; prints a summary, returns the metrics.

    A run stopped by ``max_errors`` prints what finished, then raises (exit code 1)."""
    output = output or Output()
    with long_lived():  # the benchmark lives as long as the run (see uncobench_z3/_gc.py)
        # (a built benchmark's content hashes come from its manifest: see group_digests)
        groups, digests = load_benchmark(request.bench)
    if not groups:
        raise ConfigError(f"{request.bench} holds no task groups")
    chosen = cast("list[SettingName]", list(request.settings)) or None  # click checked them
    interventions = request.interventions
    arms = cast(
        "list[InterventionArm]",
        list(INTERVENTION_ARMS) if "all" in interventions else list(interventions or ("none",)),
    )
    config = make_config(
        request.bench,
        groups,
        list(request.agents),
        chosen,
        request.seed,
        request.budget,
        request.limit,
        digests,
        colleague=request.colleague,
        interventions=arms,
        epochs=request.epochs,
        missed_wait=request.missed_wait,
        followup_reader=cast("FollowUpReader", request.followup_reader),
        colleague_mode=cast("ColleagueMode", request.colleague_mode),
    )
    summary = asyncio.run(
        run_evaluation(groups, config, request.out, request.options, digests=digests)
    )
    del groups  # played: the benchmark's memory goes before the records are read back
    # read back from the log (see RunSummary) without traces, one agent at a time: an agent's
    # metrics read only its own samples, and a run's records together can be hundreds of MB
    metrics: list[SettingMetrics] = []
    errors: dict[tuple[str, str], Counter[str]] = {}
    for agent in summary.agents:
        records = list(summary.iter_records(traces=False, agent=agent))
        metrics += compute_metrics(records, summary.unavailable)
        errors |= error_counts(records)
        del records
    skipped = {s: len(g) for s, g in summary.unavailable.items() if g}
    if output.is_json:
        output.json({
            "out": str(request.out), "ran": summary.ran, "reused": summary.reused,
            "skipped": skipped, "errors": summary.errors, "stopped": summary.stopped,
            "metrics": [m.model_dump(mode="json") for m in metrics],
        })  # fmt: skip
    else:
        _print_summary(output, summary, errors, metrics, skipped, request.out, config)
    if summary.stopped:
        raise UncobenchError(
            f"{summary.stopped}; finished samples are kept, run the same command to resume "
            "(error samples are tried again)"
        )
    return metrics


def _print_summary(
    output: Output,
    summary: RunSummary,
    errors: dict[tuple[str, str], Counter[str]],
    metrics: list[SettingMetrics],
    skipped: dict[str, int],
    out: Path,
    config: RunConfig,
) -> None:
    table = _summary(metrics, any(is_model_agent(a) for a in summary.config.agents))
    output.table(table)
    if "inv" in [column.header for column in table.columns]:
        output.say(MODEL_COLUMNS_NOTE)
    arms_table = [m for m in metrics if m.setting != "reliable"]
    if any(m.arm != "none" for m in metrics):
        headers = ["agent", "setting", "arm", "accuracy", "n", "delivered", "reliable"]
        table = OutputTable.of("causal interventions (accuracy by arm)", headers, left=3)
        for m in arms_table:
            table.add_row(m.agent, m.setting, m.arm, percent_text(m.accuracy),
                          str(m.samples), str(m.delivered),
                          percent_text(m.reliable_accuracy))  # fmt: skip
        output.table(table)
    _print_pending(output, metrics, summary, config.followup_reader)
    _print_breaches(output, metrics, config.colleague_mode)
    if skipped:
        listed = ", ".join(f"{s}: {n} group(s)" for s, n in skipped.items())
        output.say(f"unavailable settings skipped: {escape(listed)}")
    output.say(
        f"{summary.ran} sample(s) run, {summary.reused} reused from an earlier run; "
        f"log in {escape(str(out))}"
    )
    print_error_samples(output, errors, summary)


def print_error_samples(
    output: Output, errors: dict[tuple[str, str], Counter[str]], summary: RunSummary
) -> None:
    """One line for the error samples of a run (not scored), if there are any: ``errors``
    by agent and setting, listed in the order the log first shows them."""
    first_seen = dict.fromkeys((o.agent, o.setting) for o in summary.outcomes if is_error(o))
    counts = {pair: errors[pair] for pair in first_seen if pair in errors}
    if not counts:
        return
    total = sum(sum(c.values()) for c in counts.values())
    parts = [
        f"{agent} / {setting}: {sum(c.values())} ({', '.join(f'{k} {v}' for k, v in c.items())})"
        for (agent, setting), c in counts.items()
    ]
    output.say(
        f"[yellow]{total} error sample(s)[/] (model calls failed after retries; not scored, "
        f"tried again on resume): {escape('; '.join(parts))}"
    )


@cli.command("eval")
@click.argument("bench", type=click.Path(exists=True))
@click.option(
    "--agent",
    "agents",
    multiple=True,
    required=True,
    help="Agent to evaluate (repeatable): builtin/naive, builtin/careful, ...",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Run directory (created; an existing one is resumed).",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    type=click.Choice(SETTING_NAMES),
    help="Setting to run (repeatable; default: all five).",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    help="Run seed; each epoch of each group gets a seed derived from it.",
)
@click.option(
    "--epochs",
    default=1,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_EPOCHS),
    help="Independent trials of every sample (a run grows to more epochs without redoing).",
)
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Rounds per episode before it ends as budget_exhausted.",
)
@click.option("--limit", type=int, default=None, help="Only the first N groups.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help=f"Samples run at the same time (default: {DEFAULT_CONCURRENCY}, or fewer when a model "
    "serves fewer calls at once: local/... 1, a llama.cpp server its slots, or "
    "',max_connections=N' in the model's name).",
)
@click.option("--restart", is_flag=True, help="Set the existing log aside and run everything.")
@click.option(
    "--force",
    is_flag=True,
    help="Resume despite a changed configuration, keeping samples that still apply.",
)
@click.option(
    "--colleague-model",
    default="scripted",
    show_default=True,
    help="Colleagues: 'scripted', or a model (provider/model[,key=value]) that plays them "
    "(see --colleague-mode).",
)
@click.option(
    "--colleague-mode",
    type=click.Choice(["phrase", "policy"]),
    default="phrase",
    show_default=True,
    help="How the --colleague-model plays: 'phrase' words each scripted reply (the policy "
    "decides what it says); 'policy' gets its records and response policy and writes the "
    "replies itself, judged against the scripted reference.",
)
@click.option(
    "--intervention",
    "interventions",
    multiple=True,
    type=click.Choice([*INTERVENTION_ARMS, "all"]),
    help="Causal intervention arm(s) to run in each defective setting (repeatable; 'all' "
    "runs the five nested arms; default: none).",
)
@click.option(
    "--max-errors",
    default="0",
    show_default=True,
    help="Error samples (model calls that failed after retries) tolerated before the run "
    "stops: a count, or a percentage of the samples (5%). 0 stops at the first.",
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="Seconds one model call may take before it is retried [default: 300].",
)
@click.option(
    "--max-attempts",
    type=int,
    default=DEFAULT_MAX_ATTEMPTS,
    show_default=True,
    help="Attempts per model call (retries on 429, 5xx, timeouts, malformed answers).",
)
@click.option(
    "--max-retry-wait",
    type=float,
    default=DEFAULT_MAX_RETRY_WAIT,
    show_default=True,
    help="Longest wait in seconds between two attempts (Retry-After is honoured up to it).",
)
@click.option(
    "--missed-wait",
    type=click.IntRange(min=0),
    default=None,
    help="Wait rounds after which a missed (pending) reply arrives anyway; 0: never "
    "(default: the groups' policy, 1).",
)
@click.option(
    "--followup-reader",
    type=click.Choice(["rules", "model"]),
    default="rules",
    show_default=True,
    help="Who decides whether a follow-up is targeted: the rules, or the --colleague-model "
    "(both readings are kept in the trace).",
)
@workers_option("1: samples play in this process; with --executor ray, every CPU of the cluster")
@executor_options
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@format_option
def eval_command(
    bench: str,
    agents: tuple[str, ...],
    out: Path,
    settings: tuple[str, ...],
    seed: int,
    epochs: int,
    budget: int,
    limit: int | None,
    concurrency: int | None,
    restart: bool,
    force: bool,
    colleague_model: str,
    colleague_mode: str,
    interventions: tuple[str, ...],
    max_errors: str,
    timeout: float | None,
    max_attempts: int,
    max_retry_wait: float,
    missed_wait: int | None,
    followup_reader: str,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    no_progress: bool,
    output_format: str,
    as_json: bool,
) -> int:
    """Evaluate agents on a benchmark (a built folder, a .jsonl file or a group file).

    Every group runs in every requested setting it has (unavailable settings are skipped and
    counted). Each finished sample is appended to OUT/samples.jsonl; running the same command
    again resumes where it stopped.
    """
    if restart and force:
        raise ConfigError(
            "--restart sets the whole log aside and --force keeps the samples that still "
            "apply: give one of them"
        )
    options = EvalOptions(
        concurrency=concurrency,
        restart=restart,
        force=force,
        progress=not no_progress,
        max_errors=max_errors,
        calls=CallPolicy(timeout, max_attempts, max_retry_wait),
        executor=executor_from(executor, ray_address, workers),
    )
    request = EvalRequest(bench, agents, out, settings, seed, budget, limit, colleague_model,
                          interventions, epochs, missed_wait, followup_reader, colleague_mode,
                          options)  # fmt: skip
    run_eval(request, output_for(output_format, as_json))
    return EXIT_OK


def bootstrap_options(command: Callable[..., int]) -> Callable[..., int]:
    """``--bootstrap-samples`` and ``--bootstrap-seed``, shared by report and compare."""
    command = click.option(
        "--bootstrap-seed",
        default=0,
        show_default=True,
        help="Seed of the bootstrap resampling (intervals are deterministic given it).",
    )(command)
    return click.option(
        "--bootstrap-samples",
        default=DEFAULT_SAMPLES,
        show_default=True,
        type=click.IntRange(min=1, max=MAX_SAMPLES),
        help="Bootstrap resamples per interval.",
    )(command)
