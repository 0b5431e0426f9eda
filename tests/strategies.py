"""Hypothesis strategies: random small, structurally valid task specs.

Domains are tiny (2-4 values per fact) so that the brute-force evaluator can enumerate every
completion; thresholds are drawn slightly outside the domain and between grid points too,
so the encoding's threshold rounding is exercised.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from uncobench_z3.spec import OPERATIONS, ROUNDING_MODES, TaskSpec

BASE_DAY = dt.date(2026, 3, 1)


def _numeric_fact(
    key: str, owner: str, unit: str, kind: str, positive: bool, size: int
) -> dict[str, Any]:
    if kind == "int":
        low = 1 if positive else 0
        return {
            "key": key,
            "owner": owner,
            "label": key,
            "type": "int",
            "unit": unit,
            "min": low,
            "max": low + size - 1,
            "context": "now",
            "other_contexts": ["before"],
        }
    low = Decimal("0.5") if positive else Decimal("0")
    return {
        "key": key,
        "owner": owner,
        "label": key,
        "type": "decimal",
        "unit": unit,
        "min": str(low),
        "max": str(low + Decimal("0.5") * (size - 1)),
        "step": "0.5",
        "context": "now",
        "other_contexts": ["before"],
    }


OPERAND_UNITS = {
    "sum": (["u", "u"], "u"),
    "difference": (["u", "u"], "u"),
    "weighted_average": (["u", "u"], "u"),
    "capped_sum": (["u", "u", "u"], "u"),
    "product": (["a", "b/a"], "b"),
    "ratio": (["a", "b"], "a/b"),
    "percentage_of": (["a", "%"], "a"),
    "percentage_change": (["a", "a"], "%"),
}
DIVISOR = {"ratio": 1, "percentage_change": 0}


@st.composite
def _condition_fact(draw: st.DrawFn, key: str, owner: str) -> tuple[dict[str, Any], dict[str, Any]]:
    kind = draw(st.sampled_from(["int", "decimal", "date", "enum", "bool"]))
    size = draw(st.integers(2, 4))
    if kind in ("int", "decimal"):
        fact = _numeric_fact(key, owner, "x", kind, positive=False, size=size)
        op = draw(st.sampled_from([">=", ">", "<=", "<", "==", "!=", "between"]))
        step = Decimal("1") if kind == "int" else Decimal("0.25")
        pick = st.integers(-1, 2 * size).map(lambda k: k * step)
        if kind == "int":
            pick = st.integers(-1, size).map(Decimal)
            if draw(st.booleans()):
                op = draw(
                    st.sampled_from([">=", ">", "<=", "<", "==", "!=", "between", "in", "not in"])
                )
        value: Any
        if op == "between":
            a, b = sorted([draw(pick), draw(pick)])
            value = [_num(a, kind), _num(b, kind)]
        elif op in ("in", "not in"):
            value = [_num(v, kind) for v in draw(st.lists(pick, min_size=1, max_size=3))]
        else:
            value = _num(draw(pick), kind)
    elif kind == "date":
        fact = {
            "key": key,
            "owner": owner,
            "label": key,
            "type": "date",
            "min": BASE_DAY.isoformat(),
            "max": (BASE_DAY + dt.timedelta(days=size - 1)).isoformat(),
            "context": "now",
            "other_contexts": ["before"],
        }
        op = draw(st.sampled_from([">=", ">", "<=", "<", "==", "!=", "between"]))
        pick = st.integers(-1, size).map(lambda k: (BASE_DAY + dt.timedelta(days=k)).isoformat())
        if op == "between":
            a, b = sorted([draw(pick), draw(pick)])
            value = [a, b]
        else:
            value = draw(pick)
    elif kind == "enum":
        members = ["red", "amber", "green", "blue"][: max(size, 2)]
        fact = {
            "key": key,
            "owner": owner,
            "label": key,
            "type": "enum",
            "values": members,
            "context": "now",
            "other_contexts": ["before"],
        }
        op = draw(st.sampled_from(["==", "!=", "in", "not in"]))
        if op in ("in", "not in"):
            value = draw(
                st.lists(st.sampled_from(members), min_size=1, max_size=len(members), unique=True)
            )
        else:
            value = draw(st.sampled_from(members))
    else:
        fact = {
            "key": key,
            "owner": owner,
            "label": key,
            "type": "bool",
            "context": "now",
            "other_contexts": ["before"],
        }
        op = draw(st.sampled_from(["==", "!="]))
        value = draw(st.booleans())
    return fact, {"id": f"k_{key}", "fact": key, "op": op, "value": value}


def _num(value: Decimal, kind: str) -> Any:
    return int(value) if kind == "int" else str(value)


def _domain_values(fact: dict[str, Any]) -> list[Any]:
    kind = fact["type"]
    if kind == "bool":
        return [False, True]
    if kind == "enum":
        return list(fact["values"])
    if kind == "date":
        low = dt.date.fromisoformat(fact["min"])
        high = dt.date.fromisoformat(fact["max"])
        return [(low + dt.timedelta(days=k)).isoformat() for k in range((high - low).days + 1)]
    if kind == "int":
        return list(range(fact["min"], fact["max"] + 1))
    low, high, step = Decimal(fact["min"]), Decimal(fact["max"]), Decimal(fact["step"])
    out = []
    while low <= high:
        out.append(str(low))
        low += step
    return out


@st.composite
def small_specs(draw: st.DrawFn, operation: str | None = None) -> TaskSpec:
    """A structurally valid spec with values, 5-6 roles and tiny domains."""
    n_roles = draw(st.integers(5, 6))
    roles = [f"r{i}" for i in range(n_roles)]
    op = operation or draw(st.sampled_from(OPERATIONS))
    units, result_unit = OPERAND_UNITS[op]
    facts: list[dict[str, Any]] = []
    operands = []
    for k, unit in enumerate(units):
        owner = roles[k % 2]
        kind = draw(st.sampled_from(["int", "decimal"]))
        positive = DIVISOR.get(op) == k
        size = draw(st.integers(2, 3))
        fact = _numeric_fact(f"o{k}", owner, unit, kind, positive, size)
        facts.append(fact)
        operands.append(fact["key"])
    conditions = []
    for i, role in enumerate(roles):
        fact, cond = draw(_condition_fact(f"f{i}", role))
        facts.append(fact)
        conditions.append(cond)
    if n_roles == 5 and draw(st.booleans()):
        # a sixth condition, on an operand
        conditions.append(
            {
                "id": "k_extra",
                "fact": operands[0],
                "op": ">=",
                "value": draw(st.sampled_from(_domain_values(facts[0]))),
            }
        )
    rule: dict[str, Any] = {
        "operation": op,
        "operands": operands,
        "label": "result",
        "unit": result_unit,
        "rounding": {
            "digits": draw(st.integers(0, 1)),
            "mode": draw(st.sampled_from(ROUNDING_MODES)),
        },
    }
    if op == "weighted_average":
        rule["weights"] = [draw(st.integers(1, 3)) for _ in operands]
    candidates = [{"id": f"c{i}", "name": f"Candidate {i}"} for i in range(3)]
    records = []
    for cand in candidates:
        for fact in facts:
            records.append(
                {
                    "candidate": cand["id"],
                    "fact": fact["key"],
                    "value": draw(st.sampled_from(_domain_values(fact))),
                }
            )
            if draw(st.integers(0, 2)) == 0:  # a record of another context
                records.append(
                    {
                        "candidate": cand["id"],
                        "fact": fact["key"],
                        "context": "before",
                        "value": draw(st.sampled_from(_domain_values(fact))),
                    }
                )
    doc = {
        "id": "random_task",
        "domain": "testing",
        "title": "random",
        "question": "Who?",
        "candidates": candidates,
        "roles": [{"id": r, "name": f"Role {r}"} for r in roles],
        "facts": facts,
        "conditions": conditions,
        "rule": rule,
        "records": records,
    }
    return TaskSpec.model_validate(doc)
