"""Reading follow-ups with a language model (``--followup-reader model``), as the paper's role
agents decide for themselves whether a follow-up addresses their reply's problem.

The model is the colleague model (``--colleague-model``). It gets the defect's problem, the
first reply, the follow-up and the rule as text (:func:`~uncobench_z3.settings.rule_text`:
the same policy the scripted colleagues apply), and answers with a JSON object
``{"targeted": bool, "reason": str}``. Both readings go into the trace; an answer that cannot
be read leaves the decision to the rules (and says so). Agreement between the two readings is
reported by :func:`~uncobench_z3.evaluation.reader_agreement`.
"""

from __future__ import annotations

import functools
import json
from string import Template

from .._assets import asset_path
from ..construct import ModelRef
from ..models import ChatMessage, ModelUsage
from ..settings import Defect, rule_text
from ..spec import TypedTask
from ._colleagues import RecordBook
from ._models import shared_model, trial_config

PROMPT_FILE = "followup_reader.md"
_JSON = json.JSONDecoder()


@functools.cache
def _prompt() -> Template:
    return Template((asset_path("evaluators") / PROMPT_FILE).read_text(encoding="utf-8"))


def parse_reader_verdict(text: str) -> bool | None:
    """``targeted`` from the model's answer (the first JSON object holding it), else None."""
    # each "{" may open the object: decoded from there to its own end, so a brace in its
    # reason ("asks about {the rate}") or a nested object does not cut it short
    start = text.find("{")
    while start != -1:
        try:
            data, _ = _JSON.raw_decode(text, start)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("targeted"), bool):
            return bool(data["targeted"])
        start = text.find("{", start + 1)
    return None


def problem_text(task: TypedTask, defect: Defect) -> str:
    """The defect's problem in words (what the colleague knows its reply did)."""
    if defect.kind == "missed" or defect.fact is None:
        return "You did not answer their first request."
    fact = task.facts[defect.fact]
    names = " and ".join(task.candidate_name(c) for c in defect.candidates)
    if defect.kind == "misaligned":
        given = sorted({s.context for s in defect.first_reply or [] if s.context != fact.context})
        return (
            f"you gave the {fact.label} of {names} for the {', '.join(given)}, "
            f"but the task needs the {fact.context}."
        )
    return f"you gave the {fact.label} of {names} imprecisely, not as one exact value."


class ModelFollowUpReader:
    """Asks the colleague model whether a follow-up is targeted."""

    def __init__(
        self, ref: ModelRef, task: TypedTask, book: RecordBook, trial: int | None = None
    ) -> None:
        self.ref = ref
        self.task = task
        self.book = book
        self.trial = trial
        """the epoch seed: the model's seed (unless the name pins one) and its cache scope, as
        for the colleague's replies, so that epochs are independent trials of the reader too"""
        self.usage = ModelUsage()
        self.cached_usage = ModelUsage()
        """what answers served from the response cache cost when they were first made"""

    async def read(self, role: str, message: str, defect: Defect) -> bool | None:
        first = "\n".join(self.book.line(s) for s in defect.first_reply or []) or "(no reply)"
        text = _prompt().substitute(
            role_name=self.task.role_name(role),
            problem=problem_text(self.task, defect),
            first_reply=first,
            message=message,
            rule=rule_text(self.task, defect.targeted_follow_up),
        )
        output = await shared_model(self.ref).generate(
            [ChatMessage.user(text)], config=trial_config(self.ref, self.trial), trial=self.trial
        )
        if output.from_cache:
            self.cached_usage = self.cached_usage + output.usage
        else:
            self.usage = self.usage + output.usage
        return parse_reader_verdict(output.text)
