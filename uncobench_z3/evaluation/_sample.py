"""The unit of work: one group x setting x agent configuration x epoch -> one sample record.

:func:`run_sample` is a plain call on serializable arguments (:class:`SampleJob`); the agent is
made fresh from its name and its epoch seed, and nothing outside the call is read or written,
so a sample can be re-run anywhere and gives the same record (up to ``elapsed_seconds``; an
LLM's answers are as repeatable as its provider and the response cache make them).

**Epochs** are independent trials. Epoch ``e`` of a group has its own seed,
:func:`epoch_seed` ``(run seed, group id, e)``: the agent is made with it (a built-in agent's
tie-breaks, an LLM's ``seed`` and its response-cache scope), so epochs differ wherever the
agent has randomness, while the agents, settings and intervention arms of one group and
epoch share it (common random numbers: paired comparisons compare like with like).

The behaviour a record counts (contacts, waits, redundant contacts, follow-ups, defects seen
and resolved, ...) is defined in :mod:`._behaviour`.

A sample's ``result`` is ``correct``, ``wrong_answer``, ``budget_exhausted`` (no answer within
the round budget) or ``context_exhausted`` (the conversation outgrew the agent model's context
window). All four are *outcomes*: the sample was played and is scored (the last two as
wrong), so they count in accuracy. A sample that could not be played at all (a model call
that failed after its retries) has the result ``error``: not an outcome, never scored.

With policy colleagues (``colleague_mode`` ``policy``), ``colleague_policy`` says how they
kept their policy (:func:`._behaviour.policy_keeping`); a sample that broke it is reported
apart from the agent's figures.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from .._kept_property import kept_property
from .._memo import remember
from .._plain_reads import plain_reads
from .._trusted import (
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..errors import ModelAPIError
from ..models import ModelUsage
from ..settings import DefectKind, SettingName, TaskGroup, group_digest
from ..spec import Answer, TypedTask
from ._attribution import (
    Attribution,
    Justification,
    attribute_error,
    justify_answer,
    shared_judge,
)
from ._behaviour import Behaviour as Behaviour  # (these four: imported from here too)
from ._behaviour import PolicyKeeping as PolicyKeeping
from ._behaviour import behaviour_of as behaviour_of
from ._behaviour import policy_keeping as policy_keeping
from ._colleagues import FollowUpReader
from ._decision_changes import stored_changes
from ._environment import (
    ColleagueMode,
    Environment,
    EpisodeOutcome,
    EpisodeStatus,
    PreparedGroup,
    RoundRecord,
    run_episode,
)
from ._evidence import FaceValueEvidence, evidence_by_round
from ._interventions import InterventionArm
from ._llm_colleague import Phraser
from ._min_rounds import minimum_rounds
from ._notes import RoundNote, round_notes
from ._policy_colleague import PolicyColleague
from ._protocol import DEFAULT_BUDGET, Agent, AnswerAction
from ._registry import configuration_name, make_agent
from ._scoring import AnswerScore

SampleResult = Literal["correct", "wrong_answer", "budget_exhausted", "context_exhausted", "error"]
SampleStatus = EpisodeStatus | Literal["error"]
"""an episode's status, or ``error``: a model call failed after its retries"""
AgentMaker = Callable[[str, int], Agent]
JOB_IDENTITY = 2
"""Version of what identifies a sample (2: the epoch and the per-epoch seed); a run
directory written under another version is not resumed silently."""


def epoch_seed(run_seed: int, sample_id: str, epoch: int) -> int:
    """The seed of one epoch of one group: 31 bits of SHA-256 over the run seed, the group id
    and the epoch (31 bits: every provider's ``seed`` field accepts it).

    Remembered for plain ints and a plain string: every sample of a group and epoch (its
    settings, agents, arms) has the same seed, and a hash was about 10k instructions (305 of
    the 385 samples of the first pass over 80 built groups found theirs here). Any other
    argument types are hashed each time: ``True`` equals ``1`` as a key, but not as text."""
    plain = type(run_seed) is int and type(sample_id) is str and type(epoch) is int
    if plain:
        found = _epoch_seeds.get((run_seed, sample_id, epoch))
        if found is not None:
            return found
    digest = hashlib.sha256(f"uncobench-epoch:{run_seed}:{sample_id}:{epoch}".encode()).digest()
    seed = int.from_bytes(digest[:4], "big") >> 1
    if plain:
        remember(_epoch_seeds, (run_seed, sample_id, epoch), seed, _EPOCH_SEEDS_KEPT)
    return seed


_EPOCH_SEEDS_KEPT = 4096
"""epoch seeds remembered (a run's groups x epochs; emptied when full: :func:`remember`)"""
_epoch_seeds: dict[tuple[int, str, int], int] = {}


@plain_reads
class SampleJob(BaseModel):
    """Everything one sample depends on."""

    model_config = ConfigDict(frozen=True, ignored_types=(kept_property,))

    group: TaskGroup
    setting: SettingName
    agent: str
    seed: int = 0
    """the run's seed; the agent gets :attr:`epoch_seed`"""
    budget: int = DEFAULT_BUDGET
    colleague: str = "scripted"
    """``scripted``, or the model (``provider/model[,key=value]``) that phrases the replies"""
    intervention: InterventionArm = "none"
    missed_wait: int | None = None
    """wait rounds before a missed reply arrives anyway (None: the group's policy)"""
    followup_reader: FollowUpReader = "rules"
    """who decides whether a follow-up is targeted: the rules, or the colleague model"""
    colleague_mode: ColleagueMode = "phrase"
    """with a colleague model: it phrases the scripted replies, or writes them (``policy``)"""
    group_hash: str = ""
    """filled by :meth:`make` (hashing once per group, not once per job)"""
    epoch: int = 1
    """1-based"""

    @classmethod
    def make(
        cls,
        group: TaskGroup,
        setting: SettingName,
        agent: str,
        seed: int = 0,
        budget: int = DEFAULT_BUDGET,
        group_hash: str | None = None,
        colleague: str = "scripted",
        intervention: InterventionArm = "none",
        epoch: int = 1,
        missed_wait: int | None = None,
        followup_reader: FollowUpReader = "rules",
        colleague_mode: ColleagueMode = "phrase",
    ) -> SampleJob:
        digest = group_hash or group_digest(group)
        return cls(
            group=group,
            setting=setting,
            agent=agent,
            seed=seed,
            budget=budget,
            colleague=colleague,
            intervention=intervention,
            missed_wait=missed_wait,
            followup_reader=followup_reader,
            colleague_mode=colleague_mode,
            group_hash=digest,
            epoch=epoch,
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        # the copy's fields may differ: its key and seed are its own
        copy.__dict__.pop("key", None)
        copy.__dict__.pop("epoch_seed", None)
        return copy

    # (kept_property, not functools.cached_property: the same value in the same __dict__, a
    # pydantic model's own, without 3.11's lock around each first read; every sample reads
    # both for the first time)
    @kept_property
    def epoch_seed(self) -> int:
        """Computed once per job (a sample reads it three times: a hash each)."""
        # (the fields read as attributes: see _record)
        return epoch_seed(self.seed, self.group.id, self.epoch)

    @kept_property
    def key(self) -> str:
        """Identifies the sample: equal keys give equal records, whatever run holds them.

        Computed once per job (a run asks for every job's key several times before the first
        sample starts: a hash each time cost a tenth of a second at 6,000 jobs); the fields
        are frozen, and :meth:`model_copy` forgets it."""
        # (the fields read as attributes, each once: see _record)
        group_hash = self.group_hash or group_digest(self.group)
        seed, budget, epoch = self.seed, self.budget, self.epoch
        extra: list[str] = []
        # the defaults leave earlier keys unchanged, so old logs still resume
        if (colleague := self.colleague) != "scripted":
            extra.append(f"colleague={_configuration_name(colleague)}")
        if (intervention := self.intervention) != "none":
            extra.append(f"intervention={intervention}")
        if (missed_wait := self.missed_wait) is not None:
            extra.append(f"missed_wait={missed_wait}")
        if (reader := self.followup_reader) != "rules":
            extra.append(f"followup_reader={reader}")
        if (mode := self.colleague_mode) != "phrase":
            extra.append(f"colleague_mode={mode}")
        agent = _configuration_name(self.agent)
        setting = self.setting
        if type(seed) is int and type(budget) is int and type(epoch) is int:
            # json.dumps(fields) written out (each text by the encoder's own function): the
            # same text, without making an encoder for each key (json.dumps was about half of
            # a key's 48,000 instructions)
            text = (
                f"[{_json_text(group_hash)}, {_json_text(setting)}, {_json_text(agent)}, "
                f'{seed}, {budget}, "epoch={epoch}"'
                # (the defaults give no extra field: no comprehension, a call of its own)
                + ("".join([f", {_json_text(field)}" for field in extra]) if extra else "")
                + "]"
            )
        else:
            text = json.dumps([group_hash, setting, agent, seed, budget, f"epoch={epoch}", *extra])
        return hashlib.sha256(text.encode()).hexdigest()


_json_text: Callable[[str], str] = json.encoder.encode_basestring_ascii


class SampleError(BaseModel):
    """Why a sample could not be played: a model call failed after its retries.

    An error sample is never scored (``correct`` is false, ``score`` and ``attribution``
    are empty); metrics leave it out of accuracy and count it apart.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    """the error's class, e.g. ``ModelAPIError``"""
    message: str
    attempts: int | None = None
    """attempts made at the failing call (``None`` when unknown)"""
    status_code: int | None = None


@plain_reads
class SampleRecord(BaseModel):
    """One line of a run's log."""

    model_config = ConfigDict(extra="forbid")

    key: str
    group_id: str
    group_hash: str
    setting: SettingName
    agent: str
    seed: int
    """the run's seed"""
    budget: int
    epoch: int = 1
    epoch_seed: int | None = None
    """the seed the agent (and its model) got in this epoch"""
    colleague: str = "scripted"
    colleague_mode: ColleagueMode = "phrase"
    colleague_policy: PolicyKeeping | None = None
    """policy colleagues only: how they kept the policy (a broken one: reported apart)"""
    intervention: InterventionArm = "none"
    intervention_delivered: bool = False
    status: SampleStatus
    result: SampleResult
    correct: bool
    gold: Answer
    answer: AnswerAction | None = None
    score: AnswerScore | None = None
    rounds: int
    behaviour: Behaviour
    attribution: Attribution | None = None
    justification: Justification | None = None
    """for a correct answer: did the evidence received determine it (justified) or not (lucky)"""
    min_rounds: int | None = None
    """the fewest rounds any agent needs for this group and setting (solver-computed)"""
    defects: tuple[DefectKind, ...] = ()
    """the defect kinds the setting injects"""
    trace: list[RoundRecord] = Field(default_factory=list)
    end_detail: str | None = None
    """why the episode ended early: the model's error of a ``context_exhausted`` sample"""
    notes: list[RoundNote] = Field(default_factory=list)
    """the solver's note on each round: determined yet, records still open (:mod:`._notes`)"""
    usage: dict[str, ModelUsage] = Field(default_factory=dict)
    """tokens and cost spent on this sample: ``agent`` and ``colleagues`` (LLMs only); what
    answers served from the response cache cost when first made: ``agent_cached``,
    ``colleagues_cached``"""
    elapsed_seconds: float = 0.0
    """wall time of the episode; the only field that differs between identical re-runs"""
    error: SampleError | None = None
    """set when ``result`` is ``error``"""


def _total_usage(usages: Iterable[object]) -> ModelUsage | None:
    """The sum of the :class:`ModelUsage` values among ``usages`` (None when there are none)."""
    found = [u for u in usages if isinstance(u, ModelUsage)]
    return sum(found[1:], found[0]) if found else None


def _usage(agent: Agent, environment: Environment) -> dict[str, ModelUsage]:
    """Tokens spent per part (``agent``, ``colleagues``); answers served from the response
    cache are kept apart, marked ``<part>_cached``, so totals after a resume can count them."""
    usage: dict[str, ModelUsage] = {}
    phraser, reader, policy = environment.phraser, environment.reader, environment.policy
    if phraser is None and reader is None and policy is None:
        if not hasattr(agent, "usage") and not hasattr(agent, "cached_usage"):
            return usage  # scripted colleagues and an agent without a model: nothing spent
        helpers: list[object] = []
    else:  # (a comprehension is a call of its own: only for model colleagues)
        helpers = [h for h in (phraser, reader, policy) if h is not None]
    parts: list[tuple[str, list[object]]] = [("agent", [agent]), ("colleagues", helpers)]
    for part, spenders in parts:
        spent = _total_usage(getattr(s, "usage", None) for s in spenders)
        cached = _total_usage(getattr(s, "cached_usage", None) for s in spenders)
        if cached is not None and cached.total_tokens == 0:
            cached = None
        if spent is not None and (spent.total_tokens or cached is None):
            usage[part] = spent
        if cached is not None:
            usage[f"{part}_cached"] = cached
    return usage


def job_environment(
    job: SampleJob,
    prepared: PreparedGroup | None = None,
    phraser: Phraser | None = None,
    policy: PolicyColleague | None = None,
) -> Environment:
    """The environment a sample of ``job`` is played in (LLM colleagues get the epoch seed;
    ``phraser``, or ``policy`` in policy mode, if given, is the colleague model instead of
    the one ``job.colleague`` names)."""
    # (the job's fields read as attributes: see _record)
    return Environment(
        job.group,
        job.setting,
        job.budget,
        prepared=prepared,
        colleague=job.colleague,
        intervention=job.intervention,
        trial=job.epoch_seed,
        missed_wait=job.missed_wait,
        followup_reader=job.followup_reader,
        colleague_mode=job.colleague_mode,
        phraser=phraser,
        policy=policy,
    )


async def run_sample(
    job: SampleJob, agents: AgentMaker = make_agent, prepared: PreparedGroup | None = None
) -> SampleRecord:
    """Play one episode and score it (:func:`score_episode`); a model that keeps failing
    makes an error sample (not scored).

    ``prepared`` may pass the group's derived data (:class:`PreparedGroup`) already made;
    it is used only when it belongs to ``job.group``.
    """
    played = await play_sample(job, agents, prepared)
    return await played.score()


@dataclass
class PlayedSample:
    """An episode of ``job`` that has been played, not yet scored: :meth:`score` makes its
    record. (A runner plays and scores apart so that scoring, the costly part for a new
    group, need not hold up the episodes in play: see :mod:`._play`.)"""

    job: SampleJob
    environment: Environment
    usage: dict[str, ModelUsage]
    elapsed: float
    prepared: PreparedGroup
    error: SampleError | None = None

    async def score(self) -> SampleRecord:
        """The sample's record: the error sample, or the episode scored."""
        if self.error is not None:
            # (notes given, as their default would be: the record's maker then takes its
            # usual path, not the field-by-field one that asks pydantic for each default)
            return _record(self.job, self.environment.outcome, self.usage, self.elapsed,
                           self.prepared.task, status="error", result="error", correct=False,
                           notes=[], error=self.error)  # fmt: skip
        return await score_episode(
            self.job, self.environment.outcome, self.usage, self.elapsed, self.prepared
        )


async def play_sample(
    job: SampleJob, agents: AgentMaker = make_agent, prepared: PreparedGroup | None = None
) -> PlayedSample:
    """Play one episode of ``job`` (see :func:`run_sample`), without scoring it."""
    if prepared is None or prepared.group is not job.group:
        prepared = PreparedGroup.of(job.group)
    environment = job_environment(job, prepared)
    agent = agents(job.agent, job.epoch_seed)
    started = time.perf_counter()
    try:
        await run_episode(environment, agent)
    except ModelAPIError as exc:  # after its retries: an error of this sample, not of the run
        error = SampleError(
            type=type(exc).__name__,
            message=str(exc),
            attempts=exc.attempts,
            status_code=exc.status_code,
        )
        elapsed = time.perf_counter() - started
        return PlayedSample(job, environment, _usage(agent, environment), elapsed, prepared, error)
    elapsed = time.perf_counter() - started
    return PlayedSample(job, environment, _usage(agent, environment), elapsed, prepared)


async def score_episode(
    job: SampleJob,
    outcome: EpisodeOutcome,
    usage: dict[str, ModelUsage] | None = None,
    elapsed: float = 0.0,
    prepared: PreparedGroup | None = None,
) -> SampleRecord:
    """The record of an episode of ``job`` played to ``outcome``: the answer scored, a wrong
    one attributed by the solver, a right one justified, the behaviour counted.

    Whoever played the episode (:func:`run_sample`, or an inspect_ai solver) scores it here,
    so every way of running a sample gives the same record.
    """
    # (each model's field read once: see _record)
    group = job.group
    answer, status, trace = outcome.answer, outcome.status, outcome.trace
    if prepared is None or prepared.group is not group:
        prepared = PreparedGroup.of(group)
    task, gold = prepared.task, group.gold
    score = None
    if answer is not None:
        score = prepared.score(answer)
    correct = score is not None and score.correct
    result: SampleResult = "correct" if correct else "wrong_answer"
    if status == "budget_exhausted":
        result = "budget_exhausted"
    elif status == "context_exhausted":
        result = "context_exhausted"
    group_hash = job.group_hash or group_digest(group)
    # the face-value evidence of every round, read once for the notes and the justification
    # or attribution, on the group's judge (looked up once for them all); the
    # notes first, so that the last round's evidence is decided when the labels ask about it
    judge = shared_judge(group_hash, task, gold, changes=stored_changes(group))
    # (the group's faithful statements read as their records' values, without parsing)
    judge.know_faithful(prepared.book.task, prepared.book.faithful)
    evidence = evidence_by_round(task, trace, judge.readings)
    notes = round_notes(task, gold, trace, group_hash, evidence=evidence, judge=judge)
    final = evidence[-1] if evidence else None
    attribution = justification = None
    if correct:
        justification = justify_answer(task, gold, trace, group_hash=group_hash,
                                       evidence=final, judge=judge)  # fmt: skip
    else:
        parsed = score.parsed if score is not None else None
        attribution = attribute_error(task, gold, trace, parsed, group_hash=group_hash,
                                      judge=judge, evidence=final)  # fmt: skip
    fewest = await minimum_rounds(group, job.setting, group_hash, prepared)
    return _record(job, outcome, usage or {}, elapsed, task, evidence, status=status,
                   result=result, correct=correct, answer=answer, score=score,
                   attribution=attribution, justification=justification,
                   min_rounds=fewest, notes=notes)  # fmt: skip


def _record(
    job: SampleJob,
    episode: EpisodeOutcome,
    usage: dict[str, ModelUsage],
    elapsed: float,
    task: TypedTask,
    evidence: Sequence[FaceValueEvidence] | None = None,
    *,
    status: SampleStatus,
    result: SampleResult,
    correct: bool,
    notes: list[RoundNote],
    answer: AnswerAction | None = None,
    score: AnswerScore | None = None,
    attribution: Attribution | None = None,
    justification: Justification | None = None,
    min_rounds: int | None = None,
    error: SampleError | None = None,
) -> SampleRecord:
    """The sample's record: what every sample has, and its outcome fields (built from
    checked parts, on every sample's path: no validation pass). ``evidence``: the trace's
    evidence by round, when scoring has read it (the behaviour counts read the records
    received from it).

    A scored sample's record gives every field but ``error``; an error sample's (``error``
    given) gives none of the scoring's (``answer``, ``score``, ``attribution``,
    ``justification``, ``min_rounds``): the record's set fields are those, as the record
    maker would set them for the same keywords. The state is written here, in field order,
    as the maker's compiled call writes it: the call's 32 keywords, nine of them merged from
    a dict of the outcome, each checked for its marker, and a set display of the names were
    most of the maker's 14 M over the 385 samples of the 80-group first pass (the pass
    896.9-898.0 to 884.6-884.7 M; a test checks the record against the maker's)."""
    # the job's and the episode's fields read as attributes: both models read plainly
    # (_plain_reads.py), and 3.11 specialises each read to the field's place in the instance's
    # dict (``__dict__`` is a generic read, and each field then a dict look-up)
    group, setting, mode, trace = job.group, job.setting, job.colleague_mode, episode.trace
    record = new_model(SampleRecord)
    set_model_state(
        record,
        {
            "key": job.key,
            "group_id": group.id,
            "group_hash": job.group_hash or group_digest(group),
            "setting": setting,
            "agent": _configuration_name(job.agent),
            "seed": job.seed,
            "budget": job.budget,
            "epoch": job.epoch,
            "epoch_seed": job.epoch_seed,
            "colleague": _configuration_name(job.colleague),
            "colleague_mode": mode,
            "colleague_policy": policy_keeping(trace) if mode == "policy" else None,
            "intervention": job.intervention,
            "intervention_delivered": episode.intervention_delivered,
            "status": status,
            "result": result,
            "correct": correct,
            "gold": group.gold,
            "answer": answer,
            "score": score,
            "rounds": len(trace),  # (EpisodeOutcome.rounds)
            "behaviour": behaviour_of(trace, task.required_contexts, evidence),
            "attribution": attribution,
            "justification": justification,
            "min_rounds": min_rounds,
            "defects": tuple(d.kind for d in group.setting(setting).defects),
            "trace": list(trace),
            "end_detail": episode.end_detail,
            "notes": notes,
            "usage": usage,
            "elapsed_seconds": round(elapsed, 6),
            "error": error,
        },
    )
    # (a copy of a set made once: a set display of 31 names was about 4k instructions)
    set_model_fields_set(record, (_SCORED_FIELDS if error is None else _ERROR_FIELDS).copy())
    set_model_extra(record, None)
    set_model_private(record, None)
    return record


_SCORED_FIELDS = set(SampleRecord.model_fields) - {"error"}
"""the fields a scored sample's record is given (:func:`_record`)"""
_ERROR_FIELDS = set(SampleRecord.model_fields) - {
    "answer",
    "score",
    "attribution",
    "justification",
    "min_rounds",
}
"""the fields an error sample's record is given (:func:`_record`)"""


_configuration_name = functools.lru_cache(maxsize=256)(configuration_name)
"""(a run names a few agents and colleagues, and each sample's record names both)"""
