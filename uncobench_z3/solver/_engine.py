"""One incremental solver per task, queried under assumptions.

The task is encoded and parsed once; every check is a ``check(assumptions)`` call that
selects which facts are pinned to their recorded values and which goal is asked for. Extra
constraints (a substituted value, an interval) are added once each behind a fresh guard
literal, so they too are switched on per query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import z3

from ..errors import ConsistencyError
from ..spec import Outcome, Slot, TypedTask, Value, round_fraction
from ._encoding import TaskEncoding, pin_literal, slot_var
from ._factory import DEFAULT_BUDGET, SolverBudget, make_solver

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


class TaskSolver:
    """A task's encoding loaded into one Z3 solver."""

    def __init__(
        self,
        task: TypedTask,
        gold: Outcome | None = None,
        budget: SolverBudget = DEFAULT_BUDGET,
    ) -> None:
        self.task = task
        self.gold = gold
        self.encoding = TaskEncoding(task, gold)
        self.solver = make_solver(budget)
        self.solver.from_string(self.encoding.text)
        self._bools: dict[str, z3.BoolRef] = {}
        self._ints: dict[str, z3.ArithRef] = {}
        self._extra_guards: dict[str, str] = {}
        self._extra_text: list[str] = []
        self._recorded_codes = {
            slot: task.facts[slot[1]].code(value) for slot, value in task.values.items()
        }
        self.queries = 0

    # -- z3 handles, created once -----------------------------------------------------------
    def _bool(self, name: str) -> z3.BoolRef:
        ref = self._bools.get(name)
        if ref is None:
            ref = self._bools[name] = z3.Bool(name, self.solver.ctx)
        return ref

    def _int(self, name: str) -> z3.ArithRef:
        ref = self._ints.get(name)
        if ref is None:
            ref = self._ints[name] = z3.Int(name, self.solver.ctx)
        return ref

    def _check(self, literals: Sequence[str]) -> z3.CheckSatResult:
        """``Solver.check(*assumptions)`` without z3py's per-assumption casting, which costs
        more than the check itself for a small task (the literals are Bool constants already)."""
        array = (z3.Ast * len(literals))()
        for i, literal in enumerate(literals):
            array[i] = self._bool(literal).as_ast()
        ctx = self.solver.ctx.ref()
        result = z3.Z3_solver_check_assumptions(ctx, self.solver.solver, len(literals), array)
        return z3.CheckSatResult(result)

    def guard(self, term: str) -> str:
        """A literal that switches on the constraint ``term`` (added once)."""
        literal = self._extra_guards.get(term)
        if literal is None:
            literal = f"q.x{len(self._extra_guards)}"
            text = f"(declare-const {literal} Bool)\n(assert (=> {literal} {term}))"
            self.solver.from_string(text)
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
        literals = [pin_literal(slot) for slot in pinned]
        literals += [self.guard(term) for term in extras]
        if goal is not None:
            literals.append(goal)
        self.queries += 1
        status = self._check(literals)
        result = QueryResult(
            name, _status(status), literals, list(extras), pinned=frozenset(pinned)
        )
        if status == z3.sat and want_model:
            model = self.solver.model()
            result.codes = self._read_codes(model, set(pinned))
            result.solver_outcome = self._read_outcome(model)
        elif status == z3.unsat:
            if want_core:
                result.core = sorted(lit.decl().name() for lit in self.solver.unsat_core())
        else:
            result.reason = self.solver.reason_unknown()
        return result

    def _read_codes(self, model: z3.ModelRef, pinned: set[Slot]) -> dict[Slot, int | bool]:
        """Every slot's code: pinned slots hold their recorded value, the rest come from the
        model (reading a model through the Python API is the slow part of a query)."""
        codes: dict[Slot, int | bool] = {}
        for slot in self.task.all_slots():
            fact = self.task.facts[slot[1]]
            if slot in pinned:
                codes[slot] = self._recorded_codes[slot]
                continue
            var = slot_var(slot)
            if fact.type == "bool":
                codes[slot] = z3.is_true(model.eval(self._bool(var), model_completion=True))
            else:
                codes[slot] = model.eval(self._int(var), model_completion=True).as_long()
        return codes

    def _read_outcome(self, model: z3.ModelRef) -> Outcome:
        """The output as the *solver* computes it (eligibility and rule terms from the model)."""
        enc = self.encoding
        eligible = tuple(
            c
            for c in self.task.candidates
            if z3.is_true(model.eval(self._bool(f"out.{enc.eligible_name(c)}"), True))
        )
        if not eligible:
            return Outcome("none")
        if len(eligible) > 1:
            return Outcome("ambiguous", eligible=eligible)
        chosen = eligible[0]
        num = model.eval(self._int(f"out.{enc.num_name(chosen)}"), True).as_long()
        den = model.eval(self._int(f"out.{enc.den_name(chosen)}"), True).as_long()
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
