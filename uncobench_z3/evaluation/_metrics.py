"""Aggregate metrics per configuration x setting x intervention arm, exact and with intervals.

A *configuration* is everything besides the setting and the arm that changes scores: the
agent (its name carries the model's settings and the protocol), the round budget and the
colleagues (scripted, or the model and whether it phrases the scripted replies or writes its
own), the missed reply's wait (``--missed-wait``) and who reads follow-ups
(``--followup-reader``). Its label (:func:`configuration_label`) is the agent's name, followed
by the others that are not the defaults; the ``agent`` of a cell is that label, so runs that
differ in any of them are never merged. A log written before the records held the wait and
the reader gives its run's (``run.json``: :meth:`SampleRecord.with_run_settings`); two
samples of one trial of one group that differ in their keys all the same are refused
(:func:`by_group_and_trial`), not merged.

Units. A *trial* is one (run seed, epoch) pair: runs made with other ``--seed`` values are
further trials, not a larger sample. A *group's* trials in a cell are its scored samples
there. Samples that ended in an error (``result == "error"``: the run could not finish the
episode) are not scored: they are left out of every figure and counted in ``errors``. So are
samples whose policy colleague broke its policy (:func:`broke_policy`: a reply the judge
found unfaithful or incomplete against the scripted reference): a colleague's error is not
the agent's; they are counted in ``colleague_breaches``.
Intervals come from a bootstrap over *groups* (:mod:`uncobench_z3.stats`): the trials of one
group share its task, so they are not independent.

Definitions (every figure a :class:`~fractions.Fraction`; ``None`` when undefined):

* ``accuracy`` - the mean over groups of the group's share of correct trials (with every
  group run equally often: correct / samples), with ``accuracy_ci``.
* ``pass_hat_k`` / ``pass_at_k`` - tau-bench's unbiased estimators for k = 1 .. the fewest
  trials of any group (:mod:`uncobench_z3.stats._passk`).
* ``justified_accuracy`` - as accuracy, counting only correct answers the solver labels
  ``justified`` (the evidence received determined them); ``lucky`` counts the correct ones
  it did not, ``justification_unknown`` the correct ones it could not decide (and records
  written before justification existed). The gap to accuracy is luck.
* ``drop`` - per trial: the agent's Reliable accuracy minus its accuracy here, both on the
  groups that have a scored sample in both in that trial (``paired`` counts these
  group-trial pairs); then the mean over trials, with ``drop_ci``. A share: 1/5 is 20
  points. ``reliable_accuracy`` is the Reliable side, averaged the same way.
* ``retention`` - per trial: of the groups correct in Reliable in that trial and scored here,
  the share correct here; the mean over trials with any such group, with ``retention_ci``.
  Its denominator, ``retention_base``, counts those group-trial pairs (``retained`` the
  correct ones). Reliable-correct group-trials without a sample here are excluded and
  counted: ``excluded_unavailable`` (the group lacks the setting) and ``excluded_missing``
  (not run).
* ``mean_rounds`` and ``rounds_distribution`` (rounds -> samples); ``mean_min_rounds`` the
  mean of the solver-computed minimum (:mod:`._min_rounds`) over the samples that have it,
  and ``rounds_ratio`` = sum of rounds / sum of minimum rounds over those samples.
* ``mean_waits``, ``mean_redundant``, ``mean_contacts`` - per sample.
* Behaviour: ``with_defect`` samples where a defect showed up; ``recovered`` of them had
  every such defect resolved; ``recovered_correct`` of those answered correctly;
  ``no_corrective`` of them never followed a defect up (no targeted or generic follow-up).
* ``behaviour_classes`` - every scored sample in one class (:func:`behaviour_class`), so the
  shares stack to 1: ``recovered_correct`` (a defect showed, every one shown was resolved,
  the answer is right), ``recovered_wrong`` (all resolved, wrong answer), ``partly_recovered``
  (a targeted follow-up, but not every defect resolved), ``generic_only`` (only generic,
  unclassified follow-ups), ``no_follow_up`` (no corrective follow-up), ``defect_not_shown``
  (no defect ever showed: the defective colleague was never asked, or the setting has none).
* ``delivered`` - samples whose intervention text was delivered (arms other than none).
* ``attribution`` - labels of the wrong answers (see :mod:`._attribution`).
* Pending requests (:func:`pending_metrics`): ``answered_pending`` samples answered while a
  request was still pending; ``missed_cases`` samples in which a colleague missed a request,
  ``missed_multi_contact`` of them with more than one request to that colleague (the
  paper's "more than one contact with the designated role").
* ``budget_exhausted`` / ``context_exhausted`` - scored samples that ended without an answer
  because the round budget ran out / the conversation outgrew the agent model's context
  window (both are outcomes, scored wrong; not errors).
* ``invalid_actions`` of ``actions`` (rounds played, scored samples) - actions the environment
  rejected; ``invalid_rate`` is their share.

:func:`reader_agreement` compares the rules' and a model's reading of follow-ups
(``--followup-reader model``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..settings import SETTING_NAMES
from ..stats import (
    BootstrapConfig,
    Interval,
    Unit,
    bootstrap_many,
    mean_at,
    pass_k_table,
    ratios_at,
)
from ._interventions import INTERVENTION_ARMS
from ._protocol import DEFAULT_BUDGET
from ._sample import SampleRecord
from ._summary import SampleOutcome

ERROR_RESULT = "error"
"""The ``result`` of a sample the run could not finish (not scored, counted apart)."""
Trial = tuple[int, int]
"""(run seed, epoch)"""
CellKey = tuple[str, str, str]
"""(configuration label, setting, intervention arm)"""
GroupKey = tuple[str, str]
"""(group id, group content hash): ids are per benchmark, and a report pools benchmarks"""


def is_error(sample: SampleRecord | SampleOutcome) -> bool:
    """A sample that ended in an error is not scored (a record, or a summary's outcome)."""
    return str(sample.result) == ERROR_RESULT


def broke_policy(sample: SampleRecord) -> bool:
    """A policy colleague broke its policy in this sample (not scored: module docstring)."""
    keeping = sample.colleague_policy
    return keeping is not None and keeping.broken


def is_scored(sample: SampleRecord) -> bool:
    return not is_error(sample) and not broke_policy(sample)


def trial_of(sample: SampleRecord) -> Trial:
    return sample.seed, sample.epoch


def group_of(sample: SampleRecord) -> GroupKey:
    """The sample's group: its id and content hash (ids repeat across benchmarks)."""
    return sample.group_id, sample.group_hash


def configuration_label(
    agent: str,
    budget: int,
    colleague: str,
    colleague_mode: str = "phrase",
    missed_wait: int | None = None,
    followup_reader: str = "rules",
) -> str:
    """The agent's name, with the budget, the colleagues (``policy colleagues M`` for a model
    writing its replies under the policy), the missed reply's wait and the follow-ups' reader
    when they are not the defaults."""
    extra = [f"budget {budget}"] if budget != DEFAULT_BUDGET else []
    if colleague != "scripted":
        # (a model's colleagues in policy mode write their replies themselves: other
        # colleagues than the same model wording the scripted replies)
        mode = "" if colleague_mode == "phrase" else f"{colleague_mode} "
        extra.append(f"{mode}colleagues {colleague}")
    if missed_wait is not None:
        extra.append(f"missed wait {missed_wait}")
    if followup_reader != "rules":
        extra.append(f"follow-up reader {followup_reader}")
    return f"{agent} ({', '.join(extra)})" if extra else agent


def configuration_of(sample: SampleRecord) -> str:
    """The label of a sample's configuration (:func:`configuration_label`)."""
    return configuration_label(
        sample.agent,
        sample.budget,
        sample.colleague,
        sample.colleague_mode,
        sample.missed_wait,
        sample.followup_reader,
    )


def cell_of(sample: SampleRecord) -> CellKey:
    return configuration_of(sample), sample.setting, sample.intervention


class SettingMetrics(BaseModel):
    """The figures of one configuration in one setting under one arm (module docstring);
    ``agent`` is the configuration's label.

    Fractions serialise to JSON as exact strings (``"2/3"``, ``"1"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    setting: str
    arm: str = "none"
    n_groups: int
    epochs: int
    """distinct trials (run seed, epoch) in the cell"""
    samples: int
    """scored samples"""
    errors: int = 0
    colleague_breaches: int = 0
    """samples whose policy colleague broke its policy (not scored)"""
    correct: int
    accuracy: Fraction | None
    accuracy_ci: Interval | None = None
    pass_hat_k: dict[int, Fraction] = Field(default_factory=dict)
    pass_at_k: dict[int, Fraction] = Field(default_factory=dict)
    justified: int = 0
    lucky: int = 0
    justification_unknown: int = 0
    justified_accuracy: Fraction | None = None
    justified_accuracy_ci: Interval | None = None
    paired: int = 0
    reliable_accuracy: Fraction | None = None
    drop: Fraction | None = None
    drop_ci: Interval | None = None
    retention_base: int = 0
    retained: int = 0
    retention: Fraction | None = None
    retention_ci: Interval | None = None
    excluded_unavailable: int = 0
    excluded_missing: int = 0
    mean_rounds: Fraction | None = None
    rounds_distribution: dict[int, int] = Field(default_factory=dict)
    mean_min_rounds: Fraction | None = None
    rounds_ratio: Fraction | None = None
    mean_waits: Fraction | None = None
    mean_redundant: Fraction | None = None
    mean_contacts: Fraction | None = None
    budget_exhausted: int = 0
    context_exhausted: int = 0
    invalid_actions: int = 0
    actions: int = 0
    with_defect: int = 0
    recovered: int = 0
    recovered_correct: int = 0
    no_corrective: int = 0
    targeted_follow_ups: int = 0
    generic_follow_ups: int = 0
    behaviour_classes: dict[str, int] = Field(default_factory=dict)
    delivered: int = 0
    attribution: dict[str, int] = Field(default_factory=dict)
    answered_pending: int = 0
    missed_cases: int = 0
    missed_multi_contact: int = 0

    @property
    def missed_multi_contact_share(self) -> float | None:
        return self.missed_multi_contact / self.missed_cases if self.missed_cases else None

    @property
    def invalid_rate(self) -> Fraction | None:
        return Fraction(self.invalid_actions, self.actions) if self.actions else None


def pending_metrics(samples: Sequence[SampleRecord]) -> dict[str, int]:
    """The pending-request counts of :class:`SettingMetrics` (see the module docstring)."""
    missed = [s for s in samples if "missed" in s.behaviour.defects_seen]
    return {
        "answered_pending": sum(s.behaviour.answered_pending for s in samples),
        "missed_cases": len(missed),
        "missed_multi_contact": sum(s.behaviour.designated_contacts > 1 for s in missed),
    }


class ReaderAgreement(BaseModel):
    """How often a model read follow-ups as the rules did (``--followup-reader model``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    readings: int
    """follow-ups both the rules and the model read"""
    agreed: int
    model_targeted: int
    rules_targeted: int
    unreadable: int
    """model answers that could not be read (the rules decided)"""

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.readings if self.readings else None


def reader_agreement(samples: Iterable[SampleRecord]) -> ReaderAgreement:
    """Agreement of the two readings over every follow-up in the samples' traces."""
    pairs: list[tuple[bool, bool]] = []
    unreadable = 0
    for sample in samples:
        for record in sample.trace:
            for reply in record.replies:
                for reading in reply.readings:
                    if reading.model is None:
                        unreadable += reading.model_note is not None
                        continue
                    pairs.append((reading.rules, reading.model))
    return ReaderAgreement(
        readings=len(pairs),
        agreed=sum(rules == model for rules, model in pairs),
        model_targeted=sum(model for _, model in pairs),
        rules_targeted=sum(rules for rules, _ in pairs),
        unreadable=unreadable,
    )


BEHAVIOUR_CLASSES = (
    "recovered_correct",
    "recovered_wrong",
    "partly_recovered",
    "generic_only",
    "no_follow_up",
    "defect_not_shown",
)


def behaviour_class(sample: SampleRecord) -> str:
    """The one behaviour class of a sample (module docstring), checked in this order."""
    behaviour = sample.behaviour
    if not behaviour.defects_seen:
        return "defect_not_shown"
    if behaviour.recovered:
        return "recovered_correct" if sample.correct else "recovered_wrong"
    if behaviour.targeted_follow_ups:
        return "partly_recovered"
    if behaviour.generic_follow_ups:
        return "generic_only"
    return "no_follow_up"


def behaviour_classes(samples: Iterable[SampleRecord]) -> dict[str, int]:
    """Scored samples per behaviour class, in :data:`BEHAVIOUR_CLASSES` order (absent: 0)."""
    counts = Counter(behaviour_class(s) for s in samples)
    return {name: counts.get(name, 0) for name in BEHAVIOUR_CLASSES}


def _mean(values: Sequence[int]) -> Fraction | None:
    return Fraction(sum(values), len(values)) if values else None


def by_group_and_trial(
    samples: Iterable[SampleRecord],
) -> dict[GroupKey, dict[Trial, SampleRecord]]:
    """Scored samples by group (:func:`group_of`) and trial.

    ``samples`` are one cell's, read once a key (a key read twice is one sample). Two of one
    group and trial with other keys differ in something the cell's label does not show: runs
    of versions whose follow-up reader rules differ (the key holds them, the record does
    not), a model agent's instructions or another prompt changed between two runs, or
    records of a log written before they held ``--missed-wait`` and ``--followup-reader``,
    read without their run. That is a :class:`~uncobench_z3.errors.ConfigError`, rather than
    one of them dropped from the figures (and still counted among the cell's samples)."""
    out: dict[GroupKey, dict[Trial, SampleRecord]] = {}
    for sample in samples:
        if is_scored(sample):
            kept = out.setdefault(group_of(sample), {}).setdefault(trial_of(sample), sample)
            if kept.key != sample.key:
                raise ConfigError(
                    f"samples {kept.key[:12]} and {sample.key[:12]} ({configuration_of(sample)},"
                    f" {sample.group_id}, {sample.setting}, seed {sample.seed}, epoch"
                    f" {sample.epoch}) are one trial run two ways their records do not tell"
                    " apart (by versions whose follow-up reader rules differ, under prompts"
                    " changed between runs, or with --missed-wait or --followup-reader in logs"
                    " written before records held them): report those runs apart"
                )
    return out


def _share(trials: Mapping[Trial, SampleRecord], justified: bool = False) -> Fraction:
    good = sum(s.correct and (not justified or _label(s) == "justified") for s in trials.values())
    return Fraction(good, len(trials))


def group_mean_accuracy(samples: Iterable[SampleRecord]) -> Fraction | None:
    """One cell's ``accuracy`` without its interval (the mean over groups of each group's
    share of correct trials; None without a scored sample): for a figure on a subset of a
    cell's groups, where the bootstrap is not wanted."""
    shares = [_share(trials) for trials in by_group_and_trial(samples).values()]
    return sum(shares, Fraction(0)) / len(shares) if shares else None


def _label(sample: SampleRecord) -> str:
    return "unknown" if sample.justification is None else sample.justification.label


def _paired_units(
    groups: Mapping[GroupKey, Mapping[Trial, SampleRecord]],
    reliable: Mapping[GroupKey, Mapping[Trial, SampleRecord]],
    trials: Sequence[Trial],
) -> dict[GroupKey, tuple[list[int], list[int], list[int]]]:
    """Per group, per trial: (drop numerator, drop denominator, reliable correct) and
    (retained, retention base) as flat lists; pairs are zeros where a trial is unpaired."""
    out: dict[GroupKey, tuple[list[int], list[int], list[int]]] = {}
    for group, here in groups.items():
        drop: list[int] = []
        retention: list[int] = []
        reference: list[int] = []
        for trial in trials:
            mine, base = here.get(trial), reliable.get(group, {}).get(trial)
            if mine is None or base is None:
                drop += [0, 0]
                retention += [0, 0]
                reference += [0, 0]
                continue
            drop += [int(base.correct) - int(mine.correct), 1]
            reference += [int(base.correct), 1]
            retention += [int(mine.correct), 1] if base.correct else [0, 0]
        out[group] = (drop, retention, reference)
    return out


def setting_metrics(
    cell: CellKey,
    samples: Sequence[SampleRecord],
    reliable: Mapping[GroupKey, Mapping[Trial, SampleRecord]],
    unavailable: Iterable[str] = (),
    config: BootstrapConfig | None = None,
) -> SettingMetrics:
    """Metrics of one cell; ``reliable``: the agent's scored Reliable samples (arm none) by
    group and trial; ``unavailable``: groups that lack this setting."""
    agent, setting, arm = cell
    config = config or BootstrapConfig()
    scored = [s for s in samples if is_scored(s)]
    groups = by_group_and_trial(scored)
    trials = sorted({t for here in groups.values() for t in here})
    defective = setting != "reliable"
    paired = _paired_units(groups, reliable, trials) if defective else {}
    width = 2 * len(trials)
    units: list[Unit] = []
    for group, here in groups.items():
        unit: list[int | Fraction] = [_share(here), _share(here, justified=True)]
        if defective:
            drop, retention, reference = paired[group]
            unit += [*drop, *retention, *reference]
        units.append(tuple(unit))
    statistics = {"accuracy": mean_at(0), "justified": mean_at(1)}
    if defective:
        statistics |= {
            "drop": ratios_at(2, 2 + width),
            "retention": ratios_at(2 + width, 2 + 2 * width),
            "reliable": ratios_at(2 + 2 * width, 2 + 3 * width),
        }
    estimates = bootstrap_many(units, statistics, config, f"cell|{agent}|{setting}|{arm}")
    hat, at = pass_k_table([(len(h), sum(s.correct for s in h.values())) for h in groups.values()])

    retention_pairs = [
        (here[t], reliable[g][t])
        for g, here in groups.items()
        for t in here
        if defective and t in reliable.get(g, {}) and reliable[g][t].correct
    ]
    unavailable_set = set(unavailable)
    lacking = [
        g
        for g, by_trial in reliable.items()
        for t, s in by_trial.items()
        if defective and s.correct and t not in groups.get(g, {})
    ]
    labels = Counter(s.attribution.label for s in scored if s.attribution is not None)
    with_defect = [s for s in scored if s.behaviour.defects_seen]
    recovered = [s for s in with_defect if s.behaviour.recovered]
    correct = [s for s in scored if s.correct]
    known_min = [s for s in scored if s.min_rounds is not None]
    min_total = sum(s.min_rounds or 0 for s in known_min)
    return SettingMetrics(
        agent=agent,
        setting=setting,
        arm=arm,
        n_groups=len(groups),
        epochs=len(trials),
        samples=len(scored),
        errors=sum(is_error(s) for s in samples),
        colleague_breaches=sum(broke_policy(s) and not is_error(s) for s in samples),
        correct=len(correct),
        accuracy=estimates["accuracy"].value,
        accuracy_ci=estimates["accuracy"].interval,
        pass_hat_k=hat,
        pass_at_k=at,
        justified=sum(_label(s) == "justified" for s in correct),
        lucky=sum(_label(s) == "lucky" for s in correct),
        justification_unknown=sum(_label(s) == "unknown" for s in correct),
        justified_accuracy=estimates["justified"].value,
        justified_accuracy_ci=estimates["justified"].interval,
        paired=sum(sum(p[0][1::2]) for p in paired.values()),
        reliable_accuracy=estimates["reliable"].value if defective else None,
        drop=estimates["drop"].value if defective else None,
        drop_ci=estimates["drop"].interval if defective else None,
        retention_base=len(retention_pairs),
        retained=sum(mine.correct for mine, _ in retention_pairs),
        retention=estimates["retention"].value if defective else None,
        retention_ci=estimates["retention"].interval if defective else None,
        excluded_unavailable=sum(g in unavailable_set for g, _ in lacking),
        excluded_missing=sum(g not in unavailable_set for g, _ in lacking),
        mean_rounds=_mean([s.rounds for s in scored]),
        rounds_distribution=dict(sorted(Counter(s.rounds for s in scored).items())),
        mean_min_rounds=_mean([s.min_rounds or 0 for s in known_min]),
        rounds_ratio=(Fraction(sum(s.rounds for s in known_min), min_total) if min_total else None),
        mean_waits=_mean([s.behaviour.waits for s in scored]),
        mean_redundant=_mean([s.behaviour.redundant_contacts for s in scored]),
        mean_contacts=_mean([s.behaviour.contacts for s in scored]),
        budget_exhausted=sum(s.status == "budget_exhausted" for s in scored),
        context_exhausted=sum(s.status == "context_exhausted" for s in scored),
        invalid_actions=sum(s.behaviour.invalid_actions for s in scored),
        actions=sum(s.rounds for s in scored),
        with_defect=len(with_defect),
        recovered=len(recovered),
        recovered_correct=sum(s.correct for s in recovered),
        no_corrective=sum(
            1
            for s in with_defect
            if s.behaviour.targeted_follow_ups + s.behaviour.generic_follow_ups == 0
        ),
        targeted_follow_ups=sum(s.behaviour.targeted_follow_ups for s in scored),
        generic_follow_ups=sum(s.behaviour.generic_follow_ups for s in scored),
        behaviour_classes=behaviour_classes(scored),
        delivered=sum(s.intervention_delivered for s in scored),
        attribution=dict(sorted(labels.items())),
        **pending_metrics(scored),
    )


def cells(samples: Iterable[SampleRecord]) -> dict[CellKey, list[SampleRecord]]:
    """Samples by cell: agents in first-seen order, then settings and arms in canonical
    order."""
    grouped: dict[CellKey, list[SampleRecord]] = {}
    agents: dict[str, None] = {}
    for sample in samples:
        cell = cell_of(sample)
        agents.setdefault(cell[0])
        grouped.setdefault(cell, []).append(sample)
    setting_order: dict[str, int] = {name: i for i, name in enumerate(SETTING_NAMES)}
    arm_order: dict[str, int] = {name: i for i, name in enumerate(INTERVENTION_ARMS)}
    agent_order = {name: i for i, name in enumerate(agents)}
    return dict(
        sorted(
            grouped.items(),
            key=lambda item: (
                agent_order[item[0][0]],
                setting_order.get(item[0][1], len(setting_order)),
                arm_order.get(item[0][2], len(arm_order)),
            ),
        )
    )


def compute_metrics(
    samples: Iterable[SampleRecord],
    unavailable: Mapping[str, Iterable[str]] | None = None,
    config: BootstrapConfig | None = None,
) -> list[SettingMetrics]:
    """Metrics for every (configuration, setting, arm) present (order: :func:`cells`);
    ``unavailable``: setting -> ids of groups that lack it."""
    unavailable = unavailable or {}
    by_cell = cells(samples)
    reliable = {
        agent: by_group_and_trial(group)
        for (agent, setting, arm), group in by_cell.items()
        if setting == "reliable" and arm == "none"
    }
    return [
        setting_metrics(
            cell, group, reliable.get(cell[0], {}), unavailable.get(cell[1], ()), config
        )
        for cell, group in by_cell.items()
    ]
