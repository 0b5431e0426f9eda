"""Metrics: epochs as trials, paired drop and retention per epoch with exclusions, pass^k,
justified accuracy, rounds against the minimum, errors apart, paired comparisons."""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    SAMPLES_FILE,
    AskAction,
    Attribution,
    Behaviour,
    Comparison,
    Environment,
    Justification,
    RoleRequest,
    SampleRecord,
    SettingMetrics,
    WaitAction,
    behaviour_of,
    compare_agents,
    compute_metrics,
    configuration_of,
    evaluate,
    make_config,
    plan_jobs,
    run_sample,
)
from uncobench_z3.settings import SettingName
from uncobench_z3.stats import mcnemar_exact

ROOT = Path(__file__).resolve().parent.parent
GROUP = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]


F = Fraction


def record(
    group: str,
    setting: SettingName,
    correct: bool,
    agent: str = "a",
    rounds: int = 2,
    label: str | None = None,
    behaviour: Behaviour | None = None,
    epoch: int = 1,
    seed: int = 0,
    justified: str | None = "justified",
    min_rounds: int | None = None,
    result: str | None = None,
) -> SampleRecord:
    attribution = None
    if label is not None:
        attribution = Attribution.model_validate(
            {"label": label, "detail": "", "received": 0, "needed": 1}
        )
    justification = None
    if correct and justified is not None:
        justification = Justification.model_validate(
            {"label": justified, "detail": "", "received": 0, "needed": 1}
        )
    sample = SampleRecord(
        key=f"{group}/{setting}/{agent}/{seed}/{epoch}",
        group_id=group,
        group_hash="h",
        setting=setting,
        agent=agent,
        seed=seed,
        epoch=epoch,
        budget=20,
        status="answered",
        result="correct" if correct else "wrong_answer",
        correct=correct,
        gold=GROUP.gold,
        rounds=rounds,
        behaviour=behaviour or Behaviour(),
        attribution=attribution,
        justification=justification,
        min_rounds=min_rounds,
    )
    # "error" is the result of a sample the run could not finish (written by the runner)
    return sample if result is None else sample.model_copy(update={"result": result})


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
    assert mixed.accuracy == F(2, 3) and mixed.paired == 3
    # paired: reliable on g1, g2, g4 = 2/3; mixed = 2/3 -> no drop, though retention is 1/2
    assert mixed.drop == 0 and mixed.reliable_accuracy == F(2, 3)
    assert (mixed.retained, mixed.retention_base, mixed.retention) == (1, 2, F(1, 2))
    assert (mixed.excluded_unavailable, mixed.excluded_missing) == (1, 0)
    assert mixed.mean_rounds == 3
    assert mixed.attribution == {"misled": 1}
    assert misaligned.drop == 1 and misaligned.retention == 0
    assert (misaligned.excluded_unavailable, misaligned.excluded_missing) == (0, 2)
    for m in metrics.values():  # every figure is exact
        assert all(isinstance(x, Fraction | None) for x in (m.accuracy, m.drop, m.retention))


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
    assert (m.mean_waits, m.mean_redundant, m.mean_contacts) == (F(1, 2), 1, F(7, 2))
    assert m.targeted_follow_ups == 1 and m.generic_follow_ups == 0


def outcomes(setting: SettingName, table: dict[str, str], agent: str = "a") -> list[SampleRecord]:
    """``{"g1": "110"}``: g1 correct in epochs 1 and 2, wrong in epoch 3."""
    return [
        record(group, setting, mark == "1", agent=agent, epoch=epoch)
        for group, marks in table.items()
        for epoch, mark in enumerate(marks, start=1)
    ]


def only(metrics: list[SettingMetrics], setting: str, agent: str = "a") -> SettingMetrics:
    return next(m for m in metrics if m.setting == setting and m.agent == agent)


def test_epochs_are_trials_of_a_group_and_accuracy_averages_groups() -> None:
    samples = outcomes("reliable", {"g1": "110", "g2": "000"})
    m = only(compute_metrics(samples), "reliable")
    assert (m.n_groups, m.epochs, m.samples, m.correct) == (2, 3, 6, 2)
    assert m.accuracy == F(1, 3)
    # pass^k = mean of C(c,k)/C(3,k): g1 (c=2): 1, 2/3... ; g2: 0
    assert m.pass_hat_k == {1: F(1, 3), 2: F(1, 6), 3: F(0)}
    assert m.pass_at_k == {1: F(1, 3), 2: F(1, 2), 3: F(1, 2)}
    assert m.accuracy_ci is not None and m.accuracy_ci[0] <= m.accuracy <= m.accuracy_ci[1]


def test_accuracy_weights_groups_equally_when_epochs_differ() -> None:
    """A group with one scored epoch (the others errors) counts as much as a full one."""
    samples = [
        *outcomes("reliable", {"g1": "111"}),
        record("g2", "reliable", False, epoch=1),
        record("g2", "reliable", False, epoch=2, result="error"),
        record("g2", "reliable", False, epoch=3, result="error"),
    ]
    m = only(compute_metrics(samples), "reliable")
    assert (m.samples, m.errors, m.correct) == (4, 2, 3)
    assert m.accuracy == F(1, 2)  # (1 + 0) / 2, not the pooled 3/4
    assert list(m.pass_hat_k) == [1]  # g2 has one scored trial


def test_errors_are_left_out_and_counted() -> None:
    samples = [
        record("g1", "reliable", True),
        record("g2", "reliable", False, result="error"),
        record("g1", "missed", False, result="error"),
        record("g2", "missed", True),
    ]
    metrics = compute_metrics(samples)
    reliable, missed = only(metrics, "reliable"), only(metrics, "missed")
    assert (reliable.n_groups, reliable.errors, reliable.accuracy) == (1, 1, 1)
    # g1's Missed sample is an error: nothing to pair with g1's Reliable; g2's Reliable errored
    assert (missed.paired, missed.drop, missed.retention) == (0, None, None)
    assert missed.excluded_missing == 1
    # a cell of errors only has no figure at all, and says why
    broken = compute_metrics([record("g1", "mixed", False, result="error")])[0]
    assert (broken.n_groups, broken.errors, broken.accuracy, broken.accuracy_ci) == (
        0,
        1,
        None,
        None,
    )
    assert broken.pass_hat_k == {} and broken.drop is None
    assert (
        compare_agents([record("g1", "mixed", False, agent=x, result="error") for x in "ab"]) == []
    )


def test_drop_and_retention_are_per_epoch_then_averaged() -> None:
    samples = [
        *outcomes("reliable", {"g1": "11", "g2": "10"}),
        *outcomes("missed", {"g1": "10", "g2": "00"}),
    ]
    m = only(compute_metrics(samples), "missed")
    # epoch 1: Reliable 2/2, Missed 1/2 -> drop 1/2, retention 1/2
    # epoch 2: Reliable 1/2, Missed 0/2 -> drop 1/2, retention 0/1
    assert m.drop == F(1, 2) and m.reliable_accuracy == F(3, 4)
    assert m.retention == F(1, 4)  # pooled over epochs it would be 1/3
    assert (m.retained, m.retention_base, m.paired) == (1, 3, 4)
    assert m.drop_ci is not None and m.drop_ci[0] <= m.drop <= m.drop_ci[1]
    assert m.retention_ci is not None


def test_runs_with_other_seeds_are_further_trials_paired_by_seed() -> None:
    """Combining --seed 0 and --seed 1 runs: each (seed, epoch) is a trial; drop pairs the
    Reliable and Missed samples of the same trial, never one seed with another."""
    samples = [
        record("g1", "reliable", True, seed=0),
        record("g1", "reliable", False, seed=1),
        record("g1", "missed", False, seed=0),
        record("g1", "missed", False, seed=1),
    ]
    m = only(compute_metrics(samples), "missed")
    assert (m.epochs, m.paired) == (2, 2)
    assert m.drop == F(1, 2)  # trial (0, 1): 1 - 0; trial (1, 1): 0 - 0
    assert (m.retention, m.retention_base) == (0, 1)


def test_justified_accuracy_counts_correct_answers_the_evidence_determined() -> None:
    samples = [
        record("g1", "reliable", True, justified="justified"),
        record("g2", "reliable", True, justified="lucky"),
        record("g3", "reliable", True, justified=None),  # written before justification
        record("g4", "reliable", False, label="gathering_failure"),
    ]
    m = only(compute_metrics(samples), "reliable")
    assert m.accuracy == F(3, 4) and m.justified_accuracy == F(1, 4)
    assert (m.justified, m.lucky, m.justification_unknown) == (1, 1, 1)


def test_rounds_against_the_solver_minimum() -> None:
    samples = [
        record("g1", "missed", True, rounds=2, min_rounds=2),
        record("g2", "missed", True, rounds=4, min_rounds=3),
        record("g3", "missed", True, rounds=5, min_rounds=None),
    ]
    m = only(compute_metrics(samples), "missed")
    assert m.mean_rounds == F(11, 3) and m.rounds_distribution == {2: 1, 4: 1, 5: 1}
    assert m.mean_min_rounds == F(5, 2) and m.rounds_ratio == F(6, 5)


def test_paired_comparison_uses_majorities_mcnemar_and_holm() -> None:
    a = {"g1": "111", "g2": "110", "g3": "100", "g4": "011", "g5": "111"}
    b = {"g1": "000", "g2": "100", "g3": "000", "g4": "001", "g5": "111"}
    samples = [
        *outcomes("reliable", a, agent="A"),
        *outcomes("reliable", b, agent="B"),
        *outcomes("missed", {"g1": "11", "g2": "10"}, agent="A"),  # a tie for g2
        *outcomes("missed", {"g1": "00", "g2": "00"}, agent="B"),
    ]
    comparisons = {c.setting: c for c in compare_agents(samples)}
    reliable, missed = comparisons["reliable"], comparisons["missed"]
    assert (reliable.a, reliable.b, reliable.n_groups) == ("A", "B", 5)
    # majorities: A right on g1 g2 g4 g5, B right on g5 -> A only 3, both 1, neither 1
    assert (reliable.a_only, reliable.b_only, reliable.both_correct, reliable.neither) == (
        3,
        0,
        1,
        1,
    )
    assert reliable.p_value == mcnemar_exact(3, 0) == F(1, 4)
    assert reliable.difference == F(1, 5) * (1 + F(1, 3) + F(1, 3) + F(1, 3) + 0)
    assert reliable.accuracy_a - reliable.accuracy_b == reliable.difference  # type: ignore[operator]
    # Missed: g2 is a tie for A (1 of 2): left out of McNemar
    assert (missed.ties, missed.a_only, missed.p_value) == (1, 1, 1)
    # Holm over the two settings: sorted 1/4, 1 -> 2 x 1/4 = 1/2, then max(1/2, 1) = 1
    assert (reliable.p_holm, missed.p_holm) == (F(1, 2), 1)
    assert not reliable.significant
    ci = reliable.difference_ci
    assert ci is not None and ci[0] <= reliable.difference <= ci[1]


def test_a_comparison_does_not_depend_on_which_agent_comes_first() -> None:
    # the report compares agents in the order its logs first show them, which a run with
    # concurrency (or a shuffled log) changes: B minus A must mirror A minus B, interval too
    samples = [
        *outcomes("missed", {f"g{i}": f"{(7 * i * i + 3 * i) % 8:03b}" for i in range(20)}, "A"),
        *outcomes("missed", {f"g{i}": f"{(5 * i + 1) % 8:03b}" for i in range(20)}, "B"),
    ]
    forward = only_comparison(compare_agents(samples, [("A", "B")]))
    backward = only_comparison(compare_agents(list(reversed(samples))))
    assert (backward.a, backward.b) == ("B", "A")
    assert forward.difference_ci is not None and backward.difference_ci is not None
    assert backward.difference_ci == (-forward.difference_ci[1], -forward.difference_ci[0])
    assert backward.difference == -forward.difference  # type: ignore[operator]
    assert (backward.a_only, backward.b_only) == (forward.b_only, forward.a_only)
    assert (backward.accuracy_a, backward.accuracy_b) == (forward.accuracy_b, forward.accuracy_a)
    assert backward.p_holm == forward.p_holm


def only_comparison(comparisons: list[Comparison]) -> Comparison:
    assert len(comparisons) == 1
    return comparisons[0]


def test_every_pair_of_agents_is_compared() -> None:
    samples = [record("g1", "reliable", True, agent=name) for name in ("x", "y", "z")]
    pairs = [(c.a, c.b) for c in compare_agents(samples)]
    assert pairs == [("x", "y"), ("x", "z"), ("y", "z")]


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


def test_a_record_that_arrived_imprecise_was_not_received() -> None:
    """Vance's clearance arrives as "passed or failed" (incomplete): asking for it again is
    not redundant; asking again for Natarajan's, which arrived exactly, is."""
    env = Environment(GROUP, "incomplete")
    env.step(ask("security", "all records"))
    env.step(ask("security", "Marcus Vance's clearance, exactly?"))
    env.step(ask("security", "Priya Natarajan's clearance again?"))
    behaviour = behaviour_of(env.trace, required())
    assert (behaviour.contacts, behaviour.redundant_contacts) == (3, 1)


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


def test_intervals_do_not_depend_on_the_order_of_the_log() -> None:
    """Workers, --concurrency and a resumed run write the same samples in another order: the
    metrics and comparisons (intervals included) are a function of the samples, not of it."""
    marks = ["110", "011", "000", "111", "100", "010", "001", "101"] * 3
    samples = [
        *outcomes("reliable", {f"g{i:02}": "111" for i in range(24)}, agent="A"),
        *outcomes("missed", {f"g{i:02}": m for i, m in enumerate(marks)}, agent="A"),
        *outcomes("reliable", {f"g{i:02}": "111" for i in range(24)}, agent="B"),
        *outcomes("missed", {f"g{i:02}": m[::-1] for i, m in enumerate(marks)}, agent="B"),
    ]
    shuffled = sorted(samples, key=lambda s: (s.agent, s.setting, s.epoch, s.group_id[::-1]))
    assert compute_metrics(shuffled) == compute_metrics(samples)
    assert compare_agents(shuffled) == compare_agents(samples)


def test_groups_of_two_benchmarks_that_share_an_id_stay_apart() -> None:
    """A report pools runs of two benchmarks; ids are per benchmark (``logistics_00018`` in
    builds with seeds 7 and 8), so a group is its id and its content: neither is dropped as a
    duplicate trial of the other, and drop pairs a group only with its own Reliable sample."""
    first = [record("g1", "reliable", True), record("g1", "missed", True)]
    other = [
        s.model_copy(update={"group_hash": "h2", "key": s.key + "/h2"})
        for s in (record("g1", "reliable", False), record("g1", "missed", False))
    ]
    metrics = compute_metrics([*first, *other])
    reliable, missed = only(metrics, "reliable"), only(metrics, "missed")
    assert (reliable.n_groups, reliable.samples, reliable.accuracy) == (2, 2, F(1, 2))
    assert (missed.n_groups, missed.accuracy, missed.paired, missed.drop) == (2, F(1, 2), 2, 0)
    assert missed.pass_hat_k == {1: F(1, 2)}
    other_b = [s.model_copy(update={"agent": "b", "key": s.key + "/b"}) for s in [*first, *other]]
    compared = {c.setting: c for c in compare_agents([*first, *other, *other_b])}
    assert compared["missed"].n_groups == 2


def test_runs_that_differ_in_the_missed_wait_or_the_reader_are_other_configurations() -> None:
    """``--missed-wait`` and ``--followup-reader`` change scores: a record holds them, and a
    run given either is a row of its own, never a duplicate trial of the default run's."""
    default = [record("g1", "missed", True), record("g2", "missed", True)]
    waited = [
        s.model_copy(update={"missed_wait": 0, "correct": False, "key": s.key + "/w0"})
        for s in default
    ]
    read = [
        s.model_copy(update={"followup_reader": "model", "key": s.key + "/model"}) for s in default
    ]
    metrics = {m.agent: m for m in compute_metrics([*default, *waited, *read])}
    assert sorted(metrics) == ["a", "a (follow-up reader model)", "a (missed wait 0)"]
    assert (metrics["a"].samples, metrics["a"].accuracy) == (2, 1)
    assert (metrics["a (missed wait 0)"].samples, metrics["a (missed wait 0)"].accuracy) == (2, 0)


def test_one_trial_under_two_keys_is_refused_not_merged() -> None:
    """A log written before records held the wait and the reader gives their defaults for a
    run made with others: two samples of one group, setting and trial under other keys. The
    figures would keep one and count both; the metrics refuse them, saying what to do."""
    first = record("g1", "missed", True)
    older = first.model_copy(update={"correct": False, "key": first.key + "/older"})
    with pytest.raises(ConfigError, match="report those runs apart"):
        compute_metrics([first, older])
    with pytest.raises(ConfigError, match="report those runs apart"):
        compare_agents([first, older, first.model_copy(update={"agent": "b", "key": "b"})])
    # the same key twice is one sample, whichever reader passed it on
    assert only(compute_metrics([first, first]), "missed").accuracy == 1


def test_a_record_holds_the_runs_missed_wait_and_reader() -> None:
    """The runner writes what the sample's key was made of: a log read later tells runs
    given another ``--missed-wait`` or ``--followup-reader`` apart."""
    config = make_config("examples", [GROUP], ["builtin/patient"], missed_wait=0)
    jobs, _ = plan_jobs([GROUP], config)
    job = next(j for j in jobs if j.setting == "missed")
    sample = asyncio.run(run_sample(job))
    assert (sample.missed_wait, sample.followup_reader) == (0, "rules")
    assert configuration_of(sample) == "builtin/patient (missed wait 0)"
    again = SampleRecord.model_validate_json(sample.model_dump_json())
    assert again == sample
    # a line written before the fields existed reads as the defaults
    older = {k: v for k, v in sample.model_dump(mode="json").items()
             if k not in ("missed_wait", "followup_reader")}  # fmt: skip
    assert SampleRecord.model_validate(older).missed_wait is None


def test_a_log_written_before_records_held_the_wait_takes_its_runs(tmp_path: Path) -> None:
    """A run given ``--missed-wait 0`` whose log was written before records held the wait (the
    fields taken out of its lines here): its records read back, by the run's summary and by
    the report, with its run's wait, and its row is labelled as a new run's would be."""
    from uncobench_z3.report import load_report_data

    config = make_config("examples", [GROUP], ["builtin/patient"], ["missed"], missed_wait=0)
    summary = evaluate([GROUP], config, tmp_path / "run")
    log = tmp_path / "run" / SAMPLES_FILE
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        del line["missed_wait"], line["followup_reader"]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for records in (list(summary.iter_records()), load_report_data(tmp_path).samples):
        assert [configuration_of(r) for r in records] == ["builtin/patient (missed wait 0)"]
