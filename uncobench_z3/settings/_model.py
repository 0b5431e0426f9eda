"""The paired task group: one verified instance, five reliability settings, one gold answer.

Each defect is *data*: which role, fact and candidates it touches, what the first reply
says, what a follow-up must contain to count as targeted, and what the reply is then.
Scripted and LLM colleagues read the same policy; nothing about a defect lives in code paths.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .._plain_reads import plain_reads, plain_reads_of_subclasses
from ..spec import Answer, Scalar, TaskSpec

GROUP_KIND = "uncobench-task-group"
GROUP_SCHEMA_VERSION = 2
SettingName = Literal["reliable", "misaligned", "incomplete", "missed", "mixed"]
SETTING_NAMES: tuple[SettingName, ...] = ("reliable", "misaligned", "incomplete", "missed", "mixed")
DefectKind = Literal["misaligned", "incomplete", "missed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    __pydantic_init_subclass__ = plain_reads_of_subclasses  # (see _plain_reads.py)


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


class CandidateSign(_Frozen):
    """The request concerns one of ``candidates``: it names one (full name, first name,
    surname), refers to the one in focus by a pronoun, says "all candidates", or names no
    candidate at all (it then concerns every candidate)."""

    sign: Literal["candidate"] = "candidate"
    candidates: list[str] = Field(min_length=1)


class FactSign(_Frozen):
    """The request names the fact: its label, key or a declared synonym, a word of them that
    no other fact of the task has, one of its members, or a context only it has among the
    addressed role's facts; a shared or generic word when it is the role's one such fact."""

    sign: Literal["fact"] = "fact"
    fact: str


class ContextSign(_Frozen):
    """The request names this context of the fact, and not to reject it: its label, a word
    that tells it apart from the fact's other contexts ("March" against "April"), or
    "latest" / "previous" when the fact's contexts are ordered periods and it is that one."""

    sign: Literal["context"] = "context"
    fact: str
    context: str


FollowUpIntent = Literal["exact", "mismatch", "reference", "request"]


class IntentSign(_Frozen):
    """The request shows the intent (see :mod:`uncobench_z3.settings._request`): ``exact``
    asks for a single exact value, ``mismatch`` says a reply was for the wrong context,
    ``reference`` points at the reply being followed up, ``request`` is any request."""

    sign: Literal["intent"] = "intent"
    intent: FollowUpIntent


class ReplySign(_Frozen):
    """The request refers to the first reply's imprecise statement of the fact: "that
    range", "those options", "you said", or it quotes the statement's bounds or options."""

    sign: Literal["reply"] = "reply"
    fact: str


Sign = Annotated[
    CandidateSign | FactSign | ContextSign | IntentSign | ReplySign, Field(discriminator="sign")
]


class Clause(_Frozen):
    """Satisfied when the request shows at least one of the signs."""

    any_of: list[Sign] = Field(min_length=1)


class FollowUpRule(_Frozen):
    """When a later request to the role counts as *targeted* (resolves the defect): every
    clause of ``all_of`` is satisfied by the structured reading of the request.

    The rule is data, as the rest of the defect: scripted colleagues, ``verify``,
    ``uncobench followup`` and LLM colleagues (rendered as text) read the same rule. The
    table of rules per defect is in docs/settings.md.
    """

    all_of: list[Clause] = Field(min_length=1)


DEFAULT_MISSED_WAIT = 1


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
    missed_wait: int | None = Field(
        default=None,
        ge=0,
        description="Missed only: wait rounds after which the unanswered request's reply "
        f"arrives anyway (0: never; None: {DEFAULT_MISSED_WAIT}). A re-request brings it at once.",
    )


class Setting(_Frozen):
    name: SettingName
    available: bool = True
    reason: str | None = Field(default=None, description="Why the setting is unavailable.")
    defects: list[Defect] = Field(default_factory=list)


class ProofSummary(_Frozen):
    """Verdicts of the group's checks at construction time (``verify`` re-proves them)."""

    verdict: str
    checks: dict[str, str]
    gold_chances: dict[str, str] = Field(
        default_factory=dict,
        description="Per gold-chance check: the exact probability (a fraction) of the gold "
        "answer under a uniform prior over the values an imprecise reply allows.",
    )
    guessing_floors: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Strategy -> setting -> the exact accuracy (a fraction) of a guessing "
        "strategy (optimist, midpoint, face-value) in that setting.",
    )
    minimum_rounds: dict[SettingName, Annotated[int, Field(ge=1)]] | None = Field(
        default=None,
        # left out when absent, so a group without it keeps its content hash
        exclude_if=lambda stored: stored is None,
        description="Setting -> the fewest rounds (the answer included) an ideal agent needs "
        "with scripted colleagues, for every available setting where the solver decided it "
        "(uncobench_z3.evaluation.minimum_rounds); stored by `uncobench build`, compared with "
        "a fresh computation by `uncobench verify`, read by an evaluation instead of "
        "computing it. Absent: computed when evaluated.",
    )
    decision_changes: dict[str, dict[str, Annotated[int, Field(ge=0)] | None]] | None = Field(
        default=None,
        # left out when absent, so a group without it keeps its content hash
        exclude_if=lambda stored: stored is None,
        description="Candidate -> decision fact -> the first value of the record that gives "
        "an output other than gold when every other record is at its true value, as an index "
        "into the fact's values to try (None: no value does); what the evidence judge's exact "
        "evaluation searches first (uncobench_z3.evaluation.decision_changes). Stored by "
        "`uncobench build` only when the true records give gold (an evaluation takes it as "
        "that proof), compared with a fresh computation by `uncobench verify`, read by an "
        "evaluation instead of computing it. Absent: computed when evaluated.",
    )
    shared_defects: (
        dict[SettingName, list[tuple[SettingName, Annotated[int, Field(ge=0)]] | None]] | None
    ) = Field(
        default=None,
        # left out when absent, so a group without it keeps its content hash
        exclude_if=lambda stored: stored is None,
        description="Setting -> for each of its defects, the setting and index of the first "
        "earlier defect of the group (in the settings' order) that is the same in every field, "
        "or None (only settings with such a defect are named; uncobench_z3.settings."
        "shared_defects): the scripted colleagues take the one for the other. Stored by "
        "`uncobench build`, compared with a fresh computation by `uncobench verify`. Absent: "
        "the colleagues compare the defects when evaluated.",
    )


GROUP_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


@plain_reads
class TaskGroup(BaseModel):
    """One decision task in all its reliability settings."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["uncobench-task-group"] = "uncobench-task-group"
    schema_version: Literal[2] = 2
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

    @model_validator(mode="before")
    @classmethod
    def _read_older_versions(cls, data: Any) -> Any:
        from ._migrate import migrate_group

        return migrate_group(data)

    @model_validator(mode="after")
    def _names_are_the_tasks(self) -> TaskGroup:
        # checked when read, so that no command meets a name the task lacks later (a proof
        # that never looks at it, a reader that crashes on it)
        from ._references import reference_error, reference_problems

        problems = reference_problems(self.spec, self.settings)
        if problems:
            raise reference_error(type(self).__name__, problems)
        return self

    def setting(self, name: SettingName) -> Setting:
        for setting in self.settings:
            if setting.name == name:
                return setting
        raise KeyError(name)
