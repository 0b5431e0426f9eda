"""Role-agent validity per cell: the paper's Table 7, exact and with intervals.

A *cell* is one colleague (``scripted`` or a colleague model) in one mode (``scripted``,
``phrase``: the model words the scripted replies, ``policy``: it writes them) x main agent x
setting. Over the cell's judged replies (:func:`~._judge.is_judged`, verdicts by
:func:`~._judge.judge_reply`):

* ``fidelity`` = faithful / judged replies;
* ``mean_coverage`` = the mean over judged replies of conveyed / required items (a prescribed
  silence is one item);
* both with 95% intervals from the :mod:`uncobench_z3.stats` bootstrap over *groups* (the
  replies of one group share its records and its policy, so they are not independent; each
  resampled group carries all its replies in the cell: the statistics are pooled ratios);
* ``full_coverage`` replies that conveyed every required item; ``silences_required`` /
  ``silences_kept`` the prescribed silences and those the model kept; ``echoes`` replies that
  repeated their instructions; ``unverifiable_lines`` lines the record grammar could not read;
* ``samples`` in the cell and ``breached`` samples whose policy colleague broke the policy
  (:func:`~._metrics.broke_policy`: reported apart from the agent's figures);
* ``missed`` silences not judged (the environment kept them for scripted or phrasing
  colleagues) and ``unmatched`` replies whose group is not among the groups given.

Every figure is an exact :class:`~fractions.Fraction` (``None`` when no reply was judged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from ..settings import SETTING_NAMES
from ..stats import BootstrapConfig, Interval, Unit, bootstrap_many, ratios_at
from ._environment import ReplyRecord
from ._judge import (
    GroupJudges,
    UnreadableStatement,
    colleague_mode_of,
    colleague_of,
    is_judged,
)
from ._metrics import broke_policy
from ._reply_judge import ReplyJudgement
from ._sample import SampleRecord

ValidityKey = tuple[str, str, str, str]
"""(colleague, mode, agent, setting)"""
_COUNTS = ("samples", "breached", "judged", "missed", "unmatched", "faithful", "full_coverage",
           "silences_required", "silences_kept", "echoes", "unverifiable_lines")  # fmt: skip


class ValidityCell(BaseModel):
    """The judge over the replies one colleague gave one main agent in one setting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    colleague: str
    mode: str
    """``scripted``, ``phrase`` or ``policy``"""
    agent: str
    setting: str
    samples: int = 0
    breached: int = 0
    judged: int = 0
    missed: int = 0
    unmatched: int = 0
    faithful: int = 0
    fidelity: Fraction | None = None
    fidelity_ci: Interval | None = None
    coverage_sum: Fraction = Fraction(0)
    mean_coverage: Fraction | None = None
    coverage_ci: Interval | None = None
    full_coverage: int = 0
    silences_required: int = 0
    silences_kept: int = 0
    echoes: int = 0
    unverifiable_lines: int = 0

    @property
    def row(self) -> str:
        """The colleague as a table row names it: ``scripted`` or ``<model> (<mode>)``."""
        return self.colleague if self.mode == "scripted" else f"{self.colleague} ({self.mode})"


class Replied(Protocol):
    """What :meth:`ValidityTally.add` reads of a round: its replies (a
    :class:`~._trace.RoundRecord`, or only the replies of a trace read apart)."""

    @property
    def replies(self) -> Sequence[ReplyRecord]: ...


class ReplyJudge(Protocol):
    """What the tally asks of a group's judge (:class:`~._judge.GroupJudge`)."""

    def judge(self, reply: ReplyRecord) -> ReplyJudgement: ...


class Judges(Protocol):
    """The judges by group hash (:class:`~._judge.GroupJudges`)."""

    def get(self, group_hash: str) -> ReplyJudge | None: ...


class _Group:
    """One group's judged replies in a cell; coverage as (conveyed, required) -> replies, so
    the exact sum is made once per distinct share, not once per reply."""

    def __init__(self) -> None:
        self.faithful = 0
        self.judged = 0
        self.shares: Counter[tuple[int, int]] = Counter()

    def coverage(self) -> Fraction:
        return sum(
            ((Fraction(conveyed, required) if required else Fraction(1)) * replies
             for (conveyed, required), replies in self.shares.items()),
            Fraction(0),
        )  # fmt: skip


class _Cell:
    def __init__(self) -> None:
        self.counts = dict.fromkeys(_COUNTS, 0)
        self.groups: dict[str, _Group] = {}
        """group hash -> its replies' figures"""


class ValidityTally:
    """Judges replies as samples are added; :meth:`cells` gives the figures."""

    def __init__(self, judges: Judges) -> None:
        self.judges = judges
        self._cells: dict[ValidityKey, _Cell] = {}

    def add(self, sample: SampleRecord, rounds: Iterable[Replied] | None = None) -> None:
        """One sample's replies (``rounds``: its trace, if read apart from the record)."""
        key = (colleague_of(sample), colleague_mode_of(sample), sample.agent, sample.setting)
        cell = self._cells.setdefault(key, _Cell())
        counts = cell.counts
        counts["samples"] += 1
        counts["breached"] += broke_policy(sample)
        judge = self.judges.get(sample.group_hash)
        for record in sample.trace if rounds is None else rounds:
            for reply in record.replies:
                if not is_judged(reply):
                    counts["missed"] += 1
                    continue
                if judge is None:
                    counts["unmatched"] += 1
                    continue
                try:
                    verdict = judge.judge(reply)
                except UnreadableStatement as exc:
                    exc.sample_key = sample.key
                    raise
                group = cell.groups.get(sample.group_hash)
                if group is None:
                    group = cell.groups[sample.group_hash] = _Group()
                group.faithful += verdict.fidelity
                group.judged += 1
                group.shares[verdict.conveyed, verdict.required] += 1
                counts["judged"] += 1
                counts["faithful"] += verdict.fidelity
                counts["full_coverage"] += verdict.conveyed == verdict.required
                counts["silences_required"] += verdict.silence_required
                counts["silences_kept"] += verdict.silence_required and verdict.silent
                counts["echoes"] += verdict.echo
                counts["unverifiable_lines"] += len(verdict.unverifiable)

    def cells(self, config: BootstrapConfig | None = None) -> list[ValidityCell]:
        """Every cell: colleagues and agents in first-seen order, settings in canonical order."""
        config = config or BootstrapConfig()
        order: dict[str, int] = {name: i for i, name in enumerate(SETTING_NAMES)}
        first = {key[:3]: i for i, key in reversed(list(enumerate(self._cells)))}
        keys = sorted(self._cells, key=lambda k: (first[k[:3]], order.get(k[3], len(order))))
        return [self._figures(key, self._cells[key], config) for key in keys]

    @staticmethod
    def _figures(key: ValidityKey, cell: _Cell, config: BootstrapConfig) -> ValidityCell:
        coverages = [(group, group.coverage()) for group in cell.groups.values()]
        units: list[Unit] = [(g.faithful, g.judged, c, g.judged) for g, c in coverages]
        estimates = bootstrap_many(
            units,
            {"fidelity": ratios_at(0, 2), "coverage": ratios_at(2, 4)},
            config,
            "validity|" + "|".join(key),
        )
        colleague, mode, agent, setting = key
        total = sum((c for _, c in coverages), Fraction(0))
        return ValidityCell(
            colleague=colleague,
            mode=mode,
            agent=agent,
            setting=setting,
            **cell.counts,
            fidelity=estimates["fidelity"].value,
            fidelity_ci=estimates["fidelity"].interval,
            coverage_sum=total,
            mean_coverage=estimates["coverage"].value,
            coverage_ci=estimates["coverage"].interval,
        )


def validity_cells(
    samples: Iterable[SampleRecord],
    judges: GroupJudges,
    config: BootstrapConfig | None = None,
) -> list[ValidityCell]:
    """Table 7: the judge over every reply of ``samples``, per cell (module docstring)."""
    tally = ValidityTally(judges)
    for sample in samples:
        tally.add(sample)
    return tally.cells(config)


def pooled(cells: Sequence[ValidityCell]) -> tuple[Fraction | None, Fraction | None]:
    """Fidelity and mean coverage over several cells' judged replies (no interval)."""
    judged = sum(c.judged for c in cells)
    if not judged:
        return None, None
    faithful = sum(c.faithful for c in cells)
    coverage = sum((c.coverage_sum for c in cells), Fraction(0))
    return Fraction(faithful, judged), coverage / judged
