"""The benchmark behind the runs (the paper's Figure 7 and Tables 4-5): domains x
operations, operation shares, pass rates by construction stage.

Counts come from the benchmark's manifest (what the build considered and kept); when the
manifest is not found, domains and operations are counted over the benchmark's groups the
report could read (no pass rates then). Shares are exact fractions of the group count.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ._load import ReportData
from ._tables import Table, percent, stats_tables

STAGES = ("spec_validation", "logical_verification", "rendering_validation")
SHOWN = {"pass_rates", "groups", "domains", "operations", "domain_operation", "pairs_present"}


class DatasetSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    """the manifest read, or the benchmark groups counted"""
    groups: int
    domains: dict[str, int]
    operations: dict[str, int]
    domain_operation: dict[str, dict[str, int]]
    candidates: int | None = None
    """candidate groups the build considered (manifest only)"""
    rejected: dict[str, int] = {}
    """candidates rejected at each construction stage"""
    retained: int | None = None

    @property
    def pairs_present(self) -> int:
        return sum(1 for row in self.domain_operation.values() for n in row.values() if n)


def _from_manifest(stats: dict[str, Any], source: str) -> DatasetSummary:
    rates = stats.get("pass_rates") or {}
    return DatasetSummary(
        source=source,
        groups=stats["groups"],
        domains={d: v["groups"] for d, v in stats["domains"].items()},
        operations={op: v["groups"] for op, v in stats["operations"].items()},
        domain_operation=stats["domain_operation"],
        candidates=rates.get("candidates"),
        rejected=rates.get("rejected") or {},
        retained=rates.get("retained"),
    )


def dataset_summary(data: ReportData) -> DatasetSummary | None:
    if data.manifest_stats is not None:
        try:
            return _from_manifest(data.manifest_stats, str(data.manifest_path))
        except (KeyError, TypeError, AttributeError, ValidationError):
            pass  # an older or edited manifest: count the groups instead
    groups = list(data.groups.by_hash.values())
    if not groups:
        return None
    pairs = Counter((g.spec.domain, g.spec.rule.operation) for g in groups)
    operations = sorted({op for _, op in pairs})
    domains = Counter(domain for domain, _ in pairs.elements())
    return DatasetSummary(
        source="the benchmark's groups (no manifest statistics found)",
        groups=len(groups),
        domains=dict(sorted(domains.items())),
        operations=dict(sorted(Counter(op for _, op in pairs.elements()).items())),
        domain_operation={
            d: {op: pairs.get((d, op), 0) for op in operations} for d in sorted(domains)
        },
    )


def operations_table(summary: DatasetSummary) -> Table:
    """Table 4: groups per operation, their share, and the domains that use it."""
    rows = []
    for operation, count in summary.operations.items():
        used = sum(1 for row in summary.domain_operation.values() if row.get(operation))
        rows.append([operation, str(count), percent(Fraction(count, summary.groups or 1)),
                     f"{used}/{len(summary.domain_operation)}"])  # fmt: skip
    pairs = len(summary.domain_operation) * len(summary.operations)
    return Table(
        ["operation", "groups", "share", "domains using it"],
        rows,
        f"n = {summary.groups} groups; {summary.pairs_present} of {pairs} domain-operation "
        "pairs present. Shares are exact (rounded for display).",
    )


def domains_table(summary: DatasetSummary) -> Table:
    rows = [
        [domain, str(count), percent(Fraction(count, summary.groups or 1))]
        for domain, count in summary.domains.items()
    ]
    return Table(["domain", "groups", "share"], rows, f"n = {summary.groups} groups.")


def pass_rate_table(summary: DatasetSummary) -> Table | None:
    """Table 5: candidates considered, rejected per stage, retained."""
    if summary.candidates is None:
        return None
    total = summary.candidates
    rows = [["candidates considered", str(total), ""]]
    for stage in [*STAGES, *(s for s in summary.rejected if s not in STAGES)]:
        count = summary.rejected.get(stage, 0)
        rows.append([f"rejected at {stage.replace('_', ' ')}", str(count),
                     percent(Fraction(count, total or 1))])  # fmt: skip
    retained = summary.retained or 0
    rows.append(["retained", str(retained), percent(Fraction(retained, total or 1))])
    return Table(["stage", "groups", "share of candidates"], rows,
                 f"Pass rates of the build, n = {total} candidate groups.")  # fmt: skip


def other_stats_tables(data: ReportData) -> list[Table]:
    """The manifest's remaining statistics, whatever their shape."""
    if data.manifest_stats is None:
        return []
    rest = {k: v for k, v in data.manifest_stats.items() if k not in SHOWN}
    return stats_tables(rest) if rest else []
