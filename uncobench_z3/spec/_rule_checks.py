"""Structural checks of the numerical rule: operand counts and owners, weights, units and
divisors (a division by a domain that contains zero is refused before any solver sees it)."""

from __future__ import annotations

from fractions import Fraction

from ._model import TaskSpec
from ._problems import Collector, duplicates, order_key
from ._typed import TypedFact, TypedRule
from ._units import Dimension, is_percent, same_unit
from ._values import ValueParseError, parse_fraction

MIN_OPERAND_ROLES = 2
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


def check_rule(spec: TaskSpec, facts: dict[str, TypedFact], out: Collector) -> TypedRule | None:
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
    for dup in sorted(duplicates(rule.operands)):
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


def _check_rule_units(operation: str, operands: list[TypedFact], unit: str, out: Collector) -> bool:
    path = "$.rule.unit"
    units = [f.unit for f in operands]

    def listing() -> str:  # for a message only: most rules have none
        return ", ".join(f"{f.key} [{f.unit}]" for f in operands)

    if operation in ("sum", "difference", "weighted_average", "capped_sum"):
        if not all(same_unit(u, unit) for u in units):
            out.add(path, "unit_mismatch", f"{operation} needs operands in {unit!r}: {listing()}")
            return False
    elif operation == "product":
        product = Dimension.parse(units[0]) * Dimension.parse(units[1])
        if product != Dimension.parse(unit):
            out.add(path, "unit_mismatch", f"{listing()} multiply to {product}, not {unit!r}")
            return False
    elif operation == "ratio":
        quotient = Dimension.parse(units[0]) / Dimension.parse(units[1])
        if quotient != Dimension.parse(unit):
            out.add(path, "unit_mismatch", f"{listing()} divide to {quotient}, not {unit!r}")
            return False
    elif operation == "percentage_of":
        if not is_percent(units[1]):
            out.add(
                path, "unit_mismatch", f"the second operand of percentage_of is a %: {listing()}"
            )
            return False
        if not same_unit(units[0], unit):
            out.add(path, "unit_mismatch", f"percentage_of keeps the base unit: {listing()}")
            return False
    elif operation == "percentage_change":
        if not same_unit(units[0], units[1]):
            out.add(path, "unit_mismatch", f"percentage_change compares like units: {listing()}")
            return False
        if not is_percent(unit):
            out.add(path, "unit_mismatch", "percentage_change gives a result in %")
            return False
    return True


def _check_denominators(operation: str, operands: list[TypedFact], out: Collector) -> bool:
    denominator = {"ratio": 1, "percentage_change": 0}.get(operation)
    if denominator is None:
        return True
    fact = operands[denominator]
    assert fact.low is not None and fact.high is not None
    low, high = order_key(fact.low), order_key(fact.high)
    if low <= 0 <= high:
        out.add(
            f"$.rule.operands[{denominator}]",
            "zero_denominator",
            f"{fact.key!r} divides in {operation} but its domain [{fact.low}, {fact.high}] "
            "contains zero",
        )
        return False
    return True
