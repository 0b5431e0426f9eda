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

import pytest

from tests.sample_helpers import stored_example_groups
from tests.stated_helpers import imprecise_stated
from uncobench_z3.construct._reader import ReadError, parse_statement
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
    _Line,
    _Problem,
    latest_statements,
    parse_task,
    reply_statements,
)
from uncobench_z3.evaluation._registry import BUILTIN_AGENTS
from uncobench_z3.settings import StatedValue
from uncobench_z3.spec import Slot, TypedTask, Value, to_json_scalar

GROUPS = stored_example_groups()


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
    # (a fraction keyed by its terms: a table started again gives each value a new token)
    for value in values:
        if isinstance(value, Fraction):
            key = (Fraction, value.numerator, value.denominator)
            assert knows.tokens[key] == knows.token(value), value


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


def test_a_readings_lines_are_read_as_parse_statement_reads_them() -> None:
    """:meth:`_Knowledge.text`: each reply text's record lines, a line repeated in another
    text read once for both (:meth:`_Knowledge.line`), are what :func:`parse_statement`
    reads of each line, and each reads as its definition says (the context required of its
    fact, in any case; its exact value only then; its face value and that value's token)."""
    rng = random.Random("lines")
    lines_read = repeated = 0
    for group in GROUPS:
        environment = Environment(group, "reliable")
        read = parse_task(environment.conversation.briefing.task_text)
        knows = _knowledge_of(read)
        seen: set[str] = set()
        for _ in range(6):
            for turn in _conversation(environment, rng).turns:
                for reply in turn.observation.replies:
                    statements, lines = knows.text(reply.text)
                    expected = []
                    for raw in (reply.text or "").splitlines():
                        try:
                            expected.append(parse_statement(raw, read.catalog))
                        except ReadError:
                            continue
                        repeated += raw in seen
                        seen.add(raw)
                    assert list(statements) == expected
                    for statement, line in zip(statements, lines, strict=True):
                        required = read.required_context.get(statement.fact, "")
                        in_context = statement.context.lower() == required.lower()
                        face = face_value(statement)
                        assert type(line) is _Line
                        assert line == _Line(*line)
                        assert line.statement == statement
                        assert line.slot == (statement.candidate, statement.fact)
                        assert line.in_context == in_context
                        assert line.exact == (statement.value if in_context else None)
                        assert line.face == face
                        assert line.token == (None if face is None else knows.token(face))
                        lines_read += 1
    assert lines_read > 500 and repeated > 100


def test_remembered_verdicts_are_the_plain_eligibility() -> None:
    """:meth:`_Knowledge.eligible`: each candidate's verdict remembered by the tokens of the
    records its conditions read is :func:`_eligible`'s, over many sets of values of one task
    that share most records (true values, others' values, a domain's ends; some unknown)."""
    rng = random.Random("eligible")
    compared = differ = 0
    for group in GROUPS:
        environment = Environment(group, "reliable")
        task = environment.task
        read = parse_task(environment.conversation.briefing.task_text)
        knows = _knowledge_of(read)
        names = {c: task.candidate_name(c) for c in task.candidates}
        pools: dict[tuple[str, str], list[Value]] = {}
        for (candidate, key), value in task.values.items():
            fact = task.facts[key]
            pool = [value, *(task.values[(c, key)] for c in task.candidates)]
            if fact.type != "bool":
                low, high = fact.code_range()
                pool += [fact.value_of(low), fact.value_of(high)]
            pools[(names[candidate], key)] = pool
        first = None
        for _ in range(60):
            values = {
                slot: rng.choice(pool[:1] * 4 + pool)
                for slot, pool in pools.items()
                if rng.random() < 0.9
            }
            tokens = {slot: knows.token(value) for slot, value in values.items()}
            eligible = knows.eligible(values, tokens)
            assert eligible == _eligible(read, values), values
            first = eligible if first is None else first
            differ += eligible != first
            compared += 1
    assert compared > 100 and differ > 10


@pytest.mark.parametrize("name", ["builtin/careful", "builtin/midpoint"])
def test_remembered_follow_up_requests_are_the_plain_questions(name: str) -> None:
    """:meth:`CarefulAgent.follow_ups`, each colleague's request remembered by its problems
    and shared by questions whose other colleagues' problems differ: each question is made
    of :meth:`CarefulAgent.follow_up` of each colleague's problems, in their order."""
    rng = random.Random(f"asks:{name}")
    compared = 0
    for group in GROUPS:
        environment = Environment(group, "reliable")
        read = parse_task(environment.conversation.briefing.task_text)
        agent = make_agent(name, 0)
        assert isinstance(agent, CarefulAgent)
        slots = [(n, k) for keys in agent.needed(read).values() for k in keys for n in
                 read.catalog.candidates]  # fmt: skip
        for _ in range(40):
            problems = []
            for candidate, key in slots:
                kind = rng.choice(["missing", "context", "imprecise", None, None])
                if kind is not None:
                    given = (
                        rng.choice(["the previous year", "draft"]) if kind == "context" else None
                    )
                    problems.append(_Problem(kind, candidate, key, given))
            if not problems:
                continue
            by_role: dict[str, list[_Problem]] = {}
            for problem in problems:
                by_role.setdefault(read.catalog.keys[problem.fact].owner, []).append(problem)
            plain = AskAction(
                requests=tuple(
                    RoleRequest(role=role, question=agent.follow_up(read, of_role))
                    for role, of_role in by_role.items()
                )
            )
            assert agent.follow_ups(read, problems) == plain
            compared += 1
    assert compared > 100
