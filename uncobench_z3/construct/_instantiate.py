"""Solver-guided instantiation (construction stage 3): values chosen by Z3, not sampled.

A *plan* fixes the shape of the answer first: which candidate is eligible (or none), and
which condition facts each other candidate fails. The plan becomes hard constraints on the
task's own SMT encoding (a condition holds / fails for a candidate). Plausible values - inside
the scenario's typical range, on round figures - enter as *soft targets*: one assumption
literal per value; when the targets contradict the plan, the unsat core names the culprits,
they are dropped and the solver chooses those values itself. One solver, a handful of checks.

Plans are chosen so that skipping roles does not pay. With an eligible candidate, each other
candidate fails exactly one condition fact, and the two facts belong to two different roles
that own no rule operand: an agent that asks only the operand owners sees three candidates
still possible (and guesses right one time in three at best). With no eligible candidate,
every role must still be necessary (jointly; see the engine): the roles are split into three
groups, one per candidate, each candidate failing a condition of every role of its group and
nothing else; two groups are a single role each (preferably roles that own no operand), which
makes those two roles necessary alone and gives the unreliable settings two roles to spread
their defects over; the rest share the third candidate's exclusion.

Rounding is then given a part to play: with an eligible candidate, one of its operands may be
nudged by a few steps (its conditions still holding) so that the rule's rounding changes the
result - or, for a half-way rounding mode, sometimes so that the result is an exact tie.

Records of the *other* contexts are then added: for the slots that decide the answer, a value
that would flip it (the April clearance that failed), elsewhere a plausible different value.
The perturbation stage proves which of them matter.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

import z3

from ..solver import (
    DEFAULT_BUDGET,
    ModelReader,
    SolverBudget,
    SolverContext,
    TaskEncoding,
    check_assumptions,
    make_solver,
    slot_var,
)
from ..spec import (
    Record,
    Slot,
    TaskSpec,
    TypedCondition,
    TypedFact,
    TypedTask,
    Value,
    check_structure,
    parse_value,
    rounding_unit,
    to_json_scalar,
)
from ._generate import Draft
from ._natural import believable_amount_term, is_money, is_signed_rule

MAX_RELAXATIONS = 12
ALTERNATIVE_SHARE = 0.35
#: Share of half-way rounding rules for which an exact tie is sought.
TIE_SHARE = 0.4
#: The largest nudge (in steps of the operand) tried to make rounding matter.
MAX_NUDGE = 12


class InstantiationError(Exception):
    """The plan cannot be realised for this draft (a reason for the pass-rate table)."""


@dataclass(frozen=True)
class Plan:
    eligible: str | None
    failing: dict[str, tuple[str, ...]]
    """Per ineligible candidate, the condition facts it fails (it passes all others)."""


def _typed(draft: Draft) -> TypedTask:
    report = check_structure(draft.spec)
    if report.task is None:
        raise InstantiationError("the draft is not structurally valid")
    return report.task


def _condition_facts_by_role(task: TypedTask) -> dict[str, list[str]]:
    by_role: dict[str, list[str]] = {}
    for cond in task.conditions:
        owner = task.facts[cond.fact].owner
        if cond.fact not in by_role.setdefault(owner, []):
            by_role[owner].append(cond.fact)
    return by_role


def _operand_roles(task: TypedTask) -> set[str]:
    return {task.facts[key].owner for key in task.rule.operands}


def make_plan(task: TypedTask, plan_none: bool, rng: random.Random) -> Plan:
    """The answer's shape, chosen so that skipping roles does not pay (module docstring)."""
    candidates = list(task.candidates)
    by_role = _condition_facts_by_role(task)
    condition_only = [r for r in by_role if r not in _operand_roles(task)]
    rng.shuffle(condition_only)
    if not plan_none:
        chosen = rng.choice(candidates)
        others = [c for c in candidates if c != chosen]
        rng.shuffle(others)
        if not condition_only:  # every condition role owns an operand: nothing to hide
            condition_facts = [c.fact for c in task.conditions]
            return Plan(chosen, {c: (rng.choice(condition_facts),) for c in others})
        # one failing fact each, of two different condition-only roles when there are two
        roles = [condition_only[i % len(condition_only)] for i in range(len(others))]
        return Plan(
            chosen, {c: (rng.choice(by_role[r]),) for c, r in zip(others, roles, strict=True)}
        )
    roles = list(by_role)
    if len(roles) < 3 or len(roles) != len(task.roles):
        raise InstantiationError("with no eligible candidate every role needs a condition")
    # two singleton groups (two roles necessary alone), condition-only roles first, and the
    # rest - operand roles included - sharing the third candidate's exclusion
    singles = condition_only[:2]
    rest = [r for r in roles if r not in singles]
    rng.shuffle(rest)
    while len(singles) < 2:
        singles.append(rest.pop())
    groups = [[singles[0]], [singles[1]], rest]
    rng.shuffle(candidates)
    failing = {
        candidate: tuple(rng.choice(by_role[role]) for role in group)
        for candidate, group in zip(candidates, groups, strict=True)
    }
    return Plan(None, failing)


def _grid(fact: TypedFact, typical: tuple[object, object] | None) -> tuple[int, int]:
    """Code range of the typical values (the whole domain when no hint applies)."""
    low, high = fact.code_range()
    if typical is None or fact.type in ("enum", "bool"):
        return low, high
    try:
        t_low = fact.code(parse_value(fact.type, typical[0]))
        t_high = fact.code(parse_value(fact.type, typical[1]))
    except (ValueError, AssertionError):
        return low, high
    assert not isinstance(t_low, bool) and not isinstance(t_high, bool)
    t_low, t_high = max(low, t_low), min(high, t_high)
    return (t_low, t_high) if t_low <= t_high else (low, high)


def _round_code(fact: TypedFact, code: int, rng: random.Random, low: int, high: int) -> int:
    """Prefer round figures: snap to a multiple of 10 or 5 steps when that stays in range."""
    if fact.type not in ("int", "decimal"):
        return code
    for unit in (10, 5, 2):
        if rng.random() < 0.6:
            snapped = round(code / unit) * unit
            if low <= snapped <= high:
                return snapped
    return code


def _target(
    fact: TypedFact,
    grid: tuple[int, int],
    rng: random.Random,
    wanted: bool | None,
    conditions: list[TypedCondition],
) -> int | bool:
    """A plausible code (from ``grid``, the fact's :func:`_grid`; a boolean's is unused),
    drawn so that the fact's conditions hold (``wanted`` True) or fail (False) when a few
    draws allow it; the solver repairs the rest."""
    best: int | bool = False
    low, high = grid
    for _ in range(24):
        if fact.type == "bool":
            code: int | bool = rng.random() < 0.5
        else:
            code = _round_code(fact, rng.randint(low, high), rng, low, high)
        best = code
        if wanted is None or all(c.holds(fact.value_of(code)) for c in conditions) == wanted:
            return code
    return best


def _alternative(
    task: TypedTask,
    slot: Slot,
    value: Value,
    want_flip: bool | None,
    rng: random.Random,
    grid: tuple[int, int],
) -> Value | None:
    """Another plausible value (near ``value``, in ``grid``: the fact's :func:`_grid`);
    ``want_flip`` asks that the fact's conditions change outcome."""
    fact = task.facts[slot[1]]
    conditions = [c for c in task.conditions if c.fact == slot[1]]
    holds_now = all(c.holds(value) for c in conditions)
    options: list[Value] = []
    if fact.type in ("bool", "enum"):
        options = [v for v in fact.domain_values() if v != value]
    else:
        low, high = grid
        span = high - low
        code = fact.code(value)
        assert not isinstance(code, bool)
        for _ in range(24):
            delta = rng.randint(1, max(1, span // 3 or 1)) * rng.choice((-1, 1))
            candidate = _round_code(fact, min(high, max(low, code + delta)), rng, low, high)
            if candidate != code:
                options.append(fact.value_of(candidate))
        if want_flip and conditions:
            d_low, d_high = fact.code_range()
            options += [fact.value_of(c) for c in _flip_codes(d_low, d_high, rng)]
    if want_flip is not None and conditions:
        options = [v for v in options if all(c.holds(v) for c in conditions) != holds_now]
    return rng.choice(options) if options else None


def _flip_codes(low: int, high: int, rng: random.Random) -> list[int]:
    """A few codes across the domain, so a flipping value exists even far from typical."""
    return sorted({rng.randint(low, high) for _ in range(24)})


class Instantiator:
    """Chooses the values of one draft with Z3."""

    def __init__(
        self,
        draft: Draft,
        budget: SolverBudget = DEFAULT_BUDGET,
        context: SolverContext | None = None,
    ) -> None:
        self.draft = draft
        self.task = _typed(draft)
        self.budget = budget
        self.context = context
        self._grids: dict[str, tuple[int, int]] = {}

    def grid(self, fact_key: str) -> tuple[int, int]:
        """The fact's :func:`_grid` (computed once: the same for every candidate); a
        boolean draws no code from a grid."""
        if fact_key not in self._grids:
            fact = self.task.facts[fact_key]
            self._grids[fact_key] = (
                (0, 1) if fact.type == "bool" else _grid(fact, self._typical(fact_key))
            )
        return self._grids[fact_key]

    def values(self, plan: Plan, rng: random.Random) -> dict[Slot, Value]:
        task = self.task
        encoding = TaskEncoding(task)
        solver = make_solver(self.budget, context=self.context)
        solver.set("core.minimize", False)  # any core will do: half of it is dropped anyway
        solver.from_string(encoding.text)
        hard = []
        for candidate in task.candidates:
            # in condition order: a set's order changes with the process's hash seed, and the
            # order of assertions changes the model (the values) the solver gives
            for fact_key in dict.fromkeys(c.fact for c in task.conditions):
                names = [f"cond.{candidate}.{c.id}" for c in task.conditions if c.fact == fact_key]
                holds = names[0] if len(names) == 1 else f"(and {' '.join(names)})"
                fails = candidate in plan.failing and fact_key in plan.failing[candidate]
                hard.append(f"(not {holds})" if fails else holds)
        if plan.eligible is not None:  # the gold amount is one a person would believe
            hard += filter(None, [believable_amount_term(task, plan.eligible)])
        solver.from_string("\n".join(f"(assert {term})" for term in hard))
        targets: dict[str, tuple[Slot, int | bool]] = {}
        lines = []
        for slot in task.all_slots():
            fact = task.facts[slot[1]]
            conditions = [c for c in task.conditions if c.fact == slot[1]]
            wanted = None
            if conditions:
                wanted = not (slot[0] in plan.failing and slot[1] in plan.failing[slot[0]])
            code = _target(fact, self.grid(slot[1]), rng, wanted, conditions)
            literal = f"t.{slot[0]}.{slot[1]}"
            value = (
                ("true" if code else "false")
                if isinstance(code, bool)
                else (str(code) if code >= 0 else f"(- {-code})")
            )
            lines.append(f"(declare-const {literal} Bool)")
            lines.append(f"(assert (=> {literal} (= {slot_var(slot)} {value})))")
            targets[literal] = (slot, code)
        solver.from_string("\n".join(lines))
        active = dict.fromkeys(targets)
        for _ in range(MAX_RELAXATIONS):
            literals = [z3.Bool(lit, solver.ctx) for lit in active]
            status = self._check(solver, literals)
            if status == z3.sat:
                return self._read(solver)
            if status != z3.unsat:
                raise InstantiationError(f"the solver gave up: {solver.reason_unknown()}")
            core = [str(lit) for lit in solver.unsat_core()]
            if not core:
                raise InstantiationError("the plan contradicts the fact domains")
            for literal in core[: max(1, len(core) // 2)]:
                active.pop(literal, None)
        if self._check(solver, []) != z3.sat:
            raise InstantiationError("the plan contradicts the fact domains")
        return self._read(solver)

    def _check(self, solver: z3.Solver, literals: list[z3.BoolRef]) -> z3.CheckSatResult:
        """``solver.check(*literals)`` under the budget; an :class:`InstantiationError` if the
        watchdog interrupted it (at its deadline Z3 can answer sat and keep no model to read)."""
        status, timed_out = check_assumptions(solver, literals, self.budget)
        if timed_out:
            raise InstantiationError(
                f"the solver gave up: the query ran past {self.budget.timeout_ms} ms"
            )
        return status

    def _typical(self, fact_key: str) -> tuple[object, object] | None:
        hint = self.draft.hints.get(fact_key)
        return hint.typical if hint else None

    def _read(self, solver: z3.Solver) -> dict[Slot, Value]:
        slots = self.task.all_slots()
        facts = self.task.facts
        codes = ModelReader(solver).read([(slot_var(s), facts[s[1]].type == "bool") for s in slots])
        return {s: facts[s[1]].value_of(c) for s, c in zip(slots, codes, strict=True)}

    def alternatives(
        self, plan: Plan, values: dict[Slot, Value], rng: random.Random
    ) -> list[Record]:
        """Records of other contexts: decisive flips where they matter, noise elsewhere."""
        task = self.task
        decisive: dict[Slot, bool] = {}
        if plan.eligible is not None:
            for cond in task.conditions:
                decisive[(plan.eligible, cond.fact)] = True
            for key in task.rule.operands:
                decisive.setdefault((plan.eligible, key), False)
        for candidate, facts in plan.failing.items():
            if len(facts) == 1:
                decisive[(candidate, facts[0])] = True
        records = []
        for slot in task.all_slots():
            fact = task.facts[slot[1]]
            if not fact.other_contexts:
                continue
            chance = 0.6 if slot in decisive else ALTERNATIVE_SHARE
            if rng.random() >= chance:
                continue
            want_flip = decisive.get(slot)
            alt = _alternative(
                task,
                slot,
                values[slot],
                want_flip if want_flip else None,
                rng,
                self.grid(slot[1]),
            )
            if alt is None or alt == values[slot]:
                continue
            context = rng.choice(fact.other_contexts)
            records.append(
                Record(candidate=slot[0], fact=slot[1], context=context, value=to_json_scalar(alt))
            )
        return records


def _rounding_shape(task: TypedTask, operands: list[Fraction]) -> str | None:
    """``"tie"``, ``"changes"``, ``"exact"`` (rounding leaves the result as it is), or None
    (no result, or a money result below one rounding unit: see :func:`believable_amount_term`)."""
    rule = task.rule
    try:
        value = rule.value(operands)
    except ZeroDivisionError:
        return None
    units = value / rounding_unit(rule.digits)
    if is_money(rule.unit) and not is_signed_rule(rule.operation, rule.label) and units < 1:
        return None
    if units.denominator == 1:
        return "exact"
    return "tie" if units.denominator == 2 else "changes"


def shape_rounding(
    task: TypedTask, plan: Plan, values: dict[Slot, Value], rng: random.Random
) -> dict[Slot, Value]:
    """Nudge one operand of the eligible candidate so that rounding changes the result (or,
    for a half-way mode and :data:`TIE_SHARE` of the rules, lands on an exact tie)."""
    chosen = plan.eligible
    if chosen is None:
        return values
    rule = task.rule
    wanted = "tie" if rule.mode.startswith("half") and rng.random() < TIE_SHARE else "changes"

    def shape(changes: dict[Slot, Value]) -> str | None:
        merged = {**values, **changes}
        operands = [Fraction(merged[(chosen, k)]) for k in rule.operands]  # type: ignore[arg-type]
        return _rounding_shape(task, operands)

    if shape({}) == wanted:
        return values
    keys = list(rule.operands)  # the order operands are tried in (not their order in the rule)
    rng.shuffle(keys)
    for key in keys:
        slot, fact = (chosen, key), task.facts[key]
        conditions = [c for c in task.conditions if c.fact == key]
        code = fact.code(values[slot])
        low, high = fact.code_range()
        assert not isinstance(code, bool)
        for distance in range(1, MAX_NUDGE + 1):
            for nudged in (code + distance, code - distance):
                if not low <= nudged <= high:
                    continue
                value = fact.value_of(nudged)
                if all(c.holds(value) for c in conditions) and shape({slot: value}) == wanted:
                    return {**values, slot: value}
    return values


def instantiate(
    draft: Draft,
    seed: int,
    attempt: int = 0,
    budget: SolverBudget = DEFAULT_BUDGET,
    context: SolverContext | None = None,
) -> TaskSpec:
    """The draft with records: a plan realised by the solver, plus other-context records.

    ``context`` is the batch's Z3 context (a private one without it): the values read from
    the model depend on what the context solved before, so a batch is fixed by its content.
    """
    rng = random.Random(f"instantiate:{seed}:{draft.spec.id}:{attempt}")
    instantiator = Instantiator(draft, budget, context)
    plan = make_plan(instantiator.task, draft.plan_none, rng)
    values = shape_rounding(instantiator.task, plan, instantiator.values(plan, rng), rng)
    records = [
        Record(candidate=c, fact=f, value=to_json_scalar(values[(c, f)]))
        for c, f in instantiator.task.all_slots()
    ]
    records += instantiator.alternatives(plan, values, rng)
    return draft.spec.model_copy(update={"records": records})
