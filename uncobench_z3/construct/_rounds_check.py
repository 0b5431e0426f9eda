"""Do a group's stored minimum rounds (and decision records' first changes) equal a fresh
computation?

``uncobench build`` stores each setting's minimum rounds in ``proofs.minimum_rounds`` (what
an ideal agent needs with scripted colleagues; an evaluation reads it instead of playing that
agent's episode). The figure comes from the evaluation layer, which construction does not
import, so the computation is handed in (:data:`._candidate.MinimumRounds`); without one a
stored figure is noted as not re-checked rather than passed. The same computation gives the
decision records' first changes (``proofs.decision_changes``, check ``decision-changes``),
which an evaluation's evidence judge reads instead of searching them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..settings import SETTING_NAMES, SettingName, TaskGroup
from ..solver import CheckResult, Verdict, VerificationReport
from ..spec import TypedTask
from ._candidate import MinimumRounds, stored_proofs_of, stores_decision_changes
from ._integrity import with_check

CHECK_NAME = "minimum-rounds"
CHANGES_CHECK = "decision-changes"


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
    for check in stored_proofs_checks(group, compute, task):
        if check.name == CHECK_NAME:
            return check
    return None


def stored_proofs_checks(
    group: TaskGroup, compute: MinimumRounds, task: TypedTask | None = None
) -> list[CheckResult]:
    """The checks of what the group stores for an evaluation to read (its minimum rounds, its
    decision records' first changes), each against one fresh computation; none for what it
    does not store."""
    proofs = group.proofs
    rounds = proofs.minimum_rounds if proofs is not None else None
    changes = proofs.decision_changes if proofs is not None else None
    if rounds is None and changes is None:
        return []
    try:
        fresh = stored_proofs_of(compute(group, task))
    except Exception as exc:  # a group the scripted colleagues cannot play: not proved
        why = f"could not be computed again: {exc}"[:280]
        checks = [] if rounds is None else [_result(Verdict.UNKNOWN, f"the minimum rounds {why}")]
        if changes is not None:
            checks.append(_changes(Verdict.UNKNOWN, f"the decision records' first changes {why}"))
        return checks
    checks = [] if rounds is None else [_rounds_result(rounds, fresh.minimum_rounds)]
    if changes is not None:
        checks.append(_changes_result(changes, fresh.decision_changes, compute))
    return checks


def _rounds_result(
    stored: Mapping[SettingName, int], fresh: Mapping[SettingName, int] | None
) -> CheckResult:
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


def _changes(verdict: Verdict, summary: str) -> CheckResult:
    return CheckResult(name=CHANGES_CHECK, kind="consistency", verdict=verdict, summary=summary)


def _changes_result(
    stored: Mapping[str, Mapping[str, int | None]],
    fresh: Mapping[str, Mapping[str, int | None]] | None,
    compute: MinimumRounds,
) -> CheckResult:
    if fresh is None and not stores_decision_changes(compute):
        return _changes(
            Verdict.UNKNOWN,
            "the stored decision records' first changes were not re-checked (the computation "
            "given does not compute them)",
        )
    if stored == fresh:
        return _changes(
            Verdict.PROVED,
            f"the stored first changes of {sum(map(len, stored.values()))} decision records "
            "equal a fresh computation",
        )
    differ = sorted(
        f"{candidate}.{fact}"
        for candidate in {*stored, *(fresh or {})}
        for fact in {*stored.get(candidate, {}), *(fresh or {}).get(candidate, {})}
        if stored.get(candidate, {}).get(fact, -1) != (fresh or {}).get(candidate, {}).get(fact, -1)
    )
    computed = "none (the true records do not give gold)" if fresh is None else "others"
    return _changes(
        Verdict.REFUTED,
        f"the group's stored decision records' first changes differ from a fresh "
        f"computation ({computed}): {', '.join(differ[:5]) or 'the records listed'}"[:300],
    )


def with_minimum_rounds_check(
    report: VerificationReport,
    group: TaskGroup,
    compute: MinimumRounds | None,
    task: TypedTask | None = None,
) -> VerificationReport:
    """``report`` with :func:`stored_proofs_checks` added (its verdict recombined), or with a
    note when the group stores minimum rounds or first changes and ``compute`` is None."""
    if compute is not None:
        for check in stored_proofs_checks(group, compute, task):
            report = with_check(report, check)
        return report
    proofs = group.proofs
    if proofs is None or (proofs.minimum_rounds is None and proofs.decision_changes is None):
        return report
    stored = [
        what
        for what, value in (
            ("minimum rounds", proofs.minimum_rounds),
            ("decision records' first changes", proofs.decision_changes),
        )
        if value is not None
    ]
    note = f"the stored {' and '.join(stored)} were not re-checked (no computation was given)"
    return report.model_copy(update={"notes": [*report.notes, note]})
