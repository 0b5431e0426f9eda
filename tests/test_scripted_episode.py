"""An episode with scripted colleagues played without a coroutine a round, and the epoch
seeds remembered: both give what the general path gives."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ContextWindowError
from uncobench_z3.evaluation import (
    Action,
    AnswerAction,
    Conversation,
    Environment,
    SampleJob,
    WaitAction,
    _sample,
    epoch_seed,
    make_agent,
    run_episode,
)
from uncobench_z3.evaluation._run_sample import play_sample
from uncobench_z3.models import ModelUsage, StoredOutput

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [
    load_groups(ROOT / "examples" / "groups" / name)[0]
    for name in ("mining_supervisor.group.json", "healthcare_nurse_manager.group.json")
]


class GeneralPath(Environment):
    """An environment of a subclass: :func:`run_episode` steps it through ``astep``."""


def _dump(environment: Environment) -> dict[str, object]:
    return {
        "outcome": environment.outcome.model_dump(),
        "conversation": environment.conversation.model_dump(),
        "pending": dict(environment._pending),
    }


@pytest.mark.parametrize("agent", ["builtin/careful", "builtin/naive", "builtin/patient"])
async def test_a_scripted_episode_is_the_one_astep_plays(agent: str) -> None:
    for group in GROUPS:
        for setting in group.settings:
            if not setting.available:
                continue
            for budget in (2, 20):
                fast = await run_episode(
                    Environment(group, setting.name, budget), make_agent(agent, 7)
                )
                general = await run_episode(
                    GeneralPath(group, setting.name, budget), make_agent(agent, 7)
                )
                assert _dump(fast) == _dump(general), (group.id, setting.name, budget)


async def test_the_scripted_path_is_taken_only_for_a_plain_scripted_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stepped: list[Environment] = []
    real = Environment.astep

    async def spy(self: Environment, action: Action) -> object:
        stepped.append(self)
        return await real(self, action)

    monkeypatch.setattr(Environment, "astep", spy)
    group = GROUPS[0]
    plain = await run_episode(Environment(group, "reliable", 2), Waiter())
    subclass = await run_episode(GeneralPath(group, "reliable", 2), Waiter())
    phrased = Environment(group, "reliable", 2)
    phrased.phraser = object()  # type: ignore[assignment]  # (waits: nothing to phrase)
    await run_episode(phrased, Waiter())
    assert plain.rounds == subclass.rounds == phrased.rounds == 2
    assert stepped == [subclass, subclass, phrased, phrased]


class Waiter:
    async def act(self, conversation: Conversation) -> Action:
        return WaitAction()


class Writer:
    """Answers at its second round and says what its model wrote in each round."""

    def __init__(self) -> None:
        self.last_output: StoredOutput | None = None

    async def act(self, conversation: Conversation) -> Action:
        rounds = len(conversation.turns)
        self.last_output = StoredOutput(output_tokens=rounds + 1) if rounds != 0 else None
        if rounds == 1:
            return AnswerAction(text="Decision: no eligible candidate")
        return WaitAction()


class TooLong:
    """Its model's context overflows at its third round."""

    async def act(self, conversation: Conversation) -> Action:
        if len(conversation.turns) == 2:
            raise ContextWindowError("the conversation no longer fits " + "x" * 600)
        return WaitAction()


async def test_the_model_output_and_the_context_window_as_on_the_general_path() -> None:
    group = GROUPS[1]
    for agent in (Writer, TooLong):
        fast = await run_episode(Environment(group, "reliable", 5), agent())
        general = await run_episode(GeneralPath(group, "reliable", 5), agent())
        assert _dump(fast) == _dump(general)
    written = await run_episode(Environment(group, "reliable", 5), Writer())
    assert [r.output for r in written.trace] == [None, StoredOutput(output_tokens=2)]
    exhausted = await run_episode(Environment(group, "reliable", 5), TooLong())
    assert exhausted.status == "context_exhausted" and exhausted.rounds == 2
    assert exhausted.end_detail is not None and len(exhausted.end_detail) == 500


async def test_an_ended_episode_is_not_played_again() -> None:
    env = await run_episode(Environment(GROUPS[0], "reliable", 1), Waiter())
    again = await run_episode(env, Waiter())
    assert again is env and env.rounds == 1 and env.status == "budget_exhausted"


def _hashed(run_seed: object, sample_id: object, epoch: object) -> int:
    """The epoch seed's definition, hashed every time."""
    text = f"uncobench-epoch:{run_seed}:{sample_id}:{epoch}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") >> 1


@given(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=30),
    st.integers(min_value=0, max_value=10**6),
)
def test_a_remembered_epoch_seed_is_the_hashed_one(run_seed: int, group: str, epoch: int) -> None:
    first = epoch_seed(run_seed, group, epoch)
    assert first == _hashed(run_seed, group, epoch)
    assert epoch_seed(run_seed, group, epoch) == first  # (now remembered)
    assert (run_seed, group, epoch) in _sample._epoch_seeds


class Named(str):
    def __format__(self, spec: str) -> str:
        return "renamed"


def test_arguments_equal_to_plain_ones_are_hashed_as_written() -> None:
    assert epoch_seed(1, "g", 1) == _hashed(1, "g", 1)
    # True == 1 and 1.0 == 1 as keys, but not as text: never taken from the memo, never kept
    assert epoch_seed(True, "g", True) == _hashed(True, "g", True) != _hashed(1, "g", 1)
    assert epoch_seed(1, "g", 1.0) == _hashed(1, "g", 1.0)  # type: ignore[arg-type]
    assert epoch_seed(1, Named("g"), 1) == _hashed(1, "renamed", 1)
    assert (True, "g", True) in _sample._epoch_seeds  # (the key of the plain (1, "g", 1))
    assert _sample._epoch_seeds[(True, "g", True)] == _hashed(1, "g", 1)


def test_the_epoch_seeds_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sample, "_epoch_seeds", {})
    for epoch in range(_sample._EPOCH_SEEDS_KEPT + 10):
        assert epoch_seed(3, "bounded", epoch) == _hashed(3, "bounded", epoch)
    assert len(_sample._epoch_seeds) <= _sample._EPOCH_SEEDS_KEPT


class Spender:
    """An agent that says what its model spent (scripted colleagues spend nothing)."""

    usage = ModelUsage(input_tokens=120, output_tokens=30)

    async def act(self, conversation: Conversation) -> Action:
        return AnswerAction(text="Decision: no eligible candidate")


async def test_an_agents_usage_is_kept_with_scripted_colleagues() -> None:
    group = GROUPS[0]
    job = SampleJob.make(group, "reliable", "spender")
    spent = await play_sample(job, lambda name, seed: Spender())  # type: ignore[arg-type,return-value]
    assert spent.usage == {"agent": Spender.usage}
    waited = await play_sample(job, lambda name, seed: Waiter())  # type: ignore[arg-type,return-value]
    assert waited.usage == {}
