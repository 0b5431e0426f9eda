"""``uncobench eval``, ``uncobench report`` and ``uncobench demo``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import cast

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..construct import build_benchmark, load_groups
from ..errors import ConfigError, UncobenchError
from ..evaluation import (
    DEFAULT_BUDGET,
    DEFAULT_CONCURRENCY,
    INTERVENTION_ARMS,
    InterventionArm,
    SettingMetrics,
    compute_metrics,
    group_digest,
    make_config,
    run_evaluation,
)
from ..settings import SETTING_NAMES, SettingName
from ..solver import SolverBudget, Verdict
from ..stats import DEFAULT_SAMPLES, BootstrapConfig, decimal_text, percent_text
from ._app import EXIT_OK, cli

console = Console(highlight=False, soft_wrap=True)
DEMO_AGENTS = ("builtin/naive", "builtin/careful", "builtin/patient")


def _interval(m: SettingMetrics) -> str:
    if m.accuracy_ci is None:
        return "–"
    low, high = m.accuracy_ci
    return f"{decimal_text(100 * low, 0)}-{decimal_text(100 * high, 0)}"


def _summary(metrics: list[SettingMetrics]) -> Table:
    """One row per agent and setting (narrow enough for any terminal): accuracy with its 95%
    interval, justified accuracy, n = groups x epochs, mean rounds."""
    table = Table(title="results")
    for name, justify in (
        ("agent", "left"),
        ("setting", "left"),
        ("accuracy", "right"),
        ("95% CI", "right"),
        ("justif.", "right"),
        ("n", "right"),
        ("rounds", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "agent")  # type: ignore[arg-type]
    for m in metrics:
        if m.arm != "none":
            continue
        table.add_row(
            escape(m.agent),
            m.setting,
            percent_text(m.accuracy),
            _interval(m),
            percent_text(m.justified_accuracy),
            f"{m.n_groups}x{m.epochs}",
            "–" if m.mean_rounds is None else decimal_text(m.mean_rounds, 2),
        )
    return table


def run_eval(
    bench: str,
    agents: tuple[str, ...],
    out: Path,
    settings: tuple[str, ...] = (),
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    limit: int | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    restart: bool = False,
    force: bool = False,
    progress: bool = True,
    colleague: str = "scripted",
    interventions: tuple[str, ...] = (),
    epochs: int = 1,
) -> list[SettingMetrics]:
    """Evaluate ``agents`` on the benchmark ``bench``; prints a summary, returns the metrics."""
    groups = load_groups(bench)
    if not groups:
        raise ConfigError(f"{bench} holds no task groups")
    chosen = cast("list[SettingName]", list(settings)) or None  # click.Choice checked them
    digests = [group_digest(g) for g in groups]
    arms = cast(
        "list[InterventionArm]",
        list(INTERVENTION_ARMS) if "all" in interventions else list(interventions or ("none",)),
    )
    config = make_config(bench, groups, list(agents), chosen, seed, budget, limit, digests,
                         colleague=colleague, interventions=arms, epochs=epochs)  # fmt: skip
    summary = asyncio.run(
        run_evaluation(groups, config, out, concurrency=concurrency, restart=restart,
                       force=force, progress=progress, digests=digests)
    )  # fmt: skip
    metrics = compute_metrics(summary.records, summary.unavailable)
    console.print(_summary(metrics))
    arms_table = [m for m in metrics if m.setting != "reliable"]
    if any(m.arm != "none" for m in metrics):
        table = Table(title="causal interventions (accuracy by arm)")
        for name in ("agent", "setting", "arm", "accuracy", "n", "delivered", "reliable"):
            table.add_column(
                name, justify="left" if name in ("agent", "setting", "arm") else "right"
            )
        for m in arms_table:
            table.add_row(escape(m.agent), m.setting, m.arm, percent_text(m.accuracy),
                          str(m.samples), str(m.delivered),
                          percent_text(m.reliable_accuracy))  # fmt: skip
        console.print(table)
    skipped = {s: len(g) for s, g in summary.unavailable.items() if g}
    if skipped:
        listed = ", ".join(f"{s}: {n} group(s)" for s, n in skipped.items())
        console.print(f"unavailable settings skipped: {escape(listed)}")
    console.print(
        f"{summary.ran} sample(s) run, {summary.reused} reused from an earlier run; "
        f"log in {escape(str(out))}"
    )
    return metrics


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
    type=click.IntRange(min=1),
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
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="Samples run at the same time.",
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
    help="Colleagues: 'scripted', or a model that phrases their replies "
    "(provider/model[,key=value]); the policy and the records stay the same.",
)
@click.option(
    "--intervention",
    "interventions",
    multiple=True,
    type=click.Choice([*INTERVENTION_ARMS, "all"]),
    help="Causal intervention arm(s) to run in each defective setting (repeatable; 'all' "
    "runs the five nested arms; default: none).",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def eval_command(
    bench: str,
    agents: tuple[str, ...],
    out: Path,
    settings: tuple[str, ...],
    seed: int,
    epochs: int,
    budget: int,
    limit: int | None,
    concurrency: int,
    restart: bool,
    force: bool,
    colleague_model: str,
    interventions: tuple[str, ...],
    no_progress: bool,
) -> int:
    """Evaluate agents on a benchmark (a built folder, a .jsonl file or a group file).

    Every group runs in every requested setting it has (unavailable settings are skipped and
    counted). Each finished sample is appended to OUT/samples.jsonl; running the same command
    again resumes where it stopped.
    """
    run_eval(bench, agents, out, settings, seed, budget, limit, concurrency, restart, force,
             progress=not no_progress, colleague=colleague_model,
             interventions=interventions, epochs=epochs)  # fmt: skip
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
        type=click.IntRange(min=1),
        help="Bootstrap resamples per interval.",
    )(command)


@cli.command("report")
@click.argument("runs", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for report.md, report.html and plots/.",
)
@click.option("--title", default="uncobench evaluation report", show_default=True)
@click.option("--no-plots", is_flag=True, help="Skip the plots (no matplotlib needed).")
@bootstrap_options
def report_command(
    runs: Path,
    out: Path,
    title: str,
    no_plots: bool,
    bootstrap_samples: int,
    bootstrap_seed: int,
) -> int:
    """Write a Markdown and a self-contained HTML report of every run under RUNS, and
    metrics.json (every figure, exact)."""
    from ..report import write_report

    config = BootstrapConfig(samples=bootstrap_samples, seed=bootstrap_seed)
    files = write_report(runs, out, title=title, plots=not no_plots, bootstrap=config)
    console.print(
        f"wrote {escape(str(files.markdown))}, {escape(str(files.html))} and "
        f"{escape(str(files.metrics))}"
    )
    if files.note:
        console.print(f"[yellow]plots omitted:[/] {escape(files.note)}")
    return EXIT_OK


# -- demo ------------------------------------------------------------------------------------
def verify_demo_benchmark(bench: Path) -> int:
    """Re-prove every group of the demo benchmark; raises if one is not proved."""
    from ..construct import verify_benchmark

    reports = verify_benchmark(bench, SolverBudget())
    for report in reports:
        if report.verdict != Verdict.PROVED:
            raise UncobenchError(
                f"demo benchmark {report.task_id} is {report.verdict.label}, not proved"
            )
    return len(reports) - 1  # one report is the content hash


@cli.command("demo")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo"),
    show_default=True,
    help="Folder for the benchmark, the run and the report.",
)
@click.option("--groups", default=5, show_default=True, help="Task groups to build.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def demo_command(out: Path, groups: int, no_progress: bool) -> int:
    """Build a small benchmark, verify it, evaluate the built-in agents, write a report."""
    if groups < 1:
        raise ConfigError("--groups must be at least 1")
    bench = out / "bench"
    build_benchmark(bench, groups=groups, seed=7)
    console.print(f"[bold]1. built[/] {escape(str(bench))}")
    proved = verify_demo_benchmark(bench)
    console.print(f"[bold]2. verified[/] {proved} group(s): every check proved")
    console.print("[bold]3. evaluating[/] " + ", ".join(DEMO_AGENTS))
    run_eval(str(bench), DEMO_AGENTS, out / "run", restart=True, progress=not no_progress)
    from ..report import write_report

    files = write_report(out / "run", out / "report", title="uncobench demo report")
    console.print(f"[bold]4. report[/] {escape(str(files.html))}")
    return EXIT_OK
