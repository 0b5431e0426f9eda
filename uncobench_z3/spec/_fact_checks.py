"""Structural checks of the facts: owners, contexts and each fact's domain (bounds, step,
members), and the typed facts of those that pass.

A fact's own checks read nothing but its own fields, and the facts of a built benchmark
recur from group to group (a 300-group build: 594 distinct of 2,210): a fact that passed
them is remembered by its fields, and an equal fact is typed as the remembered one without
reading its bounds and step again. A fact with a problem is never remembered, so every
problem is found and worded afresh; what depends on the rest of the spec (the owner is a
role, the key is not taken) is checked for every fact of every spec.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ._model import Fact, TaskSpec
from ._problems import Collector, duplicates, order_key
from ._typed import TypedFact
from ._values import INT_OR_FRACTION, Value, ValueParseError, parse_fraction, parse_value

_FactKey = tuple[object, ...]

_TYPED_KEPT = 8192
"""facts remembered at most (emptied when full)"""

_typed_facts: dict[_FactKey, TypedFact] = {}
"""the typed fact of each fact whose own checks passed, by :func:`_fact_key`"""


def check_facts(spec: TaskSpec, out: Collector) -> dict[str, TypedFact]:
    """The typed facts of ``spec`` without a problem (the first of a repeated key); every
    problem of the facts in ``out``."""
    role_ids = {r.id for r in spec.roles}
    typed: dict[str, TypedFact] = {}
    for i, fact in enumerate(spec.facts):
        problems_before = len(out.problems)
        if fact.owner not in role_ids:
            out.add(
                f"$.facts[{i}].owner", "unknown_reference", f"no role has the id {fact.owner!r}"
            )
        key = _fact_key(fact)
        hashable = True
        try:
            found = _typed_facts.get(key)
        except TypeError:  # a field that cannot be hashed (a spec made without validation)
            found, hashable = None, False
        if found is None:
            found = _own_checks(fact, f"$.facts[{i}]", out)
            if found is not None and hashable:
                if len(_typed_facts) >= _TYPED_KEPT:
                    _typed_facts.clear()
                _typed_facts[key] = found
        if len(out.problems) == problems_before and fact.key not in typed:
            assert found is not None
            typed[fact.key] = found
    owners = {f.owner for f in spec.facts}
    for j, role in enumerate(spec.roles):
        if role.id not in owners:
            out.add(
                f"$.roles[{j}]",
                "role_without_facts",
                f"role {role.id!r} owns no fact, so it can never be necessary",
            )
    return typed


def _scalar_key(raw: object) -> object:
    # the type too: True, 1 and Decimal("1") are equal keys but not read alike; a Decimal by
    # its text (a signalling NaN cannot be hashed)
    return (type(raw), str(raw) if type(raw) is Decimal else raw)


def _fact_key(fact: Fact) -> _FactKey:
    """Every field the fact's own checks and its typed fact read (a key that cannot be
    hashed, of a spec made without validation, is not looked up: the fact is checked)."""
    values = fact.values
    synonyms = fact.synonyms
    return (
        fact.key,
        fact.owner,
        fact.label,
        fact.type,
        fact.unit,
        fact.context,
        tuple(fact.other_contexts),
        None if values is None else tuple(values),
        None if synonyms is None else tuple(synonyms),
        _scalar_key(fact.min),
        _scalar_key(fact.max),
        _scalar_key(fact.step),
    )


def _parse_bound(fact: Fact, raw: object, path: str, out: Collector) -> Value | None:
    try:
        return parse_value(fact.type, raw)
    except ValueParseError as exc:
        out.add(path, "bad_value", str(exc))
        return None


def _own_checks(fact: Fact, path: str, out: Collector) -> TypedFact | None:
    """The checks that read ``fact`` alone; its typed fact when they find no problem."""
    problems_before = len(out.problems)
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
                out.add(f"{path}.{name}", "misplaced_field", "enum facts have no numeric domain")
    else:  # bool
        for name in ("min", "max", "step", "values"):
            if getattr(fact, name) is not None:
                out.add(f"{path}.{name}", "misplaced_field", "boolean facts have no domain")
    if len(out.problems) != problems_before:
        return None
    return TypedFact(
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
