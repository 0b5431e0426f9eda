"""The structure check gives the recorded outcome on mutated specs (tests/data/structure), and
what it remembers across specs (typed facts by content, decimal texts, units) changes no
outcome."""

from __future__ import annotations

import copy
import functools
import random
import runpy
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.recorded_outcomes import assert_outcomes_as_recorded, read_outcomes
from uncobench_z3.spec import TaskSpec, _fact_checks, _units, _values

ROOT = Path(__file__).resolve().parent.parent
RECORDER = runpy.run_path(str(ROOT / "tests/data/structure/record_outcomes.py"))


@functools.cache
def _mutants() -> list[tuple[str, Any]]:
    return RECORDER["mutants"]()


@functools.cache
def _bases() -> list[tuple[str, dict[str, Any]]]:
    return RECORDER["_bases"]()


def _forget() -> None:
    _fact_checks._typed_facts.clear()
    _values.fraction_of_text.cache_clear()
    _units._parsed.cache_clear()


def test_every_mutant_has_its_recorded_outcome() -> None:
    assert_outcomes_as_recorded(_mutants(), read_outcomes(RECORDER), RECORDER["outcome"])


def test_the_recorded_outcomes_are_varied() -> None:
    recorded = read_outcomes(RECORDER)
    typed = [found for found in recorded.values() if isinstance(found, str)]
    codes = {
        problem[1] for found in recorded.values() if isinstance(found, list) for problem in found
    }
    bounds = [name for name in recorded if " = " in name]
    assert len(typed) >= 300 and len(recorded) - len(typed) >= 300
    assert len(codes) >= 15 and {"bad_value", "bad_domain", "out_of_domain"} <= codes
    # equal bounds written otherwise: both accepted and refused ones
    assert {isinstance(recorded[name], str) for name in bounds} == {True, False}


def _mutant(base: dict[str, Any], rng: random.Random) -> TaskSpec:
    """A spec made from ``base`` by one or two random edits (tried again until it has a
    spec's shape)."""
    while True:
        doc = copy.deepcopy(base)
        for _ in range(rng.choice((1, 2))):
            RECORDER["_mutate"](doc, rng)
        try:
            return TaskSpec.model_validate(doc)
        except (ValidationError, IndexError, KeyError):
            continue


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_what_is_remembered_changes_no_outcome(seed: int, others: int) -> None:
    rng = random.Random(seed)
    _, base = rng.choice(_bases())
    spec = _mutant(base, rng)
    _forget()
    alone = RECORDER["outcome"](spec)
    # the base and other mutants of it checked: facts like and unlike the spec's remembered
    _forget()
    for other in [TaskSpec.model_validate(base)] + [_mutant(base, rng) for _ in range(others)]:
        RECORDER["outcome"](other)
    assert RECORDER["outcome"](spec) == alone
    assert RECORDER["outcome"](spec.model_copy(deep=True)) == alone
