"""A built group stores which of its defects are the same (``proofs.shared_defects``): the
scripted colleagues take a defect it names as the earlier one it names, without comparing
them, and get the same records; a map that does not fit the settings is not taken (the
defects are compared); ``verify`` recomputes the map and refutes another."""

from __future__ import annotations

import pytest

from tests.test_min_rounds_stored import _comparable, _records
from tests.test_min_rounds_stored import built as built  # (its fixture: the same build)
from uncobench_z3.construct._pipeline import BuildConfig
from uncobench_z3.evaluation import PreparedGroup, _record_book
from uncobench_z3.settings import (
    Setting,
    TaskGroup,
    same_defect,
    shared_defects,
    verify_group,
)
from uncobench_z3.solver import Verdict


def _with_map(group: TaskGroup, shared: object) -> TaskGroup:
    assert group.proofs is not None
    proofs = group.proofs.model_copy(update={"shared_defects": shared})
    return group.model_copy(update={"proofs": proofs})


def _stored(group: TaskGroup) -> dict[str, list[tuple[str, int] | None]]:
    assert group.proofs is not None and group.proofs.shared_defects is not None
    return dict(group.proofs.shared_defects)


def _not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> bool:
        raise AssertionError("defects were compared, not taken from the stored map")

    monkeypatch.setattr(_record_book, "same_defect", refuse)


def _tables(group: TaskGroup) -> list[list[int]]:
    """Each setting's defects as its book's tables take them, as the ids of the group's
    defects (of the setting itself or an earlier one)."""
    prepared = PreparedGroup.of(group)
    return [[id(d) for d in prepared.book.defect_tables(s.defects, list)] for s in group.settings]


def test_a_built_group_stores_each_defect_the_same_as_an_earlier_one(
    built: list[TaskGroup],
) -> None:
    assert any(_stored(g) for g in built)  # (a mixed setting's defects are the others')
    for group in built:
        stored = _stored(group)
        by_name = {s.name: s.defects for s in group.settings}
        seen: list[object] = []
        for setting in group.settings:
            sources = stored.get(setting.name, [None] * len(setting.defects))
            for defect, source in zip(setting.defects, sources, strict=True):
                earlier = [d for d in seen if same_defect(d, defect)]  # type: ignore[arg-type]
                if source is None:
                    assert not earlier or defect.kind == "missed"
                else:
                    assert earlier and by_name[source[0]][source[1]] is earlier[0]
            seen += [d for d in setting.defects if d.kind != "missed"]


def test_the_stored_map_is_taken_without_comparing(
    built: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    compared = [_tables(_with_map(g, None)) for g in built]  # (the defects compared)
    _not_compared(monkeypatch)
    assert [_tables(g) for g in built] == compared
    # a map naming no setting: each defect is the first like it (the map is trusted)
    own = [[[id(d) for d in s.defects] for s in g.settings] for g in built]
    assert [_tables(_with_map(g, {})) for g in built] == own


def _unfit(stored: dict[str, list[tuple[str, int] | None]]) -> list[object]:
    name, sources = next((n, s) for n, s in stored.items() if any(s))
    at = next(i for i, s in enumerate(sources) if s is not None)
    source = sources[at]
    assert source is not None

    def moved(to: tuple[str, int] | None) -> dict[str, object]:
        return {**stored, name: [to if i == at else s for i, s in enumerate(sources)]}

    return [
        moved(("reliable", 0)),  # (no defect there)
        moved((source[0], source[1] + 5)),
        moved(("mixed", 2) if name != "mixed" else ("missed", 0)),  # (another kind or role)
        {**stored, name: sources[:-1]},
        {**stored, "reliable": [None]},
    ]


def test_a_map_that_does_not_fit_the_settings_is_not_taken(built: list[TaskGroup]) -> None:
    """(verify refutes such a group; an evaluation compares its defects)"""
    group = next(g for g in built if any(_stored(g).values()))
    expected = _tables(_with_map(group, None))
    for unfit in _unfit(_stored(group)):
        assert _tables(_with_map(group, unfit)) == expected, unfit


def test_evaluation_gets_the_same_records_with_the_map_or_comparing(
    built: list[TaskGroup],
) -> None:
    taken = _comparable(_records(built))
    assert _comparable(_records([_with_map(g, None) for g in built])) == taken


def _edited(group: TaskGroup) -> TaskGroup:
    """``group`` with its mixed setting's first shared defect written otherwise (its map,
    which still fits, names it as the same as an earlier one)."""
    mixed = group.setting("mixed")
    sources = _stored(group)["mixed"]
    at = next(i for i, s in enumerate(sources) if s is not None)
    defects = list(mixed.defects)
    defects[at] = defects[at].model_copy(update={"rationale": defects[at].rationale + "!"})
    settings = [
        s.model_copy(update={"defects": defects}) if s.name == "mixed" else s
        for s in group.settings
    ]
    return group.model_copy(update={"settings": settings})


def test_verify_recomputes_the_map(built: list[TaskGroup]) -> None:
    group = next(g for g in built if _stored(g).get("mixed"))
    checks = {c.name: c for c in verify_group(group).checks}
    assert checks["shared-defects"].verdict is Verdict.PROVED
    report = verify_group(_edited(group))
    (check,) = [c for c in report.checks if c.name == "shared-defects"]
    assert check.verdict is Verdict.REFUTED and report.verdict is Verdict.REFUTED
    missing = _with_map(group, {})
    (check,) = [c for c in verify_group(missing).checks if c.name == "shared-defects"]
    assert check.verdict is Verdict.REFUTED
    # (a group built before the map was stored has none, and no such check)
    assert "shared-defects" not in {c.name for c in verify_group(_with_map(group, None)).checks}


def test_shared_defects_names_only_settings_with_a_shared_defect() -> None:
    setting = Setting(name="reliable")
    assert shared_defects([setting]) == {}


def test_the_build_configuration_records_the_map() -> None:
    config = BuildConfig(groups=3, seed=1, library="x")
    assert config.shared_defects
    assert BuildConfig(groups=3, seed=1, library="x", shared_defects=False).digest() != (
        config.digest()
    )
