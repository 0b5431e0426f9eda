"""The scoring and reading hot paths against their plain definitions, on generated input.

* :func:`evidence_by_round` (one pass, a snapshot per round) equals reading every prefix of
  the trace from scratch, as the definition in :mod:`uncobench_z3.evaluation._attribution`
  says (exact required-context values stated alike, imprecise statements of the rest).
* :class:`EvidenceJudge` answers without the solver when the evidence pins every decision
  record at its true value; with pin literals for true values; and remembers verdicts. Each
  verdict must equal a plain solver query of the definition: every value as an equality term,
  every imprecise statement as a constraint, on a solver of its own.
* Stated values are parsed once (by value and type); any-order vocabulary matching reads a
  per-message index instead of scanning the tokens: both give what the plain code gave.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import ReplyRecord, RoundRecord, typed_task
from uncobench_z3.evaluation._attribution import EvidenceJudge
from uncobench_z3.evaluation._evidence import evidence_by_round
from uncobench_z3.settings import StatedValue, stated_imprecision, stated_value
from uncobench_z3.settings._matching import _unordered
from uncobench_z3.settings._vocabulary import Entry
from uncobench_z3.settings._words import Token
from uncobench_z3.solver import GOAL_DIFFERS, SolverBudget, TaskSolver
from uncobench_z3.spec import Answer, Slot, TypedTask, Value, ValueParseError, to_json_scalar

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [group for path in sorted((ROOT / "examples" / "groups").glob("*.group.json"))
          for group in load_groups(path)]  # fmt: skip
TASKS = [typed_task(group) for group in GROUPS]
BUDGET = SolverBudget(timeout_ms=5000)


def _statements(index: int) -> list[StatedValue]:
    """What replies can state in this group: every true record, every defect's first reply,
    and a wrong value of each record (a contradiction when stated beside the true one)."""
    task, group = TASKS[index], GROUPS[index]
    found = []
    for (candidate, fact), value in task.values.items():
        context = task.facts[fact].context
        found.append(StatedValue(candidate=candidate, fact=fact, context=context,
                                 value=to_json_scalar(value)))  # fmt: skip
        other = task.facts[fact].value_of(0) if task.facts[fact].type != "bool" else not value
        if other != value:
            found.append(StatedValue(candidate=candidate, fact=fact, context=context,
                                     value=to_json_scalar(other)))  # fmt: skip
    for setting in group.settings:
        for defect in setting.defects:
            found += list(defect.first_reply or ()) + list(defect.resolved_reply or ())
    return found


@st.composite
def traces(draw: st.DrawFn) -> tuple[int, list[RoundRecord]]:
    index = draw(st.integers(0, len(GROUPS) - 1))
    pool = _statements(index)
    rounds = []
    truth = [s for s in pool if s.is_exact and _is_true(index, s)]
    wrong = {(s.candidate, s.fact): s for s in pool if s.is_exact and not _is_true(index, s)}
    for number in range(1, draw(st.integers(1, 4)) + 1):
        stated = draw(st.lists(st.sampled_from(pool), max_size=8))
        if draw(st.booleans()):  # every record, true, but one or two missing or another value
            altered = draw(st.lists(st.sampled_from(sorted(wrong)), max_size=2, unique=True))
            replace = draw(st.booleans())
            for s in truth:
                slot = (s.candidate, s.fact)
                if slot not in altered:
                    stated.append(s)
                elif replace:
                    stated.append(wrong[slot])
        reply = ReplyRecord(role="r", question="q", text="t", stated=tuple(stated))
        rounds.append(RoundRecord(round=number, action="ask", replies=(reply,)))
    return index, rounds


def _is_true(index: int, stated: StatedValue) -> bool:
    task = TASKS[index]
    slot = (stated.candidate, stated.fact)
    return stated.context == task.facts[stated.fact].context and task.values[slot] == (
        stated_value(task, stated)
    )


Evidence = tuple[dict[Slot, Value], list[tuple[Slot, StatedValue]]]


def _plain_evidence(task: TypedTask, trace: list[RoundRecord]) -> Evidence:
    """The definition, read from scratch."""
    required = {key: fact.context for key, fact in task.facts.items()}
    seen: dict[Slot, set[Value]] = {}
    values: dict[Slot, Value] = {}
    for record in trace:
        for reply in record.replies:
            for s in reply.stated:
                if s.is_exact and s.context == required[s.fact]:
                    value = stated_value(task, s)
                    seen.setdefault((s.candidate, s.fact), set()).add(value)
                    values[(s.candidate, s.fact)] = value
    exact = {slot: values[slot] for slot, v in seen.items() if len(v) == 1}
    imprecise: dict[tuple[Slot, str], tuple[Slot, StatedValue]] = {}
    for record in trace:
        for reply in record.replies:
            for s in reply.stated:
                slot = (s.candidate, s.fact)
                if s.is_exact or s.context != required[s.fact] or slot in exact:
                    continue
                imprecise.setdefault((slot, s.model_dump_json()), (slot, s))
    return exact, list(imprecise.values())


def _plain_verdict(task: TypedTask, gold: Answer, evidence: Evidence) -> str:
    """The definition as one solver query (and a consistency query), nothing shortened."""
    exact, imprecise = evidence
    solver = TaskSolver(task, gold.to_outcome(), BUDGET)
    enc = solver.encoding
    terms = [enc.value_equals_term(slot, value) for slot, value in exact.items()]
    for slot, s in imprecise:
        statement = stated_imprecision(task, s)
        if statement.options is not None:
            terms.append(enc.value_in_set_term(slot, statement.options))
        else:
            assert statement.low is not None and statement.high is not None
            terms.append(enc.value_in_range_term(slot, statement.low, statement.high))
    differs = solver.query("plain", [], GOAL_DIFFERS, terms, want_core=False, want_model=False)
    if differs.status != "unsat":
        return differs.status
    consistent = solver.query("plain-consistent", [], None, terms, False, False)
    return "unsat" if consistent.status == "sat" else "unknown"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_round_evidence_and_verdicts_equal_the_definition(
    case: tuple[int, list[RoundRecord]],
) -> None:
    index, trace = case
    task, gold = TASKS[index], GROUPS[index].gold
    judge = EvidenceJudge(task, gold, BUDGET)
    snapshots = evidence_by_round(task, trace)
    assert len(snapshots) == len(trace)
    for number, snapshot in enumerate(snapshots, start=1):
        exact, imprecise = plain = _plain_evidence(task, trace[:number])
        assert snapshot.exact == exact and list(snapshot.exact) == list(exact)
        assert list(snapshot.imprecise) == imprecise
        verdict = judge.verdict(snapshot)
        assert verdict == _plain_verdict(task, gold, plain)
        assert judge.determines_gold(trace[:number])[0] == verdict  # and from the memo


def test_a_complete_truthful_trace_is_decided_without_loading_the_solver() -> None:
    for index, task in enumerate(TASKS):
        truth = tuple(
            StatedValue(candidate=c, fact=f, context=task.facts[f].context,
                        value=to_json_scalar(v))
            for (c, f), v in task.values.items()
        )  # fmt: skip
        reply = ReplyRecord(role="r", question="q", text="t", stated=truth)
        trace = [RoundRecord(round=1, action="ask", replies=(reply,))]
        judge = EvidenceJudge(task, GROUPS[index].gold, BUDGET)
        assert judge.determines_gold(trace)[0] == "unsat"
        assert judge._attributor is None  # no encoding was loaded
        # and the solver agrees
        assert _plain_verdict(task, GROUPS[index].gold, _plain_evidence(task, trace)) == "unsat"


def test_a_stated_value_is_parsed_by_its_own_type_even_when_remembered() -> None:
    """The parse cache keys on the raw value's type: True == 1 and hash alike."""
    task = TASKS[0]
    number = next(key for key, fact in task.facts.items() if fact.type == "int")
    flag = next((key for key, fact in task.facts.items() if fact.type == "bool"), None)
    candidate = task.candidates[0]
    context = task.facts[number].context
    one = StatedValue(candidate=candidate, fact=number, context=context, value=1)
    assert stated_value(task, one) == 1
    with pytest.raises(ValueParseError):
        stated_value(task, one.model_copy(update={"value": True}))
    if flag is not None:
        context = task.facts[flag].context
        yes = StatedValue(candidate=candidate, fact=flag, context=context, value=True)
        assert stated_value(task, yes) is True
        with pytest.raises(ValueParseError):
            stated_value(task, yes.model_copy(update={"value": 1}))


def _unordered_by_scan(
    entry: Entry, stems: list[str], tokens: list[Token]
) -> list[tuple[int, ...]]:
    """The plain scan the indexed matcher replaced: for each sentence, each wanted word's
    first token not taken yet."""
    found = []
    for sentence in sorted({t.sentence for t in tokens}):
        indexes: list[int] = []
        for want in entry.stems:
            hit = next((i for i, t in enumerate(tokens)
                        if t.sentence == sentence and stems[i] == want and i not in indexes),
                       None)  # fmt: skip
            if hit is None:
                break
            indexes.append(hit)
        else:
            found.append(tuple(sorted(indexes)))
    return found


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 2)), max_size=12),
    st.lists(st.sampled_from("abcde"), min_size=1, max_size=4),
)
def test_unordered_matching_by_index_equals_the_scan(
    words: list[tuple[str, int]], wanted: list[str]
) -> None:
    tokens = [Token(w, w, i, i + 1, False, s, False) for i, (w, s) in enumerate(words)]
    stems = [t.stem for t in tokens]
    entry = Entry("fact", ("f",), tuple(wanted), tuple(wanted), 7, unordered=True)
    positions: dict[tuple[int, str], list[int]] = {}
    for i, token in enumerate(tokens):
        positions.setdefault((token.sentence, token.stem), []).append(i)
    sentences = sorted({t.sentence for t in tokens})
    assert _unordered(entry, sentences, positions) == _unordered_by_scan(entry, stems, tokens)
