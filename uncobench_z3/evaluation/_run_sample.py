"""Running one sample: its episode played (:func:`play_sample`), then scored into its record
(:func:`score_episode`); :func:`run_sample` does both.

:func:`run_sample` is a plain call on serializable arguments (:class:`~._sample.SampleJob`);
the agent is made fresh from its name and its epoch seed, and nothing outside the call is
read or written, so a sample can be re-run anywhere and gives the same record (up to
``elapsed_seconds``; an LLM's answers are as repeatable as its provider and the response
cache make them).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._trusted import (
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..errors import ModelAPIError
from ..models import ModelUsage
from ..settings import group_digest
from ..spec import TypedTask
from ._attribution import (
    Attribution,
    Justification,
    attribute_error,
    justify_answer,
    shared_judge,
)
from ._behaviour import behaviour_of, policy_keeping
from ._decision_changes import stored_changes
from ._environment import (
    Environment,
    EpisodeOutcome,
    PreparedGroup,
    run_episode,
)
from ._evidence import FaceValueEvidence, evidence_by_round
from ._llm_colleague import Phraser
from ._min_rounds import minimum_rounds
from ._notes import RoundNote, round_notes
from ._policy_colleague import PolicyColleague
from ._protocol import Agent, AnswerAction
from ._registry import make_agent
from ._sample import (
    AgentMaker,
    SampleError,
    SampleJob,
    SampleRecord,
    SampleResult,
    SampleStatus,
    configuration_name_of,
)
from ._scoring import AnswerScore


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
    # (the state written into a copy of a dict of every field in order, made at its size in
    # one step: 3.11 compiles a dict display of more than 15 entries to two dicts filled one
    # insertion at a time, growing as they fill, the second then merged into the first. A
    # record 82.7k to 75.4k instructions; the first pass over 80 built groups 753.9 to
    # 751.0 M)
    state = _RECORD_STATE.copy()
    state["key"] = job.key
    state["group_id"] = group.id
    state["group_hash"] = job.group_hash or group_digest(group)
    state["setting"] = setting
    state["agent"] = configuration_name_of(job.agent)
    state["seed"] = job.seed
    state["budget"] = job.budget
    state["epoch"] = job.epoch
    state["epoch_seed"] = job.epoch_seed
    state["colleague"] = configuration_name_of(job.colleague)
    state["colleague_mode"] = mode
    state["colleague_policy"] = policy_keeping(trace) if mode == "policy" else None
    state["missed_wait"] = job.missed_wait
    state["followup_reader"] = job.followup_reader
    state["intervention"] = job.intervention
    state["intervention_delivered"] = episode.intervention_delivered
    state["status"] = status
    state["result"] = result
    state["correct"] = correct
    state["gold"] = group.gold
    state["answer"] = answer
    state["score"] = score
    state["rounds"] = len(trace)  # (EpisodeOutcome.rounds)
    state["behaviour"] = behaviour_of(trace, task.required_contexts, evidence)
    state["attribution"] = attribution
    state["justification"] = justification
    state["min_rounds"] = min_rounds
    state["defects"] = tuple(d.kind for d in group.setting(setting).defects)
    state["trace"] = list(trace)
    state["end_detail"] = episode.end_detail
    state["notes"] = notes
    state["usage"] = usage
    state["elapsed_seconds"] = round(elapsed, 6)
    state["error"] = error
    record = new_model(SampleRecord)
    set_model_state(record, state)
    # (a copy of a set made once: a set display of 31 names was about 4k instructions)
    set_model_fields_set(record, (_SCORED_FIELDS if error is None else _ERROR_FIELDS).copy())
    set_model_extra(record, None)
    set_model_private(record, None)
    return record


_RECORD_STATE: dict[str, object] = dict.fromkeys(SampleRecord.model_fields)
"""every field of a record, in order (:func:`_record` fills a copy)"""
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
