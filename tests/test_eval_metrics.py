"""Metrics: the Wilson interval, paired drop and retention with exclusions, behaviour counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    AskAction,
    Attribution,
    Behaviour,
    Environment,
    RoleRequest,
    SampleRecord,
    WaitAction,
    behaviour_of,
    compute_metrics,
    wilson_interval,
)
from uncobench_z3.settings import SettingName

ROOT = Path(__file__).resolve().parent.parent
GROUP = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]


@pytest.mark.parametrize(
    ("successes", "total", "low", "high"),
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (1, 1, 0.2065, 1.0)],
)
def test_wilson_interval_known_values(successes: int, total: int, low: float, high: float) -> None:
    got = wilson_interval(successes, total)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_always_holds_the_proportion() -> None:
    for total in range(1, 60):
        for successes in range(total + 1):
            low, high = wilson_interval(successes, total)
            assert 0.0 <= low <= successes / total <= high <= 1.0


def test_wilson_interval_without_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def record(
    group: str,
    setting: SettingName,
    correct: bool,
    agent: str = "a",
    rounds: int = 2,
    label: str | None = None,
    behaviour: Behaviour | None = None,
) -> SampleRecord:
    attribution = None
    if label is not None:
        attribution = Attribution.model_validate(
            {"label": label, "detail": "", "received": 0, "needed": 1}
        )
    return SampleRecord(
        key=f"{group}/{setting}/{agent}",
        group_id=group,
        group_hash="h",
        setting=setting,
        agent=agent,
        seed=0,
        budget=20,
        status="answered",
        result="correct" if correct else "wrong_answer",
        correct=correct,
        gold=GROUP.gold,
        rounds=rounds,
        behaviour=behaviour or Behaviour(),
        attribution=attribution,
    )


def test_drop_and_retention_are_paired_and_exclusions_counted() -> None:
    samples = [
        # reliable: g1, g2, g3 correct; g4 wrong
        record("g1", "reliable", True),
        record("g2", "reliable", True),
        record("g3", "reliable", True),
        record("g4", "reliable", False),
        # mixed exists for g1 (kept), g2 (lost), g4 (right by luck); g3 has no Mixed
        record("g1", "mixed", True, rounds=4),
        record("g2", "mixed", False, label="misled"),
        record("g4", "mixed", True, rounds=3),
        # misaligned was run on g1 only (e.g. a --setting/--limit change); g2, g3 not run
        record("g1", "misaligned", False, label="gathering_failure"),
    ]
    metrics = {m.setting: m for m in compute_metrics(samples, {"mixed": ["g3"]})}
    reliable, mixed, misaligned = metrics["reliable"], metrics["mixed"], metrics["misaligned"]
    assert (reliable.samples, reliable.correct, reliable.drop, reliable.retention) == (
        4,
        3,
        None,
        None,
    )
    assert mixed.accuracy == pytest.approx(2 / 3) and mixed.paired == 3
    # paired: reliable on g1, g2, g4 = 2/3; mixed = 2/3 -> no drop, though retention is 1/2
    assert mixed.drop == pytest.approx(0.0)
    assert (mixed.retained, mixed.retention_base, mixed.retention) == (1, 2, 0.5)
    assert (mixed.excluded_unavailable, mixed.excluded_missing) == (1, 0)
    assert mixed.mean_rounds == pytest.approx(3.0)
    assert mixed.attribution == {"misled": 1}
    assert misaligned.drop == pytest.approx(100.0) and misaligned.retention == 0.0
    assert (misaligned.excluded_unavailable, misaligned.excluded_missing) == (0, 2)


def test_metrics_are_per_agent_in_canonical_setting_order() -> None:
    samples = [
        record("g1", "missed", True, agent="b"),
        record("g1", "reliable", True, agent="b"),
        record("g1", "reliable", False, agent="a"),
    ]
    order = [(m.agent, m.setting) for m in compute_metrics(samples)]
    assert order == [("b", "reliable"), ("b", "missed"), ("a", "reliable")]


def test_behaviour_counts_in_the_metrics() -> None:
    seen = Behaviour(
        defects_seen=("missed",),
        defects_resolved=("missed",),
        targeted_follow_ups=1,
        waits=1,
        redundant_contacts=2,
        contacts=7,
    )
    ignored = Behaviour(defects_seen=("missed",))
    samples = [
        record("g1", "missed", True, behaviour=seen),
        record("g2", "missed", False, behaviour=ignored, label="gathering_failure"),
    ]
    m = compute_metrics(samples)[0]
    assert (m.with_defect, m.recovered, m.recovered_correct, m.no_corrective) == (2, 1, 1, 1)
    assert (m.mean_waits, m.mean_redundant, m.mean_contacts) == (0.5, 1.0, 3.5)
    assert m.targeted_follow_ups == 1 and m.generic_follow_ups == 0


# -- redundant contacts and follow-ups on real episodes ----------------------------------------
def ask(role: str, question: str) -> AskAction:
    return AskAction(requests=(RoleRequest(role=role, question=question),))


def required() -> dict[str, str]:
    return {f.key: f.context for f in GROUP.spec.facts}


def test_asking_again_for_what_arrived_is_redundant() -> None:
    env = Environment(GROUP, "reliable")
    env.step(ask("operations", "all records"))
    env.step(ask("finance", "all records"))  # first contact: not redundant
    env.step(ask("operations", "Marcus Vance's availability date again?"))  # arrived already
    env.step(ask("operations", "everything again"))
    env.step(WaitAction())
    behaviour = behaviour_of(env.trace, required())
    assert (behaviour.contacts, behaviour.redundant_contacts, behaviour.waits) == (4, 2, 1)


def test_defect_related_re_asks_are_not_redundant() -> None:
    env = Environment(GROUP, "misaligned")
    env.step(ask("operations", "all records"))
    env.step(ask("operations", "Could you double-check?"))  # generic follow-up
    env.step(
        ask("operations", "Marcus Vance's field allowance for the FY2026 site allowance table")
    )
    env.step(ask("operations", "Marcus Vance's field allowance again"))  # fixed already
    behaviour = behaviour_of(env.trace, required())
    assert behaviour.redundant_contacts == 1
    assert (behaviour.generic_follow_ups, behaviour.targeted_follow_ups) == (1, 1)
    assert behaviour.defects_seen == ("misaligned",) and behaviour.recovered

    silent = Environment(GROUP, "missed")
    silent.step(ask("security", "clearances"))
    silent.step(ask("security", "clearances"))  # re-asking a silent colleague
    assert behaviour_of(silent.trace, required()).redundant_contacts == 0
