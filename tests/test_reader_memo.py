"""The construction reader's remembered readings: a task text read once and shared
(:func:`read_task_text`), each record line read once per catalog (:meth:`Catalog.statement`).

What is remembered must be what a fresh parse gives, nothing may change a shared reading,
and the built-in agents see the readings the full-information reader made.
"""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from uncobench_z3.construct import (
    ReadError,
    ReadTask,
    RenderedTask,
    Statement,
    parse_statement,
    parse_task_text,
    read_task_text,
    render_task,
    validate_rendering,
)
from uncobench_z3.construct import _reader as reader_module
from uncobench_z3.evaluation._builtin import _parse_line, parse_task
from uncobench_z3.spec import TypedTask, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent


def _rendered_examples() -> list[tuple[TypedTask, RenderedTask]]:
    found = []
    for path in sorted(glob.glob(str(ROOT / "examples" / "*.json"))):
        task = check_structure(load_spec(path)).task
        assert task is not None
        found.append((task, render_task(task, seed=3)))
    return found


EXAMPLES = _rendered_examples()
NOT_RECORDS = [
    "",
    "Thanks, that is everything I have.",
    "- someone's unknown figure (2026): 12",
    "Please hold on while I look.",
]


def _same_reading(found: Statement | ReadError, line: str, fresh: ReadTask) -> None:
    try:
        expected: Statement | ReadError = parse_statement(line, fresh.catalog)
    except ReadError as exc:
        assert isinstance(found, ReadError)
        assert str(found) == str(exc)
        assert found.__traceback__ is None  # kept without the frames that raised it
        return
    assert found == expected


@pytest.mark.parametrize(("task", "rendered"), EXAMPLES, ids=lambda x: getattr(x, "id", ""))
def test_a_remembered_line_reads_as_a_fresh_parse(task: TypedTask, rendered: RenderedTask) -> None:
    shared = read_task_text(rendered.task_text)
    fresh = parse_task_text(rendered.task_text)
    assert shared == fresh and shared is not fresh
    lines = [line for lines in rendered.records.values() for line in lines] + NOT_RECORDS
    for line in lines:
        first = shared.catalog.statement(line)
        _same_reading(first, line, fresh)
        assert shared.catalog.statement(line) is first  # read once
        statement = _parse_line(line, shared)  # the agents' reading: None for a non-record
        assert statement == (None if isinstance(first, ReadError) else first)


def test_the_full_information_reader_shares_its_reading_with_the_agents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader_module, "_readings", type(reader_module._readings)())
    task, rendered = EXAMPLES[0]
    assert validate_rendering(task, rendered, task.outcome(), seed=3) == []
    reading = parse_task(rendered.task_text)
    assert reading is read_task_text(rendered.task_text)
    # every record line was read by the validation: the agents find them all read
    known = reading.catalog._statements
    assert all(line in known for lines in rendered.records.values() for line in lines)
    # and nothing the validation read into its copies reached the shared reading
    assert reading.values == {} and reading.problems == []
    assert reading == parse_task_text(rendered.task_text)


def test_remembered_readings_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "READINGS_KEPT", 2)
    monkeypatch.setattr(reader_module, "LINES_KEPT", 3)
    monkeypatch.setattr(reader_module, "_readings", type(reader_module._readings)())
    texts = [rendered.task_text for _, rendered in EXAMPLES[:3]]
    first = read_task_text(texts[0])
    read_task_text(texts[1])
    assert read_task_text(texts[0]) is first  # the most recently used stay
    read_task_text(texts[2])  # ... and the least recently used (texts[1]) goes
    assert list(reader_module._readings) == [texts[0], texts[2]]
    catalog = first.catalog
    lines = next(lines for lines in EXAMPLES[0][1].records.values() if len(lines) >= 4)
    for line in lines[:4]:
        catalog.statement(line)
    assert len(catalog._statements) <= 3  # full: it started again


def test_an_unreadable_task_text_is_not_remembered() -> None:
    with pytest.raises(ReadError):
        read_task_text("no sections at all")
    assert "no sections at all" not in reader_module._readings
