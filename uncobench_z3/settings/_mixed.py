"""The Mixed setting: one defect of each kind on three different roles, all three needed.

Mixed is valid when

1. each of its three defects is valid on its own - which is exactly the *repair-two* query:
   with the other two defects repaired, the remaining one still leaves the answer open, so an
   agent needs all three repairs (the three queries are the single defects' own, reused under
   the Mixed setting's names); and
2. the *face-value reading* of the three first replies together does not determine gold
   (:meth:`~._validity.DefectChecker.face_value_reading`).

Among the combinations of valid defects, those whose face-value reading gives a wrong answer
for sure (face-value guessing floor 0, :mod:`._guessing`) are tried first.

A defect on a role needs that role to be necessary *alone*. With no eligible candidate a role
is necessary alone only when it alone excludes some candidate; with every one of the 5-7
roles necessary (the others jointly, by sharing the exclusion of the remaining candidate) at
most two roles can be - so such groups have no Mixed, and say why.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from itertools import islice
from typing import TYPE_CHECKING

from ..solver import CheckResult, Verdict
from ..spec import Outcome, TypedTask
from ._guessing import floor
from ._model import Defect
from ._validity import DefectChecker

if TYPE_CHECKING:
    from ._perturb import _Chooser

#: Valid defects of each kind combined, and face-value queries tried, before giving up.
MIXED_POOL = 4
MIXED_TRIES = 12


def mixed_unavailable_reason(task: TypedTask, gold: Outcome, alone: list[str]) -> str | None:
    """Why no Mixed can exist (fewer than three roles necessary alone), or None."""
    count = len(set(alone))
    if count >= 3:
        return None
    if gold.kind == "none":
        return (
            f"no eligible candidate: only {count} of the {len(task.roles)} roles are necessary "
            "alone (a role is, only when it alone excludes some candidate; with every role "
            "necessary, at most two can be), and Mixed needs three"
        )
    return f"only {count} of the {len(task.roles)} roles are necessary alone; Mixed needs three"


def choose_mixed(
    chooser: _Chooser, pools: dict[str, list[Defect]]
) -> tuple[list[Defect], list[CheckResult]] | None:
    """Three valid defects on three different roles whose face-value reading leaves the
    answer open; each defect's proof is reused under the Mixed setting's name (the query is
    the same one).

    Pools are walked lazily (the first options usually combine); a combination whose
    face-value floor is above 0 is set aside and tried only when no floor-0 one works.
    """
    checks = chooser.checks
    missed = list(chooser.valid("missed", pools["missed"]))
    tries = 0
    set_aside: list[tuple[Fraction, int, Combo]] = []
    for combo in _combinations(chooser, pools, missed):
        defects = [d for d, _ in combo]
        floor_here = floor(chooser.task, chooser.gold, "face-value", defects)
        if floor_here > 0:
            set_aside.append((floor_here, len(set_aside), combo))
            continue
        tries += 1
        found = _proved(checks, combo)
        if found is not None or tries >= MIXED_TRIES:
            return found
    for _, _, combo in sorted(set_aside, key=lambda item: item[:2])[: MIXED_TRIES - tries]:
        found = _proved(checks, combo)
        if found is not None:
            return found
    return None


Combo = list[tuple[Defect, list[CheckResult]]]


def _combinations(
    chooser: _Chooser,
    pools: dict[str, list[Defect]],
    missed: list[tuple[Defect, list[CheckResult]]],
) -> Iterator[Combo]:
    for m_pair in islice(chooser.valid("misaligned", pools["misaligned"]), MIXED_POOL):
        for i_pair in islice(chooser.valid("incomplete", pools["incomplete"]), MIXED_POOL):
            if i_pair[0].role == m_pair[0].role:
                continue
            for s_pair in missed:
                if s_pair[0].role not in (m_pair[0].role, i_pair[0].role):
                    yield [m_pair, i_pair, s_pair]


def _proved(checks: DefectChecker, combo: Combo) -> tuple[list[Defect], list[CheckResult]] | None:
    defects = [d for d, _ in combo]
    reading = checks.face_value_reading("mixed", defects)
    if reading.verdict != Verdict.PROVED:
        return None
    if checks.checker.certificates is not None:
        named = [c for d in defects for c in checks.check("mixed", d)]
    else:
        named = [_renamed(c, d, checks) for d, proofs in combo for c in proofs]
    return defects, [*named, reading]


def _renamed(check: CheckResult, defect: Defect, checks: DefectChecker) -> CheckResult:
    """A single setting's proof of ``defect`` under the Mixed setting's check name."""
    single = checks.check_name(defect.kind, defect)
    mixed = checks.check_name("mixed", defect)
    return check.model_copy(
        update={"name": check.name.replace(single, mixed, 1), "setting": "mixed"}
    )
