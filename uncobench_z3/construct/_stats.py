"""The statistics of a built benchmark: pass rates by stage and diversity tables.

Computed once at build time from the candidates the build considered and the groups it kept,
and stored in the manifest; ``uncobench stats`` prints them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ._candidate import CandidateOutcome
from ._natural import naturalness_stats
from ._validity_stats import validity_stats

STAGES = ("spec_validation", "logical_verification", "rendering_validation")


def _share(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0


def pass_rates(considered: list[CandidateOutcome]) -> dict[str, Any]:
    total = len(considered)
    rejected: Counter[str] = Counter(o.stage for o in considered if not o.retained and o.stage)
    retained = sum(o.retained for o in considered)
    reasons: dict[str, dict[str, int]] = {}
    for outcome in considered:
        if not outcome.retained and outcome.stage and outcome.reason:
            # group reasons by their leading phrase, not by every detail
            key = outcome.reason.split(":")[0] if ":" in outcome.reason else outcome.reason
            reasons.setdefault(outcome.stage, {})
            reasons[outcome.stage][key] = reasons[outcome.stage].get(key, 0) + 1
    return {
        "candidates": total,
        "rejected": {stage: rejected.get(stage, 0) for stage in STAGES},
        "rejected_percent": {stage: _share(rejected.get(stage, 0), total) for stage in STAGES},
        "retained": retained,
        "retained_percent": _share(retained, total),
        "rejection_reasons": reasons,
        "attempts": dict(sorted(Counter(o.attempts for o in considered if o.retained).items())),
        "drafts_redrawn": sum(bool(o.redrawn) for o in considered),
        "redraw_problems": dict(sorted(Counter(c for o in considered for c in o.redrawn).items())),
    }


def benchmark_stats(
    considered: list[CandidateOutcome], groups: list[dict[str, Any]]
) -> dict[str, Any]:
    domains: Counter[str] = Counter()
    operations: Counter[str] = Counter()
    matrix: Counter[tuple[str, str]] = Counter()
    decisions: Counter[str] = Counter()
    by_role: dict[str, Counter[str]] = {}
    by_type: dict[str, Counter[str]] = {}
    availability: Counter[str] = Counter()
    for group in groups:
        spec = group["spec"]
        domain, operation = spec["domain"], spec["rule"]["operation"]
        domains[domain] += 1
        operations[operation] += 1
        matrix[(domain, operation)] += 1
        decisions[
            "eligible candidate" if group["gold"]["eligible"] else "no eligible candidate"
        ] += 1
        facts = {f["key"]: f for f in spec["facts"]}
        roles = {r["id"]: r["name"] for r in spec["roles"]}
        for setting in group["settings"]:
            if setting.get("available", True):
                availability[setting["name"]] += 1
            for defect in setting.get("defects", []):
                kind = defect["kind"]
                by_role.setdefault(kind, Counter())[roles[defect["role"]]] += 1
                fact_type = facts[defect["fact"]]["type"] if defect.get("fact") else "role"
                by_type.setdefault(kind, Counter())[fact_type] += 1
    total = len(groups)
    all_domains = sorted(domains)
    rates = pass_rates(considered)
    return {
        "pass_rates": rates,
        "groups": total,
        "domains": {
            d: {"groups": n, "percent": _share(n, total)} for d, n in sorted(domains.items())
        },
        "operations": {
            op: {"groups": n, "percent": _share(n, total)} for op, n in sorted(operations.items())
        },
        "domain_operation": {
            d: {op: matrix[(d, op)] for op in sorted(operations)} for d in all_domains
        },
        "pairs_present": len(matrix),
        "decisions": dict(sorted(decisions.items())),
        "settings_available": dict(sorted(availability.items())),
        "defects_by_role": {k: dict(v.most_common()) for k, v in sorted(by_role.items())},
        "defects_by_fact_type": {k: dict(sorted(v.items())) for k, v in sorted(by_type.items())},
        "naturalness": naturalness_stats(groups),
        "validity": validity_stats(groups, rates),
    }
