"""A task's encoding in an incremental solver, queried under assumptions.

The task is encoded once and parsed into a solver when first asked: its batch's shared
solver (:mod:`._kernel`; parsed again only when another task was loaded there meanwhile), or
a solver of its own in a context whose tasks are asked in turn (an evaluation's). Every check
is a ``check(assumptions)`` call that selects which facts are pinned to their recorded values
and which goal is asked for. Extra constraints (a substituted value, an interval) are added
once each behind a fresh guard literal, so they too are switched on per query, and are
parsed again with the encoding whenever it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal

import z3

from ..errors import ConsistencyError
from ..spec import Outcome, Slot, TypedTask, Value, round_fraction
from ._encoding import TaskEncoding, pin_literal, slot_var
from ._factory import DEFAULT_BUDGET, SolverBudget, SolverContext, check_asts, make_solver
from ._kernel import kernel_for
from ._model_reader import ModelReader

Status = Literal["sat", "unsat", "unknown"]


@dataclass
class QueryResult:
    """The raw outcome of one solver query."""

    name: str
    status: Status
    assumptions: list[str]
    extras: list[str] = field(default_factory=list)
    codes: dict[Slot, int | bool] | None = None
    solver_outcome: Outcome | None = None
    core: list[str] | None = None
    reason: str | None = None
    pinned: frozenset[Slot] = frozenset()
    goal: str | None = None
    implied_by: str | None = None
    """set when the answer was read off another query's answer instead of asked"""


class TaskSolver:
    """A task's encoding loaded into one Z3 solver.

    ``context`` is the batch's Z3 context (:class:`SolverContext`); without one the solver
    gets a context of its own. The solver is the context's kernel (:mod:`._kernel`), shared
    with the batch's other tasks: the encoding is loaded when first asked, and again when
    another task was loaded meanwhile. In a context made with ``shared_solver=False`` the
    task has a kernel of its own, loaded once. Verdicts are the same either way; models (and
    so witnesses) depend on what the solver answered before, as they depend on the context.
    """

    def __init__(
        self,
        task: TypedTask,
        gold: Outcome | None = None,
        budget: SolverBudget = DEFAULT_BUDGET,
        context: SolverContext | None = None,
    ) -> None:
        self.task = task
        self.gold = gold
        self.budget = budget
        self.encoding = TaskEncoding(task, gold)
        self.context = context or SolverContext()
        self._kernel = kernel_for(self.context, budget)
        self._token = object()
        """this task's name in the kernel (not the task itself: the kernel would keep it and
        its context alive in a reference cycle, freed only by the garbage collector)"""
        self._fallback: tuple[z3.Solver, ModelReader] | None = None
        self._bools: dict[str, z3.BoolRef] = {}
        self._bool_sort = z3.BoolSort(self.context.z3)
        self._ints: dict[str, z3.ArithRef] = {}
        self._asts: dict[str, z3.Ast] = {}
        self._pins = {slot: pin_literal(slot) for slot in task.all_slots()}
        self._extra_guards: dict[str, str] = {}
        self._extra_text: list[str] = []
        self._recorded: dict[Slot, int | bool] | None = None
        self.queries = 0
        """solver calls made (a query asked before is answered from memory)"""
        self._answers: dict[tuple[str, ...], QueryResult] = {}

    @property
    def solver(self) -> z3.Solver:
        """The incremental solver, with this task loaded."""
        kernel = self._kernel
        if kernel.owner is not self._token:
            kernel.load(self._token, [self.encoding.text, *self._extra_text])
        return kernel.solver

    # -- z3 handles, created once -----------------------------------------------------------
    def _bool(self, name: str) -> z3.BoolRef:
        ref = self._bools.get(name)
        if ref is None:
            # z3.Bool(name, ctx) without its per-call sort and symbol wrappers
            ctx = self.context.z3
            symbol = z3.Z3_mk_string_symbol(ctx.ref(), name)
            ast = z3.Z3_mk_const(ctx.ref(), symbol, self._bool_sort.ast)
            ref = self._bools[name] = z3.BoolRef(ast, ctx)
        return ref

    def _int(self, name: str) -> z3.ArithRef:
        ref = self._ints.get(name)
        if ref is None:
            ref = self._ints[name] = z3.Int(name, self.context.z3)
        return ref

    def _check(self, solver: z3.Solver, literals: Sequence[str]) -> tuple[z3.CheckSatResult, bool]:
        asts = self._asts
        handles = [asts.get(lit) or self._literal_ast(lit) for lit in literals]
        return check_asts(solver, handles, self.budget)

    def _fallback_solver(self) -> tuple[z3.Solver, ModelReader]:
        """Z3's default (combined) solver on the same text, for queries the incremental
        kernel leaves unknown: it tries Z3's tactics, as Z3 itself would on such an answer."""
        if self._fallback is None:
            solver = make_solver(self.budget, context=self.context, tactics=True)
            solver.from_string(self.encoding.text + "\n".join(self._extra_text))
            self._fallback = solver, ModelReader(solver)
        return self._fallback

    def _literal_ast(self, literal: str) -> z3.Ast:
        handle = self._asts[literal] = self._bool(literal).as_ast()
        return handle

    def guard(self, term: str) -> str:
        """A literal that switches on the constraint ``term`` (added once)."""
        literal = self._extra_guards.get(term)
        if literal is None:
            literal = f"q.x{len(self._extra_guards)}"
            text = f"(declare-const {literal} Bool)\n(assert (=> {literal} {term}))"
            self.solver  # noqa: B018  (loaded first: a term Z3 refuses is refused here)
            self._kernel.add(text)
            if self._fallback is not None:
                self._fallback[0].from_string(text)
            self._extra_guards[term] = literal
            self._extra_text.append(text)
        return literal

    # -- queries ------------------------------------------------------------------------------
    def query(
        self,
        name: str,
        pinned: Iterable[Slot],
        goal: str | None = None,
        extras: Sequence[str] = (),
        want_core: bool = True,
        want_model: bool = True,
    ) -> QueryResult:
        """Is there an assignment with ``pinned`` slots at their values, ``goal`` and ``extras``?

        ``want_core=False`` skips extracting (and minimising) the unsat core, the costly part of
        an unsatisfiable answer, and ``want_model=False`` skips reading the model of a
        satisfiable one, when only the status matters (search, not reporting).
        """
        pinned = list(pinned)
        pins = self._pins
        literals = [pins[slot] for slot in pinned]
        literals += [self.guard(term) for term in extras]
        if goal is not None:
            literals.append(goal)
        known = self._answers.get(tuple(literals))
        if known is not None and not (
            (want_model and known.status == "sat" and known.codes is None)
            or (want_core and known.status == "unsat" and known.core is None)
        ):
            return replace(known, name=name)  # asked before (a Mixed defect, say)
        self.queries += 1
        solver, reader = self.solver, self._kernel.reader
        status, timed_out = self._check(solver, literals)
        if status == z3.unknown and not timed_out:
            solver, reader = self._fallback_solver()
            status, timed_out = self._check(solver, literals)
        if timed_out:
            # interrupted at its deadline, Z3 can still answer sat with no model kept (the
            # model read was an internal error): a query past its bound is unknown, always
            status = z3.unknown
        result = QueryResult(
            name, _status(status), literals, list(extras), pinned=frozenset(pinned), goal=goal
        )
        if status == z3.sat:
            if want_model:
                result.codes, result.solver_outcome = self._read_model(reader, set(pinned))
        elif status == z3.unsat:
            if want_core:
                result.core = sorted(lit.decl().name() for lit in solver.unsat_core())
        elif timed_out:
            result.reason = f"timeout: the query ran past {self.budget.timeout_ms} ms"
        else:
            result.reason = solver.reason_unknown()
        if result.status != "unknown":
            self._answers[tuple(literals)] = result
        return result

    def explain(self, result: QueryResult) -> QueryResult:
        """``result`` with its evidence (the model of a sat answer, the core of an unsat one):
        the same query asked again, for a check that a verdict-only run must report."""
        if (result.status == "sat" and result.codes is not None) or (
            result.status == "unsat" and result.core is not None
        ):
            return result
        pinned = [slot for slot in self.task.all_slots() if slot in result.pinned]
        return self.query(result.name, pinned, result.goal, result.extras)

    def _read_model(
        self, reader: ModelReader, pinned: set[Slot]
    ) -> tuple[dict[Slot, int | bool], Outcome]:
        """Every slot's code (pinned slots hold their recorded value, only the others are read
        from the model) and the output as the *solver* computes it."""
        task, enc = self.task, self.encoding
        free = [slot for slot in task.all_slots() if slot not in pinned]
        names = [(slot_var(slot), task.facts[slot[1]].type == "bool") for slot in free]
        for c in task.candidates:
            names.append((f"out.{enc.eligible_name(c)}", True))
            names.append((f"out.{enc.num_name(c)}", False))
            names.append((f"out.{enc.den_name(c)}", False))
        values = reader.read(names)
        codes = dict(self._recorded_codes())
        codes.update(zip(free, values[: len(free)], strict=True))
        outputs = iter(values[len(free) :])
        terms = {c: (next(outputs), next(outputs), next(outputs)) for c in task.candidates}
        return {slot: codes[slot] for slot in task.all_slots()}, self._outcome(terms)

    def _recorded_codes(self) -> dict[Slot, int | bool]:
        """The recorded values' codes (computed when a model is first read: most proofs
        read none)."""
        if self._recorded is None:
            facts = self.task.facts
            self._recorded = {
                slot: facts[slot[1]].code(value) for slot, value in self.task.values.items()
            }
        return self._recorded

    def _outcome(self, terms: dict[str, tuple[int | bool, int | bool, int | bool]]) -> Outcome:
        """The output from the model's eligibility and rule terms per candidate."""
        eligible = tuple(c for c in self.task.candidates if terms[c][0] is True)
        if not eligible:
            return Outcome("none")
        if len(eligible) > 1:
            return Outcome("ambiguous", eligible=eligible)
        chosen = eligible[0]
        num, den = int(terms[chosen][1]), int(terms[chosen][2])
        if den <= 0:
            raise ConsistencyError(f"task {self.task.id}: rule denominator {den} is not positive")
        rule = self.task.rule
        number = round_fraction(Fraction(num, den), rule.digits, rule.mode)
        return Outcome("eligible", chosen, number, eligible)

    def values_of(
        self, result: QueryResult, slots: Iterable[Slot] | None = None
    ) -> dict[Slot, Value]:
        """The model's values (typed), for ``slots`` or for every slot."""
        assert result.codes is not None
        wanted = self.task.all_slots() if slots is None else list(slots)
        facts, recorded, codes = self.task.facts, self.task.values, result.codes
        return {
            slot: recorded[slot] if slot in result.pinned else facts[slot[1]].value_of(codes[slot])
            for slot in wanted
        }

    def checked_outcome(self, result: QueryResult) -> Outcome:
        """The witness's output, computed twice (solver model and Python); they must agree."""
        assert result.solver_outcome is not None
        python = self.task.outcome(self.values_of(result))
        if not python.same_output(result.solver_outcome) or python.eligible != (
            result.solver_outcome.eligible
        ):
            raise ConsistencyError(
                f"task {self.task.id}, query {result.name}: the solver model gives "
                f"{result.solver_outcome} but exact evaluation of its values gives {python}"
            )
        return python

    # -- certificates -------------------------------------------------------------------------
    def certificate(self, result: QueryResult, comment: str = "") -> str:
        """A standalone SMT-LIB2 file reproducing ``result`` (expected status in the header)."""
        lines = [
            f"; uncobench-z3 certificate: task {self.task.id}, query {result.name}",
            f"; expected: {result.status}",
        ]
        if comment:
            lines += [f"; {line}" for line in comment.splitlines()]
        lines.append("(set-logic ALL)")
        lines.append(self.encoding.text.rstrip("\n"))
        for term in result.extras:
            literal = self._extra_guards[term]
            lines.append(f"(declare-const {literal} Bool)")
            lines.append(f"(assert (=> {literal} {term}))")
        for literal in result.assumptions:
            lines.append(f"(assert {literal})")
        lines.append("(check-sat)")
        lines.append("(exit)")
        return "\n".join(lines) + "\n"


def _status(result: z3.CheckSatResult) -> Status:
    if result == z3.sat:
        return "sat"
    if result == z3.unsat:
        return "unsat"
    return "unknown"
