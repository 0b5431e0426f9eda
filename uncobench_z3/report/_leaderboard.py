"""A leaderboard over runs of one benchmark: one row per agent, accuracy per setting, overall
and justified accuracy with intervals, best first.

Runs of different benchmarks are refused (their ``benchmark_hash`` differs: a row must mean
the same tasks). *Overall* accuracy is over the settings every row has (so no agent climbs by
skipping a hard setting): per group, the share of its correct samples in those settings, the
mean over groups, with the report's bootstrap interval over groups; justified accuracy
counts only answers the received evidence determined. Per-setting cells are the report's
own (:func:`~uncobench_z3.evaluation.compute_metrics`). Intervention arms other than
``none`` and error samples are not ranked.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from .._outdir import check_output_folder, incomplete_marker, lock_output
from ..errors import ConfigError
from ..evaluation import (
    GroupKey,
    SampleRecord,
    compute_metrics,
    configuration_of,
    group_of,
    is_scored,
)
from ..settings import SETTING_NAMES
from ..spec import remove_stale_temps, write_text_atomic
from ..stats import BootstrapConfig, Interval, bootstrap_many, mean_at
from ._html import asset, html_table
from ._load import ReportData, open_report_data, read_runs
from ._markdown import md_table, md_text
from ._metrics_json import BootstrapInfo
from ._tables import Table, interval_text, percent, setting_title

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.html", "leaderboard.json")
LEADERBOARD_INCOMPLETE = "leaderboard.incomplete"
"""present while the leaderboard's files are being replaced (a killed writer leaves it)"""


class SettingScore(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    accuracy: Fraction | None
    accuracy_ci: Interval | None
    n_groups: int
    epochs: int


class LeaderboardRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int
    agent: str
    accuracy: Fraction | None
    """overall, over the board's common settings"""
    accuracy_ci: Interval | None
    justified_accuracy: Fraction | None
    justified_accuracy_ci: Interval | None
    n_groups: int
    samples: int
    settings: dict[str, SettingScore]
    missing: list[str] = Field(default_factory=list)
    """settings of the board this agent was not run in"""


class Leaderboard(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_name: Literal["uncobench-leaderboard"] = Field("uncobench-leaderboard",
                                                           alias="schema")  # fmt: skip
    schema_version: Literal[1] = 1
    generator: str = f"uncobench-z3 {__version__}"
    benchmark_hash: str
    runs: list[str]
    settings: list[str]
    """every setting any row has (the columns)"""
    overall_settings: list[str]
    """the settings every row has (what overall accuracy is over)"""
    bootstrap: BootstrapInfo
    rows: list[LeaderboardRow]


def _benchmark(data: ReportData) -> str:
    hashes = {run.benchmark_hash for run in data.runs}
    if len(data.runs) > 1 and "" in hashes:
        unnamed = [str(r.path) for r in data.runs if not r.benchmark_hash]
        raise ConfigError(f"cannot tell which benchmark {', '.join(unnamed)} ran (its run.json "
                          "has no benchmark_hash); rank runs of one benchmark only")  # fmt: skip
    if len(hashes) > 1:
        listed = "; ".join(f"{r.path}: {r.benchmark_hash[:12]}" for r in data.runs)
        raise ConfigError(f"the runs come from different benchmarks ({listed}); a leaderboard "
                          "ranks runs of one benchmark")  # fmt: skip
    return hashes.pop() if hashes else ""


def _overall(agent: str, samples: Sequence[SampleRecord], settings: set[str],
             config: BootstrapConfig) -> tuple[dict[str, Any], int, int]:  # fmt: skip
    by_group: dict[GroupKey, list[SampleRecord]] = {}
    for s in samples:
        if s.setting in settings:
            by_group.setdefault(group_of(s), []).append(s)
    units = [
        (Fraction(sum(s.correct for s in group), len(group)),
         Fraction(sum(s.correct and s.justification is not None
                      and s.justification.label == "justified" for s in group), len(group)))
        for group in by_group.values()
    ]  # fmt: skip
    estimates = bootstrap_many(units, {"all": mean_at(0), "justified": mean_at(1)}, config,
                               f"leaderboard|{agent}")  # fmt: skip
    values = {
        "accuracy": estimates["all"].value, "accuracy_ci": estimates["all"].interval,
        "justified_accuracy": estimates["justified"].value,
        "justified_accuracy_ci": estimates["justified"].interval,
    }  # fmt: skip
    return values, len(by_group), sum(len(g) for g in by_group.values())


def build_leaderboard(paths: Sequence[str | Path], config: BootstrapConfig | None = None
                      ) -> Leaderboard:  # fmt: skip
    config = config or BootstrapConfig()
    data = open_report_data(paths, groups=False)
    benchmark = _benchmark(data)
    read_runs(data)
    # (what the cells score: neither error samples nor those whose policy colleague broke it)
    samples = [s for s in data.samples if s.intervention == "none" and is_scored(s)]
    if not samples:
        raise ConfigError("the runs hold no scored sample to rank")
    cells = [m for m in compute_metrics(samples, data.unavailable, config) if m.arm == "none"]
    agents = list(dict.fromkeys(m.agent for m in cells))
    has = {a: {m.setting for m in cells if m.agent == a} for a in agents}
    settings = [s for s in SETTING_NAMES if any(s in h for h in has.values())]
    common = set.intersection(*has.values())
    rows = []
    for agent in agents:
        mine = [s for s in samples if configuration_of(s) == agent]  # agent: its label
        overall, groups, count = _overall(agent, mine, common, config)
        rows.append({
            "rank": 0, "agent": agent, **overall, "n_groups": groups, "samples": count,
            "settings": {m.setting: SettingScore(accuracy=m.accuracy, accuracy_ci=m.accuracy_ci,
                                                 n_groups=m.n_groups, epochs=m.epochs)
                         for m in cells if m.agent == agent},
            "missing": [s for s in settings if s not in has[agent]],
        })  # fmt: skip
    rank_rows(rows)
    return Leaderboard.model_validate({
        "schema": "uncobench-leaderboard", "benchmark_hash": benchmark,
        "runs": [str(r.path) for r in data.runs], "settings": settings,
        "overall_settings": [s for s in settings if s in common],
        "bootstrap": BootstrapInfo(samples=config.samples, seed=config.seed, level=config.level),
        "rows": rows,
    })  # fmt: skip


def rank_rows(rows: list[dict[str, Any]]) -> None:
    """Sort ``rows`` best first (overall, then justified accuracy; no figure last; a tie by
    name) and rank them: rows with equal figures share a rank, and the next rank counts them
    (1, 1, 3). Before, a tie got consecutive ranks, so the name's order looked like a result;
    and an accuracy of 0 ranked with rows that have no figure."""

    def worst_last(value: Fraction | None) -> tuple[bool, Fraction]:
        return (value is None, -value if value is not None else Fraction(0))

    def figures(row: dict[str, Any]) -> tuple[tuple[bool, Fraction], ...]:
        return worst_last(row["accuracy"]), worst_last(row["justified_accuracy"])

    rows.sort(key=lambda row: (*figures(row), str(row["agent"])))
    for place, row in enumerate(rows, start=1):
        tied = place > 1 and figures(rows[place - 2]) == figures(row)
        row["rank"] = rows[place - 2]["rank"] if tied else place


def _score(value: Fraction | None, interval: Interval | None) -> str:
    return f"{percent(value)} {interval_text(interval)}"


def leaderboard_table(board: Leaderboard) -> Table:
    rows = []
    for row in board.rows:
        cells = [str(row.rank), row.agent, _score(row.accuracy, row.accuracy_ci),
                 _score(row.justified_accuracy, row.justified_accuracy_ci)]  # fmt: skip
        for setting in board.settings:
            score = row.settings.get(setting)
            cells.append("–" if score is None else _score(score.accuracy, score.accuracy_ci))
        cells.append(f"{row.n_groups} ({row.samples})")
        rows.append(cells)
    over = ", ".join(setting_title(s) for s in board.overall_settings) or "none"
    return Table(
        [
            "rank",
            "agent",
            "overall",
            "justified",
            *(setting_title(s) for s in board.settings),
            "groups (samples)",
        ],
        rows,
        f"Overall and justified accuracy over the settings every agent has ({over}): the mean "
        "over groups of each group's share of correct samples, with a 95% percentile "
        f"bootstrap interval over groups ({board.bootstrap.samples} resamples, seed "
        f"{board.bootstrap.seed}); per setting: the report's accuracy and interval. Sorted by "
        "overall, then justified accuracy; equal figures share a rank.",
    )


def write_leaderboard(board: Leaderboard, out: str | Path) -> list[Path]:
    """``leaderboard.md``, ``leaderboard.html`` (self-contained, no script) and
    ``leaderboard.json`` (exact fractions as strings) in the folder ``out``, locked."""
    target = Path(out)
    with lock_output(target, "leaderboard", check=lambda: check_leaderboard_folder(target)):
        _remove_stale_temps(target)
        return _write_files(board, target)


def rank_into_folder(
    runs: Sequence[str | Path], config: BootstrapConfig, out: str | Path
) -> tuple[Leaderboard, list[Path]]:
    """Lock ``out`` (one writer of any kind) before any work, rank ``runs`` and write the
    leaderboard's files there."""
    target = Path(out)
    with lock_output(target, "leaderboard", check=lambda: check_leaderboard_folder(target)):
        _remove_stale_temps(target)
        board = build_leaderboard(runs, config)
        return board, _write_files(board, target)


def _remove_stale_temps(target: Path) -> None:
    """What leaderboard writers killed part way left (call it holding the folder's lock)."""
    remove_stale_temps(target, (*LEADERBOARD_FILES, LEADERBOARD_INCOMPLETE))


def _write_files(board: Leaderboard, target: Path) -> list[Path]:
    table = leaderboard_table(board)
    title = "uncobench leaderboard"
    note = f"Benchmark {board.benchmark_hash[:16]}; runs: {', '.join(board.runs)}."
    md = "\n".join([f"# {title}", "", md_text(note), "", *md_table(table)]).rstrip() + "\n"
    style = asset("report.css")
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>{style}</style></head><body><main>"
        f'<h1>{title}</h1><p class="note">{html.escape(note)}</p>{html_table(table)}'
        "</main></body></html>\n"
    )
    paths = [target / name for name in LEADERBOARD_FILES]
    document = json.loads(board.model_dump_json(by_alias=True))
    with incomplete_marker(target / LEADERBOARD_INCOMPLETE, "leaderboard"):
        for path, text in zip(paths, (md, page, json.dumps(document, indent=1) + "\n"),
                              strict=True):  # fmt: skip
            write_text_atomic(path, text)
    return paths


def check_leaderboard_folder(out: str | Path) -> None:
    """Refuse ``out`` unless it is new, empty or a leaderboard's folder (a run folder or
    someone's papers is not); callers check before ranking anything."""
    check_output_folder(out, LEADERBOARD_FILES, "leaderboard folder",
                        allowed=(LEADERBOARD_INCOMPLETE,))  # fmt: skip
