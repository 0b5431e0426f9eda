"""TrustedMaker gives the model ``model_construct`` gives, for every model the environment and
the round notes build, from the values a real episode gives them and any subset of them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, create_model

from uncobench_z3 import _trusted
from uncobench_z3._trusted import SharedFieldsSet, TrustedMaker, trusted_maker
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    DEFAULT_BUDGET,
    Conversation,
    Environment,
    EpisodeOutcome,
    Observation,
    ReplyRecord,
    ReplyView,
    RoundRecord,
    SampleJob,
    Turn,
    make_agent,
    run_sample,
)
from uncobench_z3.evaluation._notes import RoundNote
from uncobench_z3.settings import SettingName, TaskGroup

ROOT = Path(__file__).resolve().parent.parent


def _played() -> list[BaseModel]:
    """Every model of the kinds the runner builds, from episodes of the example groups."""
    groups = [g for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
              for g in load_groups(path)]  # fmt: skip
    found: list[BaseModel] = []
    for group in groups[:3]:
        for setting in ("reliable", "missed", "misaligned"):
            if not group.setting(setting).available:
                continue
            job = SampleJob.make(group, setting, "builtin/careful")
            record = asyncio.run(run_sample(job, make_agent))
            found.extend(record.trace)
            found.extend(reply for r in record.trace for reply in r.replies)
            found.extend(record.notes)
            found.extend(_conversation(group, setting))
    return found


def _conversation(group: TaskGroup, setting: SettingName) -> list[BaseModel]:
    """An episode's conversation, its turns, observations and reply views, and its outcome."""
    environment = Environment(group, setting, DEFAULT_BUDGET)
    agent = make_agent("builtin/careful", 0)
    while not environment.finished:
        environment.step(asyncio.run(agent.act(environment.conversation)))
    conversation = environment.conversation
    turns = conversation.turns
    views = [view for turn in turns for view in turn.observation.replies]
    return [conversation, *turns, *(t.observation for t in turns), *views, environment.outcome]


PLAYED = _played()
MODELS = [
    Conversation,
    EpisodeOutcome,
    Observation,
    ReplyRecord,
    ReplyView,
    RoundRecord,
    Turn,
    RoundNote,
]


def _same(made: BaseModel, expected: BaseModel) -> None:
    assert type(made) is type(expected)
    assert made.__dict__ == expected.__dict__
    assert list(made.__dict__) == list(expected.__dict__)  # field order, as model_dump keeps
    assert made.model_fields_set == expected.model_fields_set
    assert made.__pydantic_extra__ == expected.__pydantic_extra__
    assert made.__pydantic_private__ == expected.__pydantic_private__
    assert made == expected
    assert made.model_dump_json() == expected.model_dump_json()


def test_the_examples_hold_every_kind_of_record() -> None:
    assert {type(model) for model in PLAYED} == set(MODELS)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_played_record_made_again_from_any_of_its_fields(data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(PLAYED))
    cls = type(model)
    names = data.draw(st.lists(st.sampled_from(list(cls.model_fields)), unique=True))
    required = [n for n, f in cls.model_fields.items() if f.is_required()]
    values: dict[str, Any] = {n: getattr(model, n) for n in [*required, *names]}
    _same(TrustedMaker(cls)(**values), cls.model_construct(**values))


@pytest.mark.parametrize("cls", MODELS)
def test_each_runner_model_is_made_the_plain_way(cls: type[BaseModel]) -> None:
    maker = TrustedMaker(cls)
    assert maker._plain  # else the maker only calls model_construct
    # by a call compiled for its fields at the first call (the test above checks that call)
    model = next(m for m in PLAYED if type(m) is cls)
    maker(**{name: getattr(model, name) for name in cls.model_fields})
    assert (
        isinstance(maker, TrustedMaker) and type(maker).__name__ == f"TrustedMaker[{cls.__name__}]"
    )


@pytest.mark.parametrize("cls", MODELS)
def test_the_compiled_call_gives_each_model_its_own_state(cls: type[BaseModel]) -> None:
    model = next(m for m in PLAYED if type(m) is cls)
    values = {name: getattr(model, name) for name in cls.model_fields}
    for make in (TrustedMaker(cls), trusted_maker(cls)):
        first, second = make(**values), make(**values)
        _same(first, cls.model_construct(**values))
        assert first.__dict__ is not second.__dict__
        # (a frozen model's fields set is shared, and refuses changes: see the test below)
        assert first.model_fields_set is second.model_fields_set
        with pytest.raises(TypeError, match="not changed"):
            first.model_fields_set.add("x")


@pytest.mark.parametrize("cls", MODELS)
def test_a_frozen_model_shares_its_fields_set_unchangeably(cls: type[BaseModel]) -> None:
    """The same fields given: one fields set for all (``model_construct`` makes one a
    model); nothing changes it, and a copy or a pickled model gets a plain set of its own."""
    import copy
    import pickle

    model = next(m for m in PLAYED if type(m) is cls)
    values = {name: getattr(model, name) for name in cls.model_fields}
    made = trusted_maker(cls)(**values)
    shared = made.model_fields_set
    every = set(cls.model_fields)
    assert isinstance(shared, SharedFieldsSet) and shared == every
    changes = [
        lambda: shared.add("x"), lambda: shared.discard("round"), lambda: shared.remove("round"),
        shared.pop, shared.clear, lambda: shared.update({"x"}),
        lambda: shared.difference_update(every), lambda: shared.intersection_update(()),
        lambda: shared.symmetric_difference_update({"x"}),
    ]  # fmt: skip
    for change in changes:
        with pytest.raises(TypeError, match="not changed"):
            change()
    for operator in ("__ior__", "__iand__", "__isub__", "__ixor__"):
        with pytest.raises(TypeError, match="not changed"):
            getattr(shared, operator)({"x"})
    assert shared == every
    field = next(iter(cls.model_fields))
    for own in (
        made.model_copy().model_fields_set,
        made.model_copy(update={field: values[field]}).model_fields_set,
        copy.deepcopy(made).model_fields_set,
        pickle.loads(pickle.dumps(made)).model_fields_set,
        copy.copy(shared),
        shared | {"x"},
        shared - {field},
    ):
        assert type(own) is set and own is not shared
    assert shared - {field} == every - {field}
    defaulted = [n for n, f in cls.model_fields.items() if not f.is_required()]
    for name in defaulted:  # (each left out alone: a set of its own for each)
        without = {n: v for n, v in values.items() if n != name}
        make = trusted_maker(cls)
        left_out, again = make(**without), make(**without)
        assert left_out.model_fields_set == every - {name}
        assert left_out.model_fields_set is again.model_fields_set
        assert isinstance(left_out.model_fields_set, SharedFieldsSet)
    if len(defaulted) > 1:  # (two left out: neither one's set)
        without = {n: v for n, v in values.items() if n not in defaulted[:2]}
        assert trusted_maker(cls)(**without).model_fields_set == every - set(defaulted[:2])
    assert shared == every


def test_a_model_that_is_not_frozen_gets_a_fields_set_of_its_own() -> None:
    make = trusted_maker(_FromData)  # (every field given)
    first, second = make(name="x", label="X", later=[]), make(name="y", label="Y", later=[])
    assert type(first.model_fields_set) is set
    assert first.model_fields_set is not second.model_fields_set


def test_a_field_that_cannot_be_a_parameter_takes_the_general_call() -> None:
    keyworded = create_model("Keyworded", **{"class": (int, 0), "name": (str, ...)})  # type: ignore[call-overload]
    make = TrustedMaker(keyworded)
    assert type(make) is TrustedMaker
    _same(make(name="x", **{"class": 3}), keyworded.model_construct(name="x", **{"class": 3}))
    _same(make(name="y"), keyworded.model_construct(name="y"))


def test_a_name_that_is_not_a_field_is_an_error() -> None:
    with pytest.raises(TypeError, match="RoundRecord has no field rounds"):
        TrustedMaker(RoundRecord)(rounds=1, action="ask")
    with pytest.raises(TypeError, match="has no field roudn"):  # all six named, one misspelt
        TrustedMaker(RoundRecord)(
            roudn=1, action="ask", replies=(), answer=None, error=None, intervention=None,
            output=None,
        )  # fmt: skip
    with pytest.raises(TypeError, match="has no field extra"):  # every field, and one more
        TrustedMaker(RoundRecord)(
            round=1, action="ask", replies=(), answer=None, error=None, intervention=None,
            output=None, extra=1,
        )  # fmt: skip


class _Mutable(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    tags: list[str] = ["a"]
    seen: dict[str, int] = Field(default_factory=dict)


class _FromData(BaseModel):
    name: str
    label: str = Field(default_factory=lambda data: data["name"].upper())
    later: list[int] = Field(default_factory=list)


def test_a_factory_given_the_fields_before_it_gets_them() -> None:
    make = TrustedMaker(_FromData)
    made = make(name="x")
    assert made.label == "X" and made.later == [] and made.model_fields_set == {"name"}
    _same(made, _FromData.model_construct(name="x"))
    assert make(name="y", later=[1]).label == "Y"


class _Aliased(BaseModel):
    value: int = Field(alias="v")


def test_mutable_defaults_are_copied_and_factories_called_each_time() -> None:
    make = TrustedMaker(_Mutable)
    first, second = make(name="x"), make(name="y")
    assert first.tags == ["a"] and first.tags is not second.tags
    assert first.seen == {} and first.seen is not second.seen
    assert first.model_fields_set == {"name"}
    _same(make(name="x"), _Mutable.model_construct(name="x"))


def test_a_model_with_aliases_is_left_to_model_construct() -> None:
    make = TrustedMaker(_Aliased)
    assert not make._plain
    _same(make(v=3), _Aliased.model_construct(v=3))


@pytest.mark.parametrize(
    ("cls", "values"), [(RoundRecord, {"round": 1, "action": "ask"}), (_Mutable, {"name": "x"})]
)
def test_a_maker_pickles_and_copies_as_the_maker_of_its_class(
    cls: type[BaseModel], values: dict[str, Any]
) -> None:
    import copy
    import pickle

    maker = TrustedMaker(cls)
    for again in (pickle.loads(pickle.dumps(maker)), copy.deepcopy(maker)):
        assert again.cls is cls
        _same(again(**values), maker(**values))
        assert type(again) is type(maker)  # (compiled at the first call, both)


# -- the makers as plain functions (trusted_maker) ------------------------------------------
FUNCTIONS = {cls: trusted_maker(cls) for cls in MODELS}
"""one function a class, compiled at its first call (as the runner's modules keep them)"""


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_maker_function_makes_what_the_maker_makes(data: st.DataObject) -> None:
    """From any of a played record's fields, by the function used before (compiled) and by
    a new one (its first call): the model ``model_construct`` and the maker give."""
    model = data.draw(st.sampled_from(PLAYED))
    cls = type(model)
    names = data.draw(st.lists(st.sampled_from(list(cls.model_fields)), unique=True))
    required = [n for n, f in cls.model_fields.items() if f.is_required()]
    values: dict[str, Any] = {n: getattr(model, n) for n in [*required, *names]}
    for make in (FUNCTIONS[cls], trusted_maker(cls)):
        _same(make(**values), cls.model_construct(**values))
        _same(make(**values), TrustedMaker(cls)(**values))


@pytest.mark.parametrize("cls", MODELS)
def test_a_maker_function_is_a_function_compiled_for_its_class(cls: type[BaseModel]) -> None:
    import types

    make = trusted_maker(cls)
    model = next(m for m in PLAYED if type(m) is cls)
    make(**{name: getattr(model, name) for name in cls.model_fields})
    assert type(make) is types.FunctionType
    assert make.__code__.co_filename == f"<TrustedMaker {cls.__qualname__}>"


def test_a_maker_function_takes_the_general_call_where_the_maker_does() -> None:
    keyworded = create_model("Keyworded", **{"class": (int, 0), "name": (str, ...)})  # type: ignore[call-overload]
    make = trusted_maker(keyworded)
    _same(make(name="x", **{"class": 3}), keyworded.model_construct(name="x", **{"class": 3}))
    _same(trusted_maker(_Aliased)(v=3), _Aliased.model_construct(v=3))
    _same(trusted_maker(_FromData)(name="x"), _FromData.model_construct(name="x"))
    made = trusted_maker(_Mutable)
    assert made(name="x").tags is not made(name="y").tags
    for make_round in (trusted_maker(RoundRecord), FUNCTIONS[RoundRecord]):
        with pytest.raises(TypeError, match="RoundRecord has no field rounds"):
            make_round(rounds=1, action="ask")
        with pytest.raises(TypeError, match="has no field extra"):
            make_round(
                round=1, action="ask", replies=(), answer=None, error=None, intervention=None,
                output=None, extra=1,
            )  # fmt: skip


def test_the_calls_module_holds_every_maker_function_as_written_now() -> None:
    # (stale after a maker's class changed: write it again, see calls_module_text)
    written = Path(_trusted.__file__).with_name("_trusted_calls.py").read_text()
    assert written == _trusted.calls_module_text()
    # (the package's own makers only: this module's, of classes the package writes out
    # itself, are not in the file, as a file written from a plain process has them not)
    assert {RoundRecord, ReplyRecord} <= _trusted._package_function_classes
    assert not {Observation, Turn, Conversation} & _trusted._package_function_classes


PACKAGE_FUNCTIONS = sorted(
    _trusted._package_function_classes,
    key=lambda c: (c.__module__, c.__qualname__),
)


@pytest.mark.parametrize("cls", PACKAGE_FUNCTIONS)
def test_a_maker_function_takes_the_code_its_source_compiles_to(cls: type[BaseModel]) -> None:
    """The calls module's code of a maker function is the code its source compiles to now:
    the same instructions, constants, names, flags and lines, under the same file name (this
    module compiles it with the flags _trusted's compile inherits: annotations)."""
    source = _trusted._function_source(cls, TrustedMaker(cls)._template, {})
    filename = f"<TrustedMaker {cls.__qualname__}>"
    namespace: dict[str, Any] = {"_M": None}
    exec(compile(source, filename, "exec"), namespace)
    compiled = namespace["__call__"].__code__
    found = _trusted._precompiled(source, filename)
    assert found is not None
    assert found == compiled  # (instructions, constants, names, first line and line table)
    assert (found.co_filename, found.co_firstlineno) == (filename, 1)
    assert list(found.co_positions()) == list(compiled.co_positions())


def test_a_maker_function_of_a_source_the_module_lacks_is_compiled() -> None:
    lacking = create_model("Lacking", name=(str, ...), size=(int, 0))
    source = _trusted._function_source(lacking, TrustedMaker(lacking)._template, {})
    assert _trusted._precompiled(source, "<TrustedMaker Lacking>") is None
    make = trusted_maker(lacking)
    _same(make(name="x"), lacking.model_construct(name="x"))
    _same(make(name="x", size=2), lacking.model_construct(name="x", size=2))
    assert make.__code__.co_filename == "<TrustedMaker Lacking>"


@pytest.mark.parametrize("cls", [RoundRecord, Observation])
def test_a_precompiled_maker_function_leaves_out_the_defaults_not_given(
    cls: type[BaseModel],
) -> None:
    make = trusted_maker(cls)
    model = next(m for m in PLAYED if type(m) is cls)
    required = {n: getattr(model, n) for n, f in cls.model_fields.items() if f.is_required()}
    _same(make(**required), cls.model_construct(**required))
    assert make.__kwdefaults__ == dict.fromkeys(cls.model_fields, _trusted._MISSING)


@pytest.mark.parametrize("cls", PACKAGE_FUNCTIONS)
def test_a_package_maker_function_is_not_compiled_in_the_process(
    cls: type[BaseModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("compiled in the process")

    monkeypatch.setattr(_trusted, "compile", refuse, raising=False)
    make = trusted_maker(cls)
    values = {n: None for n, f in cls.model_fields.items() if f.is_required()}
    assert make(**values).__dict__ == cls.model_construct(**values).__dict__
    assert make.__code__.co_filename == f"<TrustedMaker {cls.__qualname__}>"
