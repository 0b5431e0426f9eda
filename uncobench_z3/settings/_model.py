"""The paired task group: one verified instance, five reliability settings, one gold answer.

Each defect is *data*: which role, fact and candidates it touches, what the first reply
says, what a follow-up must contain to count as targeted, and what the reply is then.
Scripted and LLM colleagues read the same policy; nothing about a defect lives in code paths.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..spec import Answer, Scalar, TaskSpec

GROUP_KIND = "uncobench-task-group"
SettingName = Literal["reliable", "misaligned", "incomplete", "missed", "mixed"]
SETTING_NAMES: tuple[SettingName, ...] = ("reliable", "misaligned", "incomplete", "missed", "mixed")
DefectKind = Literal["misaligned", "incomplete", "missed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StatedValue(_Frozen):
    """What one reply states about one fact of one candidate.

    Exactly one of three forms: an exact ``value``; an imprecise inclusive range
    ``low``..``high`` (ordered facts); or a set of ``options`` (enum and boolean facts).
    ``context`` is the context the reply names for it.
    """

    candidate: str
    fact: str
    context: str
    value: Scalar | None = None
    low: Scalar | None = None
    high: Scalar | None = None
    options: list[Scalar] | None = None

    @property
    def is_exact(self) -> bool:
        return self.value is not None


class AnyOf(_Frozen):
    """A follow-up satisfies this clause when it contains one of the phrases."""

    phrases: list[str] = Field(min_length=1)
    describes: str = Field(description='What the clause asks for, e.g. "the fact".')


class FollowUpRule(_Frozen):
    """When a later request to the role counts as *targeted* (resolves the defect).

    ``any_request``: any new request to the role (a Missed reply). Otherwise every clause
    of ``all_of`` must be satisfied; phrases match case-insensitively on word boundaries,
    ignoring punctuation and repeated spaces.
    """

    any_request: bool = False
    all_of: list[AnyOf] = Field(default_factory=list)


class Defect(_Frozen):
    kind: DefectKind
    role: str
    fact: str | None = Field(default=None, description="None for a Missed defect.")
    candidates: list[str] = Field(default_factory=list)
    first_reply: list[StatedValue] | None = Field(
        default=None,
        description="What the first reply about the fact states; None: no reply at all.",
    )
    targeted_follow_up: FollowUpRule
    resolved_reply: list[StatedValue] | None = Field(
        default=None,
        description="What a targeted follow-up gets; None for Missed (the role answers "
        "normally from then on).",
    )
    rationale: str = Field(description="Why the defect matters, in one line.")


class Setting(_Frozen):
    name: SettingName
    available: bool = True
    reason: str | None = Field(default=None, description="Why the setting is unavailable.")
    defects: list[Defect] = Field(default_factory=list)


class ProofSummary(_Frozen):
    """Verdicts of the group's checks at construction time (``verify`` re-proves them)."""

    verdict: str
    checks: dict[str, str]


GROUP_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class TaskGroup(BaseModel):
    """One decision task in all its reliability settings."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["uncobench-task-group"] = "uncobench-task-group"
    schema_version: Literal[1] = 1
    id: str = Field(
        pattern=GROUP_ID_PATTERN,
        max_length=128,
        description="Letters, digits, '_', '.' and '-', starting with a letter or digit (ids "
        "name files, so they can never name a path).",
    )
    seed: int
    spec: TaskSpec
    gold: Answer
    settings: list[Setting]
    proofs: ProofSummary | None = None
    rendered: dict[str, object] | None = Field(
        default=None, description="The natural-language task text and role records."
    )
    provenance: dict[str, object] = Field(default_factory=dict)

    def setting(self, name: SettingName) -> Setting:
        for setting in self.settings:
            if setting.name == name:
                return setting
        raise KeyError(name)
