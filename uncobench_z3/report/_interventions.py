"""Causal interventions on equal footing: each arm measured on the same groups.

Arms are often run on a subset of the groups (``--limit``, an arm added later): pooling the
``none`` arm over 100 groups against 40 for the others compares different tasks. A *panel*
is one agent in one defective setting run in more than one arm; its *common groups* are
those with a scored sample in every one of its arms; each arm's metrics, and the agent's
Reliable accuracy (the reference line), are computed on those groups only, with the same
definitions and intervals as every other cell (:func:`~uncobench_z3.evaluation.compute_metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ..evaluation import (
    GroupKey,
    SampleRecord,
    SettingMetrics,
    compute_metrics,
    configuration_of,
    group_of,
    is_scored,
)
from ..stats import BootstrapConfig


class InterventionPanel(BaseModel):
    """One agent, one defective setting, every arm it ran, on the groups common to them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    setting: str
    arms: list[str]
    common_groups: int
    """groups with a scored sample in every arm (the panel's n)"""
    dropped_groups: int
    """groups scored in some arm but not in all (left out of every arm)"""
    reliable: SettingMetrics | None
    """the agent's Reliable cell on the common groups (the reference)"""
    cells: list[SettingMetrics]
    """one per arm, in arm order"""


def intervention_panels(
    samples: Sequence[SampleRecord],
    unavailable: Mapping[str, Sequence[str]] | None = None,
    config: BootstrapConfig | None = None,
) -> list[InterventionPanel]:
    """A panel for every agent and defective setting run in more than one arm."""
    arms: dict[tuple[str, str], dict[str, set[GroupKey]]] = {}
    for sample in samples:
        if sample.setting != "reliable" and is_scored(sample):
            key = (configuration_of(sample), sample.setting)
            arms.setdefault(key, {}).setdefault(sample.intervention, set()).add(group_of(sample))
    panels = []
    for (agent, setting), groups_by_arm in arms.items():
        if len(groups_by_arm) < 2:
            continue
        common = set.intersection(*groups_by_arm.values())
        every = set.union(*groups_by_arm.values())
        chosen = [
            s
            for s in samples
            if configuration_of(s) == agent
            and group_of(s) in common
            and (s.setting == setting or (s.setting == "reliable" and s.intervention == "none"))
        ]
        metrics = compute_metrics(chosen, unavailable, config)
        panels.append(
            InterventionPanel(
                agent=agent,
                setting=setting,
                arms=[m.arm for m in metrics if m.setting == setting],
                common_groups=len(common),
                dropped_groups=len(every - common),
                reliable=next((m for m in metrics if m.setting == "reliable"), None),
                cells=[m for m in metrics if m.setting == setting],
            )
        )
    return panels
