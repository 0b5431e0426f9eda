"""Paired comparison of two agents per setting (and intervention arm), over the same groups.

For agents A and B in one setting and arm, the *common groups* are those where both have at
least one scored sample. Per group, each agent's accuracy is its share of correct trials.

* ``difference`` - the mean over common groups of A's accuracy minus B's, with a *paired*
  bootstrap interval: groups are resampled once and both agents' values move together
  (:mod:`uncobench_z3.stats._bootstrap`).
* McNemar - each agent's *majority outcome* per group: correct when more than half its
  trials are, wrong when fewer than half are, a tie otherwise (an even number of trials
  split evenly). Groups where either agent ties are left out (``ties``). Of the rest,
  ``a_only`` are right for A and wrong for B, ``b_only`` the reverse; the exact two-sided
  p-value is from the binomial (:func:`uncobench_z3.stats.mcnemar_exact`).
* ``p_holm`` - Holm's adjustment over the settings of one agent pair and arm (the family a
  reader scans for "where do these two differ"); ``significant`` when ``p_holm < alpha``
  (1/20).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from ..stats import BootstrapConfig, Interval, bootstrap_many, holm_adjust, mcnemar_exact, mean_at
from ._metrics import GroupKey, Trial, by_group_and_trial, cells
from ._sample import SampleRecord

ALPHA = Fraction(1, 20)


class Comparison(BaseModel):
    """Agent ``a`` against agent ``b`` in one setting and arm (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str
    b: str
    setting: str
    arm: str = "none"
    n_groups: int
    accuracy_a: Fraction | None
    accuracy_b: Fraction | None
    difference: Fraction | None
    difference_ci: Interval | None = None
    both_correct: int = 0
    a_only: int = 0
    b_only: int = 0
    neither: int = 0
    ties: int = 0
    p_value: Fraction
    p_holm: Fraction
    significant: bool


def majority(trials: Iterable[SampleRecord]) -> bool | None:
    """True when more than half the trials are correct, False when fewer, None on a tie."""
    outcomes = [s.correct for s in trials]
    right = sum(outcomes)
    if 2 * right == len(outcomes):
        return None
    return 2 * right > len(outcomes)


def _share(trials: dict[Trial, SampleRecord]) -> Fraction:
    return Fraction(sum(s.correct for s in trials.values()), len(trials))


def _compare(
    a: str,
    b: str,
    setting: str,
    arm: str,
    mine: dict[GroupKey, dict[Trial, SampleRecord]],
    theirs: dict[GroupKey, dict[Trial, SampleRecord]],
    config: BootstrapConfig,
) -> Comparison:
    if b < a:
        # a pair is resampled one way round whichever agent a log shows first (the report
        # takes them in that order, which concurrency changes): units sort and the label
        # seeds differently with the agents swapped, which would give B minus A another
        # interval than the mirror of A minus B
        return _mirrored(_compare(b, a, setting, arm, theirs, mine, config))
    common = [g for g in mine if g in theirs]
    shares = [(_share(mine[g]), _share(theirs[g])) for g in common]
    units = [(left, right, left - right) for left, right in shares]
    estimates = bootstrap_many(
        units,
        {"a": mean_at(0), "b": mean_at(1), "difference": mean_at(2)},
        config,
        f"compare|{a}|{b}|{setting}|{arm}",
    )
    table = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0, "ties": 0}
    for group in common:
        left, right = majority(mine[group].values()), majority(theirs[group].values())
        if left is None or right is None:
            table["ties"] += 1
        elif left and right:
            table["both"] += 1
        elif left:
            table["a_only"] += 1
        elif right:
            table["b_only"] += 1
        else:
            table["neither"] += 1
    p_value = mcnemar_exact(table["a_only"], table["b_only"])
    return Comparison(
        a=a,
        b=b,
        setting=setting,
        arm=arm,
        n_groups=len(common),
        accuracy_a=estimates["a"].value,
        accuracy_b=estimates["b"].value,
        difference=estimates["difference"].value,
        difference_ci=estimates["difference"].interval,
        both_correct=table["both"],
        a_only=table["a_only"],
        b_only=table["b_only"],
        neither=table["neither"],
        ties=table["ties"],
        p_value=p_value,
        p_holm=p_value,
        significant=False,
    )


def _mirrored(c: Comparison) -> Comparison:
    """``c`` from its other agent's side: B minus A, with the mirrored interval."""
    interval = None if c.difference_ci is None else (-c.difference_ci[1], -c.difference_ci[0])
    return c.model_copy(
        update={
            "a": c.b,
            "b": c.a,
            "accuracy_a": c.accuracy_b,
            "accuracy_b": c.accuracy_a,
            "difference": None if c.difference is None else -c.difference,
            "difference_ci": interval,
            "a_only": c.b_only,
            "b_only": c.a_only,
        }
    )


def compare_agents(
    samples: Iterable[SampleRecord],
    pairs: Sequence[tuple[str, str]] | None = None,
    config: BootstrapConfig | None = None,
) -> list[Comparison]:
    """Comparisons for ``pairs`` (default: every pair of agents, in first-seen order), per
    setting and arm where both agents have a scored sample of a common group, Holm-adjusted
    over the settings of each pair and arm."""
    config = config or BootstrapConfig()
    by_cell = {cell: by_group_and_trial(group) for cell, group in cells(samples).items()}
    agents = list(dict.fromkeys(agent for agent, _, _ in by_cell))
    chosen = list(pairs) if pairs is not None else list(combinations(agents, 2))
    out: list[Comparison] = []
    for a, b in chosen:
        family: dict[str, list[Comparison]] = {}
        for (agent, setting, arm), mine in by_cell.items():
            theirs = by_cell.get((b, setting, arm))
            if agent != a or theirs is None or not mine.keys() & theirs.keys():
                continue  # no common group: nothing to test, and no test in Holm's family
            family.setdefault(arm, []).append(_compare(a, b, setting, arm, mine, theirs, config))
        for members in family.values():
            adjusted = holm_adjust([c.p_value for c in members])
            out += [
                c.model_copy(update={"p_holm": p, "significant": p < ALPHA})
                for c, p in zip(members, adjusted, strict=True)
            ]
    return out
