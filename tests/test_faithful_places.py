"""A template-rendered group stores where its records' faithful lines are
(``rendered.faithful``): the scripted colleagues read those lines instead of writing them
again, and get the same; ``verify`` renders again and refutes other places. A model-rendered
group, and a group without the table, has its lines written as before."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.test_min_rounds_stored import _comparable, _records
from tests.test_min_rounds_stored import built as built  # (its fixture: the same build)
from uncobench_z3.construct import check_rendering, render_task
from uncobench_z3.construct._render import ExactLines, choose_style, role_record_lines
from uncobench_z3.evaluation import PreparedGroup, example_groups, typed_task
from uncobench_z3.settings import TaskGroup
from uncobench_z3.solver import Verdict
from uncobench_z3.spec import Slot, TypedTask


def _written(task: TypedTask, style: object, slot: Slot) -> str:
    """A faithful line as the colleagues write it without the table (and wrote it before)."""
    line = ExactLines(task, style)  # type: ignore[arg-type]
    return line(slot, task.required_contexts[slot[1]], task.values[slot])


def _lines(prepared: PreparedGroup) -> dict[Slot, str]:
    return {slot: prepared.book.faithful_line(slot) for slot in prepared.task.all_slots()}


def _written_lines(prepared: PreparedGroup) -> dict[Slot, str]:
    task, style = prepared.task, prepared.rendered.style
    return {slot: _written(task, style, slot) for slot in task.all_slots()}


def _not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> str:
        raise AssertionError("a faithful line was written, not read from the records")

    monkeypatch.setattr(ExactLines, "__call__", refuse)


def _stored(group: TaskGroup) -> dict[str, object]:
    assert group.rendered is not None
    return dict(group.rendered)


def _with(group: TaskGroup, renderer: str | None = None, **rendered: object) -> TaskGroup:
    """``group`` with fields of its stored rendering replaced (None: left out)."""
    text = {k: v for k, v in {**_stored(group), **rendered}.items() if v is not None}
    provenance = (
        group.provenance if renderer is None else {**group.provenance, "renderer": renderer}
    )
    return group.model_copy(update={"rendered": text, "provenance": provenance})


def _places(group: TaskGroup) -> dict[str, list[int]]:
    faithful = _stored(group)["faithful"]
    assert isinstance(faithful, dict)
    return {role: list(places) for role, places in faithful.items()}


@pytest.mark.parametrize("seed", [0, 3, 7, 12345])
def test_the_stored_places_hold_the_faithful_lines(seed: int) -> None:
    """The records are the lines shuffled (the plain definition, as rendering did before the
    places were stored), and each role's places hold its faithful lines in its slots' order,
    in every example at several seeds."""
    for group in example_groups():
        task = typed_task(group)
        rendered = render_task(task, seed)
        style = choose_style(seed, task.id)
        rng = random.Random(f"records:{seed}:{task.id}")
        assert rendered.faithful is not None
        assert rendered.faithful.keys() == rendered.records.keys()
        for role, lines in rendered.records.items():
            plain = role_record_lines(task, role, style)
            rng.shuffle(plain)
            assert lines == plain
            places = rendered.faithful[role]
            assert len(set(places)) == len(places) == len(task.slots_of(role))
            for slot, place in zip(task.slots_of(role), places, strict=True):
                assert lines[place] == _written(task, style, slot)


def test_a_built_groups_faithful_lines_are_read_from_its_records(
    built: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = [_written_lines(PreparedGroup.of(group)) for group in built]
    assert all(check_rendering(group).verdict is Verdict.PROVED for group in built)
    _not_written(monkeypatch)
    for group, lines in zip(built, expected, strict=True):
        assert "faithful" in _stored(group)
        assert _lines(PreparedGroup.of(group)) == lines


def test_a_group_without_stored_text_reads_the_records_rendered_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prepared = [PreparedGroup.of(group) for group in example_groups()]
    assert all(p.group.rendered is None for p in prepared)
    expected = [_written_lines(p) for p in prepared]
    _not_written(monkeypatch)
    assert [_lines(p) for p in prepared] == expected


def test_without_the_table_the_lines_are_written(built: list[TaskGroup]) -> None:
    for group in built:
        older = _with(group, faithful=None)  # (as a group built before the table)
        assert "faithful" not in _stored(older)
        assert check_rendering(older).verdict is Verdict.PROVED
        prepared = PreparedGroup.of(older)
        assert prepared.rendered.faithful is None and prepared.book._stored is None
        assert _lines(prepared) == _written_lines(prepared)


def test_a_model_rendered_groups_faithful_lines_are_the_templates(
    built: list[TaskGroup],
) -> None:
    """A renderer model's records are its own text: the colleagues still state the
    template's lines, even were a table stored with them (here the records are the
    template's reversed, as a model could have reordered them), and verify refutes a table
    stored with a model's records."""
    for group in built:
        records = {role: lines[::-1] for role, lines in _stored(group)["records"].items()}  # type: ignore[attr-defined]
        for faithful in (None, _places(group)):
            model = _with(group, "fakellm/render", records=records, faithful=faithful)
            prepared = PreparedGroup.of(model)
            assert prepared.rendered.records == records
            assert _lines(prepared) == _written_lines(prepared)
        assert check_rendering(_with(group, "fakellm/render")).verdict is Verdict.REFUTED


def test_verify_refutes_a_place_that_is_not_the_faithful_lines(built: list[TaskGroup]) -> None:
    for group in built:
        places = _places(group)
        role = next(iter(places))
        moved = {
            **places,
            role: [(places[role][0] + 1) % len(_stored(group)["records"][role]), *places[role][1:]],
        }  # type: ignore[index]
        report = check_rendering(_with(group, faithful=moved))
        assert report.verdict is Verdict.REFUTED
        assert "places of the faithful lines" in report.summary


def test_cli_verify_refutes_an_edited_place(
    built: list[TaskGroup], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(the unedited group is proved: the test of a built group's lines above)"""
    places = _places(built[1])
    swapped = {role: found[::-1] for role, found in places.items()}
    assert swapped != places
    path = tmp_path / "swapped.json"
    path.write_text(_with(built[1], faithful=swapped).model_dump_json())
    result = run_cli(capsys, "verify", str(path))
    assert (result.code, "rendering-identical" in result.out) == (1, True)


def test_a_table_that_does_not_fit_the_records_has_its_lines_written(
    built: list[TaskGroup],
) -> None:
    """(verify refutes such a group; an evaluation does not fail on it)"""
    group = built[0]
    places = _places(group)
    role = next(iter(places))
    last = [*places[role][:-1]]
    for found in (
        [*places[role], 0],
        places[role][:-1],
        [-1, *places[role][1:]],
        [99] * 9,
        [*last, 99],  # (as many places as records, the last past the role's lines)
        [*last, -1],
    ):
        broken = PreparedGroup.of(_with(group, faithful={**places, role: found}))
        assert _lines(broken) == _written_lines(broken)


def test_evaluation_gets_the_same_records_with_lines_read_or_written(
    built: list[TaskGroup],
) -> None:
    read = _comparable(_records(built))
    assert _comparable(_records([_with(g, faithful=None) for g in built])) == read
