"""The tasks of a batch share one incremental solver (the context's kernel): each task is
loaded once, tasks asked in turn are loaded again, and no answer depends on it."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
import z3
from hypothesis import assume, given

from tests.strategies import small_specs
from uncobench_z3.solver import (
    GOAL_DIFFERS,
    GOAL_TWO_ELIGIBLE,
    Checker,
    QueryResult,
    SolverContext,
    TaskSolver,
    brute_force_differs,
    shared_context,
    verify_spec,
)
from uncobench_z3.solver._kernel import Kernel
from uncobench_z3.spec import TaskSpec, TypedTask, check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


def _task(path: Path) -> TypedTask:
    task = check_structure(load_spec(path)).task
    assert task is not None
    return task


def _kernel(context: SolverContext) -> Kernel:
    (kernel,) = context.kernels.values()
    assert isinstance(kernel, Kernel)
    return kernel


def _queries(ts: TaskSolver) -> list[QueryResult]:
    """Hide each role in turn (with its core or model), then ask for two eligible candidates
    and for a value substituted behind a guard."""
    task = ts.task
    answers = []
    for role in task.roles:
        pinned = [s for s in task.all_slots() if task.facts[s[1]].owner != role]
        answers.append(ts.query(f"hide-{role}", pinned, GOAL_DIFFERS))
    answers.append(ts.query("two", task.all_slots(), GOAL_TWO_ELIGIBLE))
    slot = next(s for s in task.all_slots() if task.facts[s[1]].is_ordered)
    high = task.facts[slot[1]].high
    assert high is not None
    term = ts.encoding.value_in_range_term(slot, task.values[slot], high)
    others = [s for s in task.all_slots() if s != slot]
    answers.append(ts.query("guarded", others, GOAL_DIFFERS, [term]))
    return answers


def _seen(answers: list[QueryResult]) -> list[tuple[object, ...]]:
    """What a model cannot change: statuses and unsat cores."""
    return [(a.name, a.status, a.core) for a in answers]


def test_a_batch_loads_each_task_once_into_one_solver() -> None:
    with SolverContext() as context:
        for path in EXAMPLES:
            verify_spec(load_spec(path), context=context)
        kernel = _kernel(context)
        assert kernel.loads == len(EXAMPLES)
    assert not context.kernels  # the batch's solver goes with the batch


def test_tasks_asked_in_turn_are_loaded_again_and_answer_alike() -> None:
    first, second = (_task(path) for path in EXAMPLES[:2])
    private = [_seen(_queries(TaskSolver(t, t.outcome()))) for t in (first, second)]
    with SolverContext() as context:
        a = TaskSolver(first, first.outcome(), context=context)
        b = TaskSolver(second, second.outcome(), context=context)
        assert _kernel(context).loads == 0  # nothing is loaded before it is asked
        answers_a, answers_b = _queries(a), _queries(b)
        again = [_seen(_queries(a)), _seen(_queries(b))]  # (from memory: no load)
        a._answers.clear()
        b._answers.clear()
        turns = [  # one query of each in turn: every query reloads its task, guards too
            (
                ts.query(
                    r.name, [s for s in ts.task.all_slots() if s in r.pinned], r.goal, r.extras
                ),
                r,
            )
            for pair in zip(answers_a, answers_b, strict=False)
            for ts, r in zip((a, b), pair, strict=True)
        ]
        loads = _kernel(context).loads
    assert [_seen(answers_a), _seen(answers_b)] == private == again
    assert all(new.status == old.status and new.core == old.core for new, old in turns)
    assert loads == 2 + len(turns)


def test_a_term_z3_refuses_leaves_the_task_usable() -> None:
    task = _task(EXAMPLES[0])
    with SolverContext() as context:
        ts = TaskSolver(task, task.outcome(), context=context)
        before = _seen(_queries(ts))
        with pytest.raises(z3.Z3Exception):
            ts.guard("(no-such-function v.none)")
        ts._answers.clear()
        assert _seen(_queries(ts)) == before
        other = _task(EXAMPLES[1])
        assert _seen(_queries(TaskSolver(other, other.outcome(), context=context)))


def test_the_kernel_does_not_keep_its_task_alive() -> None:
    task = _task(EXAMPLES[0])
    enabled = gc.isenabled()
    gc.disable()  # freed by reference counting alone, as in a batch (which pauses the collector)
    try:
        with SolverContext() as context:
            ts = TaskSolver(task, task.outcome(), context=context)
            ts.query("all", task.all_slots())
            ref = weakref.ref(ts)
            del ts
            assert ref() is None
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("shared_solver", [True, False, None])
def test_a_task_s_context_is_freed_without_the_collector(shared_solver: bool | None) -> None:
    """A kernel does not keep its context alive: with a task made without a batch (``None``:
    the task makes its own context), each context held its kernel and the kernel its
    context, and the Z3 tables (about 17 MB a context) waited for a collection: the
    fresh-solver baseline of verify_throughput.py grew to 500 MB and doubled its time."""
    task = _task(EXAMPLES[0])
    enabled = gc.isenabled()
    gc.disable()
    try:
        context = None if shared_solver is None else SolverContext(shared_solver=shared_solver)
        ts = TaskSolver(task, task.outcome(), context=context)
        ts.query("all", task.all_slots())
        ref = weakref.ref(ts.context)
        del ts, context
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_tasks_asked_in_turn_in_an_evaluation_context_keep_their_own_solvers() -> None:
    """shared_context's tasks (an evaluation's judges) interleave: each keeps a solver of
    its own, loaded once, and answers as in a batch's kernel."""
    first, second = (_task(path) for path in EXAMPLES[:2])
    with SolverContext() as batch:
        shared = [
            _seen(_queries(TaskSolver(t, t.outcome(), context=batch))) for t in (first, second)
        ]
    context = SolverContext(shared_solver=False)
    a = TaskSolver(first, first.outcome(), context=context)
    b = TaskSolver(second, second.outcome(), context=context)
    turns = [_seen(_queries(a)), _seen(_queries(b))]
    a._answers.clear()
    b._answers.clear()
    again = [
        _seen([a.query("all", first.all_slots())]),
        _seen([b.query("all", second.all_slots())]),
    ]
    assert not context.kernels  # nothing shared
    assert a._kernel is not b._kernel and a._kernel.loads == b._kernel.loads == 1
    assert turns == shared
    assert [row[0][1] for row in again] == ["sat", "sat"]
    assert shared_context().shared_solver is False


def test_a_refused_term_leaves_a_task_s_own_solver_usable() -> None:
    task = _task(EXAMPLES[0])
    ts = TaskSolver(task, task.outcome(), context=SolverContext(shared_solver=False))
    before = _seen(_queries(ts))
    with pytest.raises(z3.Z3Exception):
        ts.guard("(no-such-function v.none)")
    ts._answers.clear()
    assert _seen(_queries(ts)) == before
    assert ts._kernel.loads == 2  # loaded again, with the guards that were accepted


_SHARED = SolverContext()
"""one kernel for every example below: random tasks take turns in it, declaring the same
names (o0, f0, ...) with other types and domains"""
_EARLIER: list[tuple[TaskSolver, list[tuple[object, ...]]]] = []


@given(small_specs())
def test_tasks_taking_turns_in_one_kernel_agree_with_the_brute_force(spec: TaskSpec) -> None:
    task = check_structure(spec).task
    assert task is not None
    gold = task.outcome()
    assume(gold.kind != "ambiguous")
    ts = TaskSolver(task, gold, context=_SHARED)
    checker = Checker(ts, evidence="full")
    seen = []
    for role in task.roles:
        result = checker.hidden_query(frozenset({role}))
        brute = brute_force_differs(task, gold, task.slots_of(role))
        assert result.status == ("sat" if brute.status == "found" else "unsat"), role
        if result.status == "sat":
            assert not ts.checked_outcome(result).same_output(gold)
        seen.append((result.status, result.core))
    if _EARLIER:  # the previous task, loaded again after this one, answers as it did
        earlier, answers = _EARLIER.pop()
        earlier._answers.clear()
        again = Checker(earlier, evidence="full")
        assert [
            (r.status, r.core)
            for r in (again.hidden_query(frozenset({role})) for role in earlier.task.roles)
        ] == answers
    _EARLIER.append((ts, seen))


def test_an_exception_during_a_load_leaves_no_assertion_behind() -> None:
    """An interrupt arriving after a task's text is parsed (Python raises it between calls)
    must not leave that task's scopes open under the next load."""
    first, second = (_task(path) for path in EXAMPLES[:2])
    private = [_seen(_queries(TaskSolver(t, t.outcome()))) for t in (first, second)]
    with SolverContext() as context:
        a = TaskSolver(first, first.outcome(), context=context)
        b = TaskSolver(second, second.outcome(), context=context)
        a.query("all", first.all_slots())
        kernel = _kernel(context)
        parse = kernel.solver.from_string

        def interrupted(text: str) -> None:
            parse(text)
            if "(push 1)" in text:
                raise KeyboardInterrupt

        kernel.solver.from_string = interrupted  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt):
            b.query("all", second.all_slots())  # b's load is interrupted
        kernel.solver.from_string = parse  # type: ignore[method-assign]
        assert kernel.owner is None
        a._answers.clear()
        assert [_seen(_queries(a)), _seen(_queries(b))] == private
