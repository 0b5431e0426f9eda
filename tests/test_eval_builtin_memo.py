"""The built-in agents' remembered and incremental paths against their plain definitions.

Every built-in agent reads a reply text's lines once per task reading, keeps what the turns
said line by line (the latest line of each record, the values it believes, the records it
still needs), remembers its decisions by the values they read and its follow-up questions by
the problems they ask about. Each action must be the one the plain definition gives: the
conversation read whole, :meth:`~CarefulAgent.problems` and :meth:`~CarefulAgent.believed`
of its latest statements, :func:`decide` made afresh. Random conversations (record lines of
every form, in the required context and others, true and wrong values, silences, lines that
are no record), handed to each agent turn by turn and now and then out of order.
"""

from __future__ import annotations

import datetime
import random
from fractions import Fraction
from pathlib import Path

import pytest

from tests.stated_helpers import imprecise_stated
from uncobench_z3.construct import load_groups
from uncobench_z3.construct._render import choose_style, statement_text
from uncobench_z3.evaluation import (
    NAIVE_QUESTION,
    Action,
    AskAction,
    CarefulAgent,
    Conversation,
    Environment,
    FaceValueAgent,
    NaiveAgent,
    Observation,
    ReplyView,
    RoleRequest,
    Turn,
    WaitAction,
    decide,
    face_value,
    make_agent,
)
from uncobench_z3.evaluation._builtin import (
    _eligible,
    _knowledge_of,
    _Problem,
    latest_statements,
    parse_task,
    reply_statements,
)
from uncobench_z3.evaluation._registry import BUILTIN_AGENTS
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Slot, TypedTask, Value, to_json_scalar

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [
    group
    for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
    for group in load_groups(path)
]


def _plain_face_values(conversation: Conversation) -> dict[tuple[str, str], Value]:
    read = parse_task(conversation.briefing.task_text)
    values = {}
    for statement in reply_statements(conversation, read):
        value = face_value(statement)
        if value is not None:
            values[(statement.candidate, statement.fact)] = value
    return values


def _plain_act(
    agent: NaiveAgent | CarefulAgent, conversation: Conversation
) -> tuple[Action, dict[tuple[str, str], Value] | None]:
    """The agent's action as its definition reads the conversation: whole, every time; and
    the values it decided with (None: it asked or waited)."""
    read = parse_task(conversation.briefing.task_text)
    turns = conversation.turns
    tie_break = agent.tie_break(conversation)
    if isinstance(agent, NaiveAgent):
        if not turns:
            roles = conversation.briefing.roles
            requests = (RoleRequest(role=card.id, question=NAIVE_QUESTION) for card in roles)
            return AskAction(requests=tuple(requests)), None
        values = _plain_face_values(conversation)
        return decide(read, values, tie_break), values
    if not turns:
        return agent.first_questions(read), None
    if isinstance(agent, FaceValueAgent):
        values = _plain_face_values(conversation)
        return decide(read, values, tie_break), values
    latest = latest_statements(conversation, read)
    problems = agent.problems(read, latest)
    if not problems or conversation.rounds_left <= 1:
        values = agent.believed(read, latest)
        return decide(read, values, tie_break), values
    last = turns[-1]
    silent = any(reply.text is None for reply in last.observation.replies)
    if agent.wait_for_silence and silent and not isinstance(last.action, WaitAction):
        return WaitAction(), None
    by_role: dict[str, list[_Problem]] = {}
    for problem in problems:
        by_role.setdefault(read.catalog.keys[problem.fact].owner, []).append(problem)
    requests = (RoleRequest(role=r, question=agent.follow_up(read, p)) for r, p in by_role.items())
    return AskAction(requests=tuple(requests)), None


def _stated(task: TypedTask, slot: Slot, rng: random.Random) -> StatedValue:
    """A statement of a record: exact (true, another candidate's, a domain's end) in the
    required context (in any case) or another, or imprecise (:func:`imprecise_stated`)."""
    candidate, key = slot
    fact = task.facts[key]
    context = fact.context
    draw = rng.random()
    if draw < 0.15:
        context = rng.choice([*task.alternatives.get(slot, {}), "the previous year", context])
    elif draw < 0.25:
        context = context.upper()  # (the required context: read in any case)
    made = {"candidate": candidate, "fact": key, "context": context}
    values = [task.values[(c, key)] for c in task.candidates]
    if fact.type != "bool":
        low, high = fact.code_range()
        values += [fact.value_of(low), fact.value_of(high)]
    if draw < 0.7 or (fact.type == "bool" and draw < 0.8):
        value = task.values[slot] if rng.random() < 0.6 else rng.choice(values)
        return StatedValue(**made, value=to_json_scalar(value))
    return imprecise_stated(task, slot, context, rng)


def _conversation(environment: Environment, rng: random.Random) -> Conversation:
    """A random conversation of the environment's task: a few turns of replies from the
    task's roles, their record lines of any form, in any order, some silent."""
    task = environment.task
    briefing = environment.conversation.briefing
    budget = rng.randint(2, 6)
    briefing = briefing.model_copy(update={"budget": budget})
    style = choose_style(rng.randrange(4), task.spec.id)
    slots = list(task.values)
    decision = [s for s in slots if s[1] in task.decision_facts()]
    turns = []
    for number in range(1, rng.randint(1, budget) + 1):
        replies = []
        for card in briefing.roles:
            if rng.random() < 0.15:
                replies.append(ReplyView(role=card.id, role_name=card.name, text=None))
                continue
            chosen = rng.sample(decision, rng.randint(0, len(decision)))
            chosen += rng.sample(slots, rng.randint(0, 3))
            lines = [statement_text(task, _stated(task, slot, rng), style) for slot in chosen]
            if rng.random() < 0.3:
                lines.insert(rng.randint(0, len(lines)), "Happy to help.")
            replies.append(ReplyView(role=card.id, role_name=card.name, text="\n".join(lines)))
        action: Action = WaitAction() if rng.random() < 0.2 else AskAction(requests=())
        observation = Observation(round=number, rounds_left=budget - number, replies=tuple(replies))
        turns.append(Turn(action=action, observation=observation))
    return Conversation(briefing=briefing, turns=tuple(turns))


@pytest.mark.parametrize("name", sorted(BUILTIN_AGENTS))
async def test_each_action_is_the_plain_definitions(name: str) -> None:
    rng = random.Random(name)
    tied = answered = asked = 0
    for round_ in range(3):
        for group in GROUPS:
            environment = Environment(group, "reliable")
            for _ in range(4):
                conversation = _conversation(environment, rng)
                prefixes = [
                    conversation.model_copy(update={"turns": conversation.turns[:n]})
                    for n in range(len(conversation.turns) + 1)
                ]
                if round_ == 2:  # handed out of order: what it read before is not continued
                    rng.shuffle(prefixes)
                for seed in (0, 1, 2):  # (a decision remembered, the choice among ties not)
                    agent = make_agent(name, seed)
                    for prefix in prefixes:
                        action = await agent.act(prefix)
                        fresh = make_agent(name, seed)
                        assert isinstance(fresh, NaiveAgent | CarefulAgent)
                        plain, values = _plain_act(fresh, prefix)
                        assert action == plain, (name, seed, prefix)
                        assert action.model_dump_json() == plain.model_dump_json()
                        if values is not None:
                            answered += 1
                            tied += len(_eligible(fresh.read(prefix), values)) > 1
                        asked += action.kind == "ask" and bool(prefix.turns)
    assert answered > 50 and tied > 0  # (decisions remembered, ties among them)
    if name not in ("builtin/naive", "builtin/face-value"):
        assert asked > 50  # (follow-up questions)


@pytest.mark.parametrize("name", ["builtin/careful", "builtin/midpoint", "builtin/optimist"])
async def test_what_careful_keeps_is_what_the_turns_say(name: str) -> None:
    """Turn by turn, what careful keeps (believed values and their tokens, unsettled records,
    their problems) is what :meth:`~CarefulAgent.believed` and
    :meth:`~CarefulAgent.problems` read from the latest statements."""
    rng = random.Random(f"kept:{name}")
    for group in GROUPS:
        environment = Environment(group, "reliable")
        for _ in range(6):
            conversation = _conversation(environment, rng)
            agent = make_agent(name, 0)
            assert isinstance(agent, CarefulAgent)
            read = agent.read(conversation)
            knows = _knowledge_of(read)
            for n in range(1, len(conversation.turns) + 1):
                prefix = conversation.model_copy(update={"turns": conversation.turns[:n]})
                latest = latest_statements(prefix, read)
                state = agent._read_up_to(prefix, read)
                assert agent.latest_of(prefix, read) == latest
                assert state.believed == agent.believed(read, latest)
                # (and the tokens its decisions are remembered by: one a believed value)
                tokens = {slot: knows.token(value) for slot, value in state.believed.items()}
                assert state.tokens == tokens
                assert agent._problems(read, state) == agent.problems(read, latest)


def test_equal_tokens_are_equal_values_of_one_type() -> None:
    """:meth:`_Knowledge.token`: two values get the same token exactly when they are equal
    and of one type (a fraction keyed by its numerator and denominator, not its hash)."""
    rng = random.Random(7)
    text = Environment(GROUPS[0], "reliable").conversation.briefing.task_text
    knows = _knowledge_of(parse_task(text))
    values: list[Value] = [True, False, "fit", "Fit", datetime.date(2026, 3, 1)]
    for _ in range(300):
        numerator, denominator = rng.randint(-30, 30), rng.randint(1, 12)
        values += [Fraction(numerator, denominator), numerator, Fraction(numerator)]
    for a in values:
        for b in [*rng.sample(values, 40), a]:
            same = type(a) is type(b) and a == b
            assert (knows.token(a) == knows.token(b)) == same, (a, b)


@pytest.mark.parametrize("name", ["builtin/careful", "builtin/patient", "builtin/midpoint"])
async def test_an_agent_handed_another_conversation_reads_it_anew(name: str) -> None:
    """One agent handed the turns of two conversations of one task in alternation (each turn
    as many as the other's), and copies of them (equal turns, other objects): each action is
    the plain definition's."""
    rng = random.Random(f"another:{name}")
    compared = 0
    for group in GROUPS:
        environment = Environment(group, "reliable")
        for _ in range(8):
            first, second = _conversation(environment, rng), _conversation(environment, rng)
            copied = Conversation.model_validate_json(first.model_dump_json())
            agent = make_agent(name, 0)
            for n in range(1, min(len(first.turns), len(second.turns)) + 1):
                for conversation in (first, second, copied):
                    prefix = conversation.model_copy(update={"turns": conversation.turns[:n]})
                    fresh = make_agent(name, 0)
                    assert isinstance(fresh, CarefulAgent)
                    assert await agent.act(prefix) == _plain_act(fresh, prefix)[0]
                    compared += 1
    assert compared > 50
