"""Structural validation: every problem of a spec at once, each with its JSON path.

These are the programmatic checks of the construction pipeline's stage 2 (counts, role
spread, references, domains, units, denominators) and of the instance values. A spec that
passes becomes a :class:`TypedTask`; one that fails gets the list of problems, which the
generator can receive verbatim for its single repair attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ._model import Condition, Fact, TaskSpec
from ._problems import Collector, Problem, duplicates, order_key
from ._rule_checks import check_rule
from ._typed import Slot, TypedCondition, TypedFact, TypedTask
from ._values import INT_OR_FRACTION, Value, ValueParseError, parse_fraction, parse_value

CANDIDATE_COUNT = 3
ROLE_RANGE = (5, 7)
CONDITION_RANGE = (5, 7)
MIN_CONDITION_ROLES = 4

ORDERED_OPS = (">=", ">", "<=", "<", "==", "!=", "between")
OPS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "int": (*ORDERED_OPS, "in", "not in"),
    "decimal": ORDERED_OPS,
    "date": ORDERED_OPS,
    "enum": ("==", "!=", "in", "not in"),
    "bool": ("==", "!="),
}


@dataclass
class StructureReport:
    problems: list[Problem]
    task: TypedTask | None

    @property
    def ok(self) -> bool:
        return not self.problems


def check_structure(spec: TaskSpec) -> StructureReport:
    """Run every structural check; build the typed task when there is no problem."""
    out = Collector()
    _check_counts(spec, out)
    facts = _check_facts(spec, out)
    conditions = _check_conditions(spec, facts, out)
    rule = check_rule(spec, facts, out)
    values, alternatives = _check_records(spec, facts, out)
    if out.problems or rule is None:
        return StructureReport(out.problems, None)
    task = TypedTask(
        spec=spec,
        candidates=tuple(c.id for c in spec.candidates),
        roles=tuple(r.id for r in spec.roles),
        facts=facts,
        conditions=tuple(conditions),
        rule=rule,
        values=values,
        alternatives=alternatives,
    )
    return StructureReport([], task)


def _check_counts(spec: TaskSpec, out: Collector) -> None:
    if len(spec.candidates) != CANDIDATE_COUNT:
        out.add(
            "$.candidates",
            "candidate_count",
            f"a task has exactly {CANDIDATE_COUNT} candidates, found {len(spec.candidates)}",
        )
    low, high = ROLE_RANGE
    if not low <= len(spec.roles) <= high:
        out.add("$.roles", "role_count", f"a task has {low}-{high} roles, found {len(spec.roles)}")
    low, high = CONDITION_RANGE
    if not low <= len(spec.conditions) <= high:
        out.add(
            "$.conditions",
            "condition_count",
            f"a task has {low}-{high} conditions, found {len(spec.conditions)}",
        )
    for name, ids in (
        ("candidates", [c.id for c in spec.candidates]),
        ("roles", [r.id for r in spec.roles]),
        ("conditions", [c.id for c in spec.conditions]),
    ):
        for dup in sorted(duplicates(ids)):
            out.add(f"$.{name}", "duplicate_id", f"the id {dup!r} is used more than once")
    for dup in sorted(duplicates(f.key for f in spec.facts)):
        out.add("$.facts", "duplicate_id", f"the fact key {dup!r} is used more than once")
    names = [c.name for c in spec.candidates]
    for dup in sorted(duplicates(names)):
        out.add("$.candidates", "duplicate_name", f"two candidates are both called {dup!r}")
    if spec.decision.positive.strip().lower() == spec.decision.negative.strip().lower():
        out.add("$.decision", "decision_words", "the positive and negative decisions are equal")


def _parse_bound(fact: Fact, raw: object, path: str, out: Collector) -> Value | None:
    try:
        return parse_value(fact.type, raw)
    except ValueParseError as exc:
        out.add(path, "bad_value", str(exc))
        return None


def _check_facts(spec: TaskSpec, out: Collector) -> dict[str, TypedFact]:
    role_ids = {r.id for r in spec.roles}
    typed: dict[str, TypedFact] = {}
    for i, fact in enumerate(spec.facts):
        path = f"$.facts[{i}]"
        problems_before = len(out.problems)
        if fact.owner not in role_ids:
            out.add(f"{path}.owner", "unknown_reference", f"no role has the id {fact.owner!r}")
        if fact.context in fact.other_contexts:
            out.add(
                f"{path}.other_contexts",
                "context_clash",
                f"the required context {fact.context!r} is also listed as another context",
            )
        for dup in sorted(duplicates(fact.other_contexts)):
            out.add(f"{path}.other_contexts", "duplicate_id", f"{dup!r} is listed twice")
        low = high = None
        step = Fraction(1)
        members: tuple[str, ...] = ()
        if fact.type in ("int", "decimal", "date"):
            if fact.min is None or fact.max is None:
                out.add(path, "missing_domain", f"a {fact.type} fact needs both min and max")
            else:
                low = _parse_bound(fact, fact.min, f"{path}.min", out)
                high = _parse_bound(fact, fact.max, f"{path}.max", out)
            if fact.values is not None:
                out.add(f"{path}.values", "misplaced_field", "only enum facts list values")
            if fact.type == "date":
                if fact.step is not None:
                    out.add(f"{path}.step", "misplaced_field", "dates have a resolution of one day")
            elif fact.step is None and fact.type == "decimal":
                out.add(
                    f"{path}.step", "missing_domain", "a decimal fact needs a step (its resolution)"
                )
            elif fact.step is not None:
                try:
                    step = parse_fraction(fact.step)
                except ValueParseError as exc:
                    out.add(f"{path}.step", "bad_value", str(exc))
                if step <= 0:
                    out.add(f"{path}.step", "bad_domain", "the step must be positive")
                    step = Fraction(1)
                if fact.type == "int" and step.denominator != 1:
                    out.add(f"{path}.step", "bad_domain", "an int fact needs an integer step")
            if low is not None and high is not None:
                if order_key(low) > order_key(high):
                    out.add(path, "bad_domain", f"min {fact.min} is above max {fact.max}")
                if fact.type != "date":
                    for bound, raw, name in ((low, fact.min, "min"), (high, fact.max, "max")):
                        assert isinstance(bound, INT_OR_FRACTION)
                        # bound / step is whole, in integers (no Fraction division)
                        whole = bound.numerator * step.denominator
                        if whole % (bound.denominator * step.numerator):
                            out.add(
                                f"{path}.{name}",
                                "bad_domain",
                                f"{raw} is not a multiple of the step {fact.step}",
                            )
        elif fact.type == "enum":
            if not fact.values or len(fact.values) < 2:
                out.add(f"{path}.values", "missing_domain", "an enum fact needs at least 2 values")
            else:
                members = tuple(fact.values)
                for dup in sorted(duplicates(members)):
                    out.add(f"{path}.values", "duplicate_id", f"{dup!r} is listed twice")
            for name in ("min", "max", "step"):
                if getattr(fact, name) is not None:
                    out.add(
                        f"{path}.{name}", "misplaced_field", "enum facts have no numeric domain"
                    )
        else:  # bool
            for name in ("min", "max", "step", "values"):
                if getattr(fact, name) is not None:
                    out.add(f"{path}.{name}", "misplaced_field", "boolean facts have no domain")
        if len(out.problems) == problems_before and fact.key not in typed:
            typed[fact.key] = TypedFact(
                key=fact.key,
                owner=fact.owner,
                label=fact.label,
                type=fact.type,
                unit=fact.unit,
                context=fact.context,
                other_contexts=tuple(fact.other_contexts),
                low=low,
                high=high,
                step=step,
                members=members,
                synonyms=tuple(fact.synonyms or ()),
            )
    owners = {f.owner for f in spec.facts}
    for j, role in enumerate(spec.roles):
        if role.id not in owners:
            out.add(
                f"$.roles[{j}]",
                "role_without_facts",
                f"role {role.id!r} owns no fact, so it can never be necessary",
            )
    return typed


def _typed_operand(
    fact: TypedFact, cond: Condition, path: str, out: Collector
) -> Value | tuple[Value, ...] | None:
    members = list(fact.members) if fact.type == "enum" else None

    def one(raw: object, where: str) -> Value | None:
        try:
            value = parse_value(fact.type, raw, members)
        except ValueParseError as exc:
            out.add(where, "bad_value", f"for fact {fact.key!r} ({fact.type}): {exc}")
            return None
        return value

    if cond.op in ("in", "not in", "between"):
        if not isinstance(cond.value, list):
            out.add(f"{path}.value", "bad_value", f"'{cond.op}' needs a list of values")
            return None
        if cond.op == "between" and len(cond.value) != 2:
            out.add(f"{path}.value", "bad_value", "'between' needs [low, high]")
            return None
        if cond.op != "between" and not cond.value:
            out.add(f"{path}.value", "bad_value", f"'{cond.op}' needs at least one value")
            return None
        items = [one(raw, f"{path}.value[{k}]") for k, raw in enumerate(cond.value)]
        if any(item is None for item in items):
            return None
        typed_items = tuple(item for item in items if item is not None)
        if cond.op == "between" and order_key(typed_items[0]) > order_key(typed_items[1]):
            out.add(f"{path}.value", "bad_value", "'between' needs low <= high")
            return None
        return typed_items
    if isinstance(cond.value, list):
        out.add(f"{path}.value", "bad_value", f"'{cond.op}' compares with a single value")
        return None
    return one(cond.value, f"{path}.value")


def _check_conditions(
    spec: TaskSpec, facts: dict[str, TypedFact], out: Collector
) -> list[TypedCondition]:
    declared = {f.key: f for f in spec.facts}
    typed: list[TypedCondition] = []
    condition_roles: set[str] = set()
    for i, cond in enumerate(spec.conditions):
        path = f"$.conditions[{i}]"
        if cond.fact not in declared:
            out.add(f"{path}.fact", "unknown_reference", f"no fact has the key {cond.fact!r}")
            continue
        condition_roles.add(declared[cond.fact].owner)
        fact = facts.get(cond.fact)
        if fact is None:
            continue  # the fact itself is broken and already reported
        if cond.op not in OPS_BY_TYPE[fact.type]:
            out.add(
                f"{path}.op",
                "bad_operator",
                f"'{cond.op}' does not apply to a {fact.type} fact "
                f"(allowed: {', '.join(OPS_BY_TYPE[fact.type])})",
            )
            continue
        operand = _typed_operand(fact, cond, path, out)
        if operand is None:
            continue
        typed.append(TypedCondition(cond.id, cond.fact, cond.op, operand, cond.text))
    if len(condition_roles) < MIN_CONDITION_ROLES:
        out.add(
            "$.conditions",
            "condition_roles",
            f"conditions must read facts of at least {MIN_CONDITION_ROLES} roles, "
            f"they read {len(condition_roles)} ({', '.join(sorted(condition_roles))})",
        )
    return typed


def _check_records(
    spec: TaskSpec, facts: dict[str, TypedFact], out: Collector
) -> tuple[dict[Slot, Value], dict[Slot, dict[str, Value]]]:
    values: dict[Slot, Value] = {}
    alternatives: dict[Slot, dict[str, Value]] = {}
    if not spec.records:
        return values, alternatives
    candidate_ids = {c.id for c in spec.candidates}
    declared = {f.key: f for f in spec.facts}
    present: set[Slot] = set()  # slots with a required-context record, valid or not
    members = {key: list(fact.members) or None for key, fact in facts.items()}  # once a fact
    for i, record in enumerate(spec.records):
        path = f"$.records[{i}]"
        if record.candidate not in candidate_ids:
            out.add(
                f"{path}.candidate",
                "unknown_reference",
                f"no candidate has the id {record.candidate!r}",
            )
            continue
        if record.fact not in declared:
            out.add(f"{path}.fact", "unknown_reference", f"no fact has the key {record.fact!r}")
            continue
        fact = facts.get(record.fact)
        if fact is None:
            continue
        context = record.context or fact.context
        if context != fact.context and context not in fact.other_contexts:
            out.add(
                f"{path}.context",
                "unknown_context",
                f"{context!r} is neither the required context of {fact.key!r} "
                "nor one of its other contexts",
            )
            continue
        if context == fact.context:
            present.add((record.candidate, record.fact))
        try:
            value = parse_value(fact.type, record.value, members[record.fact])
        except ValueParseError as exc:
            out.add(f"{path}.value", "bad_value", f"for fact {fact.key!r} ({fact.type}): {exc}")
            continue
        if not fact.contains(value):
            where = (
                f"[{fact.low}, {fact.high}] in steps of {fact.step}"
                if fact.is_numeric
                else f"[{fact.low}, {fact.high}]"
            )
            out.add(
                f"{path}.value",
                "out_of_domain",
                f"{record.value} lies outside the domain of {fact.key!r}: {where}",
            )
            continue
        slot = (record.candidate, record.fact)
        if context == fact.context:
            if slot in values:
                out.add(path, "duplicate_record", f"a second value for {slot[0]}.{slot[1]}")
            values[slot] = value
        else:
            bucket = alternatives.setdefault(slot, {})
            if context in bucket:
                out.add(path, "duplicate_record", f"a second value for {slot} in {context!r}")
            bucket[context] = value
    for candidate in spec.candidates:
        for fact_key in facts:
            if (candidate.id, fact_key) not in present:
                out.add(
                    "$.records",
                    "missing_value",
                    f"no value of {fact_key!r} for candidate {candidate.id!r} "
                    f"in the required context {facts[fact_key].context!r}",
                )
    return values, alternatives
