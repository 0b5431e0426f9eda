"""Policy colleagues (``--colleague-mode policy``): LLM role agents as in the paper.

Each colleague model gets a system prompt (``evaluators/policy_colleague.md``) with its role,
its full private records (every context) and its response policy as data
(:func:`~._policy.response_policy`), then its own conversation with the main agent: every
request it received (user turns) and what it wrote back (assistant turns; :data:`SILENCE`
for a silence). It writes each reply itself: which records, which defect, whether a
follow-up was targeted, when to stay silent.

**The reference.** The scripted colleagues still run beside it on the same requests and
waits (:class:`~._colleagues.ScriptedColleagues`): their state - first reply given, defect
resolved, request pending - and what they would say to each request are the reference. Every
model reply is judged against that reference at once (:func:`~._reply_judge.judge_text`) and
the verdict is logged in the trace (:class:`PolicyCheck`). The model's reply is *not*
replaced: it is what the agent sees, even when it breaks the policy; samples with such a
reply are reported apart (:func:`~._metrics.broke_policy`).

**Silence (Missed).** The model is asked on every request, including the first request to a
Missed colleague, which the policy tells it to leave unanswered (writing :data:`SILENCE`);
the agent then sees no reply, and the judge counts the kept silence as the one required item.
A model that answers anyway is seen by the agent and fails the judge. When the reference's
pending reply is due - after the agent waited the policy's rounds, or with a re-request - the
model is asked again: after a wait with a note that its reply is due (:data:`~._policy.DUE`),
with a re-request by the request itself. The environment's pending-request bookkeeping
follows the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template

from pydantic import BaseModel, ConfigDict

from ..construct import Catalog, ModelRef, RenderedTask, parse_catalog
from ..models import ChatMessage, ModelUsage
from ..settings import Defect, SettingName, StatedValue
from ..spec import TypedTask
from ._colleagues import ColleagueReply
from ._models import shared_model, trial_config
from ._policy import (
    DUE,
    POLICY_PROMPT,
    SILENCE,
    colleague_prompt,
    is_silence,
    policy_text,
    response_policy,
)
from ._reply_judge import ReplyJudgement, judge_text


class PolicyCheck(BaseModel):
    """A policy colleague's reply, judged against the scripted reference for the same request.

    The reference's required items are the reply record's ``stated`` and its silence the
    record's ``pending``; what the model wrote is the record's ``text`` (None when it stayed
    silent).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    withheld: tuple[StatedValue, ...] = ()
    """the designated records the policy still withholds, each with the one statement it
    allows about it (the defect's first reply)"""
    verdict: ReplyJudgement

    @property
    def kept(self) -> bool:
        return self.verdict.kept


class PolicyColleague:
    """Every colleague of one episode, played by one model under the setting's policy.

    The model call is :meth:`write` (subclasses choose the model: :class:`LLMPolicyColleague`
    the project's, the inspect_ai integration an inspect model role); the prompts, the
    conversations and the judging against the scripted reference are the same for every model.
    """

    def __init__(
        self,
        name: str,
        task: TypedTask,
        rendered: RenderedTask,
        setting: SettingName,
        defects: Sequence[Defect],
        missed_wait: int | None = None,
    ) -> None:
        self.name = name
        """the model, as the policy checks and the sample record name it"""
        self.task = task
        self.rendered = rendered
        self.setting: SettingName = setting
        self.defects = list(defects)
        self.missed_wait = missed_wait
        self.usage = ModelUsage()
        """tokens and cost of the colleague calls of one sample (cache hits spend nothing)"""
        self.cached_usage = ModelUsage()
        """what the replies served from the response cache cost when first made"""
        self._history: dict[str, list[ChatMessage]] = {}
        self._prompts: dict[str, str] = {}
        self._catalog: Catalog | None = None

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = parse_catalog(self.rendered.task_text)
        return self._catalog

    def system_prompt(self, role: str) -> str:
        """The role's instructions: who it is, its records, its policy (module docstring)."""
        if role in self._prompts:
            return self._prompts[role]
        card = next(c for c in self.rendered.role_directory if c.id == role)
        policy = response_policy(
            self.task, role, self.setting, self.defects, self.rendered.style, self.missed_wait
        )
        prompt = self._prompts[role] = colleague_prompt(POLICY_PROMPT).substitute(
            role_name=card.name,
            role_description=card.description,
            records="\n".join(self.rendered.records[role]),
            policy=policy_text(policy),
            silence=SILENCE,
        )
        return prompt

    def messages(self, role: str, message: str) -> list[ChatMessage]:
        """What the model reads to write its next reply to ``message``."""
        history = self._history.get(role, [])
        return [ChatMessage.system(self.system_prompt(role)), *history, ChatMessage.user(message)]

    async def write(self, messages: list[ChatMessage]) -> tuple[str, ModelUsage, bool]:
        """The model's next turn after ``messages``, what it cost, and whether it came from a
        response cache (then the cost is what the answer cost when first made)."""
        raise NotImplementedError

    async def respond(
        self,
        role: str,
        question: str,
        reference: ColleagueReply,
        withheld: Sequence[StatedValue],
        due: bool = False,
    ) -> tuple[str | None, PolicyCheck]:
        """The model's reply to ``question`` (``due``: no new request, the reply held back
        is due after a wait) and its verdict; the text is None when the model stayed
        silent."""
        message = Template(DUE).substitute(question=question) if due else question
        text, spent, cached = await self.write(self.messages(role, message))
        if cached:
            self.cached_usage = self.cached_usage + spent
        else:
            self.usage = self.usage + spent
        written = text.strip()
        silent = is_silence(written)
        self._history.setdefault(role, []).extend(
            [ChatMessage.user(message), ChatMessage.assistant(SILENCE if silent else written)]
        )
        verdict = judge_text(
            self.task,
            self.catalog,
            role,
            None if silent else written,
            reference.stated,
            silence_required=reference.pending,
            withheld=withheld,
        )
        check = PolicyCheck(model=self.name, withheld=tuple(withheld), verdict=verdict)
        return (None if silent else written), check


class LLMPolicyColleague(PolicyColleague):
    """Policy colleagues played by one of the project's models (``provider/model``)."""

    def __init__(
        self,
        ref: ModelRef,
        task: TypedTask,
        rendered: RenderedTask,
        setting: SettingName,
        defects: Sequence[Defect],
        missed_wait: int | None = None,
        trial: int | None = None,
    ) -> None:
        super().__init__(ref.describe(), task, rendered, setting, defects, missed_wait)
        self.ref = ref
        self.trial = trial
        """the epoch seed: the model's seed (unless the name pins one) and its cache scope"""

    async def write(self, messages: list[ChatMessage]) -> tuple[str, ModelUsage, bool]:
        output = await shared_model(self.ref).generate(
            messages, config=trial_config(self.ref, self.trial), trial=self.trial
        )
        return output.text, output.usage, output.from_cache
