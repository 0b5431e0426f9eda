"""The scenario library: reference decision scenarios per domain, one JSON file per domain.

A scenario is a superset of a task (more roles and facts, condition templates with thresholds
to choose from, a rule template per operation); :mod:`._generate` picks a subset, and
:func:`._library_check.check_library` proves every scenario and rule can yield a structurally
valid spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, RootModel

from .._assets import asset_path
from ..errors import SpecReadError
from ..spec import (
    Candidate,
    Condition,
    Decision,
    Fact,
    NumericalRule,
    Operator,
    Role,
    TaskSpec,
    format_value,
    load_json,
    parse_value,
    validate_document,
)
from ..spec._model import Identifier, Scalar
from ._text import question_text

#: A ``{field}`` placeholder of a question or condition text.
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


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
        return PLACEHOLDER.sub(lambda m: fields.get(m.group(1), m.group(0)), chosen.template.text)
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
