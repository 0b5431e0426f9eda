"""Aggregate metrics per agent and setting.

* ``accuracy`` - share of samples scored correct, with a 95% Wilson score interval.
* ``drop`` - Reliable accuracy minus this setting's accuracy, in percentage points, *paired*:
  both computed on the groups that have a sample in both settings for this agent
  (``paired`` of them), so groups without this setting do not move the Reliable side.
* ``retention`` - of the groups whose Reliable sample is correct, the share whose sample in
  this setting is correct too (``retained`` / ``retention_base``). Groups with a correct
  Reliable sample but no sample here are excluded and counted: ``excluded_unavailable`` (the
  setting does not exist for the group) and ``excluded_missing`` (not run, e.g. filtered).
* ``mean_rounds``, ``mean_waits``, ``mean_redundant``, ``mean_contacts`` - per sample.
* Behaviour: ``with_defect`` samples where a defect showed up; ``recovered`` of them had
  every such defect resolved; ``recovered_correct`` of those answered correctly;
  ``no_corrective`` of them never followed a defect up (no targeted or generic follow-up).
* ``attribution`` - labels of the wrong answers (see :mod:`._attribution`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..settings import SETTING_NAMES
from ._sample import SampleRecord

Z_95 = 1.959963984540054


def wilson_interval(successes: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ((0, 1) for no trials)."""
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    # the interval always holds p; rounding must not push a bound past it (p = 0 or 1)
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


class SettingMetrics(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    setting: str
    samples: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    paired: int = 0
    drop: float | None = None
    """percentage points, Reliable minus this setting, on the paired groups"""
    retention_base: int = 0
    retained: int = 0
    retention: float | None = None
    excluded_unavailable: int = 0
    excluded_missing: int = 0
    mean_rounds: float = 0.0
    mean_waits: float = 0.0
    mean_redundant: float = 0.0
    mean_contacts: float = 0.0
    budget_exhausted: int = 0
    with_defect: int = 0
    recovered: int = 0
    recovered_correct: int = 0
    no_corrective: int = 0
    targeted_follow_ups: int = 0
    generic_follow_ups: int = 0
    attribution: dict[str, int] = Field(default_factory=dict)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def setting_metrics(
    agent: str,
    setting: str,
    samples: Sequence[SampleRecord],
    reliable: Mapping[str, SampleRecord],
    unavailable: Iterable[str] = (),
) -> SettingMetrics:
    """Metrics of one agent in one setting; ``reliable``: its Reliable samples by group id."""
    correct = sum(s.correct for s in samples)
    low, high = wilson_interval(correct, len(samples))
    by_group = {s.group_id: s for s in samples}
    paired = [g for g in by_group if g in reliable]
    drop = None
    if paired and setting != "reliable":
        reliable_accuracy = sum(reliable[g].correct for g in paired) / len(paired)
        here = sum(by_group[g].correct for g in paired) / len(paired)
        drop = 100 * (reliable_accuracy - here)
    base = [g for g in paired if reliable[g].correct]
    kept = sum(by_group[g].correct for g in base)
    unavailable_set = set(unavailable)
    reliable_correct = {g for g, s in reliable.items() if s.correct}
    excluded_unavailable = len((reliable_correct - set(by_group)) & unavailable_set)
    excluded_missing = len(reliable_correct - set(by_group) - unavailable_set)
    with_defect = [s for s in samples if s.behaviour.defects_seen]
    recovered = [s for s in with_defect if s.behaviour.recovered]
    labels = Counter(s.attribution.label for s in samples if s.attribution is not None)
    return SettingMetrics(
        agent=agent,
        setting=setting,
        samples=len(samples),
        correct=correct,
        accuracy=correct / len(samples) if samples else 0.0,
        ci_low=low,
        ci_high=high,
        paired=len(paired) if setting != "reliable" else len(samples),
        drop=drop,
        retention_base=len(base),
        retained=kept,
        retention=kept / len(base) if base and setting != "reliable" else None,
        excluded_unavailable=excluded_unavailable,
        excluded_missing=excluded_missing,
        mean_rounds=_mean([s.rounds for s in samples]),
        mean_waits=_mean([s.behaviour.waits for s in samples]),
        mean_redundant=_mean([s.behaviour.redundant_contacts for s in samples]),
        mean_contacts=_mean([s.behaviour.contacts for s in samples]),
        budget_exhausted=sum(s.status == "budget_exhausted" for s in samples),
        with_defect=len(with_defect),
        recovered=len(recovered),
        recovered_correct=sum(s.correct for s in recovered),
        no_corrective=sum(
            1
            for s in with_defect
            if s.behaviour.targeted_follow_ups + s.behaviour.generic_follow_ups == 0
        ),
        targeted_follow_ups=sum(s.behaviour.targeted_follow_ups for s in samples),
        generic_follow_ups=sum(s.behaviour.generic_follow_ups for s in samples),
        attribution=dict(sorted(labels.items())),
    )


def compute_metrics(
    samples: Iterable[SampleRecord],
    unavailable: Mapping[str, Iterable[str]] | None = None,
) -> list[SettingMetrics]:
    """Metrics for every (agent, setting) present, agents in first-seen order, settings in
    the canonical order. ``unavailable``: setting -> ids of groups that lack it."""
    unavailable = unavailable or {}
    grouped: dict[str, dict[str, list[SampleRecord]]] = {}
    for sample in samples:
        if sample.intervention != "none":
            continue  # intervention arms have their own table (intervention_metrics)
        grouped.setdefault(sample.agent, {}).setdefault(sample.setting, []).append(sample)
    out = []
    for agent, by_setting in grouped.items():
        reliable = {s.group_id: s for s in by_setting.get("reliable", [])}
        for setting in SETTING_NAMES:
            if setting in by_setting:
                out.append(
                    setting_metrics(
                        agent,
                        setting,
                        by_setting[setting],
                        reliable,
                        unavailable.get(setting, ()),
                    )
                )
    return out


class InterventionMetrics(BaseModel):
    """Accuracy of one agent in one defective setting under one intervention arm."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    setting: str
    arm: str
    samples: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    delivered: int
    """samples in which the intervention was delivered (a defect showed)"""
    reliable_accuracy: float | None = None
    """the agent's Reliable accuracy on the same groups (the reference line)"""


def intervention_metrics(samples: Iterable[SampleRecord]) -> list[InterventionMetrics]:
    """Per agent, defective setting and intervention arm (only when arms other than ``none``
    were run), in arm order, with the Reliable accuracy on the same groups."""
    from ._interventions import INTERVENTION_ARMS

    records = list(samples)
    if all(r.intervention == "none" for r in records):
        return []
    reliable = {(r.agent, r.group_id): r.correct for r in records if r.setting == "reliable"}
    grouped: dict[tuple[str, str, str], list[SampleRecord]] = {}
    for record in records:
        if record.setting != "reliable":
            grouped.setdefault((record.agent, record.setting, record.intervention), []).append(
                record
            )
    out = []
    order: dict[str, int] = {name: i for i, name in enumerate(SETTING_NAMES)}
    arms: dict[str, int] = {name: i for i, name in enumerate(INTERVENTION_ARMS)}
    for (agent, setting, arm), group in sorted(
        grouped.items(), key=lambda item: (item[0][0], order[item[0][1]], arms[item[0][2]])
    ):
        correct = sum(r.correct for r in group)
        low, high = wilson_interval(correct, len(group))
        base = [reliable[(agent, r.group_id)] for r in group if (agent, r.group_id) in reliable]
        out.append(
            InterventionMetrics(
                agent=agent,
                setting=setting,
                arm=arm,
                samples=len(group),
                correct=correct,
                accuracy=correct / len(group),
                ci_low=low,
                ci_high=high,
                delivered=sum(r.intervention_delivered for r in group),
                reliable_accuracy=sum(base) / len(base) if base else None,
            )
        )
    return out
