"""Procedural spec generation from the scenario library (construction stage 1, offline).

:class:`SpecGenerator` drafts specs one at a time. Each draft takes the least-used
(domain, operation) pair so far, the least-used scenario of that domain, the scenario's rule
for the operation and 5-7 conditions with chosen thresholds, each stated with the operator
the batch has used least and the rule rounded with the least-used mode (see
:mod:`._diversity`), then checks the result with :func:`check_structure`. Everything random
comes from one ``random.Random(seed)``, so a draft depends only on the seed and the sequence
of earlier ``draft`` calls.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import UncobenchError
from ..spec import OPERATIONS, NumericalRule, Operation, Problem, TaskSpec, check_structure
from ..spec._model import Scalar
from ..spec._structure import CONDITION_RANGE, MIN_CONDITION_ROLES, ROLE_RANGE
from ..spec._values import parse_fraction
from ._diversity import DiversityBalance
from ._library import (
    ChosenCondition,
    DomainFile,
    ScenarioLibrary,
    ScenarioTemplate,
    assemble_spec,
)

#: How many recent (scenario, operation, role set) combinations a new draft avoids.
RECENT_WINDOW = 20
#: Condition choices tried per scenario before falling back to a recent combination.
COMBINATION_TRIES = 4
#: Full re-draws before giving up on a (domain, operation) pair.
MAX_ATTEMPTS = 5


class DraftError(UncobenchError):
    """The library cannot yield a valid draft (a library bug: run ``check_library``)."""


@dataclass(frozen=True)
class FactHint:
    """What the instantiation stage should know about one fact of a draft."""

    typical: tuple[Scalar, Scalar] | None
    """Where values normally fall (int/decimal/date facts)."""
    conditions: tuple[str, ...] = ()
    """The texts of the draft's conditions on this fact."""


@dataclass(frozen=True)
class Draft:
    spec: TaskSpec
    scenario_id: str
    domain: str
    operation: Operation
    plan_none: bool
    """True when the task is meant to have no eligible candidate."""
    hints: dict[str, FactHint] = field(default_factory=dict)
    """Per fact key of the spec."""


@dataclass(frozen=True)
class _Selection:
    scenario: ScenarioTemplate
    rule: NumericalRule
    conditions: list[ChosenCondition]
    roles: frozenset[str]


class SpecGenerator:
    """Drafts diverse, structurally valid specs from a :class:`ScenarioLibrary`."""

    def __init__(self, library: ScenarioLibrary, seed: int) -> None:
        self.library = library
        self.seed = seed
        self.rejections: Counter[str] = Counter()
        """Structural problems found by :meth:`validate`, by problem code."""
        self.pair_use: Counter[tuple[str, Operation]] = Counter()
        self.scenario_use: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._domain_use: Counter[str] = Counter()
        self._operation_use: Counter[Operation] = Counter()
        self._recent: deque[tuple[str, str, frozenset[str]]] = deque(maxlen=RECENT_WINDOW)
        self.diversity = DiversityBalance()
        """Operators and rounding modes used so far (updated with each accepted draft)."""
        self._pairs: list[tuple[DomainFile, Operation]] = [
            (entry, operation)
            for entry in library.domains
            for operation in OPERATIONS
            if any(s.rules_for(operation) for s in entry.scenarios)
        ]
        if not self._pairs:
            raise DraftError("the scenario library has no scenario with a rule")

    @property
    def pairs(self) -> list[tuple[str, Operation]]:
        """Every (domain, operation) pair the library can draft."""
        return [(entry.domain, operation) for entry, operation in self._pairs]

    def draft(self, index: int, plan_none: bool = False) -> Draft:
        """The next draft, with spec id ``<domain>_<index:05d>`` and no records."""
        entry, operation = self._next_pair()
        problems: list[Problem] = []
        for _ in range(MAX_ATTEMPTS):
            selection = self._select(entry, operation, plan_none)
            draft = self._build(index, entry.domain, operation, selection, plan_none)
            problems = self.validate(draft)
            if not problems:
                self._record(entry.domain, operation, selection, draft.spec.rule)
                return draft
        raise DraftError(
            f"no valid draft for {entry.domain}/{operation} after {MAX_ATTEMPTS} attempts: "
            + "; ".join(str(p) for p in problems)
        )

    def validate(self, draft: Draft) -> list[Problem]:
        """The structural problems of a draft (counted in :attr:`rejections`)."""
        problems = list(check_structure(draft.spec).problems)
        if draft.plan_none:
            condition_owners = {
                fact.owner
                for fact in draft.spec.facts
                if any(c.fact == fact.key for c in draft.spec.conditions)
            }
            for j, role in enumerate(draft.spec.roles):
                if role.id not in condition_owners:
                    problems.append(
                        Problem(
                            path=f"$.roles[{j}]",
                            code="role_without_condition",
                            message=f"role {role.id!r} owns no condition fact, so it cannot "
                            "matter when no candidate is eligible",
                        )
                    )
        self.rejections.update(p.code for p in problems)
        return problems

    # -- choosing ----------------------------------------------------------------------------

    def _next_pair(self) -> tuple[DomainFile, Operation]:
        def usage(pair: tuple[DomainFile, Operation]) -> tuple[int, int, int]:
            entry, operation = pair
            return (
                self.pair_use[(entry.domain, operation)],
                self._domain_use[entry.domain],
                self._operation_use[operation],
            )

        lowest = min(usage(pair) for pair in self._pairs)
        return self._rng.choice([pair for pair in self._pairs if usage(pair) == lowest])

    def _select(self, entry: DomainFile, operation: Operation, plan_none: bool) -> _Selection:
        scenarios = [s for s in entry.scenarios if s.rules_for(operation)]
        ranked = sorted(scenarios, key=lambda s: (self.scenario_use[s.id], self._rng.random()))
        fallback: _Selection | None = None
        for scenario in ranked:
            for _ in range(COMBINATION_TRIES):
                rule = self._rng.choice(scenario.rules_for(operation))
                selection = self._select_conditions(scenario, rule, plan_none)
                if selection is None:
                    continue
                if (scenario.id, operation, selection.roles) not in self._recent:
                    return selection
                fallback = fallback or selection
        if fallback is None:
            raise DraftError(f"no scenario of {entry.domain} fits a {operation} task")
        return fallback

    def _select_conditions(
        self, scenario: ScenarioTemplate, rule: NumericalRule, plan_none: bool
    ) -> _Selection | None:
        """Roles and conditions around ``rule``; None when the scenario cannot fit the counts.

        Every role that does not own an operand gets a condition (no distractor roles). With
        ``plan_none`` operand owners get one too: when nobody is eligible the rule is never
        computed, so a role holding only operands could not be necessary.
        """
        rng = self._rng
        operand_roles = scenario.operand_roles(rule)
        with_conditions = [r.id for r in scenario.roles if scenario.condition_facts(r.id)]
        others = [r for r in with_conditions if r not in operand_roles]
        if plan_none and not set(operand_roles) <= set(with_conditions):
            return None
        low = max(ROLE_RANGE[0], len(operand_roles))
        high = min(ROLE_RANGE[1], len(operand_roles) + len(others))
        if low > high:
            return None
        extra = rng.sample(others, rng.randint(low, high) - len(operand_roles))
        must = list(extra)
        if plan_none:
            must += operand_roles
        else:
            optional = [r for r in operand_roles if r in with_conditions]
            missing = max(0, MIN_CONDITION_ROLES - len(must))
            if missing > len(optional):
                return None
            must += rng.sample(optional, missing)
        roles = set(extra) | set(operand_roles)
        pool = [f for f in scenario.facts if f.owner in roles and f.conditions]
        fewest = max(CONDITION_RANGE[0], len(must))
        most = min(CONDITION_RANGE[1], len(pool))
        if fewest > most:
            return None
        picked = [rng.choice(scenario.condition_facts(role)) for role in must]
        rest = [f for f in pool if f not in picked]
        picked += rng.sample(rest, rng.randint(fewest, most) - len(picked))
        conditions: list[ChosenCondition] = []
        for fact in picked:
            conditions.append(self.diversity.condition(fact, rng, conditions))
        return _Selection(scenario, rule, conditions, frozenset(roles))

    # -- building ----------------------------------------------------------------------------

    def _build(
        self,
        index: int,
        domain: str,
        operation: Operation,
        selection: _Selection,
        plan_none: bool,
    ) -> Draft:
        scenario = selection.scenario
        names = self._rng.sample(self.library.names[scenario.candidate_kind], 3)
        steps = [_step(scenario.fact(key).step) for key in selection.rule.operands]
        spec = assemble_spec(
            spec_id=f"{domain}_{index:05d}",
            domain=domain,
            scenario=scenario,
            rule=self.diversity.rounding(selection.rule, steps, self._rng),
            conditions=selection.conditions,
            candidate_names=names,
        )
        return Draft(
            spec=spec,
            scenario_id=scenario.id,
            domain=domain,
            operation=operation,
            plan_none=plan_none,
            hints=_hints(spec, scenario),
        )

    def _record(
        self, domain: str, operation: Operation, selection: _Selection, rule: NumericalRule
    ) -> None:
        self.diversity.record(selection.conditions, rule)
        self.pair_use[(domain, operation)] += 1
        self._domain_use[domain] += 1
        self._operation_use[operation] += 1
        self.scenario_use[selection.scenario.id] += 1
        self._recent.append((selection.scenario.id, operation, selection.roles))


def _step(raw: Scalar | None) -> Fraction:
    return parse_fraction(raw) if raw is not None else Fraction(1)


def _hints(spec: TaskSpec, scenario: ScenarioTemplate) -> dict[str, FactHint]:
    hints: dict[str, FactHint] = {}
    for fact in spec.facts:
        typical = scenario.fact(fact.key).typical
        hints[fact.key] = FactHint(
            typical=(typical[0], typical[1]) if typical else None,
            conditions=tuple(c.text or "" for c in spec.conditions if c.fact == fact.key),
        )
    return hints
