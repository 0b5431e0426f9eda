"""Role-agent validity (the paper's Table 7): the programmatic judge over every colleague
reply, per colleague (``scripted``, or a colleague model in ``phrase`` or ``policy`` mode) x
main agent x setting (:class:`~uncobench_z3.evaluation.ValidityCell`, figures exact with
bootstrap intervals over groups), and the LLM judge's figures where a run holds a
``judge.jsonl``.

The report reads traces apart from the records, so the cells are tallied by a trace visitor
(:class:`ValidityJudge`) as the runs are read; the matrix pools each colleague x agent over
its settings, the details table keeps the settings apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import UncobenchError
from ..evaluation import (
    JUDGE_FILE,
    GroupJudge,
    GroupJudges,
    JudgeLine,
    ReplyJudgement,
    ReplyRecord,
    SampleRecord,
    ValidityCell,
    ValidityTally,
    judge_agreement,
    pooled,
    read_judgements,
)
from ..stats import BootstrapConfig, Interval, decimal_text
from ._load import BenchmarkGroups, ReportData, ViewReply, ViewRound
from ._tables import Table, interval_text, number, percent, setting_title

_JUDGED_FIELDS = ("stated", "fidelity", "policy")
"""the reply fields besides role, text and pending that a verdict reads
(:func:`~uncobench_z3.evaluation.is_judged`, ``GroupJudge.judge``)"""


_Known = tuple[dict[str, Any], ReplyRecord]
"""a reply's judged fields as read, and the record made of them"""


@dataclass(frozen=True)
class _Replies:
    replies: tuple[ReplyRecord, ...]


class _KnownReplies:
    """A group's judge for the tally that knows the verdict of every record the visitor made
    (by the record itself: one object per distinct reply)."""

    def __init__(self, judge: GroupJudge) -> None:
        self.group_judge = judge
        self.verdicts: dict[int, tuple[ReplyRecord, ReplyJudgement]] = {}
        """id -> (the record, kept alive so that its id stays its own, its verdict)"""

    def judge(self, reply: ReplyRecord) -> ReplyJudgement:
        known = self.verdicts.get(id(reply))
        if known is None or known[0] is not reply:
            known = self.verdicts[id(reply)] = (reply, self.group_judge.judge(reply))
        return known[1]


class ValidityJudge:
    """A trace visitor that judges every reply as the runs are read.

    Replies recur (a group's scripted replies across epochs, agents and settings): each
    distinct reply of a group is validated once, as a
    :class:`~uncobench_z3.evaluation.ReplyRecord` of the fields a verdict reads, and judged
    once; the tally counts it wherever it recurs.
    """

    def __init__(self, groups: BenchmarkGroups) -> None:
        self._judges = GroupJudges(groups.by_hash.values(), groups.by_hash.keys())
        self._known: dict[str, _KnownReplies | None] = {}
        self._records: dict[tuple[str, str, str | None, bool], list[_Known]] = {}
        self.tally = ValidityTally(self)

    def get(self, group_hash: str) -> _KnownReplies | None:
        """The tally's judge of a group (:class:`~uncobench_z3.evaluation.Judges`)."""
        if group_hash not in self._known:
            judge = self._judges.get(group_hash)
            self._known[group_hash] = None if judge is None else _KnownReplies(judge)
        return self._known[group_hash]

    def _record(self, group_hash: str, reply: ViewReply) -> ReplyRecord:
        extra = reply.model_extra or {}
        judged = {name: extra[name] for name in _JUDGED_FIELDS if name in extra}
        # same group, role, text and equal parsed JSON of the rest: the same record (JSON's 1
        # and true compare equal, but a log holds each fact's values in the fact's one type)
        known = self._records.setdefault((group_hash, reply.role, reply.text, reply.pending), [])
        for fields, record in known:
            if fields == judged:
                return record
        fields = {"role": reply.role, "question": reply.question, "text": reply.text,
                  "pending": reply.pending, **judged}  # fmt: skip
        record = ReplyRecord.model_validate(fields)
        known.append((judged, record))
        return record

    def __call__(self, sample: SampleRecord, trace: Sequence[ViewRound]) -> None:
        replies = tuple(self._record(sample.group_hash, r) for view in trace for r in view.replies)
        self.tally.add(sample, [_Replies(replies)])

    def results(self, config: BootstrapConfig | None = None) -> list[ValidityCell]:
        return self.tally.cells(config)


def _share(value: Fraction | None) -> str:
    return "–" if value is None else decimal_text(value, 3)


def _shares(interval: Interval | None) -> str:
    if interval is None:
        return "–"
    return f"[{decimal_text(interval[0], 2)}, {decimal_text(interval[1], 2)}]"


def validity_matrix(cells: Sequence[ValidityCell]) -> Table:
    """Table 7: colleagues down, main agents across; pooled fidelity, coverage and n per cell
    (its settings together; the intervals per setting are in :func:`validity_details`)."""
    agents = list(dict.fromkeys(c.agent for c in cells))
    rows_of = list(dict.fromkeys(c.row for c in cells))
    rows = []
    for colleague in rows_of:
        row = [colleague]
        for agent in agents:
            found = [c for c in cells if c.row == colleague and c.agent == agent]
            judged = sum(c.judged for c in found)
            if not found or not judged:
                missed = sum(c.missed for c in found)
                row.append("–" if not found else f"no reply judged ({missed} missed)")
                continue
            fidelity, coverage = pooled(found)
            row.append(f"fidelity {percent(fidelity)}; coverage {number(coverage, 3)}; n={judged}")
        rows.append(row)
    return Table(
        ["colleague \\ main agent", *agents],
        rows,
        "Programmatic judge, per colleague (rows; a colleague model with its mode) and main "
        "agent (columns), all settings pooled: fidelity = share of replies whose every stated "
        "record agrees with the role's records in the context it names and with the response "
        "policy; coverage = mean share of the items the policy required that a reply conveys; "
        "n = replies judged (missed replies are not judged). Intervals per setting below.",
    )


def validity_details(cells: Sequence[ValidityCell]) -> Table:
    """One row per cell (colleague x main agent x setting), with 95% bootstrap intervals."""
    body = [
        [
            cell.row,
            cell.agent,
            setting_title(cell.setting),
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
        "fails both. 95% bootstrap intervals over groups. Unverifiable lines could not be read "
        "with the record grammar (free prose needs the LLM judge). Policy colleagues' samples "
        "with a broken policy are left out of the accuracy figures.",
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
