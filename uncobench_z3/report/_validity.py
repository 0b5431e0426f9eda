"""The report's "Role-agent validity" section: the programmatic judge over every colleague
reply of the runs (per colleague kind), and the LLM judge's figures where a run holds a
``judge.jsonl``."""

from __future__ import annotations

from pathlib import Path

from ..construct import load_groups
from ..errors import UncobenchError
from ..evaluation import (
    JUDGE_FILE,
    ColleagueValidity,
    GroupJudges,
    JudgeLine,
    judge_agreement,
    read_judgements,
    role_validity,
    run_benchmark_path,
)
from ..settings import TaskGroup
from ..stats import wilson_interval
from ._load import ReportData
from ._tables import Section, Table, percent

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


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def programmatic_table(rows: list[ColleagueValidity]) -> Table:
    body = []
    for row in rows:
        low, high = wilson_interval(row.faithful, row.judged)
        fidelity = "–"
        if row.judged:
            fidelity = f"{percent(row.fidelity_rate)} [{percent(low, 0)}, {percent(high, 0)}]"
        body.append(
            [
                row.colleague,
                str(row.judged),
                fidelity,
                _share(row.mean_coverage),
                f"{row.full_coverage}/{row.judged}",
                str(row.unverifiable_lines),
                str(row.missed),
                str(row.unmatched),
            ]
        )
    return Table(
        ["colleague", "replies judged", "fidelity pass", "mean coverage", "full coverage",
         "unverifiable lines", "missed (not judged)", "group not found"],
        body,
        "Programmatic judge: a reply is faithful when every record line it states agrees with "
        "the role's records in the context it names (a range or options must contain the "
        "record); coverage is the share of the items the response policy required that it "
        "conveys. 95% Wilson interval on the pass rate.",
    )  # fmt: skip


def llm_table(lines: list[JudgeLine]) -> Table:
    keys = dict.fromkeys((line.colleague, line.judge_model) for line in lines)
    body = []
    for colleague, model in keys:
        agreement = judge_agreement(
            [x for x in lines if x.colleague == colleague and x.judge_model == model]
        )
        body.append(
            [
                colleague,
                model,
                str(agreement.compared),
                percent(agreement.llm_fidelity_rate),
                "–"
                if agreement.llm_mean_coverage is None
                else f"{agreement.llm_mean_coverage:.3f}",
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


def validity_section(data: ReportData) -> Section:
    """The section, or a note saying why it could not be computed."""
    groups, notes = _benchmark_groups(data)
    text = ""
    if notes:
        text = "Benchmark not readable, its replies are not judged: " + "; ".join(notes) + "."
    rows = role_validity(data.samples, GroupJudges(groups))
    tables = [programmatic_table(rows)]
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
