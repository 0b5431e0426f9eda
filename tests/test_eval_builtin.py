"""The built-in agents: careful scores 100% in every available setting (examples and a built
benchmark); naive drops in Misaligned and Incomplete; the behaviour each one documents."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    NAIVE_QUESTION,
    CarefulAgent,
    Environment,
    SampleJob,
    SampleRecord,
    example_groups,
    make_agent,
    run_episode,
    run_sample,
)
from uncobench_z3.settings import SETTING_NAMES, TaskGroup

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def groups() -> list[TaskGroup]:
    """The example groups on disk and the five example specs perturbed afresh."""
    on_disk = [
        load_groups(path)[0] for path in sorted((ROOT / "examples" / "groups").glob("*.json"))
    ]
    return on_disk + example_groups(seed=3)


async def run_all(groups: list[TaskGroup], agent: str) -> list[SampleRecord]:
    records = []
    for group in groups:
        for setting in SETTING_NAMES:
            if group.setting(setting).available:
                records.append(await run_sample(SampleJob.make(group, setting, agent)))
    return records


def accuracy(records: list[SampleRecord]) -> dict[str, float]:
    by_setting: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_setting[record.setting].append(record.correct)
    return {s: sum(v) / len(v) for s, v in by_setting.items()}


@pytest.mark.parametrize("agent", ["builtin/careful", "builtin/patient"])
async def test_careful_agents_score_100_percent_everywhere(
    groups: list[TaskGroup], agent: str
) -> None:
    records = await run_all(groups, agent)
    assert {r.setting for r in records} == set(SETTING_NAMES)
    wrong = [(r.group_id, r.setting, r.answer) for r in records if not r.correct]
    assert wrong == []


async def test_naive_drops_in_misaligned_and_incomplete(groups: list[TaskGroup]) -> None:
    scores = accuracy(await run_all(groups, "builtin/naive"))
    assert scores["reliable"] == 1.0
    assert scores["misaligned"] < scores["reliable"]
    assert scores["incomplete"] < scores["reliable"]


async def test_careful_scores_100_percent_on_a_built_benchmark(tmp_path: Path) -> None:
    from uncobench_z3.construct import build_benchmark

    build_benchmark(tmp_path / "bench", groups=4, seed=5, workers=1)
    built = load_groups(tmp_path / "bench")
    assert len(built) == 4
    records = await run_all(built, "builtin/careful")
    assert records and all(r.correct for r in records)


async def test_naive_asks_everyone_once_and_never_follows_up() -> None:
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    env = await run_episode(Environment(group, "misaligned"), make_agent("builtin/naive", 0))
    assert env.rounds == 2
    asked = env.trace[0].replies
    assert {r.role for r in asked} == {r.id for r in group.spec.roles}
    assert {r.question for r in asked} == {NAIVE_QUESTION}
    assert env.answer is not None and env.answer.number == "57500"  # 45,000 + the FY2025 12,500


async def test_careful_follows_up_with_targeted_questions() -> None:
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    for setting, kind in (
        ("misaligned", "misaligned"),
        ("incomplete", "incomplete"),
        ("missed", "missed"),
    ):
        env = await run_episode(Environment(group, setting), make_agent("builtin/careful", 0))
        assert env.rounds == 3, setting
        follow_ups = [r for r in env.trace[1].replies]
        assert [r.follow_up for r in follow_ups] == ["targeted"], setting
        assert follow_ups[0].resolved == (kind,)
    env = await run_episode(Environment(group, "mixed"), make_agent("builtin/careful", 0))
    assert env.rounds == 3  # all three follow-ups in one round
    assert sorted(k for r in env.trace[1].replies for k in r.resolved) == [
        "incomplete",
        "misaligned",
        "missed",
    ]


async def test_patient_recovers_a_missed_reply_by_waiting() -> None:
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    env = await run_episode(Environment(group, "missed"), make_agent("builtin/patient", 0))
    assert [r.action for r in env.trace] == ["ask", "wait", "answer"]
    assert env.trace[1].replies[0].delivered and env.answer is not None
    assert (env.answer.candidate, env.answer.number) == ("Marcus Vance", "60000")


async def test_patient_asks_again_when_waiting_never_delivers() -> None:
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    env = Environment(group, "missed", missed_wait=0)
    await run_episode(env, make_agent("builtin/patient", 0))
    assert [r.action for r in env.trace] == ["ask", "wait", "ask", "answer"]
    assert env.answer is not None and env.answer.number == "60000"


async def test_careful_answers_in_its_last_round() -> None:
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    env = await run_episode(Environment(group, "missed", budget=2), CarefulAgent())
    assert env.status == "answered" and env.rounds == 2


async def test_agents_are_deterministic(groups: list[TaskGroup]) -> None:
    first = await run_all(groups[:3], "builtin/naive")
    second = await run_all(groups[:3], "builtin/naive")
    strip = {"elapsed_seconds"}
    assert [r.model_dump(exclude=strip) for r in first] == [
        r.model_dump(exclude=strip) for r in second
    ]


async def test_careful_reads_each_turn_once_and_as_the_whole_conversation_reads() -> None:
    """What careful remembers between turns (the statements read so far, its first questions,
    the facts it needs) gives what reading the whole conversation again gives, also when it
    is handed a conversation that does not continue the last one."""
    from uncobench_z3.evaluation._builtin import latest_statements

    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    agent = CarefulAgent()
    env = Environment(group, "mixed")
    conversations = []
    while not env.finished:
        conversation = env.conversation
        conversations.append(conversation)
        read = agent.read(conversation)
        assert agent.latest_of(conversation, read) == latest_statements(conversation, read)
        await env.astep(await agent.act(conversation))
    assert len(conversations) == 3
    for conversation in (conversations[1], conversations[2], conversations[0]):  # not grown
        fresh = CarefulAgent()
        assert await agent.act(conversation) == await fresh.act(conversation)
        read = agent.read(conversation)
        assert agent.latest_of(conversation, read) == latest_statements(conversation, read)
    first = await CarefulAgent().act(conversations[0])
    assert first is await CarefulAgent(seed=5).act(conversations[0])  # one per task text
    assert first == CarefulAgent().first_questions(agent.read(conversations[0]))


async def test_naive_asks_each_briefing_one_remembered_question_as_validated() -> None:
    from uncobench_z3.evaluation import AskAction, RoleRequest

    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    env = Environment(group, "reliable")
    first = await make_agent("builtin/naive", 0).act(env.conversation)
    assert first is await make_agent("builtin/naive", 1).act(env.conversation)
    validated = AskAction(
        requests=tuple(RoleRequest(role=r.id, question=NAIVE_QUESTION) for r in group.spec.roles)
    )
    assert first == validated and first.model_dump_json() == validated.model_dump_json()
    assert first.model_fields_set == validated.model_fields_set
    other = Environment(group, "reliable", budget=5)  # another briefing: asked anew, alike
    again = await make_agent("builtin/naive", 0).act(other.conversation)
    assert again == first and again is not first
