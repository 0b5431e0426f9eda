"""What a run is: its configuration (:class:`RunConfig`, whose hash guards resumption) and
its samples in a fixed order (:func:`plan_jobs`), checked before anything is played or
written; what decides each agent's sampling (:func:`generation_record`, for ``run.json``).
:mod:`._runner` plays the plan and keeps its log."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from .._assets import asset_path
from ..construct import ModelRef, model_with_defaults
from ..errors import ConfigError
from ..settings import READER_RULES, SETTING_NAMES, SettingName, TaskGroup, group_digest
from ._colleagues import FollowUpReader
from ._environment import ColleagueMode
from ._followup_reader import PROMPT_FILE as READER_PROMPT
from ._interventions import INTERVENTION_ARMS, INTERVENTIONS_FILE, InterventionArm
from ._policy import PHRASE_PROMPT, POLICY_PROMPT
from ._protocol import DEFAULT_BUDGET, default_instructions
from ._registry import configuration_name, is_model_agent
from ._sample import JOB_IDENTITY, SampleJob


class RunConfig(BaseModel):
    """What a run's results depend on (the benchmark's path is kept for the report only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    benchmark_hash: str
    agents: tuple[str, ...]
    settings: tuple[SettingName, ...] = SETTING_NAMES
    seed: int = 0
    budget: int = DEFAULT_BUDGET
    limit: int | None = None
    instructions_hash: str = ""
    """SHA-256 of the main agent's instructions (what an LLM agent is told changes results)"""
    colleague: str = "scripted"
    interventions: tuple[InterventionArm, ...] = ("none",)
    epochs: int = 1
    """trials per (group, setting, agent, arm); not hashed: a run grows by epochs"""
    missed_wait: int | None = None
    """overrides the groups' Missed policy (wait rounds before a missed reply arrives)"""
    followup_reader: FollowUpReader = "rules"
    colleague_mode: ColleagueMode = "phrase"
    """with a colleague model: ``phrase`` the scripted replies, or write them (``policy``)"""
    prompts_hash: str = ""
    """SHA-256 of the other evaluator prompts the run reads (:func:`prompts_digest`): what a
    colleague model or the follow-up reader is told, and the intervention arms' texts"""
    followup_rules: str = READER_RULES
    """the follow-up reader's rules (:data:`~uncobench_z3.settings.READER_RULES`): what decides
    whether a follow-up is targeted, so a run does not resume across a change of them"""

    def digest(self) -> str:
        # fields left at their defaults stay out of the hash, so earlier runs still resume;
        # options that cannot change a result (max_connections) stay out too
        fields = self.model_dump(mode="json", exclude={"benchmark", "epochs"})
        fields["job_identity"] = JOB_IDENTITY
        fields["agents"] = [configuration_name(a) for a in self.agents]
        fields["colleague"] = configuration_name(self.colleague)
        if self.colleague == "scripted":
            fields.pop("colleague")
        if self.interventions == ("none",):
            fields.pop("interventions")
        for name, default in (
            ("prompts_hash", ""),
            ("missed_wait", None),
            ("followup_reader", "rules"),
            ("colleague_mode", "phrase"),
        ):
            if fields.get(name) == default:
                fields.pop(name)
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def prompts_digest(
    colleague: str,
    colleague_mode: ColleagueMode,
    followup_reader: FollowUpReader,
    interventions: Sequence[InterventionArm],
) -> str:
    """SHA-256 (16 hex digits) of the evaluator prompts a run reads besides the main agent's
    instructions: the colleague model's (``phrase`` or ``policy``), the follow-up reader's,
    the intervention arms' texts; "" for a run that reads none (scripted colleagues, no arm),
    so that such runs keep their hash. A run does not resume across a change of them."""
    names = []
    if colleague != "scripted":
        names.append(POLICY_PROMPT if colleague_mode == "policy" else PHRASE_PROMPT)
    if followup_reader == "model":
        names.append(READER_PROMPT)
    if any(arm != "none" for arm in interventions):
        names.append(INTERVENTIONS_FILE)
    if not names:
        return ""
    folder = asset_path("evaluators")
    text = "".join(f"{name}\n{(folder / name).read_text(encoding='utf-8')}\n" for name in names)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_prompts(config: RunConfig, agent: str, arm: InterventionArm) -> str:
    """What the evaluator prompts one sample reads come to, for its job key: the main agent's
    instructions (:attr:`RunConfig.instructions_hash`) if a model plays ``agent``, a colleague
    model's and the follow-up reader's prompts, and the intervention texts if ``arm`` is one
    (:func:`prompts_digest`); "" for a built-in agent with scripted colleagues and no arm,
    whose keys stay as they were. Without it ``--force`` kept a model agent's samples written
    under instructions since changed, and stamped the new instructions on the run."""
    parts = []
    if is_model_agent(agent):
        parts.append(f"instructions:{config.instructions_hash}")
    read = prompts_digest(config.colleague, config.colleague_mode, config.followup_reader, (arm,))
    if read:
        parts.append(f"prompts:{read}")
    return "+".join(parts)


def benchmark_digest(groups: Sequence[TaskGroup], digests: Sequence[str] | None = None) -> str:
    """SHA-256 over the groups' content hashes (``digests``, if already computed), in order."""
    joined = "\n".join(digests if digests is not None else [group_digest(g) for g in groups])
    return hashlib.sha256(joined.encode()).hexdigest()


def make_config(
    benchmark: str | Path,
    groups: Sequence[TaskGroup],
    agents: Sequence[str],
    settings: Sequence[SettingName] | None = None,
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    limit: int | None = None,
    digests: Sequence[str] | None = None,
    colleague: str = "scripted",
    interventions: Sequence[InterventionArm] = ("none",),
    epochs: int = 1,
    missed_wait: int | None = None,
    followup_reader: FollowUpReader = "rules",
    colleague_mode: ColleagueMode = "phrase",
) -> RunConfig:
    """The configuration of a run (``digests``: the groups' content hashes, if computed).

    ``colleague`` is ``scripted`` or a model that phrases the replies (``colleague_mode``
    ``phrase``) or writes them under the policy (``policy``); ``interventions`` are
    the arms each defective setting runs in (``none`` is the plain evaluation); ``epochs``
    the independent trials of each sample.
    """
    if not agents:
        raise ConfigError("name at least one agent (--agent builtin/careful)")
    if epochs < 1:
        raise ConfigError(f"--epochs must be at least 1, not {epochs}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, not {limit}")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, not {budget}")
    if missed_wait is not None and missed_wait < 0:
        raise ConfigError(f"--missed-wait must be 0 or more, not {missed_wait}")
    if followup_reader not in ("rules", "model"):
        raise ConfigError(f"--followup-reader must be rules or model, not {followup_reader!r}")
    if followup_reader == "model" and colleague == "scripted":
        raise ConfigError("--followup-reader model needs a --colleague-model to read with")
    if colleague_mode not in ("phrase", "policy"):
        raise ConfigError(f"--colleague-mode must be phrase or policy, not {colleague_mode!r}")
    if colleague_mode == "policy" and colleague == "scripted":
        raise ConfigError("--colleague-mode policy needs a --colleague-model to play the roles")
    chosen = tuple(dict.fromkeys(settings or SETTING_NAMES))
    unknown = [s for s in chosen if s not in SETTING_NAMES]
    if unknown:
        raise ConfigError(f"unknown setting(s) {unknown}; choose from {list(SETTING_NAMES)}")
    arms = tuple(a for a in INTERVENTION_ARMS if a in set(interventions or ("none",))) or ("none",)
    return RunConfig(
        benchmark=str(benchmark),
        benchmark_hash=benchmark_digest(groups, digests),
        agents=tuple(dict.fromkeys(agents)),
        settings=tuple(s for s in SETTING_NAMES if s in chosen),
        seed=seed,
        budget=budget,
        limit=limit,
        instructions_hash=hashlib.sha256(default_instructions().encode()).hexdigest()[:16],
        colleague=_check_colleague(colleague),
        interventions=arms,
        prompts_hash=prompts_digest(colleague, colleague_mode, followup_reader, arms),
        epochs=epochs,
        missed_wait=missed_wait,
        followup_reader=followup_reader,
        colleague_mode=colleague_mode,
    )


def _check_colleague(colleague: str) -> str:
    if colleague == "scripted":
        return colleague
    return ModelRef.parse(colleague).describe()  # normalised, and bad options fail early


def models_called(config: RunConfig) -> list[ModelRef]:
    """Every model the run will call: LLM agents and an LLM colleague."""
    from ._llm_agent import parse_agent_options

    refs = [parse_agent_options(name)[0] for name in config.agents if is_model_agent(name)]
    if config.colleague != "scripted":
        refs.append(model_with_defaults(config.colleague))
    return refs


async def check_models(config: RunConfig) -> None:
    """Create (and close) every model the run will call, so an unknown provider, a missing
    key or a bad setting fails before any file is written."""
    for ref in models_called(config):
        await ref.create().aclose()


MAX_EPOCHS = 1000
"""the most epochs a run may have: every job of every epoch is planned in memory at once"""


def plan_jobs(
    groups: Sequence[TaskGroup], config: RunConfig, digests: Sequence[str] | None = None
) -> tuple[list[SampleJob], dict[str, list[str]]]:
    """Every sample of the run in a fixed order (epoch by epoch), and setting -> groups that
    lack it.

    ``digests`` may pass the groups' content hashes when they are already computed.
    """
    if not 1 <= config.epochs <= MAX_EPOCHS:
        raise ConfigError(f"--epochs must lie between 1 and {MAX_EPOCHS}, not {config.epochs}")
    chosen = groups[: config.limit] if config.limit is not None else groups
    jobs: list[SampleJob] = []
    unavailable: dict[str, list[str]] = {}
    # The first job is validated; the others are copies of it with the group, setting, agent
    # and arm changed (values of the same types, checked already: the groups when made, the
    # rest in ``config``). Validating each job ran the group's reference checks again: 0.32 s
    # of a run's start at 6,144 jobs, before any sample could begin.
    first: SampleJob | None = None
    prompts = {
        (agent, arm): sample_prompts(config, agent, arm)
        for agent in config.agents
        for arm in config.interventions
    }
    for index, group in enumerate(chosen):
        digest = digests[index] if digests is not None else group_digest(group)
        for setting in config.settings:
            if not group.setting(setting).available:
                unavailable.setdefault(setting, []).append(group.id)
                continue
            # interventions only mean something where a defect can show
            arms = config.interventions if setting != "reliable" else ("none",)
            for agent in config.agents:
                for arm in arms:
                    if first is None:
                        first = SampleJob.make(
                            group,
                            setting,
                            agent,
                            config.seed,
                            config.budget,
                            digest,
                            config.colleague,
                            arm,
                            missed_wait=config.missed_wait,
                            followup_reader=config.followup_reader,
                            colleague_mode=config.colleague_mode,
                            prompts=prompts[agent, arm],
                        )
                        jobs.append(first)
                        continue
                    update = {
                        "group": group,
                        "setting": setting,
                        "agent": agent,
                        "intervention": arm,
                        "group_hash": digest,
                        "prompts": prompts[agent, arm],
                    }
                    jobs.append(job_copy(first, update))
    # every epoch repeats the same plan; all of epoch 1 comes first
    epochs = range(2, config.epochs + 1)
    jobs += [job_copy(job, {"epoch": epoch}) for epoch in epochs for job in jobs]
    return jobs, unavailable


_new_job = SampleJob.__new__
_set = object.__setattr__


def job_copy(job: SampleJob, update: dict[str, Any]) -> SampleJob:
    """``job.model_copy(update=update)`` (a :class:`SampleJob` has no private or extra
    attributes), made directly: pydantic's copy goes through ``copy.copy`` three times. At
    6,144 jobs (``benchmarks/eval_overhead.py`` at concurrency 256) the plan took 27.8 ms of
    CPU with it and 20.5 ms with this, all before the first sample (least of seven, a loaded
    machine); tests/test_eval_worker_checks.py compares the two."""
    fields = job.__dict__.copy()
    fields.pop("key", None)  # the copy's key and seed are its own (SampleJob.model_copy)
    fields.pop("epoch_seed", None)
    fields.update(update)
    copy = _new_job(SampleJob)
    _set(copy, "__dict__", fields)
    _set(copy, "__pydantic_fields_set__", job.__pydantic_fields_set__ | update.keys())
    _set(copy, "__pydantic_extra__", None)
    _set(copy, "__pydantic_private__", None)
    return copy


# -- running ----------------------------------------------------------------------------------
def generation_record(config: RunConfig) -> dict[str, dict[str, object]]:
    """What decides each agent's (and an LLM colleague's) sampling, for ``run.json``: the
    generation settings its name gives (temperatures stay the provider's default unless set)
    and the seed, which is the epoch seed unless the name pins one."""
    from ._llm_agent import generation_settings, model_generation
    from ._registry import BUILTIN_AGENTS

    record: dict[str, dict[str, object]] = {}
    for name in config.agents:
        if name in BUILTIN_AGENTS:
            record[name] = {"kind": "builtin", "seed": "per epoch"}
            continue
        try:
            record[name] = generation_settings(name)
        except ConfigError:
            record[name] = {"kind": "registered", "seed": "per epoch"}
    if config.colleague != "scripted":
        colleague = model_with_defaults(config.colleague)
        record[f"colleague:{config.colleague}"] = model_generation(colleague)
    return record
