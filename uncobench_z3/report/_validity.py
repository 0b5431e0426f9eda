"""Role-agent validity (the paper's Table 7): the programmatic judge over every colleague
reply, per colleague (``scripted`` or the model that phrased the replies) x main agent, and
the LLM judge's figures where a run holds a ``judge.jsonl``.

Figures are exact: fidelity is faithful / judged replies (95% Wilson interval), coverage
the mean over judged replies of conveyed / required items (1 when a reply had nothing to
convey). The judge is :func:`~uncobench_z3.evaluation.judge_reply`; a reply that recurs
(same group, role, text and required items, as across epochs and agents) is judged once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from ..errors import UncobenchError
from ..evaluation import (
    JUDGE_FILE,
    GroupJudges,
    JudgeLine,
    ReplyJudgement,
    ReplyRecord,
    SampleRecord,
    judge_agreement,
    read_judgements,
)
from ..stats import Interval, wilson_interval
from ._load import BenchmarkGroups, ReportData, ViewReply, ViewRound
from ._tables import Table, interval_text, number, percent


class ValidityCell(BaseModel):
    """The programmatic judge over the replies one colleague kind gave one main agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    colleague: str
    agent: str
    judged: int = 0
    missed: int = 0
    """requests without a reply (not judged)"""
    unmatched: int = 0
    """replies whose group the benchmark no longer holds (not judged)"""
    faithful: int = 0
    fidelity: Fraction | None = None
    fidelity_ci: Interval | None = None
    coverage_sum: Fraction = Fraction(0)
    mean_coverage: Fraction | None = None
    full_coverage: int = 0
    unverifiable_lines: int = 0


_COUNTS = ("judged", "missed", "unmatched", "faithful", "full_coverage", "unverifiable_lines")


class ValidityJudge:
    """A trace visitor that judges every reply as the runs are read."""

    def __init__(self, groups: BenchmarkGroups) -> None:
        self.judges = GroupJudges(groups.by_hash.values())
        self._counts: dict[tuple[str, str], dict[str, int]] = {}
        self._coverage: dict[tuple[str, str], Counter[tuple[int, int]]] = {}
        """(conveyed, required) -> replies: coverage is summed exactly once, at the end"""
        self._verdicts: dict[tuple[str, str, str], list[tuple[object, ReplyJudgement | None]]] = {}

    def _verdict(self, group_hash: str, reply: ViewReply) -> ReplyJudgement | None:
        # replies recur (epochs, agents): one verdict per group, role, text and stated items
        stated = (reply.model_extra or {}).get("stated")
        known = self._verdicts.setdefault((group_hash, reply.role, reply.text or ""), [])
        for items, verdict in known:
            if items == stated:
                return verdict
        judge = self.judges.get(group_hash)
        raw = reply.model_dump(exclude_unset=True)
        verdict = None if judge is None else judge.judge(ReplyRecord.model_validate(raw))
        known.append((stated, verdict))
        return verdict

    def __call__(self, sample: SampleRecord, trace: Sequence[ViewRound]) -> None:
        cell = (sample.colleague, sample.agent)
        row = self._counts.setdefault(cell, dict.fromkeys(_COUNTS, 0))
        coverage = self._coverage.setdefault(cell, Counter())
        for record in trace:
            for reply in record.replies:
                if reply.text is None:
                    row["missed"] += 1
                    continue
                verdict = self._verdict(sample.group_hash, reply)
                if verdict is None:
                    row["unmatched"] += 1
                    continue
                row["judged"] += 1
                row["faithful"] += verdict.fidelity
                row["full_coverage"] += verdict.conveyed == verdict.required
                row["unverifiable_lines"] += len(verdict.unverifiable)
                coverage[(verdict.conveyed, verdict.required)] += 1

    def results(self) -> list[ValidityCell]:
        out = []
        for cell, row in self._counts.items():
            judged, faithful = row["judged"], row["faithful"]
            total = sum(
                (Fraction(conveyed, required) if required else Fraction(1)) * count
                for (conveyed, required), count in self._coverage[cell].items()
            )
            extra: dict[str, object] = {"coverage_sum": Fraction(total)}
            if judged:
                extra |= {
                    "fidelity": Fraction(faithful, judged),
                    "fidelity_ci": wilson_interval(faithful, judged),
                    "mean_coverage": Fraction(total) / judged,
                }
            colleague, agent = cell
            out.append(ValidityCell.model_validate({"colleague": colleague, "agent": agent,
                                                    **row, **extra}))  # fmt: skip
        return out


def validity_matrix(cells: Sequence[ValidityCell]) -> Table:
    """Table 7: colleague kinds down, main agents across; fidelity, coverage and n per cell."""
    agents = list(dict.fromkeys(c.agent for c in cells))
    colleagues = list(dict.fromkeys(c.colleague for c in cells))
    found = {(c.colleague, c.agent): c for c in cells}
    rows = []
    for colleague in colleagues:
        row = [colleague]
        for agent in agents:
            cell = found.get((colleague, agent))
            if cell is None or not cell.judged:
                row.append("–" if cell is None else f"no reply judged ({cell.missed} missed)")
                continue
            row.append(
                f"fidelity {percent(cell.fidelity)} {interval_text(cell.fidelity_ci)}; "
                f"coverage {number(cell.mean_coverage, 3)}; n={cell.judged}"
            )
        rows.append(row)
    return Table(
        ["colleague \\ main agent", *agents],
        rows,
        "Programmatic judge, per colleague kind (rows) and main agent (columns): fidelity = "
        "share of replies whose every stated record agrees with the role's records in the "
        "context it names, with a 95% Wilson interval; coverage = mean share of the items the "
        "response policy required that a reply conveys; n = replies judged (missed replies "
        "are not judged).",
    )


def validity_details(cells: Sequence[ValidityCell]) -> Table:
    body = [
        [c.colleague, c.agent, str(c.judged), f"{c.faithful}/{c.judged}",
         f"{c.full_coverage}/{c.judged}", str(c.unverifiable_lines), str(c.missed),
         str(c.unmatched)]
        for c in cells
    ]  # fmt: skip
    return Table(
        ["colleague", "main agent", "replies judged", "faithful", "full coverage",
         "unverifiable lines", "missed (not judged)", "group not found"],
        body,
        "Counts behind the matrix. Unverifiable lines could not be read with the record "
        "grammar (free prose needs the LLM judge); they are listed, not counted against "
        "fidelity.",
    )  # fmt: skip


def llm_table(lines: list[JudgeLine]) -> Table:
    keys = dict.fromkeys((line.colleague, line.judge_model) for line in lines)
    body = []
    for colleague, model in keys:
        agreement = judge_agreement(
            [x for x in lines if x.colleague == colleague and x.judge_model == model]
        )
        coverage = agreement.llm_mean_coverage
        difference = agreement.mean_coverage_difference
        body.append(
            [
                colleague,
                model,
                str(agreement.compared),
                percent(agreement.llm_fidelity_rate),
                "–" if coverage is None else f"{coverage:.3f}",
                f"{percent(agreement.fidelity_agreement)} "
                f"({agreement.fidelity_agreed}/{agreement.compared})",
                "–" if difference is None else f"{difference:.3f}",
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


def llm_judgements(data: ReportData) -> tuple[list[JudgeLine], list[str]]:
    """Every run's ``judge.jsonl`` lines (a reply judged twice counts once), and notes."""
    judged: dict[str, JudgeLine] = {}
    notes: list[str] = []
    for run in data.runs:
        try:
            for line in read_judgements(run.path / JUDGE_FILE, repair=False):
                judged.setdefault(line.key, line)
        except UncobenchError as exc:
            notes.append(str(exc))
    return list(judged.values()), notes
