"""One incremental solver per context and budget, loaded with one task's encoding at a time.

Making a solver, its first check's setup (Z3 builds every theory and collects the problem's
features) and deleting it cost a task about as much as its own checks' search. A batch of
tasks therefore shares one solver, the context's *kernel*: a task's encoding is parsed into it
inside a scope and the scope is popped when the next task is loaded.

The scope is opened twice: once in the solver (``push``, so that popping it drops the task's
assertions and what the solver derived from them) and once in the solver's own SMT-LIB
parser (a ``(push 1)`` command before the encoding, so that popping it drops the task's
declarations and macros: the next task declares the same names again). The parser keeps the
task's declarations while it is loaded, so extra constraints (:meth:`TaskSolver.guard`) are
parsed into it with the encoding's names, as before.

Verdicts do not depend on what the kernel solved before (``sat`` and ``unsat`` are proofs
either way; only an answer at the edge of the resource limit could turn ``unknown``, as any
earlier query of the same solver could make it); models may, like a context's
(:class:`~uncobench_z3.solver.SolverContext`): they depend on the batch's content and order,
never on the worker that runs it.

A context whose tasks are asked in turn (``SolverContext(shared_solver=False)``, the
evaluation's) gives each task a kernel of its own instead: loaded once, without scopes, as a
solver of its own was before kernels.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from ._factory import SolverBudget, SolverContext, make_solver
from ._model_reader import ModelReader


class Kernel:
    """The solver of one context and budget, and the task loaded in it.

    ``shared``: the context's tasks take turns in it (each loaded inside the two scopes
    above); otherwise it is one task's own solver, loaded once without scopes.
    """

    def __init__(self, context: SolverContext, budget: SolverBudget, shared: bool = True) -> None:
        self.solver = make_solver(budget, context=context)
        self.reader = ModelReader(self.solver)
        self._context = weakref.ref(context)
        """(weakly: the context holds its kernels, and a cycle would keep the context, its
        Z3 tables of about 17 MB, until a collection; a task made without a batch's context
        made one such cycle per task)"""
        self.shared = shared
        self.owner: object | None = None
        """the task loaded now (``None``: nothing is)"""
        self.loads = 0
        """encodings loaded (a test checks that a task is loaded once however it is asked)"""

    def load(self, owner: object, texts: Sequence[str]) -> None:
        """Replace the loaded task by ``owner``'s SMT-LIB ``texts`` (its encoding, then its
        extra constraints)."""
        solver = self.solver
        try:
            if not self.shared:  # the task's own solver (emptied first if a load failed)
                solver.from_string("\n".join(texts))
            else:
                if self.owner is not None:
                    self.owner = None
                    solver.from_string("(pop 1)")  # the parser forgets the task's names
                    solver.pop()  # the solver its assertions
                solver.push()
                solver.from_string("(push 1)\n" + "\n".join(texts))
                context = self._context()
                if context is not None:
                    context.tasks += 1  # the context's tables grow with each load
            self.owner = owner
        except BaseException:
            self._reset()
            raise
        self.loads += 1

    def add(self, text: str) -> None:
        """Parse more SMT-LIB text into the loaded task (its names are known)."""
        try:
            self.solver.from_string(text)
        except BaseException:
            self._reset()
            raise

    def _reset(self) -> None:
        """Start again from an empty solver, so that the next load finds a known state: Z3
        drops its parser after an error (and with it the parser's scope), and an exception
        between the scopes (an interrupt) would leave a task's assertions below the next
        task's scope, unseen by the next load."""
        self.owner = None
        self.solver.reset()


def kernel_for(context: SolverContext, budget: SolverBudget) -> Kernel:
    """``context``'s kernel for ``budget`` (made on first use), or a new task's own kernel
    when the context's tasks do not share one (``SolverContext.shared_solver``)."""
    if not context.shared_solver:
        return Kernel(context, budget, shared=False)
    kernel = context.kernels.get(budget)
    if kernel is None:
        kernel = context.kernels[budget] = Kernel(context, budget)
    assert isinstance(kernel, Kernel)
    return kernel
