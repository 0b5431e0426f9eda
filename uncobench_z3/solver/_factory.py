"""The one place solvers are made and checked: fixed seeds, a resource limit per query, a
wall-clock bound per query from the process's watchdog, and Z3 contexts shared by batches."""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from ..errors import ConfigError
from ._watchdog import WATCHDOG

MAX_RLIMIT = 2**32 - 1
"""the largest resource limit Z3 takes (an unsigned 32-bit parameter)"""
MAX_SOLVER_SEED = 2**32 - 1
"""the largest random seed Z3 takes (an unsigned 32-bit parameter)"""
MAX_TIMEOUT_MS = int(threading.TIMEOUT_MAX) * 1000
"""the longest wall-clock bound the watchdog can wait for (``threading.TIMEOUT_MAX``)"""


@dataclass(frozen=True)
class SolverBudget:
    """Bounds of every query.

    ``rlimit`` is Z3's deterministic resource count per ``check`` (the same input stops at the
    same point on any machine), so an "unknown" caused by it is reproducible. ``timeout_ms``
    is a wall-clock bound per ``check``, enforced by one watchdog thread per process (see
    :mod:`._watchdog`); an unknown caused by it may not be reproducible. ``timeout_ms=0``
    turns the watchdog off, ``rlimit=0`` the resource limit. Z3 reads ``rlimit`` and ``seed``
    as unsigned 32-bit numbers: larger ones are refused rather than wrapped around.
    """

    timeout_ms: int = 2000
    rlimit: int = 50_000_000
    seed: int = 0

    def __post_init__(self) -> None:
        # Z3 reads rlimit and the seed as unsigned 32-bit numbers: a larger one wraps around
        # silently (2**32 + 1 would become a limit of 1, every check unknown)
        if not 0 <= self.rlimit <= MAX_RLIMIT:  # (0: no resource limit, for the library)
            raise ConfigError(f"--rlimit must lie between 1 and {MAX_RLIMIT}, not {self.rlimit}")
        if not 0 <= self.seed <= MAX_SOLVER_SEED:
            raise ConfigError(
                f"the solver seed must lie between 0 and {MAX_SOLVER_SEED}, not {self.seed}"
            )
        # the watchdog sleeps until a deadline; the platform cannot wait longer than this
        if not 0 <= self.timeout_ms <= MAX_TIMEOUT_MS:
            raise ConfigError(
                f"--timeout-ms must lie between 0 and {MAX_TIMEOUT_MS}, not {self.timeout_ms}"
            )


DEFAULT_BUDGET = SolverBudget()


class SolverContext:
    """One Z3 context shared by a fixed batch of tasks (a build chunk, a slice of a benchmark).

    A context of its own costs a task more than a millisecond (its creation and the first
    solver in it). Solver models depend on everything their context solved before, so a
    batch must be fixed by its *content* (the chunk of a build, a fixed number of groups of a
    benchmark), never by the worker that happens to run it: then witnesses and the values
    the instantiation reads from models depend on the batch alone, whatever the number of
    workers. Verdicts never depend on it. A context is used by one thread at a time.

    ``shared_solver``: the tasks of the batch share one incremental solver per budget
    (:mod:`._kernel`), each loaded into it when asked. That suits tasks asked one after
    another (a build chunk, a slice of a benchmark); tasks asked in turn (an evaluation's
    episodes, whose scoring interleaves) would load their encoding again at almost every
    query, so a context made with ``shared_solver=False`` gives each task a solver of its
    own, loaded once.
    """

    def __init__(self, shared_solver: bool = True) -> None:
        self.z3 = z3.Context()
        self.shared_solver = shared_solver
        self.tasks = 0
        """solvers made in this context, and encodings loaded into a shared solver (for
        :func:`shared_context`'s renewal)"""
        self.kernels: dict[SolverBudget, object] = {}
        """the incremental solver each budget's tasks share (``_kernel.Kernel``)"""
        self._collecting = False
        self.params: dict[tuple[SolverBudget, bool], z3.ParamsRef] = {}
        """:func:`solver_params` of this context, built once per budget and solver kind"""

    def __enter__(self) -> SolverContext:
        """Run a batch with Python's cyclic garbage collector paused.

        Z3 terms that end up in a reference cycle are then released after the batch, not at
        moments that depend on the process's allocation history (which differs between a
        worker and the main process, or a worker's first chunk and its tenth): Z3 reuses the
        ids of released terms, and term ids can change later models. It also saves the
        collector's passes, several percent of a build's CPU time.
        """
        self._collecting = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        # The batch is over: its tasks' shared solvers go now, not whenever the context does.
        self.kernels.clear()
        if self._collecting:
            gc.enable()


KERNEL_PARAMS = {
    "smt.arith.solver": 2,
    "smt.relevancy": 0,
    "smt.propagate_values": False,
}
"""Settings of the incremental kernel for these small, bounded integer problems."""

_LOCAL = threading.local()
SHARED_CONTEXT_TASKS = 500


def shared_context() -> SolverContext:
    """This thread's long-lived context, for callers that read verdicts only (no model
    reaches their output, so the history of the context does not matter). Renewed after
    ``SHARED_CONTEXT_TASKS`` solvers so that its tables do not grow without bound.

    Its callers (an evaluation's judges) ask their tasks in turn, so each task has a solver
    of its own (``shared_solver=False``): with one solver shared, 300 groups played with
    jittered agent latencies at concurrency 64 loaded their encodings 830 times, not 300."""
    context: SolverContext | None = getattr(_LOCAL, "context", None)
    if context is None or context.tasks >= SHARED_CONTEXT_TASKS:
        context = _LOCAL.context = SolverContext(shared_solver=False)
    return context


def make_solver(
    budget: SolverBudget = DEFAULT_BUDGET,
    fresh_context: bool = True,
    context: SolverContext | None = None,
    tactics: bool = False,
) -> z3.Solver:
    """A solver with the budget's seed and resource limit, in ``context``.

    Without a context it gets a Z3 context of its own (``fresh_context``, the default) or
    z3py's process-wide one. The solver is Z3's incremental SMT kernel (what Z3's default
    solver uses for queries under assumptions, without the tactic-based solver it keeps
    beside it); ``tactics=True`` gives Z3's default combined solver, which can fall back on
    tactics when the kernel answers unknown. Check it with :func:`check_assumptions`, which
    applies the budget's wall-clock bound.
    """
    if context is not None:
        context.tasks += 1
        ctx = context.z3
        params = context.params.get((budget, tactics))
        if params is None:
            params = context.params[(budget, tactics)] = solver_params(budget, ctx, tactics)
    else:
        ctx = z3.Context() if fresh_context else z3.main_ctx()
        params = solver_params(budget, ctx, tactics)
    solver = z3.Solver(ctx=ctx) if tactics else z3.SimpleSolver(ctx=ctx)
    # One call with every setting: z3py's ``set`` builds a parameter object per call, which
    # cost more than a small check. The solver ends with the same settings either way.
    z3.Z3_solver_set_params(ctx.ref(), solver.solver, params.params)
    return solver


def solver_params(budget: SolverBudget, ctx: z3.Context, tactics: bool) -> z3.ParamsRef:
    """The settings of :func:`make_solver`'s solvers, as one Z3 parameter object."""
    params = z3.ParamsRef(ctx)
    params.set("random_seed", budget.seed)
    params.set("rlimit", budget.rlimit)
    # Z3 would catch Ctrl-C during a check and answer "unknown" (a wrong verdict, silently
    # stored by a build); without its handler the interrupt reaches Python after the check.
    params.set("ctrl_c", False)
    params.set("core.minimize", True)
    if not tactics:
        for key, value in KERNEL_PARAMS.items():
            params.set(key, value)
    return params


def check_assumptions(
    solver: z3.Solver, literals: Sequence[z3.BoolRef], budget: SolverBudget
) -> tuple[z3.CheckSatResult, bool]:
    """``solver.check(*literals)`` under the budget's wall-clock bound.

    Returns the result and whether the watchdog interrupted the query (then ``unknown``).
    """
    return check_asts(solver, [literal.as_ast() for literal in literals], budget)


def check_asts(
    solver: z3.Solver, asts: Sequence[z3.Ast], budget: SolverBudget
) -> tuple[z3.CheckSatResult, bool]:
    """:func:`check_assumptions` on the literals' C handles, without z3py's per-assumption
    casting (which costs more than a small check)."""
    array = (z3.Ast * len(asts))(*asts)
    ctx = solver.ctx
    token = WATCHDOG.arm(ctx, budget.timeout_ms) if budget.timeout_ms > 0 else None
    try:
        result = z3.Z3_solver_check_assumptions(ctx.ref(), solver.solver, len(asts), array)
    finally:
        timed_out = WATCHDOG.disarm(token) if token is not None else False
    return z3.CheckSatResult(result), timed_out
