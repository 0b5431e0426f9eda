"""The task specification: one JSON file holds one decision task (schema version 1).

The models here only fix the *shape* of a spec. Everything that relates one part to another
(references, domains, units, counts) is checked by :mod:`._structure`, which reports every
problem at once with its JSON path instead of stopping at the first.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, WithJsonSchema

from .._plain_reads import plain_reads_of_subclasses
from ._rounding import RoundingMode
from ._values import FactType

SCHEMA_VERSION = 1

Identifier = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_]*$",
        max_length=64,
        description="Letters, digits and underscores, starting with a letter.",
    ),
]


_SCALAR_TYPES = (bool, int, Decimal, str)
"""a tuple made once: ``bool | int | Decimal | str`` in the check makes three unions each
time, and a group's validation checks about 80 (a tuple: 3% fewer instructions to load one)"""


def _check_scalar(value: object) -> bool | int | Decimal | str:
    if isinstance(value, _SCALAR_TYPES):
        return value
    if isinstance(value, float):
        raise ValueError(
            "binary floats are not exact: load JSON with uncobench_z3.spec.load_json "
            'or write decimals as strings such as "12.5"'
        )
    raise ValueError("expected a number, a string or true/false")


def _dump_scalar(value: bool | int | Decimal | str) -> bool | int | str:
    return str(value) if isinstance(value, Decimal) else value


#: A JSON scalar as written in a file; typed later against the fact it belongs to.
#: Decimals may be written as JSON numbers (read exactly) or as strings ("12.50").
Scalar = Annotated[
    bool | int | Decimal | str,
    PlainValidator(_check_scalar),
    PlainSerializer(_dump_scalar, when_used="json"),
    WithJsonSchema({"type": ["number", "string", "boolean"]}),
]

Operator = Literal[">=", ">", "<=", "<", "==", "!=", "in", "not in", "between"]
OPERATORS: tuple[Operator, ...] = (">=", ">", "<=", "<", "==", "!=", "in", "not in", "between")
Operation = Literal[
    "sum",
    "difference",
    "product",
    "ratio",
    "percentage_of",
    "weighted_average",
    "capped_sum",
    "percentage_change",
]
OPERATIONS: tuple[Operation, ...] = (
    "sum",
    "difference",
    "product",
    "ratio",
    "percentage_of",
    "weighted_average",
    "capped_sum",
    "percentage_change",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    __pydantic_init_subclass__ = plain_reads_of_subclasses  # (see _plain_reads.py)


class Candidate(_Strict):
    id: Identifier
    name: str = Field(min_length=1, description="The name shown in the candidate directory.")
    description: str | None = None


class Role(_Strict):
    id: Identifier
    name: str = Field(min_length=1, description='A colleague\'s title, e.g. "Security office".')
    description: str = Field(default="", description="What this colleague's private records hold.")


class Fact(_Strict):
    """A kind of fact a role records about every candidate."""

    key: Identifier
    owner: Identifier = Field(description="The id of the role whose records hold this fact.")
    label: str = Field(min_length=1, description='How the fact is named, e.g. "clearance result".')
    type: FactType
    unit: str | None = Field(default=None, description='e.g. "years", "AUD", "%", "AUD/hour".')
    min: Scalar | None = Field(
        default=None, description="Lowest admissible value (int/decimal/date)."
    )
    max: Scalar | None = Field(
        default=None, description="Highest admissible value (int/decimal/date)."
    )
    step: Scalar | None = Field(
        default=None,
        description="Resolution of an int or decimal (values are multiples of it). "
        "Required for decimals; 1 by default for ints.",
    )
    values: list[str] | None = Field(default=None, description="The members of an enum.")
    context: str = Field(
        min_length=1,
        description='The context the task requires, e.g. "March 2026 assessment".',
    )
    other_contexts: list[str] = Field(
        default_factory=list,
        description="Other contexts the owner's records also hold this fact for "
        '(e.g. "April 2026 assessment"): what makes a mis-scoped reply possible.',
    )
    synonyms: list[str] | None = Field(
        default=None,
        description='Other words people use for this fact (e.g. "vetting", "security check" '
        "for a clearance result): colleagues recognise them in follow-ups.",
    )


class Condition(_Strict):
    """An eligibility condition on one fact; a candidate is eligible when all hold."""

    id: Identifier
    fact: Identifier
    op: Operator
    value: Scalar | list[Scalar] = Field(
        description="A scalar; a list for 'in' / 'not in'; [low, high] (inclusive) for 'between'."
    )
    text: str | None = Field(default=None, description="Optional phrasing for the task text.")


class Rounding(_Strict):
    digits: int = Field(default=0, ge=-9, le=9, description="Decimals kept in the final result.")
    mode: RoundingMode = "half_up"


class NumericalRule(_Strict):
    """The number reported for the eligible candidate (see the encoding page for each operation)."""

    operation: Operation
    operands: list[Identifier] = Field(description="Fact keys, in order.")
    weights: list[Scalar] | None = Field(
        default=None, description="Positive constant weights, for weighted_average only."
    )
    label: str = Field(min_length=1, description='What the number is, e.g. "relocation package".')
    unit: str = Field(description="The unit of the result.")
    rounding: Rounding = Field(default_factory=Rounding)


class Decision(_Strict):
    positive: str = Field(default="Appoint", min_length=1)
    negative: str = Field(default="Do not appoint", min_length=1)


class Record(_Strict):
    """One value in a role's private records: a fact about a candidate in one context."""

    candidate: Identifier
    fact: Identifier
    value: Scalar
    context: str | None = Field(
        default=None, description="The record's context; the fact's required context if omitted."
    )


class TaskSpec(_Strict):
    """A decision task: three candidates, 5-7 roles, 5-7 conditions and a numerical rule."""

    schema_version: Literal[1] = 1
    id: Identifier
    domain: str = Field(min_length=1, description='The application domain, e.g. "mining".')
    title: str = Field(min_length=1)
    question: str = Field(min_length=1, description="The decision question put to the agent.")
    decision: Decision = Field(default_factory=Decision)
    candidates: list[Candidate]
    roles: list[Role]
    facts: list[Fact]
    conditions: list[Condition]
    rule: NumericalRule
    records: list[Record] = Field(
        default_factory=list,
        description="Instance values. Without them only the structural checks run.",
    )

    @property
    def has_values(self) -> bool:
        return bool(self.records)
