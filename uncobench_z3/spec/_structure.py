"""Structural validation: every problem of a spec at once, each with its JSON path.

These are the programmatic checks of the construction pipeline's stage 2 (counts, role
spread, references, domains, units, denominators) and of the instance values. A spec that
passes becomes a :class:`TypedTask`; one that fails gets the list of problems, which the
generator can receive verbatim for its single repair attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._fact_checks import check_facts
from ._model import Condition, TaskSpec
from ._problems import Collector, Problem, duplicates, order_key
from ._rule_checks import check_rule
from ._typed import Slot, TypedCondition, TypedFact, TypedTask
from ._values import Value, ValueParseError, fraction_of_text, parse_value

CANDIDATE_COUNT = 3
ROLE_RANGE = (5, 7)
CONDITION_RANGE = (5, 7)
MIN_CONDITION_ROLES = 4

_READ_IN_DOMAIN = frozenset(("enum", "bool"))
"""fact types whose every value :func:`parse_value` reads (against the members) is in the
fact's domain (:meth:`TypedFact.contains`)"""

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
    facts = check_facts(spec, out)
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


def _operand_value(
    fact: TypedFact, members: list[str] | None, raw: object, where: str, out: Collector
) -> Value | None:
    try:
        return parse_value(fact.type, raw, members)
    except ValueParseError as exc:
        out.add(where, "bad_value", f"for fact {fact.key!r} ({fact.type}): {exc}")
        return None


def _typed_operand(
    fact: TypedFact, cond: Condition, path: str, out: Collector
) -> Value | tuple[Value, ...] | None:
    members = list(fact.members) if fact.type == "enum" else None
    op = cond.op
    given = cond.value
    if op in ("in", "not in", "between"):
        if not isinstance(given, list):
            out.add(f"{path}.value", "bad_value", f"'{op}' needs a list of values")
            return None
        if op == "between" and len(given) != 2:
            out.add(f"{path}.value", "bad_value", "'between' needs [low, high]")
            return None
        if op != "between" and not given:
            out.add(f"{path}.value", "bad_value", f"'{op}' needs at least one value")
            return None
        items = [
            _operand_value(fact, members, raw, f"{path}.value[{k}]", out)
            for k, raw in enumerate(given)
        ]
        if any(item is None for item in items):
            return None
        typed_items = tuple(item for item in items if item is not None)
        if op == "between" and order_key(typed_items[0]) > order_key(typed_items[1]):
            out.add(f"{path}.value", "bad_value", "'between' needs low <= high")
            return None
        return typed_items
    if isinstance(given, list):
        out.add(f"{path}.value", "bad_value", f"'{op}' compares with a single value")
        return None
    return _operand_value(fact, members, given, f"{path}.value", out)


def _check_conditions(
    spec: TaskSpec, facts: dict[str, TypedFact], out: Collector
) -> list[TypedCondition]:
    owners = {f.key: f.owner for f in spec.facts}  # (the last of a repeated key)
    typed: list[TypedCondition] = []
    condition_roles: set[str] = set()
    for i, cond in enumerate(spec.conditions):
        path = f"$.conditions[{i}]"
        key = cond.fact
        if key not in owners:
            out.add(f"{path}.fact", "unknown_reference", f"no fact has the key {key!r}")
            continue
        condition_roles.add(owners[key])
        fact = facts.get(key)
        if fact is None:
            continue  # the fact itself is broken and already reported
        op = cond.op
        if op not in OPS_BY_TYPE[fact.type]:
            out.add(
                f"{path}.op",
                "bad_operator",
                f"'{op}' does not apply to a {fact.type} fact "
                f"(allowed: {', '.join(OPS_BY_TYPE[fact.type])})",
            )
            continue
        operand = _typed_operand(fact, cond, path, out)
        if operand is None:
            continue
        typed.append(TypedCondition(cond.id, key, op, operand, cond.text))
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
    declared = {f.key for f in spec.facts}
    present: set[Slot] = set()  # slots with a required-context record, valid or not
    # once a fact: the members an enum value is read against
    readers = {key: (fact, list(fact.members) or None) for key, fact in facts.items()}
    for i, record in enumerate(spec.records):
        cid = record.candidate
        key = record.fact
        if cid not in candidate_ids:
            out.add(
                f"$.records[{i}].candidate",
                "unknown_reference",
                f"no candidate has the id {cid!r}",
            )
            continue
        if key not in declared:
            out.add(f"$.records[{i}].fact", "unknown_reference", f"no fact has the key {key!r}")
            continue
        reader = readers.get(key)
        if reader is None:
            continue
        fact, members = reader
        context = record.context or fact.context
        required = context == fact.context
        if not required and context not in fact.other_contexts:
            out.add(
                f"$.records[{i}].context",
                "unknown_context",
                f"{context!r} is neither the required context of {fact.key!r} "
                "nor one of its other contexts",
            )
            continue
        slot = (cid, key)
        if required:
            present.add(slot)
        raw = record.value
        kind = fact.type
        if type(raw) is int and kind == "int":
            value: Value = raw  # what parse_value gives an int fact's int
        else:
            try:
                if type(raw) is str and kind == "decimal":
                    value = fraction_of_text(raw)  # what parse_value gives a decimal's text
                else:
                    value = parse_value(kind, raw, members)
            except ValueParseError as exc:
                out.add(
                    f"$.records[{i}].value",
                    "bad_value",
                    f"for fact {fact.key!r} ({kind}): {exc}",
                )
                continue
        # (a member of an enum, a boolean of a bool fact: read so, in the domain already)
        if kind not in _READ_IN_DOMAIN and not fact.contains(value):
            where = (
                f"[{fact.low}, {fact.high}] in steps of {fact.step}"
                if fact.is_numeric
                else f"[{fact.low}, {fact.high}]"
            )
            out.add(
                f"$.records[{i}].value",
                "out_of_domain",
                f"{raw} lies outside the domain of {fact.key!r}: {where}",
            )
            continue
        if required:
            if slot in values:
                out.add(
                    f"$.records[{i}]", "duplicate_record", f"a second value for {slot[0]}.{slot[1]}"
                )
            values[slot] = value
        else:
            bucket = alternatives.setdefault(slot, {})
            if context in bucket:
                out.add(
                    f"$.records[{i}]",
                    "duplicate_record",
                    f"a second value for {slot} in {context!r}",
                )
            bucket[context] = value
    if len(present) == len(candidate_ids) * len(facts):
        # every slot has its record (``present`` holds only slots of these candidates and
        # facts): the search below would find none missing
        return values, alternatives
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
