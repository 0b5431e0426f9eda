"""Three-valued verdicts and the records of each check."""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, field_serializer, field_validator

from ..spec import Problem


class Verdict(IntEnum):
    """Ordered so that the verdict of several checks is their minimum.

    ``UNKNOWN`` (the solver gave up: timeout, resource limit, incompleteness) is never
    counted as proved.
    """

    REFUTED = 0
    UNKNOWN = 1
    PROVED = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Verdict:
        return cls[text.upper()]


CheckKind = Literal["structure", "gold", "uniqueness", "necessity", "validity", "consistency"]


class CheckResult(BaseModel):
    """One check: what it claims, its verdict, and the evidence.

    ``witness`` is a model (a completion of hidden facts and the output it gives) for a
    satisfiable query; ``core`` names the pinned facts an unsatisfiable query needed;
    ``reason`` is the solver's own explanation of an unknown.
    """

    name: str
    kind: CheckKind
    verdict: Verdict
    summary: str
    role: str | None = None
    setting: str | None = None
    witness: dict[str, Any] | None = None
    core: list[str] | None = None
    reason: str | None = None
    problems: list[Problem] | None = None
    certificates: list[str] = Field(default_factory=list)

    @field_serializer("verdict")
    def _dump_verdict(self, verdict: Verdict) -> str:
        return verdict.label

    @field_validator("verdict", mode="before")
    @classmethod
    def _load_verdict(cls, value: object) -> object:
        return Verdict.parse(value) if isinstance(value, str) else value


def combine(verdicts: list[Verdict]) -> Verdict:
    """The verdict of a list of checks: the weakest one (an empty list is proved)."""
    return min(verdicts, default=Verdict.PROVED)
