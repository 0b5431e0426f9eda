"""LLM colleagues: the same policy as the scripted ones, phrased by a language model.

What a reply says is decided by the group's policy data exactly as for scripted colleagues
(which records, which defect, targeted or generic follow-up); the model only phrases it.
Every phrased reply is checked programmatically against what it had to convey (fidelity): each
stated record keeps its candidate, its context label and its value, and a defective reply does
not leak the true value it withholds. A reply that fails the check is replaced by the scripted
wording, and the check is logged in the trace either way.
"""

from __future__ import annotations

import functools
import re
from string import Template

from pydantic import BaseModel, ConfigDict

from .._assets import asset_path
from ..construct import ModelRef
from ..construct._llm_stages import value_variants
from ..models import ChatMessage, ModelUsage
from ..settings import StatedValue, stated_value
from ..spec import TypedTask
from ._colleagues import ColleagueReply, RecordBook
from ._models import shared_model, trial_config

PROMPT_FILE = "colleague.md"


class FidelityCheck(BaseModel):
    """The programmatic check of one phrased reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    passed: bool
    problems: tuple[str, ...] = ()
    rejected_text: str | None = None
    """the model's wording when it failed the check (the scripted wording was used instead)"""


@functools.cache
def _prompt() -> Template:
    return Template((asset_path("evaluators") / PROMPT_FILE).read_text(encoding="utf-8"))


def fidelity_problems(
    task: TypedTask, stated: tuple[StatedValue, ...], text: str, withheld: list[StatedValue]
) -> list[str]:
    """What a phrased reply got wrong: a stated record missing, or a withheld value leaked."""
    lowered = text.lower()
    problems = []
    for item in stated:
        name = task.candidate_name(item.candidate)
        label = f"{name}'s {task.facts[item.fact].label}"
        if name.lower() not in lowered:
            problems.append(f"{label}: the candidate is not named")
        if item.context.lower() not in lowered:
            problems.append(f"{label}: the context {item.context!r} is missing")
        if item.is_exact:
            variants = value_variants(task, item.fact, stated_value(task, item))
            if not any(v.lower() in lowered for v in variants):
                problems.append(f"{label}: the value is missing")
    for item in withheld:
        variants = value_variants(task, item.fact, stated_value(task, item))
        stated_texts = {v.lower() for s in stated if s.is_exact
                        for v in value_variants(task, s.fact, stated_value(task, s))}  # fmt: skip
        if task.facts[item.fact].type not in ("bool",) and any(
            _mentions(lowered, v.lower()) and v.lower() not in stated_texts for v in variants
        ):
            problems.append(
                f"{task.candidate_name(item.candidate)}'s {task.facts[item.fact].label}: "
                "the withheld true value leaked"
            )
    return problems


def _mentions(text: str, value: str) -> bool:
    """``value`` written on its own in ``text`` (80 is not in "9,800,000")."""
    return re.search(r"(?<![\w.,])" + re.escape(value) + r"(?!\w|[.,]\d)", text) is not None


class LLMPhraser:
    """Phrases scripted replies with a model, checking each one."""

    def __init__(
        self, ref: ModelRef, task: TypedTask, book: RecordBook, trial: int | None = None
    ) -> None:
        self.ref = ref
        self.task = task
        self.book = book
        self.trial = trial
        """the epoch seed: the model's seed (unless the name pins one) and its cache scope"""
        self.usage = ModelUsage()
        """tokens and cost of the phrasing calls of one sample (cache hits spend nothing)"""
        self.cached_usage = ModelUsage()
        """what the phrasings served from the response cache cost when first made"""

    async def phrase(
        self, role: str, question: str, reply: ColleagueReply
    ) -> tuple[str | None, FidelityCheck | None]:
        if reply.text is None:
            return None, None  # a missed request stays silent: nothing to phrase
        text = _prompt().substitute(
            role_name=self.task.role_name(role), question=question, records=reply.text
        )
        output = await shared_model(self.ref).generate(
            [ChatMessage.user(text)], config=trial_config(self.ref, self.trial), trial=self.trial
        )
        if output.from_cache:
            self.cached_usage = self.cached_usage + output.usage
        else:
            self.usage = self.usage + output.usage
        written = output.text.strip()
        withheld = [
            self.book.faithful[(s.candidate, s.fact)]
            for s in reply.stated
            if (s.candidate, s.fact) in self.book.faithful
            and s != self.book.faithful[(s.candidate, s.fact)]
        ]
        problems = fidelity_problems(self.task, reply.stated, written, withheld)
        if not written:
            problems.insert(0, "the model wrote nothing")
        check = FidelityCheck(
            model=self.ref.describe(),
            passed=not problems,
            problems=tuple(problems),
            rejected_text=written if problems else None,
        )
        return (reply.text if problems else written), check
