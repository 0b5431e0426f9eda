"""The one watchdog thread: it interrupts a query past its wall-clock bound, stays asleep
while queries finish in time, and an interrupt that arrives late harms nothing."""

from __future__ import annotations

import z3

from uncobench_z3.solver import SolverBudget, check_assumptions, make_solver
from uncobench_z3.solver._watchdog import Watchdog

HARD = """
(declare-const a Int) (declare-const b Int) (declare-const c Int)
(assert (> a 0)) (assert (> b 0)) (assert (> c 0))
(assert (= (+ (* a a a) (* b b b)) (* c c c)))
"""
EASY = "(declare-const x Int) (declare-const p Bool) (assert (=> p (> x 1)))"


def test_a_query_past_its_bound_is_interrupted_and_unknown() -> None:
    budget = SolverBudget(timeout_ms=200, rlimit=0)  # no resource limit: only the clock stops it
    solver = make_solver(budget, tactics=True)  # the kernel alone may give up sooner
    solver.from_string(HARD)
    result, timed_out = check_assumptions(solver, [], budget)
    assert result == z3.unknown and timed_out
    # the context stays usable
    solver.reset()
    solver.from_string(EASY)
    assert check_assumptions(solver, [], budget) == (z3.sat, False)


def test_queries_that_finish_do_not_wake_the_thread() -> None:
    watchdog = Watchdog()
    context = z3.Context()
    for _ in range(1000):
        token = watchdog.arm(context, 60_000)
        assert not watchdog.disarm(token)
    # one wake-up for the first deadline ever armed; none per query after it
    assert watchdog.wakeups <= 2


def test_a_late_interrupt_does_not_poison_the_next_query() -> None:
    budget = SolverBudget()
    solver = make_solver(budget)
    solver.from_string(EASY)
    assert check_assumptions(solver, [], budget)[0] == z3.sat
    solver.ctx.interrupt()  # as if the watchdog fired just after the check returned
    p = z3.Bool("p", solver.ctx)
    assert check_assumptions(solver, [p], budget) == (z3.sat, False)
