"""Does a group's stored minimum rounds equal a fresh computation?

``uncobench build`` stores each setting's minimum rounds in ``proofs.minimum_rounds`` (what
an ideal agent needs with scripted colleagues; an evaluation reads it instead of playing that
agent's episode). The figure comes from the evaluation layer, which construction does not
import, so the computation is handed in (:data:`._candidate.MinimumRounds`); without one a
stored figure is noted as not re-checked rather than passed.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..settings import SETTING_NAMES, SettingName, TaskGroup
from ..solver import CheckResult, Verdict, VerificationReport
from ..spec import TypedTask
from ._candidate import MinimumRounds
from ._integrity import with_check

CHECK_NAME = "minimum-rounds"


def _result(verdict: Verdict, summary: str) -> CheckResult:
    return CheckResult(name=CHECK_NAME, kind="consistency", verdict=verdict, summary=summary)


def _listed(rounds: Mapping[SettingName, int]) -> str:
    named = [f"{name} {rounds[name]}" for name in SETTING_NAMES if name in rounds]
    return ", ".join(named) or "none decided"


def minimum_rounds_check(
    group: TaskGroup, compute: MinimumRounds, task: TypedTask | None = None
) -> CheckResult | None:
    """The check of the group's stored minimum rounds (None when it stores none). ``task``:
    the group's typed task, when the caller has made it already."""
    stored = group.proofs.minimum_rounds if group.proofs is not None else None
    if stored is None:
        return None
    try:
        fresh = compute(group, task)
    except Exception as exc:  # a group the scripted colleagues cannot play: not proved
        return _result(
            Verdict.UNKNOWN, f"the minimum rounds could not be computed again: {exc}"[:300]
        )
    if fresh is None:
        return _result(
            Verdict.UNKNOWN,
            "the solver left a verdict of the minimum-rounds search undecided within its "
            "budget: the stored figures were not checked",
        )
    if stored == fresh:
        return _result(
            Verdict.PROVED,
            f"the stored minimum rounds ({_listed(fresh)}) equal a fresh computation",
        )
    return _result(
        Verdict.REFUTED,
        f"the group stores minimum rounds {_listed(stored)}; computed again: {_listed(fresh)}",
    )


def with_minimum_rounds_check(
    report: VerificationReport,
    group: TaskGroup,
    compute: MinimumRounds | None,
    task: TypedTask | None = None,
) -> VerificationReport:
    """``report`` with :func:`minimum_rounds_check` added (its verdict recombined), or with a
    note when the group stores minimum rounds and ``compute`` is None."""
    if compute is not None:
        check = minimum_rounds_check(group, compute, task)
        return report if check is None else with_check(report, check)
    if group.proofs is None or group.proofs.minimum_rounds is None:
        return report
    note = "the stored minimum rounds were not re-checked (no computation was given)"
    return report.model_copy(update={"notes": [*report.notes, note]})
