"""What a played episode leaves behind: the record of each request and reply, of each round,
and the episode's outcome (everything a sample's record and its scoring read of it).

The environment (:mod:`._environment`) makes them round by round from values it has typed and
checked itself: without validation, with the makers below (:mod:`uncobench_z3._trusted`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._plain_reads import plain_reads_of_subclasses
from .._trusted import trusted_maker
from ..models import StoredOutput
from ..settings import DefectKind, StatedValue
from ._colleagues import FollowUpKind, FollowUpReading
from ._llm_colleague import FidelityCheck
from ._policy_colleague import PolicyCheck
from ._protocol import AnswerAction

ActionKind = Literal["ask", "wait", "answer", "invalid"]
EpisodeStatus = Literal["running", "answered", "budget_exhausted", "context_exhausted"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __pydantic_init_subclass__ = plain_reads_of_subclasses  # (see _plain_reads.py)


class ReplyRecord(_Frozen):
    """One request and what came back, with the data attribution and metrics need."""

    role: str
    question: str
    text: str | None
    stated: tuple[StatedValue, ...] = ()
    concerned: tuple[tuple[str, str], ...] = ()
    defects: tuple[DefectKind, ...] = ()
    resolved: tuple[DefectKind, ...] = ()
    follow_up: FollowUpKind | None = None
    fidelity: FidelityCheck | None = None
    """the programmatic check of an LLM colleague's wording (None for scripted replies)"""
    policy: PolicyCheck | None = None
    """a policy colleague's reply judged against the scripted reference (``stated`` and
    ``pending`` are the reference's; ``text`` is what the model wrote and the agent saw)"""
    pending: bool = False
    """the request got no reply and stays pending (Missed)"""
    answers_round: int | None = None
    """this reply (also) answers the request left pending in that round"""
    delivered: bool = False
    """the reply arrived without a request this round: the pending reply, after waiting"""
    readings: tuple[FollowUpReading, ...] = ()
    """how a follow-up to a stated defect was read (the rules' and, optionally, a model's)"""


class RoundRecord(_Frozen):
    round: int
    action: ActionKind
    replies: tuple[ReplyRecord, ...] = ()
    answer: AnswerAction | None = None
    error: str | None = None
    intervention: str | None = None
    """the intervention text delivered with this round's observation, if any"""
    output: StoredOutput | None = None
    """what the agent's model wrote for this round's action, as it wrote it (LLM agents)"""


class EpisodeOutcome(_Frozen):
    """What a played episode leaves behind: everything its sample record needs from it.

    An environment gives its own (:attr:`Environment.outcome`); the inspect_ai integration
    keeps one in each sample's store, so a logged sample can be scored again.
    """

    status: EpisodeStatus
    answer: AnswerAction | None = None
    trace: tuple[RoundRecord, ...] = ()
    intervention_delivered: bool = False
    end_detail: str | None = None
    """why the episode ended early (the model's error for ``context_exhausted``)"""

    @property
    def rounds(self) -> int:
        return len(self.trace)


# made without validation from values the environment has typed and checked itself
reply_record = trusted_maker(ReplyRecord)
round_record = trusted_maker(RoundRecord)
episode_outcome = trusted_maker(EpisodeOutcome)
