"""The runner's models read their fields without pydantic's ``__getattr__`` hook, and read
and fail as they did with it; models that need the hook keep it."""

from __future__ import annotations

import copy
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr

from uncobench_z3 import _plain_reads
from uncobench_z3._plain_reads import plain_reads, plain_reads_of_subclasses, reads_plainly
from uncobench_z3.construct import load_groups
from uncobench_z3.construct._render import RenderedTask, RoleCard
from uncobench_z3.evaluation import (
    AnswerAction,
    AskAction,
    Briefing,
    Conversation,
    EpisodeOutcome,
    Observation,
    ReplyRecord,
    ReplyView,
    RoleRequest,
    RoundRecord,
    SampleJob,
    SampleRecord,
    Turn,
)
from uncobench_z3.evaluation._scoring import AnswerScore, ParsedAnswer
from uncobench_z3.settings import TaskGroup
from uncobench_z3.settings._model import (
    CandidateSign,
    Clause,
    ContextSign,
    Defect,
    FactSign,
    IntentSign,
    ProofSummary,
    Setting,
    StatedValue,
)
from uncobench_z3.spec import Answer, Decision, TaskSpec

ROOT = Path(__file__).resolve().parent.parent
CPYTHON = sys.implementation.name == "cpython"

# the models whose fields the first pass over built groups reads most (a counting
# __getattribute__ over 80 groups: 66,621 reads, all of these classes')
RUNNER_MODELS: list[type[BaseModel]] = [
    StatedValue,
    SampleJob,
    ReplyRecord,
    ReplyView,
    TaskGroup,
    RoundRecord,
    Defect,
    Conversation,
    Setting,
    RoleRequest,
    EpisodeOutcome,
    Briefing,
    AskAction,
    AnswerAction,
    RoleCard,
    Answer,
    ProofSummary,
    Turn,
    Observation,
    RenderedTask,
    Clause,
    AnswerScore,
    SampleRecord,
    ParsedAnswer,
    CandidateSign,
    FactSign,
    ContextSign,
    IntentSign,
    TaskSpec,
    Decision,
]


class _Base(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __pydantic_init_subclass__ = plain_reads_of_subclasses


class _Hooked(BaseModel):  # the same fields, pydantic's lookup
    model_config = ConfigDict(frozen=True, extra="forbid")
    a: int
    b: str = "x"


class _Read(_Base):
    a: int
    b: str = "x"


class _Private(_Base):
    a: int
    _kept: int = PrivateAttr(default=3)


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    __pydantic_init_subclass__ = plain_reads_of_subclasses


class _ExtraChild(_Extra):
    a: int


class _OwnGetattr(_Base):
    a: int

    def __getattr__(self, name: str) -> Any:
        return f"made {name}"


class _OwnGetattribute(_Base):
    a: int

    def __getattribute__(self, name: str) -> Any:
        return "always" if name == "a" else super().__getattribute__(name)


@pytest.mark.skipif(not CPYTHON, reason="the slot is CPython's")
def test_the_layout_is_recognised() -> None:
    """On CPython the slot is found (a wrong offset leaves every model with the hook)."""
    assert _plain_reads._GENERIC is not None
    assert reads_plainly(object)
    assert not reads_plainly(BaseModel)
    assert not reads_plainly(_Hooked)


@pytest.mark.skipif(not CPYTHON, reason="the slot is CPython's")
@pytest.mark.parametrize("cls", RUNNER_MODELS, ids=lambda c: c.__name__)
def test_the_runner_models_read_plainly(cls: type[BaseModel]) -> None:
    assert reads_plainly(cls)


@pytest.mark.skipif(not CPYTHON, reason="the slot is CPython's")
def test_models_that_need_the_hook_keep_it() -> None:
    assert reads_plainly(_Read)
    assert not reads_plainly(_Private)
    assert not reads_plainly(_ExtraChild)
    assert not reads_plainly(_OwnGetattr)
    assert not reads_plainly(_OwnGetattribute)
    # what the hook is kept for still works
    assert _Private(a=1)._kept == 3
    assert _ExtraChild(a=1, more=2).more == 2  # type: ignore[attr-defined]
    assert _OwnGetattr(a=1).other == "made other"
    assert _OwnGetattribute(a=1).a == "always"
    # a decorated class that does not qualify is left alone
    assert not reads_plainly(plain_reads(_Private))


def test_reads_and_errors_as_with_the_hook() -> None:
    read, hooked = _Read(a=1), _Hooked(a=1)
    assert (read.a, read.b) == (hooked.a, hooked.b) == (1, "x")
    for model in (read, hooked, read.model_construct(), _Read.model_construct(b="y")):
        with pytest.raises(AttributeError) as missing:
            model.nothing  # type: ignore[attr-defined]  # noqa: B018
        assert str(missing.value) == f"'{type(model).__name__}' object has no attribute 'nothing'"
    assert not hasattr(read, "nothing")
    assert getattr(_Read.model_construct(), "a", "none") == "none"  # a field left out
    assert read.model_extra is None
    assert read.__pydantic_private__ is None
    assert read.model_fields_set == {"a"}


def test_models_copy_pickle_and_compare() -> None:
    read = _Read(a=1)
    for same in (
        copy.copy(read),
        copy.deepcopy(read),
        pickle.loads(pickle.dumps(read)),
        read.model_copy(),
        _Read.model_validate_json(read.model_dump_json()),
    ):
        assert same == read
        assert hash(same) == hash(read)
    assert read.model_copy(update={"b": "z"}).b == "z"
    assert repr(read) == "_Read(a=1, b='x')"


def test_a_built_group_reads_the_same() -> None:
    """Every field of an example group's models, read as attributes, is its ``__dict__``'s."""
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    seen = 0
    stack: list[Any] = [group]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            for name, value in item.__dict__.items():
                assert getattr(item, name) is value
                stack.append(value)
                seen += 1
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    assert seen > 100
