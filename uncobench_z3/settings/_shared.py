"""Which of a group's defects are the same defect: a mixed setting's defects are picked from
the pools of the settings with one defect (:mod:`._mixed`), so they are usually equal to
those settings' defects, but separate objects once the group file is read.

``uncobench build`` stores the map (``proofs.shared_defects``: :func:`shared_defects`), the
scripted colleagues take each defect it names as the earlier one it names (what they remember
by a defect's identity is then made once per group), and ``uncobench verify`` recomputes it
with the full comparison (:func:`same_defect`) and refutes another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from ..solver import CheckResult, Verdict
from ._model import Defect, FollowUpRule, Setting, SettingName, StatedValue

SharedDefects = dict[SettingName, list[tuple[SettingName, int] | None]]
"""Setting -> for each of its defects, the setting and index of the first earlier defect (in
the group's order) that is the same, or None; only settings with such a defect are named."""

_LOOSE_TYPES = frozenset([Decimal, list])
"""the types of statement values ``==`` takes for others that read differently"""


def _same_statements(a: list[StatedValue] | None, b: list[StatedValue] | None) -> bool:
    """Whether two lists of statements have the same fields, of the same types and digits:
    ``==`` takes ``Decimal("1.0")`` for ``Decimal("1")``, ``1`` for ``True`` and an option
    ``1`` for ``True``, which are written differently (their ``repr`` is not)."""
    if a is None or b is None:
        return a is b
    if len(a) != len(b):
        return False
    for stated_a, stated_b in zip(a, b, strict=True):
        fields_a, fields_b = stated_a.__dict__, stated_b.__dict__
        if fields_a != fields_b:
            return False
        types = [*map(type, fields_a.values())]
        if types != [*map(type, fields_b.values())] or not (
            _LOOSE_TYPES.isdisjoint(types) or repr(fields_a) == repr(fields_b)
        ):
            return False
    return True


def _signs(rule: FollowUpRule) -> list[list[tuple[type, dict[str, object]]]]:
    """A rule's signs, clause by clause, as their classes and fields (a sign's fields are
    strings and lists of strings: ``==`` tells them apart)."""
    return [
        [(type(sign), sign.__dict__) for sign in clause.__dict__["any_of"]]
        for clause in rule.__dict__["all_of"]
    ]


def same_defect(a: Defect, b: Defect) -> bool:
    """Whether ``a`` and ``b`` are the same defect in every field, each value of the same type
    and written the same (``==``, stricter): either can then stand for the other. (Without
    pydantic's ``==``, which compares every nested model in Python.)"""
    fields_a, fields_b = a.__dict__, b.__dict__
    return (
        fields_a["kind"] == fields_b["kind"]
        and fields_a["role"] == fields_b["role"]
        and fields_a["fact"] == fields_b["fact"]
        and fields_a["candidates"] == fields_b["candidates"]
        and fields_a["rationale"] == fields_b["rationale"]
        and type(fields_a["missed_wait"]) is type(fields_b["missed_wait"])
        and fields_a["missed_wait"] == fields_b["missed_wait"]
        and _same_statements(fields_a["first_reply"], fields_b["first_reply"])
        and _same_statements(fields_a["resolved_reply"], fields_b["resolved_reply"])
        and _signs(fields_a["targeted_follow_up"]) == _signs(fields_b["targeted_follow_up"])
    )


def shared_defects(settings: Iterable[Setting]) -> SharedDefects:
    """Which defects of ``settings`` (the group's, in order) are the same as an earlier one
    (:func:`same_defect`), and which first one each is (Missed defects left out: nothing of
    theirs is remembered by identity)."""
    firsts: list[tuple[SettingName, int, Defect]] = []
    found: SharedDefects = {}
    for setting in settings:
        sources: list[tuple[SettingName, int] | None] = []
        for index, defect in enumerate(setting.defects):
            source = None
            if defect.kind != "missed":
                source = next(
                    ((name, at) for name, at, first in firsts if same_defect(first, defect)),
                    None,
                )
                if source is None:
                    firsts.append((setting.name, index, defect))
            sources.append(source)
        if any(source is not None for source in sources):
            found[setting.name] = sources
    return found


def _pair(source: tuple[SettingName, int] | None) -> tuple[SettingName, int] | None:
    """(a source as a pair: a map set without validation may hold lists)"""
    return None if source is None else (source[0], source[1])


def shared_defects_check(
    settings: Sequence[Setting],
    stored: Mapping[SettingName, Sequence[tuple[SettingName, int] | None]],
) -> CheckResult:
    """The stored map of the same defects is the one the group's settings give."""
    computed = shared_defects(settings)
    as_stored = {name: [*map(_pair, row)] for name, row in stored.items()}
    shown = {name: [list(s) if s else None for s in row] for name, row in computed.items()}
    same = as_stored == computed
    return CheckResult(
        name="shared-defects",
        kind="consistency",
        verdict=Verdict.PROVED if same else Verdict.REFUTED,
        summary=f"the stored map of the same defects is the one the settings give: {shown}"
        if same
        else "the stored map of the same defects is not the one the settings give",
        witness={"computed": shown},
    )
