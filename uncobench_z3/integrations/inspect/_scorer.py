"""The scorer: the project's own sample record, computed from the logged episode.

The score of a sample is :func:`~uncobench_z3.evaluation.score_episode` of the episode the
store holds (:class:`~._episode.EpisodeLog`): the same parsing, scoring, solver attribution,
justification and minimum rounds as ``uncobench eval``. The value is ``C`` or ``I``; the
metadata carries what a researcher filters on (result, parsed answer, attribution label,
justification, rounds) and the whole record without its trace (``record``; the trace is in
the store), which ``uncobench import-inspect`` turns back into a run log.

Metrics: ``accuracy`` and ``stderr`` over all samples, and ``accuracy`` per setting
(``grouped`` on the sample metadata; per intervention arm too when a task runs several).
With epochs, inspect reduces each sample's epochs first (``mean`` by default; ``pass_at_k``
and the others work on the ``C``/``I`` values).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ...evaluation import SampleRecord, score_episode
from ...report import answer_text
from ._episode import STORE_KEY, EpisodeConfig, EpisodeLog, find_episode

RECORD_KEY = "record"
"""the score metadata entry holding the sample record (without its trace)"""


MetricSpec = Metric | dict[str, list[Metric]]


def episode_metrics(arms: int = 1) -> list[MetricSpec]:
    """accuracy and stderr overall; accuracy per setting (and per arm if several)."""
    metrics: list[MetricSpec] = [accuracy(), stderr(), grouped(accuracy(), "setting", all=False)]
    if arms > 1:
        metrics.append(grouped(accuracy(), "arm", all=False))
    return metrics


def score_metadata(record: SampleRecord) -> dict[str, Any]:
    """What a score says beyond right or wrong (see the module docstring)."""
    parsed = record.score.parsed if record.score is not None else None
    return {
        "result": record.result,
        "parsed": parsed.model_dump(mode="json") if parsed is not None else None,
        "attribution": record.attribution.label if record.attribution else None,
        "justification": record.justification.label if record.justification else None,
        "rounds": record.rounds,
        "min_rounds": record.min_rounds,
        RECORD_KEY: record.model_dump(mode="json", exclude={"trace"}),
    }


def episode_log(state: TaskState) -> EpisodeLog:
    """The sample's episode: the one in play (written to the store first: another solver may
    have driven it), else the store's (a logged sample scored again)."""
    live = find_episode(state)
    if live is not None:
        live.save()
    stored = state.store.get(STORE_KEY)
    if stored is None:
        raise RuntimeError(
            f"sample {state.sample_id}: no uncobench episode in its store (the task's setup "
            "solver did not run)"
        )
    return EpisodeLog.model_validate(stored)


@scorer(metrics=episode_metrics())
def uncobench_scorer(config: EpisodeConfig) -> Scorer:
    """Score the logged episode with the project's scoring (module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        log = episode_log(state)
        job = config.job(state.metadata, state.epoch, log.agent, log.colleague)
        prepared = config.prepared(job.group.id)
        record = await score_episode(job, log.outcome, log.usage, log.elapsed_seconds, prepared)
        detail = record.attribution or record.justification
        return Score(
            value=CORRECT if record.correct else INCORRECT,
            answer=answer_text(record),
            explanation=detail.detail if detail is not None else None,
            metadata=score_metadata(record),
        )

    return score
