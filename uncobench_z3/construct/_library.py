"""The scenario library: reference decision scenarios per domain, one JSON file per domain.

A scenario is a superset of a task (more roles and facts, condition templates with thresholds
to choose from, a rule template per operation); :mod:`._generate` picks a subset, and
:func:`check_library` proves every scenario and rule can yield a structurally valid spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, RootModel

from .._assets import asset_path
from ..errors import SpecReadError
from ..spec import (
    OPERATIONS,
    Candidate,
    Condition,
    Decision,
    Fact,
    NumericalRule,
    Operator,
    Role,
    TaskSpec,
    ValueParseError,
    check_structure,
    day_number,
    format_value,
    load_json,
    parse_value,
    validate_document,
)
from ..spec._model import Identifier, Scalar
from ..spec._structure import CONDITION_RANGE, MIN_CONDITION_ROLES, OPS_BY_TYPE, ROLE_RANGE
from ..spec._values import Value, parse_fraction
from ._text import question_text

#: Authoring conventions of a scenario (a task takes 5-7 roles out of these).
SCENARIO_ROLE_RANGE = (7, 9)
SCENARIO_FACT_RANGE = (10, 16)
MIN_NAMES_PER_POOL = 3

ORDERED_TYPES = ("int", "decimal", "date")
_QUESTION_FIELDS = {"rule_label", "unit"}
_TEXT_FIELDS = {"value", "low", "high"}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConditionTemplate(_Strict):
    """A condition a task may put on the fact; one of ``choices`` becomes its value."""

    op: Operator
    choices: list[Scalar | list[Scalar]] = Field(
        min_length=1,
        description="Thresholds; lists for 'in' / 'not in'; [low, high] pairs for 'between'.",
    )
    text: str | None = Field(
        default=None,
        description="Phrasing with {value} (or {low} / {high} for 'between'), written without "
        'the unit, e.g. "at least {value} years of underground hardrock experience".',
    )


class FactTemplate(Fact):
    """A spec :class:`Fact` plus what the generator needs to use it."""

    typical: list[Scalar] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="[low, high]: where instance values normally fall (int/decimal/date only).",
    )
    conditions: list[ConditionTemplate] = Field(
        default_factory=list, description="Empty for facts that are only rule operands."
    )

    def to_fact(self) -> Fact:
        return Fact.model_validate(self.model_dump(exclude={"typical", "conditions"}))


class ScenarioTemplate(_Strict):
    id: Identifier
    title: str = Field(min_length=1)
    question: str = Field(min_length=1, description="May contain {rule_label} and {unit}.")
    decision: Decision
    candidate_kind: Identifier = Field(description="A key of generators/names.json.")
    roles: list[Role] = Field(min_length=1)
    facts: list[FactTemplate] = Field(min_length=1)
    rules: list[NumericalRule] = Field(min_length=1, description="At least one per operation.")

    def fact(self, key: str) -> FactTemplate:
        for fact in self.facts:
            if fact.key == key:
                return fact
        raise KeyError(key)

    def rules_for(self, operation: str) -> list[NumericalRule]:
        return [rule for rule in self.rules if rule.operation == operation]

    def condition_facts(self, role: str) -> list[FactTemplate]:
        return [f for f in self.facts if f.owner == role and f.conditions]

    def operand_roles(self, rule: NumericalRule) -> list[str]:
        """The owners of the rule's operands, in the scenario's role order."""
        owners = {self.fact(key).owner for key in rule.operands}
        return [role.id for role in self.roles if role.id in owners]


class DomainFile(_Strict):
    """One ``generators/scenarios/<domain>.json`` file."""

    domain: Identifier = Field(description="Equal to the file name without .json.")
    display_name: str = Field(min_length=1)
    scenarios: list[ScenarioTemplate] = Field(min_length=1)


ANY_DOMAIN = "any"


class NamePool(_Strict):
    """Candidate names of one kind, and the domains whose tasks may use them."""

    domains: Literal["any"] | list[Identifier] = Field(
        description="The domains (file names of generators/scenarios/) whose scenarios may draw "
        'from this pool, or "any" (people\'s names fit every domain).'
    )
    names: list[str] = Field(min_length=1)


class NamesFile(RootModel[dict[Identifier, NamePool]]):
    """``generators/names.json``: candidate kind -> its pool."""


@dataclass(frozen=True)
class ScenarioLibrary:
    root: Path
    domains: tuple[DomainFile, ...]
    names: dict[str, tuple[str, ...]]
    sources: dict[str, str]
    """domain -> the file it was read from"""
    pool_domains: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    """candidate kind -> the domains that may use it (``None``: any domain)"""

    def fits(self, kind: str, domain: str) -> bool:
        """Whether names of ``kind`` suit a task of ``domain``."""
        allowed = self.pool_domains.get(kind)
        return allowed is None or domain in allowed

    def off_domain_names(self, domain: str, names: Sequence[str]) -> list[str]:
        """The names that come from pools of other domains only (a haulage contractor
        named in a banking task). Names from no pool (an LLM's own) are not counted."""
        kinds: dict[str, list[str]] = {}
        for kind, pool in self.names.items():
            for name in pool:
                kinds.setdefault(name, []).append(kind)
        return [
            name
            for name in names
            if name in kinds and not any(self.fits(kind, domain) for kind in kinds[name])
        ]

    @property
    def domain_names(self) -> tuple[str, ...]:
        return tuple(d.domain for d in self.domains)

    def domain(self, name: str) -> DomainFile:
        for entry in self.domains:
            if entry.domain == name:
                return entry
        raise KeyError(name)

    def scenarios(self) -> Iterator[tuple[DomainFile, ScenarioTemplate]]:
        for entry in self.domains:
            for scenario in entry.scenarios:
                yield entry, scenario


@dataclass(frozen=True)
class LibraryProblem:
    source: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.path}: {self.message}"


# -- loading ---------------------------------------------------------------------------------


def load_library(path: str | Path | None = None) -> ScenarioLibrary:
    """Read a library folder (default: the packaged ``generators/``).

    Raises :class:`SpecReadError` naming the file and JSON path for unreadable files, schema
    violations and broken references; quality checks are left to :func:`check_library`.
    """
    root = Path(path) if path is not None else asset_path("generators")
    folder = root / "scenarios"
    if not folder.is_dir():
        raise SpecReadError(str(folder), "the scenario library folder does not exist")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise SpecReadError(str(folder), "holds no <domain>.json scenario file")
    pools = _load_names(root / "names.json")
    names = {kind: tuple(pool.names) for kind, pool in pools.items()}
    domains = tuple(_load_domain(file, pools) for file in files)
    sources = {d.domain: str(file) for d, file in zip(domains, files, strict=True)}
    seen: dict[str, str] = {}
    for entry, file in zip(domains, files, strict=True):
        for i, scenario in enumerate(entry.scenarios):
            if scenario.id in seen:
                raise SpecReadError(
                    str(file),
                    f"the scenario id {scenario.id!r} is also used in {seen[scenario.id]}",
                    json_path=f"$.scenarios[{i}].id",
                )
            seen[scenario.id] = str(file)
    pool_domains = {
        kind: None if pool.domains == ANY_DOMAIN else tuple(pool.domains)
        for kind, pool in pools.items()
    }
    return ScenarioLibrary(
        root=root, domains=domains, names=names, sources=sources, pool_domains=pool_domains
    )


def _load_names(file: Path) -> dict[str, NamePool]:
    return dict(validate_document(load_json(file), NamesFile, str(file)).root)


def _load_domain(file: Path, names: dict[str, NamePool]) -> DomainFile:
    source = str(file)
    data: Any = load_json(file)
    if not isinstance(data, dict):
        raise SpecReadError(source, "a scenario file is a JSON object", json_path="$")
    entry = validate_document(data, DomainFile, source)
    if entry.domain != file.stem:
        raise SpecReadError(
            source, f"the domain {entry.domain!r} differs from the file name", json_path="$.domain"
        )
    for i, scenario in enumerate(entry.scenarios):
        _check_references(scenario, entry.domain, names, source, f"$.scenarios[{i}]")
    return entry


def _check_references(
    scenario: ScenarioTemplate,
    domain: str,
    names: dict[str, NamePool],
    source: str,
    where: str,
) -> None:
    def fail(field: str, message: str) -> NoReturn:
        raise SpecReadError(source, message, f"{where}.{field}")

    pool = names.get(scenario.candidate_kind)
    if pool is None:
        fail("candidate_kind", f"no name pool {scenario.candidate_kind!r} in names.json")
    if pool.domains != ANY_DOMAIN and domain not in pool.domains:
        fail(
            "candidate_kind",
            f"the name pool {scenario.candidate_kind!r} is for {', '.join(pool.domains)}, "
            f"not {domain}: declare the domain in names.json or choose a pool of this domain",
        )
    role_ids = [role.id for role in scenario.roles]
    keys = [fact.key for fact in scenario.facts]
    for kind, ids, path in (
        ("role id", role_ids, "roles[{}].id"),
        ("fact key", keys, "facts[{}].key"),
    ):
        for j, item in enumerate(ids):
            if item in ids[:j]:
                fail(path.format(j), f"duplicate {kind} {item!r}")
    for j, fact in enumerate(scenario.facts):
        if fact.owner not in role_ids:
            fail(f"facts[{j}].owner", f"no role has the id {fact.owner!r}")
    for j, rule in enumerate(scenario.rules):
        for k, key in enumerate(rule.operands):
            if key not in keys:
                fail(f"rules[{j}].operands[{k}]", f"no fact has the key {key!r}")


# -- assembling a spec -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChosenCondition:
    """A condition template of a fact with the value chosen from its choices."""

    fact: FactTemplate
    template: ConditionTemplate
    value: Scalar | list[Scalar]


def assemble_spec(
    *,
    spec_id: str,
    domain: str,
    scenario: ScenarioTemplate,
    rule: NumericalRule,
    conditions: Sequence[ChosenCondition],
    candidate_names: Sequence[str],
) -> TaskSpec:
    """The spec using exactly the chosen conditions' facts and the rule's operands (no records).

    Roles are exactly the owners of those facts; facts, roles and conditions keep the
    scenario's order so that specs read the same way whatever order they were chosen in.
    """
    used = {c.fact.key for c in conditions} | set(rule.operands)
    facts = [f.to_fact() for f in scenario.facts if f.key in used]
    owners = {f.owner for f in facts}
    order = {f.key: n for n, f in enumerate(scenario.facts)}
    spec_conditions: list[Condition] = []
    for chosen in sorted(conditions, key=lambda c: order[c.fact.key]):
        condition_id = chosen.fact.key
        while any(c.id == condition_id for c in spec_conditions):
            condition_id += "_2"
        spec_conditions.append(
            Condition(
                id=condition_id,
                fact=chosen.fact.key,
                op=chosen.template.op,
                value=chosen.value,
                text=condition_text(chosen),
            )
        )
    question = question_text(scenario.question, rule.label, rule.unit)
    return TaskSpec(
        id=spec_id,
        domain=domain,
        title=scenario.title,
        question=question,
        decision=scenario.decision,
        candidates=[
            Candidate(id=f"c{n}", name=name) for n, name in enumerate(candidate_names, start=1)
        ],
        roles=[role for role in scenario.roles if role.id in owners],
        facts=facts,
        conditions=spec_conditions,
        rule=rule,
    )


_OP_WORDS = {
    ">=": "at least",
    ">": "above",
    "<=": "at most",
    "<": "below",
    "==": "is",
    "!=": "is not",
    "in": "is one of",
    "not in": "is none of",
}
_DATE_OP_WORDS = {">=": "on or after", ">": "after", "<=": "on or before", "<": "before"}


def condition_text(chosen: ChosenCondition) -> str:
    """The template's phrasing with the value filled in, or a plain default phrasing."""
    fact, op, value = chosen.fact, chosen.template.op, chosen.value
    members = fact.values

    def show(raw: Scalar, unit: str | None) -> str:
        return format_value(parse_value(fact.type, raw, members), unit, fact.type)

    if chosen.template.text is not None:
        items = value if isinstance(value, list) else [value]
        fields = {
            "value": _join_or([show(v, None) for v in items]),
            "low": show(items[0], None),
            "high": show(items[-1], None),
        }
        # unknown placeholders stay as written (check_library reports them)
        return _PLACEHOLDER.sub(lambda m: fields.get(m.group(1), m.group(0)), chosen.template.text)
    if op == "between":
        assert isinstance(value, list)
        return f"{fact.label} between {show(value[0], fact.unit)} and {show(value[1], fact.unit)}"
    words = (_DATE_OP_WORDS if fact.type == "date" else {}).get(op, _OP_WORDS[op])
    if isinstance(value, list):
        return f"{fact.label} {words} " + ", ".join(show(v, fact.unit) for v in value)
    return f"{fact.label} {words} {show(value, fact.unit)}"


def _join_or(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


# -- self-check ------------------------------------------------------------------------------


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
    for name in _PLACEHOLDER.findall(scenario.question):
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
        for name in _PLACEHOLDER.findall(template.text):
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
