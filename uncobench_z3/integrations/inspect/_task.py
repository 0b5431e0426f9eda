"""``uncobench``: the inspect_ai Task (registered as ``uncobench_z3/uncobench``).

One inspect Sample per (group, setting, intervention arm) that the project's runner would
plan (:func:`~uncobench_z3.evaluation.plan_jobs`: a setting a group lacks is skipped, arms
other than ``none`` only in defective settings). The sample's input is the briefing the
project's LLM agents get; its target is the gold answer; its metadata holds the group id and
content hash, the setting, the arm, the gold answer and the injected defect kinds. inspect's
``--epochs`` are the project's epochs: epoch ``e`` of a sample gets the project's epoch seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from ... import __version__
from ...construct import load_groups
from ...errors import ConfigError
from ...evaluation import (
    BUILTIN_AGENTS,
    DEFAULT_BUDGET,
    INTERVENTION_ARMS,
    ColleagueMode,
    Environment,
    InterventionArm,
    SampleJob,
    check_groups,
    group_digest,
    make_config,
    plan_jobs,
)
from ...settings import SETTING_NAMES, SettingName, TaskGroup
from ._bench import default_benchmark
from ._episode import EpisodeConfig, briefing_messages, end_episode, episode_agent, episode_setup
from ._scorer import episode_metrics, uncobench_scorer

TASK_METADATA_KEY = "uncobench"
"""the task metadata entry describing the run (what ``import-inspect`` writes to run.json)"""
PLANNING_AGENT = "inspect"
"""the agent name samples are planned under (the real one is known per sample)"""


def _choices(value: str, known: Sequence[str], what: str) -> list[str]:
    """``all``, one name, or a comma-separated list of names."""
    if value.strip() == "all":
        return list(known)
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [c for c in chosen if c not in known]
    if not chosen or unknown:
        raise ConfigError(f"{what} {value!r}: choose 'all' or from {', '.join(known)}")
    return [k for k in known if k in chosen]


_OPTIONAL = frozenset({"bench", "limit", "missed_wait", "agent"})
"""parameters whose default is None"""


def _typed(numbers: dict[str, object], texts: dict[str, object]) -> None:
    """``-T`` values arrive as inspect reads them, as YAML (``abc`` a string, ``true`` a
    boolean): one that is not of its parameter's kind is refused naming the parameter, not
    met later by a TypeError (or, as True, taken for 1)."""
    for name, value in numbers.items():
        if value is None and name in _OPTIONAL:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be a whole number, not {value!r}")
    for name, value in texts.items():
        if value is None and name in _OPTIONAL:
            continue
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be text, not {value!r}")


def _check(
    budget: int,
    limit: int | None,
    colleague: str,
    agent: str | None,
    tool_choice: str,
    missed_wait: int | None,
    colleague_mode: str,
) -> None:
    if budget < 1:
        raise ConfigError(f"budget must be at least 1, not {budget}")
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be at least 1, not {limit}")
    if colleague not in ("scripted", "model") and "/" not in colleague:
        raise ConfigError(
            f"colleague {colleague!r}: 'scripted', 'model' (the inspect model role "
            "'colleague') or an inspect model name such as openai/gpt-4o-mini"
        )
    if agent is not None and agent not in BUILTIN_AGENTS:
        raise ConfigError(f"agent {agent!r}: a built-in policy ({', '.join(BUILTIN_AGENTS)})")
    if tool_choice not in ("any", "auto"):
        raise ConfigError(f"tool_choice {tool_choice!r}: 'any' or 'auto'")
    if missed_wait is not None and missed_wait < 0:
        raise ConfigError(f"missed_wait must be 0 or more, not {missed_wait}")
    if colleague_mode not in ("phrase", "policy"):
        raise ConfigError(f"colleague_mode {colleague_mode!r}: 'phrase' or 'policy'")
    if colleague_mode == "policy" and colleague == "scripted":
        raise ConfigError("colleague_mode 'policy' needs a colleague model (colleague=model)")


def episode_sample(job: SampleJob, config: EpisodeConfig) -> Sample:
    """The inspect Sample of one planned job (its input: the briefing as the agent gets it)."""
    group = job.group
    briefing = Environment(
        group, job.setting, job.budget, prepared=config.prepared(group.id)
    ).briefing
    return Sample(
        id=f"{group.id}:{job.setting}:{job.intervention}",
        input=briefing_messages(briefing),
        target=group.gold.text(),
        metadata={
            "group_id": group.id,
            "group_hash": job.group_hash,
            "setting": job.setting,
            "arm": job.intervention,
            "gold": group.gold.model_dump(mode="json"),
            "defects": [d.kind for d in group.setting(job.setting).defects],
        },
    )


def _groups(bench: str | None) -> tuple[str, list[TaskGroup]]:
    if bench is None:
        folder, groups = default_benchmark()
        return str(folder), groups
    if not Path(bench).exists():
        raise ConfigError(f"bench {bench!r} does not exist")
    return bench, load_groups(bench)


@task
def uncobench(
    bench: str | None = None,
    setting: str = "all",
    arm: str = "none",
    colleague: str = "scripted",
    budget: int = DEFAULT_BUDGET,
    limit: int | None = None,
    missed_wait: int | None = None,
    agent: str | None = None,
    seed: int = 0,
    tool_choice: str = "any",
    colleague_mode: str = "phrase",
) -> Task:
    """UNCOBENCH: coordinate colleagues, some unreliable, to answer a decision task.

    Args:
        bench: A built benchmark (folder, ``.jsonl`` or group file); default: a small one
            built offline in the cache folder (``$UNCOBENCH_CACHE_DIR/benchmarks``).
        setting: ``all``, or setting names separated by commas (reliable, misaligned,
            incomplete, missed, mixed).
        arm: Causal intervention arm(s): ``none`` (default), ``all``, or names separated by
            commas (existence, location, diagnosis, action).
        colleague: ``scripted`` (default), or LLM colleagues: ``model`` (the inspect model
            role ``colleague``, set with ``--model-role colleague=...``) or a model name
            (used when the role is not set).
        budget: Rounds per episode (every action, the answer included, is one round).
        limit: Only the first ``limit`` task groups.
        missed_wait: Wait rounds before a Missed colleague's pending reply arrives
            (default: each group's policy), as ``uncobench eval --missed-wait``.
        agent: A built-in policy (``builtin/careful``, ...) that acts instead of the model,
            through the same tools: a reference point and a check of the harness.
        seed: The run seed the epoch seeds derive from (as ``uncobench eval --seed``).
        tool_choice: ``any`` (the model must call a tool each round) or ``auto`` (for
            servers that reject a required tool choice, such as llama.cpp's).
        colleague_mode: With a colleague model: ``phrase`` (default; it words the scripted
            replies) or ``policy`` (it writes each reply from its records and response
            policy, judged against the scripted reference), as ``uncobench eval
            --colleague-mode``.
    """
    _typed(
        {"budget": budget, "limit": limit, "missed_wait": missed_wait, "seed": seed},
        {"bench": bench, "setting": setting, "arm": arm, "colleague": colleague,
         "agent": agent, "tool_choice": tool_choice, "colleague_mode": colleague_mode},
    )  # fmt: skip
    _check(budget, limit, colleague, agent, tool_choice, missed_wait, colleague_mode)
    settings = cast("list[SettingName]", _choices(setting, SETTING_NAMES, "setting"))
    arms = cast("list[InterventionArm]", _choices(arm, INTERVENTION_ARMS, "arm"))
    path, groups = _groups(bench)
    if not groups:
        raise ConfigError(f"bench {path!r} holds no task groups")
    digests = [group_digest(g) for g in groups]
    run = make_config(path, groups, [PLANNING_AGENT], settings, seed, budget, limit, digests,
                      interventions=arms, missed_wait=missed_wait)  # fmt: skip

    jobs, unavailable = plan_jobs(groups, run, digests)
    chosen = groups[:limit] if limit is not None else groups
    check_groups(chosen)  # (as eval: a group no episode can be played or scored from)
    config = EpisodeConfig(
        groups={g.id: g for g in chosen},
        digests={g.id: d for g, d in zip(groups, digests, strict=True) if g in chosen},
        seed=seed,
        budget=budget,
        colleague=colleague,
        agent=agent,
        tool_choice=tool_choice,
        missed_wait=missed_wait,
        colleague_mode=cast("ColleagueMode", colleague_mode),
    )
    description: dict[str, Any] = {
        "version": __version__,
        "benchmark": path,
        "benchmark_hash": run.benchmark_hash,
        "settings": list(run.settings),
        "interventions": list(run.interventions),
        "seed": seed,
        "budget": budget,
        "limit": limit,
        "instructions_hash": run.instructions_hash,
        "missed_wait": missed_wait,
        "colleague_mode": colleague_mode,
        "unavailable": unavailable,
    }
    return Task(
        dataset=MemoryDataset([episode_sample(job, config) for job in jobs], name="uncobench"),
        setup=episode_setup(config),
        solver=episode_agent(config),
        cleanup=end_episode,
        scorer=uncobench_scorer(config),
        metrics=episode_metrics(len(run.interventions)),
        metadata={TASK_METADATA_KEY: description},
        version=1,
    )
