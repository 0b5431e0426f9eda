"""The unit of work: one group x setting x agent configuration x epoch (:class:`SampleJob`)
-> one sample record (:class:`SampleRecord`). Playing and scoring a job into its record is
:mod:`._run_sample`.

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
from collections.abc import Callable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from .._kept_property import kept_property
from .._memo import remember
from .._plain_reads import plain_reads
from ..models import ModelUsage
from ..settings import READER_RULES, DefectKind, SettingName, TaskGroup, group_digest
from ..spec import Answer
from ._attribution import Attribution, Justification
from ._behaviour import Behaviour, PolicyKeeping
from ._colleagues import FollowUpReader
from ._environment import ColleagueMode, EpisodeStatus, RoundRecord
from ._interventions import InterventionArm
from ._notes import RoundNote
from ._protocol import DEFAULT_BUDGET, Agent, AnswerAction
from ._registry import configuration_name
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
    prompts: str = ""
    """the evaluator prompts the sample reads (:func:`~._plan.sample_prompts`): the main
    agent's instructions for a model agent, the run's other prompts; "" when it reads none"""

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
        prompts: str = "",
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
            prompts=prompts,
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
            extra.append(f"colleague={configuration_name_of(colleague)}")
        if (intervention := self.intervention) != "none":
            extra.append(f"intervention={intervention}")
        if (missed_wait := self.missed_wait) is not None:
            extra.append(f"missed_wait={missed_wait}")
        if (reader := self.followup_reader) != "rules":
            extra.append(f"followup_reader={reader}")
        if (mode := self.colleague_mode) != "phrase":
            extra.append(f"colleague_mode={mode}")
        if prompts := self.prompts:
            # a sample written under other prompts is another sample: --force sets it aside
            extra.append(f"prompts={prompts}")
        agent = configuration_name_of(self.agent)
        setting = self.setting
        if type(seed) is int and type(budget) is int and type(epoch) is int:
            # json.dumps(fields) written out (each text by the encoder's own function): the
            # same text, without making an encoder for each key (json.dumps was about half of
            # a key's 48,000 instructions)
            text = (
                f"[{_json_text(group_hash)}, {_json_text(setting)}, {_json_text(agent)}, "
                f'{seed}, {budget}, "epoch={epoch}", {_RULES_FIELD}'
                # (the defaults give no extra field: no comprehension, a call of its own)
                + ("".join([f", {_json_text(field)}" for field in extra]) if extra else "")
                + "]"
            )
        else:
            fields = [group_hash, setting, agent, seed, budget, f"epoch={epoch}", _RULES]
            text = json.dumps([*fields, *extra])
        return hashlib.sha256(text.encode()).hexdigest()


_json_text: Callable[[str], str] = json.encoder.encode_basestring_ascii
_RULES = f"rules={READER_RULES}"
"""every key's field for the follow-up reader's rules: a sample read under other rules (an
earlier version's) is another sample, set aside by ``--force``, not resumed"""
_RULES_FIELD = _json_text(_RULES)


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
    missed_wait: int | None = None
    """the run's ``--missed-wait`` (None: each group's policy); a line written before the
    records held it takes its run's (:meth:`with_run_settings`)"""
    followup_reader: FollowUpReader = "rules"
    """the run's ``--followup-reader`` (as :attr:`missed_wait`)"""
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

    def with_run_settings(self, missed_wait: object, followup_reader: object) -> SampleRecord:
        """This record, read from the log of a run given ``missed_wait`` and
        ``followup_reader`` (its ``run.json`` says: values of another type are passed over),
        with those where its line did not hold them (written before the records did): its
        label is then its run's, as its key always was."""
        given = self.model_fields_set
        if "missed_wait" not in given and (missed_wait is None or type(missed_wait) is int):
            self.missed_wait = missed_wait
        if "followup_reader" not in given and followup_reader in ("rules", "model"):
            self.followup_reader = followup_reader
        return self


configuration_name_of = functools.lru_cache(maxsize=256)(configuration_name)
""":func:`~._registry.configuration_name`, remembered (a run names a few agents and
colleagues; each sample's key and record name both)"""
