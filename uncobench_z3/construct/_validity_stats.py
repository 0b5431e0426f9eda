"""Validity statistics of a built benchmark: guessing floors, gold chances, diversity, targets.

Every figure is computed from the retained groups (their specs, gold answers and the exact
figures their proofs store) and every mean is an exact fraction first; percentages are
rounded for display only. The targets are those of the benchmark's validity design (see
``docs/build.md``): guessing does not pay, and every operator and rounding mode is used.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..settings import MAX_GOLD_CHANCE, STRATEGIES
from ..spec import OPERATORS, ROUNDING_MODES, TaskSpec, check_structure, rounding_unit

#: (strategy, setting, the largest mean floor allowed, in percent)
FLOOR_TARGETS = (
    ("optimist", "reliable", 35),
    ("midpoint", "incomplete", 50),
    ("face-value", "misaligned", 10),
    ("face-value", "mixed", 10),
)
MIN_OPERATOR_PERCENT = 3
MIN_MODE_PERCENT = 4
MIN_ROUNDING_CHANGES_PERCENT = 40
MIN_RETAINED_PERCENT = 90
HALF_MODES = ("half_up", "half_even", "half_down")


def percent(value: Fraction) -> float:
    return round(float(100 * value), 2)


def _mean(values: list[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values) if values else Fraction(0)


def floor_table(groups: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Strategy -> setting -> mean floor over the groups that have the setting."""
    found: dict[str, dict[str, list[Fraction]]] = {s: {} for s in STRATEGIES}
    for group in groups:
        floors = (group.get("proofs") or {}).get("guessing_floors") or {}
        for strategy, row in floors.items():
            for setting, value in row.items():
                found.setdefault(strategy, {}).setdefault(setting, []).append(Fraction(value))
    return {
        strategy: {
            setting: {
                "groups": len(values),
                "mean": str(_mean(values)),
                "percent": percent(_mean(values)),
            }
            for setting, values in row.items()
        }
        for strategy, row in found.items()
    }


def _rounding(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """How often rounding changes the numeric answer, and exact ties per half-way mode."""
    numeric = changed = 0
    ties: Counter[str] = Counter()
    for group in groups:
        if not group["gold"]["eligible"]:
            continue
        task = check_structure(TaskSpec.model_validate(group["spec"])).task
        if task is None:  # pragma: no cover - retained groups are well-formed
            continue
        outcome = task.outcome()
        assert outcome.candidate is not None
        operands = [Fraction(task.values[(outcome.candidate, k)]) for k in task.rule.operands]  # type: ignore[arg-type]
        units = task.rule.value(operands) / rounding_unit(task.rule.digits)
        numeric += 1
        changed += units.denominator != 1
        if units.denominator == 2 and task.rule.mode in HALF_MODES:
            ties[task.rule.mode] += 1
    return {
        "numeric_answers": numeric,
        "changed": changed,
        "changed_percent": percent(Fraction(changed, numeric)) if numeric else 0.0,
        "ties": {mode: ties[mode] for mode in HALF_MODES},
    }


def _chances(groups: list[dict[str, Any]]) -> dict[str, Any]:
    values = [
        Fraction(v)
        for g in groups
        for name, v in ((g.get("proofs") or {}).get("gold_chances") or {}).items()
        if not name.startswith("validity-mixed")
    ]
    return {
        "replies": len(values),
        "max": str(max(values, default=Fraction(0))),
        "mean": str(_mean(values)),
        "mean_percent": percent(_mean(values)),
        "at_most": str(MAX_GOLD_CHANCE),
        "exactly_half": sum(v == Fraction(1, 2) for v in values),
    }


def _shares(counts: Counter[str], names: Iterable[str]) -> dict[str, dict[str, Any]]:
    total = sum(counts.values())
    return {
        n: {"count": counts[n], "percent": percent(Fraction(counts[n], total)) if total else 0.0}
        for n in names
    }


def validity_stats(groups: list[dict[str, Any]], rates: dict[str, Any]) -> dict[str, Any]:
    """The validity figures of ``groups``; ``rates`` are the build's pass rates
    (:func:`~._stats.pass_rates`), whose share of candidates kept is a target."""
    retained = Fraction(rates["retained"], rates["candidates"] or 1)
    operators: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    mixed_missing: dict[str, list[str]] = {}
    for group in groups:
        operators.update(c["op"] for c in group["spec"]["conditions"])
        modes[(group["spec"]["rule"].get("rounding") or {}).get("mode", "half_up")] += 1
        for setting in group["settings"]:
            if setting["name"] == "mixed" and not setting.get("available", True):
                reason = setting.get("reason") or "unavailable"
                mixed_missing.setdefault(reason, []).append(group["id"])
    floors = floor_table(groups)
    rounding = _rounding(groups)
    operator_shares = _shares(operators, OPERATORS)
    mode_shares = _shares(modes, ROUNDING_MODES)

    def floor_mean(strategy: str, setting: str) -> Fraction:
        return Fraction(floors.get(strategy, {}).get(setting, {}).get("mean", "0"))

    # a target is met or not by the exact figure: the percentages shown are rounded, and a
    # figure just past a limit (35.004%) would round onto it
    targets = [
        {
            "name": f"{strategy} accuracy in {setting} (guessing floor)",
            "value": floors.get(strategy, {}).get(setting, {}).get("percent", 0.0),
            "target": f"<= {limit}%",
            "met": 100 * floor_mean(strategy, setting) <= limit,
        }
        for strategy, setting, limit in FLOOR_TARGETS
    ]
    operator_total, mode_total = sum(operators.values()), sum(modes.values())
    targets += [
        {
            "name": "least-used operator share of conditions",
            "value": min(r["percent"] for r in operator_shares.values()),
            "target": f">= {MIN_OPERATOR_PERCENT}%",
            "met": bool(operator_total)
            and all(
                100 * Fraction(operators[n], operator_total) >= MIN_OPERATOR_PERCENT
                for n in OPERATORS
            ),
        },
        {
            "name": "least-used rounding mode share of rules",
            "value": min(r["percent"] for r in mode_shares.values()),
            "target": f">= {MIN_MODE_PERCENT}%",
            "met": bool(mode_total)
            and all(
                100 * Fraction(modes[n], mode_total) >= MIN_MODE_PERCENT for n in ROUNDING_MODES
            ),
        },
        {
            "name": "numeric answers that rounding changes",
            "value": rounding["changed_percent"],
            "target": f">= {MIN_ROUNDING_CHANGES_PERCENT}%",
            "met": bool(rounding["numeric_answers"])
            and 100 * Fraction(rounding["changed"], rounding["numeric_answers"])
            >= MIN_ROUNDING_CHANGES_PERCENT,
        },
        {
            "name": "half-way modes with an exact tie",
            "value": sum(1 for n in rounding["ties"].values() if n),
            "target": f"= {len(HALF_MODES)}",
            "met": all(rounding["ties"].values()),
        },
        {
            "name": "candidates retained",
            "value": rates["retained_percent"],
            "target": f">= {MIN_RETAINED_PERCENT}%",
            "met": 100 * retained >= MIN_RETAINED_PERCENT,
        },
    ]
    return {
        "guessing_floors": floors,
        "gold_chances": _chances(groups),
        "operators": operator_shares,
        "rounding_modes": mode_shares,
        "rounding": rounding,
        "mixed_unavailable": mixed_missing,
        "targets": targets,
    }
