"""The report's "Role-agent validity" section (the paper's Table 7): the programmatic judge
over every colleague reply of the runs, per colleague x main agent x setting
(:func:`~uncobench_z3.evaluation.validity_cells`), and the LLM judge's figures where a run
holds a ``judge.jsonl``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..construct import load_groups
from ..errors import UncobenchError
from ..evaluation import (
    JUDGE_FILE,
    GroupJudges,
    JudgeLine,
    ValidityCell,
    judge_agreement,
    read_judgements,
    run_benchmark_path,
    validity_cells,
)
from ..settings import TaskGroup
from ..stats import BootstrapConfig, Interval, decimal_text
from ._load import ReportData
from ._tables import Section, Table, interval_text, percent

SECTION_TITLE = "Role-agent validity"


def _benchmark_groups(data: ReportData) -> tuple[list[TaskGroup], list[str]]:
    """The groups of every run's benchmark, and a note per benchmark that could not be read."""
    groups: list[TaskGroup] = []
    notes: list[str] = []
    seen: set[Path] = set()
    for run in data.runs:
        try:
            path = run_benchmark_path(run.path).resolve()
            if path not in seen:
                seen.add(path)
                groups += load_groups(path)
        except UncobenchError as exc:
            notes.append(f"{run.path}: {exc}")
    return groups, notes


def _share(value: Fraction | None) -> str:
    return "–" if value is None else decimal_text(value, 3)


def _shares(interval: Interval | None) -> str:
    if interval is None:
        return "–"
    return f"[{decimal_text(interval[0], 2)}, {decimal_text(interval[1], 2)}]"


def programmatic_table(cells: list[ValidityCell]) -> Table:
    body = [
        [
            cell.row,
            cell.agent,
            cell.setting,
            str(cell.judged),
            f"{percent(cell.fidelity)} {interval_text(cell.fidelity_ci)}",
            f"{_share(cell.mean_coverage)} {_shares(cell.coverage_ci)}",
            f"{cell.full_coverage}/{cell.judged}",
            f"{cell.silences_kept}/{cell.silences_required}" if cell.mode == "policy" else "–",
            f"{cell.breached}/{cell.samples}" if cell.mode == "policy" else "–",
            str(cell.unverifiable_lines),
            str(cell.missed),
            str(cell.unmatched),
        ]
        for cell in cells
    ]
    return Table(
        ["colleague", "main agent", "setting", "replies judged", "fidelity pass",
         "mean coverage", "full coverage", "silences kept", "samples broke policy",
         "unverifiable lines", "missed (not judged)", "group not found"],
        body,
        "Programmatic judge, against what the scripted policy prescribes for each request: a "
        "reply is faithful when every record line it states agrees with the role's records in "
        "the context it names and with the policy (a withheld record only as the policy gives "
        "it; silence where prescribed); coverage is the share of the items the policy required "
        "that it conveys. A reply that repeats its instructions or states nothing readable "
        "fails both. 95% bootstrap intervals over groups. Policy colleagues' samples with a "
        "broken policy are left out of the accuracy figures.",
    )  # fmt: skip


def llm_table(lines: list[JudgeLine]) -> Table:
    keys = dict.fromkeys((line.row, line.judge_model) for line in lines)
    body = []
    for colleague, model in keys:
        agreement = judge_agreement(
            [x for x in lines if x.row == colleague and x.judge_model == model]
        )
        body.append(
            [
                colleague,
                model,
                str(agreement.compared),
                percent(agreement.llm_fidelity_rate),
                _share(agreement.llm_mean_coverage),
                f"{percent(agreement.fidelity_agreement)} "
                f"({agreement.fidelity_agreed}/{agreement.compared})",
                _share(agreement.mean_coverage_difference),
                str(agreement.no_verdict),
            ]
        )
    return Table(
        ["colleague", "judge model", "replies", "LLM fidelity pass", "LLM mean coverage",
         "fidelity agreement", "mean |coverage difference|", "no verdict"],
        body,
        "LLM judge (judge.jsonl) on the replies it judged, and its agreement with the "
        "programmatic judge on the same replies.",
    )  # fmt: skip


@dataclass(frozen=True)
class ReportValidity:
    """Table 7 over the report's runs, and why some replies could not be judged."""

    cells: list[ValidityCell]
    notes: list[str]


def report_validity(data: ReportData, config: BootstrapConfig | None = None) -> ReportValidity:
    """The validity cells of every reply of the runs (``metrics.json``'s ``validity``)."""
    groups, notes = _benchmark_groups(data)
    return ReportValidity(validity_cells(data.samples, GroupJudges(groups), config), notes)


def validity_section(data: ReportData, found: ReportValidity | None = None) -> Section:
    """The section, or a note saying why it could not be computed."""
    found = found or report_validity(data)
    text = ""
    if found.notes:
        text = "Benchmark not readable, its replies are not judged: " + "; ".join(found.notes)
        text += "."
    tables = [programmatic_table(found.cells)]
    judged: dict[str, JudgeLine] = {}
    for run in data.runs:
        path = run.path / JUDGE_FILE
        try:
            for line in read_judgements(path, repair=False):
                judged.setdefault(line.key, line)
        except UncobenchError as exc:
            text += f" {exc}."
    if judged:
        tables.append(llm_table(list(judged.values())))
    return Section(SECTION_TITLE, text.strip(), tables)
