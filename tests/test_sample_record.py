"""A sample's record, written out by ``_run_sample._record``: the same record as the record maker
(:class:`~uncobench_z3._trusted.TrustedMaker`) makes for the same keywords, on both paths."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3._trusted import TrustedMaker
from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ModelAPIError
from uncobench_z3.evaluation import SampleJob, make_agent, run_sample
from uncobench_z3.evaluation._sample import SampleRecord

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [g for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
          for g in load_groups(path)][:3]  # fmt: skip
SCORING = {"answer", "score", "attribution", "justification", "min_rounds"}


class _Broken:
    """An agent whose provider fails: every sample is an error sample."""

    async def act(self, conversation: object) -> object:
        raise ModelAPIError("the provider broke", status_code=500, attempts=2)


def _records(agents: Any) -> list[SampleRecord]:
    return [
        asyncio.run(run_sample(SampleJob.make(group, setting, "builtin/careful"), agents))
        for group in GROUPS
        for setting in ("reliable", "missed", "misaligned")
        if group.setting(setting).available
    ]


SCORED = _records(make_agent)
ERRORS = _records(lambda name, seed: _Broken())


def _made_again(record: SampleRecord) -> SampleRecord:
    """The record the maker makes from the fields ``record`` was given."""
    given = record.model_fields_set
    return TrustedMaker(SampleRecord)(**{n: v for n, v in record.__dict__.items() if n in given})


@pytest.mark.parametrize("record", [*SCORED, *ERRORS])
def test_a_record_is_the_one_the_maker_makes_from_its_given_fields(record: SampleRecord) -> None:
    made = _made_again(record)
    assert type(record) is SampleRecord
    assert list(record.__dict__) == list(SampleRecord.model_fields)  # (field order)
    assert record.__dict__ == made.__dict__
    assert type(record.model_fields_set) is set
    assert record.model_fields_set == made.model_fields_set
    assert record.__pydantic_extra__ is None and record.__pydantic_private__ is None
    assert record == made
    assert record.model_dump_json() == made.model_dump_json()
    assert record.model_dump_json(exclude_unset=True) == made.model_dump_json(exclude_unset=True)


def test_a_scored_record_is_given_every_field_but_the_error() -> None:
    assert SCORED and all(r.error is None and r.result != "error" for r in SCORED)
    for record in SCORED:
        assert record.model_fields_set == set(SampleRecord.model_fields) - {"error"}


def test_an_error_record_is_given_none_of_the_scoring_fields() -> None:
    assert ERRORS and all(r.error is not None and r.result == "error" for r in ERRORS)
    for record in ERRORS:
        assert record.model_fields_set == set(SampleRecord.model_fields) - SCORING
        assert all(record.__dict__[name] is None for name in SCORING)


def test_each_record_has_a_fields_set_of_its_own() -> None:
    """A record is not frozen: a change to one record's fields set leaves the others'."""
    first, second = SCORED[0], SCORED[1]
    assert first.model_fields_set is not second.model_fields_set
    first.end_detail = "changed"  # (assignment adds to the fields set; already there)
    error = ERRORS[0].model_copy()
    error.min_rounds = 3
    assert "min_rounds" in error.model_fields_set
    assert "min_rounds" not in ERRORS[1].model_fields_set
