"""The shape of a built benchmark's statistics (the manifest's ``stats``), as ``uncobench
stats`` reads them.

``uncobench build`` writes them (:mod:`._pipeline`); a manifest edited or damaged since is
refused with the JSON path of the first misfit rather than met as a crash while printing.
Fields the printer does not read are let through (a later build may add some).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..spec import validate_document

Count = Annotated[int, Field(ge=0, strict=True)]
Share = Annotated[float, Field(allow_inf_nan=False)]
"""a percentage (the printer re-reads the statistics as floats)"""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class _Stages(_Open):
    spec_validation: Count
    logical_verification: Count
    rendering_validation: Count


class _StageShares(_Open):
    spec_validation: Share
    logical_verification: Share
    rendering_validation: Share


class PassRates(_Open):
    candidates: Count
    rejected: _Stages
    rejected_percent: _StageShares
    retained: Count
    retained_percent: Share
    drafts_redrawn: Count = 0
    redraw_problems: dict[str, Count] = Field(default_factory=dict)
    rejection_reasons: dict[str, dict[str, Count]] = Field(default_factory=dict)


class _GroupShare(_Open):
    groups: Count
    percent: Share


class _CountShare(_Open):
    count: Count
    percent: Share


class Naturalness(_Open):
    names_off_domain: Count
    names_from_no_pool: Count
    money_answers: Count
    money_answers_nonpositive: Count
    money_answers_nonpositive_signed: Count
    money_records_nonpositive: Count
    examples: dict[str, list[str]]


class _Floor(_Open):
    percent: Share | str = "-"


class _GoldChances(_Open):
    replies: Count
    max: str
    mean_percent: Share
    at_most: str
    exactly_half: Count


class _Rounding(_Open):
    numeric_answers: Count
    changed: Count
    changed_percent: Share
    ties: dict[str, Count]


class _Target(_Open):
    name: str
    value: Share
    target: str
    met: bool


class ValidityStats(_Open):
    guessing_floors: dict[str, dict[str, _Floor]]
    gold_chances: _GoldChances
    operators: dict[str, _CountShare]
    rounding_modes: dict[str, _CountShare]
    rounding: _Rounding
    mixed_unavailable: dict[str, list[str]]
    targets: list[_Target]


class BuildStats(_Open):
    """What ``uncobench build`` records in the manifest's ``stats``."""

    pass_rates: PassRates
    groups: Count
    domains: dict[str, _GroupShare]
    operations: dict[str, _GroupShare]
    domain_operation: dict[str, dict[str, Count]]
    pairs_present: Count
    decisions: dict[str, Count]
    settings_available: dict[str, Count]
    defects_by_role: dict[str, dict[str, Count]]
    defects_by_fact_type: dict[str, dict[str, Count]]
    naturalness: Naturalness | None = None
    validity: ValidityStats | None = None


class _ManifestStats(_Open):
    stats: BuildStats


def check_build_stats(manifest: dict[str, Any], source: str) -> None:
    """Refuse a manifest whose ``stats`` do not have the shape ``uncobench build`` writes
    (a :class:`~uncobench_z3.errors.SpecReadError` at the first misfit's JSON path)."""
    validate_document(manifest, _ManifestStats, source)
