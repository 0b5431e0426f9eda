"""Structural validation: every problem of a spec at once, each with its JSON path.

These are the programmatic checks of the construction pipeline's stage 2 (counts, role
spread, references, domains, units, denominators) and of the instance values. A spec that
passes becomes a :class:`TypedTask`; one that fails gets the list of problems, which the
generator can receive verbatim for its single repair attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from pydantic import BaseModel

from ._model import Condition, Fact, TaskSpec
from ._typed import Slot, TypedCondition, TypedFact, TypedRule, TypedTask
from ._units import Dimension, is_percent, same_unit
from ._values import Value, ValueParseError, day_number, parse_fraction, parse_value

CANDIDATE_COUNT = 3
ROLE_RANGE = (5, 7)
CONDITION_RANGE = (5, 7)
MIN_CONDITION_ROLES = 4
MIN_OPERAND_ROLES = 2

ORDERED_OPS = (">=", ">", "<=", "<", "==", "!=", "between")
OPS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "int": (*ORDERED_OPS, "in", "not in"),
    "decimal": ORDERED_OPS,
    "date": ORDERED_OPS,
    "enum": ("==", "!=", "in", "not in"),
    "bool": ("==", "!="),
}
OPERAND_COUNTS: dict[str, tuple[int, int]] = {
    "sum": (2, 6),
    "difference": (2, 2),
    "product": (2, 2),
    "ratio": (2, 2),
    "percentage_of": (2, 2),
    "weighted_average": (2, 6),
    "capped_sum": (2, 6),
    "percentage_change": (2, 2),
}


class Problem(BaseModel):
    """One structural problem: where (JSON path), what kind (code) and why (message)."""

    path: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass
class StructureReport:
    problems: list[Problem]
    task: TypedTask | None

    @property
    def ok(self) -> bool:
        return not self.problems


class _Collector:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, code: str, message: str) -> None:
        self.problems.append(Problem(path=path, code=code, message=message))


def _duplicates(ids: Iterable[str]) -> set[str]:
    return {key for key, count in Counter(ids).items() if count > 1}


def check_structure(spec: TaskSpec) -> StructureReport:
    """Run every structural check; build the typed task when there is no problem."""
    out = _Collector()
    _check_counts(spec, out)
    facts = _check_facts(spec, out)
    conditions = _check_conditions(spec, facts, out)
    rule = _check_rule(spec, facts, out)
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


def _check_counts(spec: TaskSpec, out: _Collector) -> None:
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
        for dup in sorted(_duplicates(ids)):
            out.add(f"$.{name}", "duplicate_id", f"the id {dup!r} is used more than once")
    for dup in sorted(_duplicates(f.key for f in spec.facts)):
        out.add("$.facts", "duplicate_id", f"the fact key {dup!r} is used more than once")
    names = [c.name for c in spec.candidates]
    for dup in sorted(_duplicates(names)):
        out.add("$.candidates", "duplicate_name", f"two candidates are both called {dup!r}")
    if spec.decision.positive.strip().lower() == spec.decision.negative.strip().lower():
        out.add("$.decision", "decision_words", "the positive and negative decisions are equal")


def _parse_bound(fact: Fact, raw: object, path: str, out: _Collector) -> Value | None:
    try:
        return parse_value(fact.type, raw)
    except ValueParseError as exc:
        out.add(path, "bad_value", str(exc))
        return None


def _check_facts(spec: TaskSpec, out: _Collector) -> dict[str, TypedFact]:
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
        for dup in sorted(_duplicates(fact.other_contexts)):
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
                if _order_key(low) > _order_key(high):
                    out.add(path, "bad_domain", f"min {fact.min} is above max {fact.max}")
                if fact.type != "date":
                    for bound, raw, name in ((low, fact.min, "min"), (high, fact.max, "max")):
                        assert isinstance(bound, int | Fraction)
                        if (Fraction(bound) / step).denominator != 1:
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
                for dup in sorted(_duplicates(members)):
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


def _order_key(value: Value) -> Fraction | int:
    if isinstance(value, bool | str):
        raise TypeError("unordered value")
    if isinstance(value, int | Fraction):
        return value
    return day_number(value)


def _typed_operand(
    fact: TypedFact, cond: Condition, path: str, out: _Collector
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
        if cond.op == "between" and _order_key(typed_items[0]) > _order_key(typed_items[1]):
            out.add(f"{path}.value", "bad_value", "'between' needs low <= high")
            return None
        return typed_items
    if isinstance(cond.value, list):
        out.add(f"{path}.value", "bad_value", f"'{cond.op}' compares with a single value")
        return None
    return one(cond.value, f"{path}.value")


def _check_conditions(
    spec: TaskSpec, facts: dict[str, TypedFact], out: _Collector
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


def _check_rule(spec: TaskSpec, facts: dict[str, TypedFact], out: _Collector) -> TypedRule | None:
    rule = spec.rule
    path = "$.rule"
    declared = {f.key: f for f in spec.facts}
    low, high = OPERAND_COUNTS[rule.operation]
    ok = True
    if not low <= len(rule.operands) <= high:
        bound = str(low) if low == high else f"{low}-{high}"
        out.add(
            f"{path}.operands",
            "operand_count",
            f"{rule.operation} takes {bound} operands, found {len(rule.operands)}",
        )
        ok = False
    for dup in sorted(_duplicates(rule.operands)):
        out.add(f"{path}.operands", "duplicate_id", f"the operand {dup!r} appears twice")
        ok = False
    operand_facts: list[TypedFact] = []
    for k, key in enumerate(rule.operands):
        if key not in declared:
            out.add(f"{path}.operands[{k}]", "unknown_reference", f"no fact has the key {key!r}")
            ok = False
            continue
        if declared[key].type not in ("int", "decimal"):
            out.add(
                f"{path}.operands[{k}]",
                "bad_operand",
                f"operand {key!r} is a {declared[key].type}, operations need int or decimal",
            )
            ok = False
            continue
        if key in facts:
            operand_facts.append(facts[key])
        else:
            ok = False
    owners = {declared[k].owner for k in rule.operands if k in declared}
    if len(owners) < MIN_OPERAND_ROLES:
        out.add(
            f"{path}.operands",
            "operand_roles",
            f"operands must come from at least {MIN_OPERAND_ROLES} roles, "
            f"they come from {len(owners)} ({', '.join(sorted(owners))})",
        )
        ok = False
    weights: tuple[Fraction, ...] = ()
    if rule.operation == "weighted_average":
        if rule.weights is None or len(rule.weights) != len(rule.operands):
            out.add(
                f"{path}.weights", "bad_weights", "weighted_average needs one weight per operand"
            )
            ok = False
        else:
            parsed: list[Fraction] = []
            for k, raw in enumerate(rule.weights):
                try:
                    weight = parse_fraction(raw)
                except ValueParseError as exc:
                    out.add(f"{path}.weights[{k}]", "bad_value", str(exc))
                    ok = False
                    continue
                if weight <= 0:
                    out.add(f"{path}.weights[{k}]", "bad_weights", "weights must be positive")
                    ok = False
                parsed.append(weight)
            weights = tuple(parsed)
    elif rule.weights is not None:
        out.add(f"{path}.weights", "misplaced_field", "only weighted_average takes weights")
        ok = False
    if ok and len(operand_facts) == len(rule.operands):
        ok = _check_rule_units(rule.operation, operand_facts, rule.unit, out) and ok
        ok = _check_denominators(rule.operation, operand_facts, out) and ok
    if not ok:
        return None
    return TypedRule(
        operation=rule.operation,
        operands=tuple(rule.operands),
        label=rule.label,
        unit=rule.unit,
        digits=rule.rounding.digits,
        mode=rule.rounding.mode,
        weights=weights,
    )


def _check_rule_units(
    operation: str, operands: list[TypedFact], unit: str, out: _Collector
) -> bool:
    path = "$.rule.unit"
    units = [f.unit for f in operands]
    listing = ", ".join(f"{f.key} [{f.unit}]" for f in operands)
    if operation in ("sum", "difference", "weighted_average", "capped_sum"):
        if not all(same_unit(u, unit) for u in units):
            out.add(path, "unit_mismatch", f"{operation} needs operands in {unit!r}: {listing}")
            return False
    elif operation == "product":
        product = Dimension.parse(units[0]) * Dimension.parse(units[1])
        if product != Dimension.parse(unit):
            out.add(path, "unit_mismatch", f"{listing} multiply to {product}, not {unit!r}")
            return False
    elif operation == "ratio":
        quotient = Dimension.parse(units[0]) / Dimension.parse(units[1])
        if quotient != Dimension.parse(unit):
            out.add(path, "unit_mismatch", f"{listing} divide to {quotient}, not {unit!r}")
            return False
    elif operation == "percentage_of":
        if not is_percent(units[1]):
            out.add(path, "unit_mismatch", f"the second operand of percentage_of is a %: {listing}")
            return False
        if not same_unit(units[0], unit):
            out.add(path, "unit_mismatch", f"percentage_of keeps the base unit: {listing}")
            return False
    elif operation == "percentage_change":
        if not same_unit(units[0], units[1]):
            out.add(path, "unit_mismatch", f"percentage_change compares like units: {listing}")
            return False
        if not is_percent(unit):
            out.add(path, "unit_mismatch", "percentage_change gives a result in %")
            return False
    return True


def _check_denominators(operation: str, operands: list[TypedFact], out: _Collector) -> bool:
    denominator = {"ratio": 1, "percentage_change": 0}.get(operation)
    if denominator is None:
        return True
    fact = operands[denominator]
    assert fact.low is not None and fact.high is not None
    low, high = _order_key(fact.low), _order_key(fact.high)
    if low <= 0 <= high:
        out.add(
            f"$.rule.operands[{denominator}]",
            "zero_denominator",
            f"{fact.key!r} divides in {operation} but its domain [{fact.low}, {fact.high}] "
            "contains zero",
        )
        return False
    return True


def _check_records(
    spec: TaskSpec, facts: dict[str, TypedFact], out: _Collector
) -> tuple[dict[Slot, Value], dict[Slot, dict[str, Value]]]:
    values: dict[Slot, Value] = {}
    alternatives: dict[Slot, dict[str, Value]] = {}
    if not spec.records:
        return values, alternatives
    candidate_ids = {c.id for c in spec.candidates}
    declared = {f.key: f for f in spec.facts}
    present: set[Slot] = set()  # slots with a required-context record, valid or not
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
            value = parse_value(fact.type, record.value, list(fact.members) or None)
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
