"""A :class:`kept_property` is ``functools.cached_property`` whose value is kept as a plain
attribute: the same values and behaviour, and its instances' reads stay specialised."""

from __future__ import annotations

import copy
import dis
import functools
import pickle
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from uncobench_z3._kept_property import kept_property
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation._prepared import PreparedGroup
from uncobench_z3.evaluation._sample import SampleJob, epoch_seed
from uncobench_z3.spec import TypedTask
from uncobench_z3.spec._typed import TypedFact, TypedRule

ROOT = Path(__file__).resolve().parent.parent
MINING = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]


class _Counted:
    def __init__(self, base: int) -> None:
        self.base = base
        self.calls = 0

    @kept_property
    def doubled(self) -> int:
        """twice the base"""
        self.calls += 1
        return 2 * self.base


@dataclass(frozen=True)
class _Frozen:
    base: int

    @kept_property
    def doubled(self) -> int:
        return 2 * self.base


def test_the_value_is_computed_once_and_kept_in_the_instance() -> None:
    counted = _Counted(3)
    assert counted.doubled == 6
    assert counted.doubled == 6
    assert counted.calls == 1
    assert vars(counted)["doubled"] == 6
    del counted.doubled  # (computed again at the next read, as cached_property)
    assert counted.doubled == 6
    assert counted.calls == 2
    counted.doubled = 10  # (set over, as cached_property)
    assert counted.doubled == 10
    assert counted.calls == 2


def test_a_frozen_dataclass_keeps_it_and_stays_frozen() -> None:
    frozen = _Frozen(4)
    assert frozen.doubled == 8
    assert vars(frozen) == {"base": 4, "doubled": 8}
    assert frozen == _Frozen(4)  # (not a field: equality and the hash are the fields')
    assert hash(frozen) == hash(_Frozen(4))
    with pytest.raises(AttributeError):
        frozen.base = 5  # type: ignore[misc]


def test_it_is_the_class_attribute_and_has_the_function_doc() -> None:
    assert isinstance(_Counted.__dict__["doubled"], functools.cached_property)
    assert _Counted.doubled is _Counted.__dict__["doubled"]
    assert _Counted.doubled.__doc__ == "twice the base"
    assert _Counted.doubled.attrname == "doubled"


def test_a_copy_and_a_pickle_hold_the_kept_value() -> None:
    counted = _Counted(5)
    assert counted.doubled == 10
    for other in (copy.copy(counted), copy.deepcopy(counted), pickle.loads(pickle.dumps(counted))):
        assert other.doubled == 10
        assert other.calls == 1  # (read from the copy's attributes, not computed)


def test_an_error_leaves_nothing_kept() -> None:
    class _Failing:
        tries = 0

        @kept_property
        def value(self) -> int:
            type(self).tries += 1
            raise ValueError("no value")

    failing = _Failing()
    for _ in range(2):
        with pytest.raises(ValueError, match="no value"):
            failing.value  # noqa: B018
    assert _Failing.tries == 2
    assert "value" not in vars(failing)


def test_one_used_without_a_name_says_so() -> None:
    unnamed: kept_property[int] = kept_property(lambda self: 1)
    with pytest.raises(TypeError, match="__set_name__"):
        unnamed.__get__(_Counted(1))


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
    reason="the specialised reads of CPython 3.11",
)
def test_reads_of_an_instance_with_a_kept_value_stay_specialised() -> None:
    """The reason for the class: ``functools.cached_property`` makes the instance's
    ``__dict__``, and 3.11 then reads its attributes by the generic lookup (see the module
    docstring); a kept value leaves them where the instance keeps them."""

    def reads(kind: type[_Counted]) -> set[str]:
        instances = [kind(i) for i in range(40)]
        for instance in instances:
            instance.doubled  # noqa: B018
        namespace: dict[str, object] = {}
        exec("def read(o):\n    return o.base", namespace)  # (a new code object each time)
        read = namespace["read"]
        for _ in range(50):
            for instance in instances:
                read(instance)  # type: ignore[operator]
        return {i.opname for i in dis.get_instructions(read, adaptive=True)} & _LOADS

    class _Cached(_Counted):
        @functools.cached_property
        def doubled(self) -> int:  # type: ignore[override]
            return 2 * self.base

    assert reads(_Counted) == {"LOAD_ATTR_INSTANCE_VALUE"}
    assert reads(_Cached) != {"LOAD_ATTR_INSTANCE_VALUE"}  # (what the class is for)


_LOADS = {
    "LOAD_ATTR",
    "LOAD_ATTR_ADAPTIVE",
    "LOAD_ATTR_INSTANCE_VALUE",
    "LOAD_ATTR_WITH_HINT",
    "LOAD_ATTR_SLOT",
}


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (TypedFact, "_code_range"),
        (TypedFact, "_step_ratio"),
        (TypedRule, "_results"),
        (TypedTask, "_facts_by_role"),
        (TypedTask, "_candidate_names"),
        (TypedTask, "required_contexts"),
        (PreparedGroup, "role_names"),
        (SampleJob, "key"),
        (SampleJob, "epoch_seed"),
    ],
)
def test_the_runner_classes_keep_their_values_so(kind: type, name: str) -> None:
    """The classes whose instances' reads the first pass made generic (41,648 reads)."""
    assert type(kind.__dict__[name]) is kept_property


def test_an_example_group_keeps_the_values_a_cached_property_gives() -> None:
    prepared = PreparedGroup.of(MINING)
    task = prepared.task
    assert prepared.role_names == {card.id: card.name for card in prepared.rendered.role_directory}
    assert vars(prepared)["role_names"] is prepared.role_names
    assert task.required_contexts == {key: fact.context for key, fact in task.facts.items()}
    for role in task.roles:
        assert task.facts_of(role) == [k for k, f in task.facts.items() if f.owner == role]
    for entry in task.spec.candidates:
        assert task.candidate_name(entry.id) == entry.name
    for fact in task.facts.values():
        if fact.type != "enum" and fact.low is None:
            continue
        low, high = fact.code_range()
        assert (low, high) == fact.code_range()
        assert vars(fact)["_code_range"] == (low, high)


def test_a_numeric_fact_checks_a_value_by_its_step_as_the_code_does() -> None:
    """:meth:`TypedFact.contains` reads the step's numerator and denominator once
    (``_step_ratio``, a ``Fraction``'s being properties) and a value's at once."""
    numeric = [
        f for f in PreparedGroup.of(MINING).task.facts.values() if f.type in ("int", "decimal")
    ]
    assert numeric
    for fact in numeric:
        assert fact._step_ratio == (fact.step.numerator, fact.step.denominator)
        low, high = fact.code_range()
        on_step = [fact.value_of(code) for code in (low, (low + high) // 2, high)]
        for value in on_step:
            assert fact.contains(value) and fact.contains(Fraction(value))
        for value in (on_step[0] + fact.step / 2, on_step[-1] + fact.step, on_step[0] - fact.step):
            assert not fact.contains(value)


def test_a_sample_job_keeps_its_key_and_seed_as_a_cached_property_did() -> None:
    """A pydantic model: the values go into its own ``__dict__``, are not fields, and a copy
    forgets them (its fields may differ)."""
    job = SampleJob.make(MINING, "reliable", "builtin/careful", seed=3, epoch=2)
    fresh = SampleJob.make(MINING, "reliable", "builtin/careful", seed=3, epoch=2)
    assert "key" not in SampleJob.model_fields and "epoch_seed" not in SampleJob.model_fields
    key, seed = job.key, job.epoch_seed
    assert seed == epoch_seed(3, MINING.id, 2)
    assert vars(job)["key"] is key and vars(job)["epoch_seed"] == seed
    assert job == fresh
    assert job.model_dump() == fresh.model_dump()
    assert pickle.loads(pickle.dumps(job)).key == key
    later = job.model_copy(update={"epoch": 3})
    assert "key" not in vars(later) and "epoch_seed" not in vars(later)
    assert later.key != key and later.epoch_seed == epoch_seed(3, MINING.id, 3)
    assert fresh.key == key
