"""``uncobench compare``: a paired test of two agents per setting."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import click

from ..errors import ConfigError
from ..evaluation import (
    ALPHA,
    INTERVENTION_ARMS,
    Comparison,
    SampleRecord,
    compare_agents,
    configuration_of,
)
from ..stats import BootstrapConfig, decimal_text, p_value_text, percent_text
from ._app import EXIT_OK, cli
from ._eval import bootstrap_options
from ._output import OutputTable, format_option, output_for


def _points(value: Fraction, digits: int = 1) -> str:
    return decimal_text(100 * value, digits, sign=True)


def _configuration(name: str, samples: list[SampleRecord], runs: Path) -> str:
    """The configuration ``name`` means: a row label as the report and the leaderboard print
    it (``x (budget 10)``), or an agent's bare name when the runs hold it in one
    configuration. Samples are compared by configuration, so a bare name with a non-default
    budget or LLM colleagues would otherwise match no cell."""
    labels: dict[str, None] = {}
    of_agent: dict[str, None] = {}
    for sample in samples:
        label = configuration_of(sample)
        labels[label] = None
        if sample.agent == name:
            of_agent[label] = None
    if name in labels:
        return name
    if len(of_agent) == 1:
        return next(iter(of_agent))
    if of_agent:
        raise ConfigError(
            f"{name} ran in several configurations in {runs}: name one of {', '.join(of_agent)}"
        )
    raise ConfigError(
        f"{runs} holds no samples of {name}; agents there: {', '.join(labels) or 'none'}"
    )


def _table(agent_a: str, agent_b: str, comparisons: list[Comparison]) -> OutputTable:
    """One row per setting (and arm, when several)."""
    arms = len({c.arm for c in comparisons}) > 1
    headers = ["setting", *(["arm"] if arms else []), "n", "A", "B", "A-B pp",
               "95% CI pp", "only A/B", "p", "p Holm"]  # fmt: skip
    table = OutputTable.of(f"{agent_a} (A) vs {agent_b} (B)", headers, left=2 if arms else 1)
    for c in comparisons:
        interval = (
            "–"
            if c.difference_ci is None
            else f"{_points(c.difference_ci[0], 0)},{_points(c.difference_ci[1], 0)}"
        )
        table.add_row(
            c.setting,
            *([c.arm] if arms else []),
            str(c.n_groups),
            percent_text(c.accuracy_a, 0),
            percent_text(c.accuracy_b, 0),
            "–" if c.difference is None else _points(c.difference),
            interval,
            f"{c.a_only}/{c.b_only}",
            p_value_text(c.p_value),
            p_value_text(c.p_holm) + ("*" if c.significant else ""),
        )
    return table


@cli.command("compare")
@click.argument("runs", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--a",
    "agent_a",
    required=True,
    help="The first agent: its name, or the report's row label (`x (budget 10)`) when the "
    "runs hold it in several configurations.",
)
@click.option("--b", "agent_b", required=True, help="The second agent.")
@click.option(
    "--arm",
    "arms",
    multiple=True,
    type=click.Choice(INTERVENTION_ARMS),
    help="Intervention arm(s) to compare (default: every arm both agents ran).",
)
@format_option
@bootstrap_options
def compare_command(
    runs: Path,
    agent_a: str,
    agent_b: str,
    arms: tuple[str, ...],
    output_format: str,
    as_json: bool,
    bootstrap_samples: int,
    bootstrap_seed: int,
) -> int:
    """Compare agents A and B on the same groups of every run under RUNS, per setting.

    Difference in accuracy (A minus B) with a paired bootstrap interval over groups, and an
    exact McNemar test on each group's majority outcome, Holm-adjusted over settings.
    """
    from ..report import load_report_data

    if agent_a == agent_b:
        raise ConfigError("--a and --b name the same agent; compare two different agents")
    data = load_report_data(runs)
    agent_a = _configuration(agent_a, data.samples, runs)
    agent_b = _configuration(agent_b, data.samples, runs)
    if agent_a == agent_b:
        raise ConfigError(f"--a and --b both name {agent_a}; compare two different agents")
    config = BootstrapConfig(samples=bootstrap_samples, seed=bootstrap_seed)
    comparisons = [
        c
        for c in compare_agents(data.samples, [(agent_a, agent_b)], config)
        if not arms or c.arm in arms
    ]
    if not comparisons:
        raise ConfigError(f"{agent_a} and {agent_b} share no setting (and arm) in {runs}")
    output = output_for(output_format, as_json)
    if output.is_json:
        output.json([c.model_dump(mode="json") for c in comparisons])
        return EXIT_OK
    output.table(_table(agent_a, agent_b, comparisons))
    output.say(
        f"n: common groups. A-B: accuracy difference in points, paired bootstrap over groups "
        f"({bootstrap_samples} "
        f"resamples, seed {bootstrap_seed}). only A/B, p: exact McNemar on each group's "
        f"majority outcome (ties left out); p Holm: adjusted over settings, * below "
        f"{decimal_text(ALPHA, 2)}."
    )
    return EXIT_OK
