"""The scenario library's self-check: :func:`check_library` proves that every scenario and
every rule template of a loaded library can yield a structurally valid spec, and that the
authoring conventions hold (sizes, thresholds inside the domain and the typical range, steps).

Apart from :mod:`._library`, which loads the library and assembles specs from it: the build
only loads and assembles; this check runs in the library's tests, and by hand after an edit
(``docs/build.md``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from ..spec import (
    OPERATIONS,
    NumericalRule,
    ValueParseError,
    check_structure,
    day_number,
    parse_value,
)
from ..spec._model import Scalar
from ..spec._structure import CONDITION_RANGE, MIN_CONDITION_ROLES, OPS_BY_TYPE, ROLE_RANGE
from ..spec._values import Value, parse_fraction
from ._library import (
    PLACEHOLDER,
    ChosenCondition,
    ConditionTemplate,
    FactTemplate,
    ScenarioLibrary,
    ScenarioTemplate,
    assemble_spec,
)

#: Authoring conventions of a scenario (a task takes 5-7 roles out of these).
SCENARIO_ROLE_RANGE = (7, 9)
SCENARIO_FACT_RANGE = (10, 16)
MIN_NAMES_PER_POOL = 3

ORDERED_TYPES = ("int", "decimal", "date")
_QUESTION_FIELDS = {"rule_label", "unit"}
_TEXT_FIELDS = {"value", "low", "high"}


@dataclass(frozen=True)
class LibraryProblem:
    """One problem :func:`check_library` found: the file, the JSON path in it, what is wrong."""

    source: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.path}: {self.message}"


def check_library(library: ScenarioLibrary) -> list[LibraryProblem]:
    """Every quality problem of the library, each with its file and JSON path.

    Checks the authoring conventions (sizes, every operation, every role owning a condition,
    thresholds strictly inside the domain and within the typical range) and, for every
    scenario and every rule template, builds a spec and runs :func:`check_structure` on it.
    """
    problems: list[LibraryProblem] = []
    names_file = str(library.root / "names.json")
    for kind, pool in library.names.items():
        if len(set(pool)) != len(pool) or len(pool) < MIN_NAMES_PER_POOL:
            message = f"needs {MIN_NAMES_PER_POOL}+ names, none listed twice"
            problems.append(LibraryProblem(names_file, f"$.{kind}", message))
    for entry in library.domains:
        source = library.sources[entry.domain]
        for i, scenario in enumerate(entry.scenarios):
            where = f"$.scenarios[{i}]"
            found = [
                *_check_scenario_shape(scenario, where),
                *_check_scenario_facts(scenario, where),
                *_check_scenario_rules(entry.domain, scenario, library, where),
            ]
            problems.extend(LibraryProblem(source, path, msg) for path, msg in found)
    return problems


def _check_scenario_shape(scenario: ScenarioTemplate, where: str) -> Iterator[tuple[str, str]]:
    low, high = SCENARIO_ROLE_RANGE
    if not low <= len(scenario.roles) <= high:
        yield f"{where}.roles", f"a scenario has {low}-{high} roles, found {len(scenario.roles)}"
    low, high = SCENARIO_FACT_RANGE
    if not low <= len(scenario.facts) <= high:
        yield f"{where}.facts", f"a scenario has {low}-{high} facts, found {len(scenario.facts)}"
    for j, role in enumerate(scenario.roles):
        if not scenario.condition_facts(role.id):
            yield f"{where}.roles[{j}]", f"role {role.id!r} owns no fact with conditions"
    for operation in OPERATIONS:
        if not scenario.rules_for(operation):
            yield f"{where}.rules", f"no rule template for {operation}"
    for name in PLACEHOLDER.findall(scenario.question):
        if name not in _QUESTION_FIELDS:
            yield f"{where}.question", f"unknown placeholder {{{name}}}"


def _check_scenario_facts(scenario: ScenarioTemplate, where: str) -> Iterator[tuple[str, str]]:
    for j, fact in enumerate(scenario.facts):
        path = f"{where}.facts[{j}]"
        ordered = fact.type in ORDERED_TYPES
        try:
            low = _ordered(fact, fact.min) if ordered else None
            high = _ordered(fact, fact.max) if ordered else None
            typical = [_ordered(fact, v) for v in fact.typical or []] if ordered else []
        except ValueParseError as exc:
            yield path, str(exc)
            continue  # check_structure reports the details on the built spec
        if ordered and not typical:
            yield f"{path}.typical", f"a {fact.type} fact needs a typical [low, high] range"
        elif not ordered and fact.typical is not None:
            yield f"{path}.typical", f"a {fact.type} fact has no typical range"
        if typical and low is not None and high is not None:
            if not low <= typical[0] <= typical[1] <= high:
                yield f"{path}.typical", "needs min <= low <= high <= max"
            elif any(not _on_step(fact, t) for t in typical):
                yield f"{path}.typical", f"bounds must be multiples of the step {fact.step}"
        for k, template in enumerate(fact.conditions):
            for message in _condition_problems(fact, template, low, high, typical):
                yield f"{path}.conditions[{k}]", message


def _ordered(fact: FactTemplate, raw: Scalar | None) -> Fraction:
    if raw is None:
        raise ValueParseError(f"a {fact.type} fact needs min and max")
    value = parse_value(fact.type, raw)
    if isinstance(value, bool | str):
        raise ValueParseError(f"{raw!r} is not ordered")
    if isinstance(value, int | Fraction):
        return Fraction(value)
    return Fraction(day_number(value))


def _on_step(fact: FactTemplate, value: Fraction) -> bool:
    if fact.type == "date":
        return True
    step = parse_fraction(fact.step) if fact.step is not None else Fraction(1)
    return (value / step).denominator == 1


def _condition_problems(
    fact: FactTemplate,
    template: ConditionTemplate,
    low: Fraction | None,
    high: Fraction | None,
    typical: list[Fraction],
) -> Iterator[str]:
    if template.op not in OPS_BY_TYPE[fact.type]:
        yield f"'{template.op}' does not apply to a {fact.type} fact"
        return
    if template.text is not None:
        for name in PLACEHOLDER.findall(template.text):
            if name not in _TEXT_FIELDS:
                yield f"unknown placeholder {{{name}}} in the text"
    listed = template.op in ("in", "not in", "between")
    for n, choice in enumerate(template.choices):
        label = f"choice {n} ({choice})"
        if listed != isinstance(choice, list):
            yield f"{label}: '{template.op}' takes {'a list' if listed else 'a single value'}"
            continue
        items = choice if isinstance(choice, list) else [choice]
        try:
            values = [parse_value(fact.type, raw, fact.values) for raw in items]
        except ValueParseError as exc:
            yield f"{label}: {exc}"
            continue
        yield from (f"{label}: {m}" for m in _choice_problems(fact, template.op, values))
        if fact.type in ORDERED_TYPES and low is not None and high is not None:
            numbers = [_ordered(fact, raw) for raw in items]
            if template.op == "between" and (len(numbers) != 2 or numbers[0] > numbers[1]):
                yield f"{label}: 'between' takes [low, high] with low <= high"
            elif not all(low < x < high for x in numbers):
                yield f"{label}: thresholds must lie strictly inside [{fact.min}, {fact.max}]"
            elif typical and not all(typical[0] <= x <= typical[1] for x in numbers):
                yield f"{label}: thresholds must lie within the typical range {fact.typical}"
            elif not all(_on_step(fact, x) for x in numbers):
                yield f"{label}: thresholds must be multiples of the step {fact.step}"


def _choice_problems(fact: FactTemplate, op: str, values: list[Value]) -> Iterator[str]:
    if op not in ("in", "not in"):
        return
    if len(set(values)) != len(values):
        yield "a value is listed twice"
    if not values or (fact.type == "enum" and len(set(values)) >= len(fact.values or [])):
        yield f"'{op}' needs a non-empty, proper subset of the values"


def _check_scenario_rules(
    domain: str, scenario: ScenarioTemplate, library: ScenarioLibrary, where: str
) -> Iterator[tuple[str, str]]:
    names = library.names[scenario.candidate_kind][:3]
    for j, rule in enumerate(scenario.rules):
        path = f"{where}.rules[{j}]"
        try:
            conditions = reference_conditions(scenario, rule)
        except ValueError as exc:
            yield path, str(exc)
            continue
        spec = assemble_spec(
            spec_id=f"{scenario.id}_check",
            domain=domain,
            scenario=scenario,
            rule=rule,
            conditions=conditions,
            candidate_names=names,
        )
        for problem in check_structure(spec).problems:
            yield path, f"the built spec fails at {problem.path}: {problem.message}"


def reference_conditions(scenario: ScenarioTemplate, rule: NumericalRule) -> list[ChosenCondition]:
    """A plain, deterministic condition choice for ``rule``: the smallest admissible task.

    The operand owners plus the next roles in order up to the minimum role count, each with a
    condition on its first condition fact, topped up to the minimum condition count.
    """
    roles = scenario.operand_roles(rule)
    for role in scenario.roles:
        if len(roles) >= max(ROLE_RANGE[0], MIN_CONDITION_ROLES):
            break
        if role.id not in roles and scenario.condition_facts(role.id):
            roles.append(role.id)
    pool = [f for f in scenario.facts if f.owner in roles and f.conditions]
    firsts = [facts[0] for r in roles if (facts := scenario.condition_facts(r))]
    if len(firsts) < MIN_CONDITION_ROLES or len(roles) > ROLE_RANGE[1]:
        raise ValueError("too few roles with condition facts for a task around this rule")
    chosen = firsts + [f for f in pool if f not in firsts][: CONDITION_RANGE[0] - len(firsts)]
    if len(chosen) < CONDITION_RANGE[0]:
        raise ValueError("too few condition facts for a task around this rule")
    return [ChosenCondition(f, f.conditions[0], f.conditions[0].choices[0]) for f in chosen]
