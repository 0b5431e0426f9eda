"""The one place solvers are made: fixed seeds, a timeout and a resource limit per query."""

from __future__ import annotations

from dataclasses import dataclass

import z3


@dataclass(frozen=True)
class SolverBudget:
    """Bounds of every query.

    ``timeout_ms`` is wall-clock per ``check``; ``rlimit`` is Z3's deterministic resource
    count per ``check`` (the same input stops at the same point on any machine), so a verdict
    of "unknown" caused by the rlimit is reproducible, one caused by the timeout may not be.
    """

    timeout_ms: int = 2000
    rlimit: int = 50_000_000
    seed: int = 0


DEFAULT_BUDGET = SolverBudget()


def make_solver(budget: SolverBudget = DEFAULT_BUDGET, fresh_context: bool = True) -> z3.Solver:
    """A solver with the budget's seed, timeout and resource limit.

    By default it gets a Z3 context of its own: models depend on everything a context has
    solved before, so sharing the process-wide context would make witnesses (and the values
    the instantiation reads from models) depend on the order tasks happen to run in - one
    worker or two, resumed or not. A private context costs a few milliseconds per task.
    """
    solver = z3.Solver(ctx=z3.Context()) if fresh_context else z3.Solver()
    solver.set("random_seed", budget.seed)
    solver.set("timeout", budget.timeout_ms)
    solver.set("rlimit", budget.rlimit)
    solver.set("core.minimize", True)
    return solver
