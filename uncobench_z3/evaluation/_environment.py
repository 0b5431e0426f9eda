"""The environment: one task in one setting, played round by round, with a structured trace.

Each action is one round. ``ask`` reaches one or several colleagues (each at most once per
round) and their replies arrive in the same round. A colleague that misses a request (the
Missed defect) leaves it *pending*: its reply arrives in the round in which the agent has
waited the policy's number of rounds (``missed_wait``), or with the reply to the next request
to that colleague, whichever comes first. ``answer`` ends the episode. After
``budget`` rounds without an answer the episode ends as ``budget_exhausted`` (scored wrong,
with its own label); when the conversation no longer fits the agent model's context window it
ends as ``context_exhausted`` (scored wrong, labelled too: an outcome of the sample, not an
error of the run). A malformed action (unknown role, a role asked twice in one round, a
tool call that cannot be read) is rejected with an error message and still costs its round.

Colleagues are the scripted policy (:mod:`._colleagues`), a model that words its replies
(``colleague_mode="phrase"``, :mod:`._llm_colleague`) or a model that writes them under the
policy, judged against the scripted reference (``"policy"``, :mod:`._policy_colleague`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .._memo import remember
from .._trusted import TrustedMaker
from ..construct import RenderedTask, model_with_defaults, rendered_of
from ..errors import ConfigError, ContextWindowError
from ..models import StoredOutput, ToolDef
from ..settings import DefectKind, SettingName, StatedValue, TaskGroup
from ..spec import TypedTask
from ._colleagues import (
    ColleagueReply,
    FollowUpKind,
    FollowUpReader,
    FollowUpReading,
    RecordBook,
    ScriptedColleagues,
)
from ._followup_reader import ModelFollowUpReader
from ._inputs import typed_task
from ._interventions import InterventionArm, intervention_text
from ._llm_colleague import FidelityCheck, LLMPhraser, Phraser
from ._policy_colleague import LLMPolicyColleague, PolicyCheck, PolicyColleague
from ._protocol import (
    DEFAULT_BUDGET,
    Action,
    Agent,
    AnswerAction,
    AskAction,
    Briefing,
    Conversation,
    InvalidAction,
    Observation,
    ReplyView,
    Turn,
    WaitAction,
    default_instructions,
    tool_definitions,
)
from ._scoring import AnswerKey, AnswerScore, parse_answer, score_answer

ActionKind = Literal["ask", "wait", "answer", "invalid"]
ColleagueMode = Literal["phrase", "policy"]
_Written = tuple[str, ColleagueReply, str | None, FidelityCheck | PolicyCheck | None]
"""(question, the scripted reply, the text the agent sees, the check of a model's text)"""
_DETAIL_CHARACTERS = 500
_SCORES_KEPT = 256
"""answers a prepared group remembers the scores of (then it starts again)"""
_VIEWS_KEPT = 4096
"""reply views and faithful replies' records a prepared group remembers"""
EpisodeStatus = Literal["running", "answered", "budget_exhausted", "context_exhausted"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


# The environment builds its records and observations from values it has typed and checked
# itself: made without validation, and without model_construct's per-call look-ups (see
# uncobench_z3._trusted; about ten models a round).
_conversation = TrustedMaker(Conversation)
_outcome = TrustedMaker(EpisodeOutcome)
_reply_record = TrustedMaker(ReplyRecord)
_round_record = TrustedMaker(RoundRecord)
_observation = TrustedMaker(Observation)
_reply_view = TrustedMaker(ReplyView)
_turn = TrustedMaker(Turn)
_FaithfulRecord = tuple[ColleagueReply, ReplyRecord, ReplyView]
"""a faithful reply of the record book, its trace record and its view"""
_ACTIONS = (AskAction, WaitAction, AnswerAction, InvalidAction)
"""what an agent may return (a tuple made once: checked every round)"""


@dataclass(frozen=True)
class PreparedGroup:
    """What every episode of a group derives from it: the typed task and the rendered text.

    Deriving them costs milliseconds (structure check, rendering), more than a whole episode
    of scripted replies, so a runner prepares each group once and shares it read-only.
    """

    group: TaskGroup
    task: TypedTask
    rendered: RenderedTask
    book: RecordBook
    tools: tuple[ToolDef, ...] = ()
    _scores: dict[AnswerAction, AnswerScore] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _briefings: dict[tuple[int, str | None], Briefing] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _views: dict[tuple[str, str | None], ReplyView] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """(role, text) -> what the agent sees of a reply (frozen: shared by every episode)"""
    _faithful_records: dict[tuple[int, str], _FaithfulRecord] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """(id of a faithful reply of the book, question) -> the reply (kept, so that its id is
    not reused), its trace record and its view: a function of the two alone"""

    def reply_view(self, role: str, text: str | None) -> ReplyView:
        """What the agent sees of a reply of ``role`` (made once per role and text)."""
        key = (role, text)
        found = self._views.get(key)
        if found is None:
            found = _reply_view(role=role, role_name=self.role_names[role], text=text)
            remember(self._views, key, found, _VIEWS_KEPT)
        return found

    def faithful_record(self, question: str, reply: ColleagueReply) -> _FaithfulRecord:
        """The trace record and view of a faithful reply of the book (its
        :meth:`~._colleagues.RecordBook.is_faithful`) to ``question``, scripted, in a round
        with no pending reply to it: remembered, since an agent asks its questions again in
        every setting of a group."""
        key = (id(reply), question)
        found = self._faithful_records.get(key)
        if found is None or found[0] is not reply:
            record = _reply_record(
                role=reply.role,
                question=question,
                text=reply.text,
                stated=reply.stated,
                concerned=reply.concerned,
                defects=(),
                resolved=(),
                follow_up=None,
                fidelity=None,
                policy=None,
                pending=False,
                answers_round=None,
                delivered=False,
                readings=(),
            )
            found = (reply, record, self.reply_view(reply.role, reply.text))
            remember(self._faithful_records, key, found, _VIEWS_KEPT)
        return found

    def briefing(self, budget: int, instructions: str | None = None) -> Briefing:
        """What the agent is shown first, for a round budget and instructions (None: the
        default ones). Made once per group and budget (it was once per sample: the default
        instructions read from their file, the briefing validated); it is immutable."""
        found = self._briefings.get((budget, instructions))
        if found is None:
            rendered = self.rendered
            found = Briefing(
                task_text=rendered.task_text,
                roles=tuple(rendered.role_directory),
                budget=budget,
                instructions=instructions if instructions is not None else default_instructions(),
                tools=self.tools or tool_definitions(rendered.role_directory),
            )
            remember(self._briefings, (budget, instructions), found, _SCORES_KEPT)
        return found

    @functools.cached_property
    def role_names(self) -> dict[str, str]:
        """Role id -> name (do not change it)."""
        return {card.id: card.name for card in self.rendered.role_directory}

    def score(self, answer: AnswerAction) -> AnswerScore:
        """``answer`` parsed and scored against the group's gold. Remembered: a score is a
        function of the answer's fields alone, and an agent tends to give the same answer in
        every setting and epoch of a group."""
        found = self._scores.get(answer)
        if found is None:  # (bounded for agents whose answers are all different)
            key = AnswerKey.from_task(self.task)
            found = score_answer(parse_answer(answer, key), self.group.gold, key)
            remember(self._scores, answer, found, _SCORES_KEPT)
        return found

    @classmethod
    def of(cls, group: TaskGroup, task: TypedTask | None = None) -> PreparedGroup:
        """``task``: the group's typed task, when the caller has made it already (one of
        another spec, or without values, is not used)."""
        if task is None or task.spec is not group.spec or not task.has_values:
            task = typed_task(group)  # (which says why a group without values is unusable)
        rendered = rendered_of(group, task)
        return cls(
            group=group,
            task=task,
            rendered=rendered,
            book=RecordBook(task, rendered.style),
            tools=tool_definitions(rendered.role_directory),
        )


class Environment:
    """One episode: a task group in one setting, with scripted colleagues."""

    def __init__(
        self,
        group: TaskGroup,
        setting: SettingName,
        budget: int = DEFAULT_BUDGET,
        instructions: str | None = None,
        prepared: PreparedGroup | None = None,
        colleague: str = "scripted",
        intervention: InterventionArm = "none",
        trial: int | None = None,
        missed_wait: int | None = None,
        followup_reader: FollowUpReader = "rules",
        colleague_mode: ColleagueMode = "phrase",
        phraser: Phraser | None = None,
        policy: PolicyColleague | None = None,
    ) -> None:
        """``trial``: the epoch seed, given to LLM colleagues (their seed and cache scope).
        ``colleague_mode``: with a colleague model, ``phrase`` (it words the scripted reply)
        or ``policy`` (it writes the reply from its records and policy,
        :mod:`._policy_colleague`).

        ``phraser`` phrases the replies (``policy``, in policy mode, writes them) with a model
        the caller made (an inspect_ai model role); otherwise ``colleague`` names the model,
        or ``scripted`` for none.
        """
        if budget < 1:
            raise ConfigError(f"the round budget must be at least 1, not {budget}")
        if missed_wait is not None and missed_wait < 0:
            raise ConfigError(f"--missed-wait must be 0 or more, not {missed_wait}")
        if followup_reader == "model" and colleague == "scripted":
            raise ConfigError("--followup-reader model needs a --colleague-model to read with")
        if colleague_mode == "policy" and colleague == "scripted":
            raise ConfigError("--colleague-mode policy needs a --colleague-model")
        chosen = group.setting(setting)
        if not chosen.available:
            raise ConfigError(f"group {group.id}: setting {setting} is unavailable")
        if prepared is None or prepared.group is not group:
            prepared = PreparedGroup.of(group)
        self.group = group
        self.setting = setting
        self.task = prepared.task
        rendered = prepared.rendered
        self.colleagues = ScriptedColleagues(
            self.task, chosen.defects, rendered.style, prepared.book, missed_wait
        )
        self.phraser: Phraser | None = phraser
        if phraser is None and colleague != "scripted" and colleague_mode != "policy":
            self.phraser = LLMPhraser(
                model_with_defaults(colleague), self.task, prepared.book, trial=trial
            )
        self.policy: PolicyColleague | None = policy
        if policy is None and colleague_mode == "policy":
            self.policy = LLMPolicyColleague(
                model_with_defaults(colleague),
                self.task,
                rendered,
                setting,
                chosen.defects,
                missed_wait,
                trial=trial,
            )
        self.reader = (
            ModelFollowUpReader(model_with_defaults(colleague), self.task, prepared.book, trial)
            if followup_reader == "model"
            else None
        )
        self._pending: dict[str, tuple[int, str]] = {}
        """role -> (round, question) of a request left pending"""
        self.defects = list(chosen.defects)
        self.style = rendered.style
        self.intervention: InterventionArm = intervention
        self.intervention_delivered = False
        self.role_names = prepared.role_names
        self._prepared = prepared
        self._book = self.colleagues.records
        self.briefing = prepared.briefing(budget, instructions)
        self._turns: list[Turn] = []
        self.trace: list[RoundRecord] = []
        self.answer: AnswerAction | None = None
        self.status: EpisodeStatus = "running"
        self.end_detail: str | None = None
        """why the episode ended early (the model's error for ``context_exhausted``)"""

    @property
    def conversation(self) -> Conversation:
        return _conversation(briefing=self.briefing, turns=tuple(self._turns))

    @property
    def finished(self) -> bool:
        return self.status != "running"

    @property
    def rounds(self) -> int:
        return len(self.trace)

    @property
    def outcome(self) -> EpisodeOutcome:
        return _outcome(
            status=self.status,
            answer=self.answer,
            trace=tuple(self.trace),
            intervention_delivered=self.intervention_delivered,
            end_detail=self.end_detail,
        )

    def _ask_error(self, action: AskAction) -> str | None:
        if not action.requests:
            return "ask at least one colleague"
        seen: set[str] = set()
        for request in action.requests:
            if request.role not in self.role_names:
                known = ", ".join(self.role_names)
                return f"there is no colleague {request.role!r} (role ids: {known})"
            if request.role in seen:
                return f"{request.role} is asked twice in one round; ask one question each"
            seen.add(request.role)
        return None

    def _scripted(
        self, action: Action, verdicts: dict[str, dict[int, bool | None]] | None = None
    ) -> tuple[list[tuple[str, ColleagueReply]], str | None]:
        """The policy's replies to an action (in request order; after a wait, the pending
        replies it delivers), or the action's error."""
        if isinstance(action, WaitAction):
            return [(self._pending[r.role][1], r) for r in self.colleagues.wait()], None
        if not isinstance(action, AskAction):
            return [], None
        error = self._ask_error(action)
        if error is not None:
            return [], error
        return [
            (
                r.question,
                self.colleagues.reply(
                    r.role, r.question, None if verdicts is None else verdicts.get(r.role, {})
                ),
            )
            for r in action.requests
        ], None

    async def _model_verdicts(self, action: Action) -> dict[str, dict[int, bool | None]] | None:
        """The model's reading of every follow-up in an ask action (``--followup-reader``)."""
        if self.reader is None or not isinstance(action, AskAction) or self._ask_error(action):
            return None
        asked = [
            (request.role, follow_up)
            for request in action.requests
            for follow_up in self.colleagues.follow_ups(request.role, request.question)[1]
        ]
        questions = {r.role: r.question for r in action.requests}
        results = await asyncio.gather(
            *(self.reader.read(role, questions[role], item.defect) for role, item in asked)
        )
        verdicts: dict[str, dict[int, bool | None]] = {r.role: {} for r in action.requests}
        for (role, item), verdict in zip(asked, results, strict=True):
            verdicts[role][item.index] = verdict
        return verdicts

    def step(self, action: Action) -> Observation:
        """Carry out one action (one round) with scripted wording; see :meth:`astep`."""
        if self.phraser is not None or self.reader is not None or self.policy is not None:
            raise RuntimeError("an environment with LLM colleagues is stepped with astep()")
        scripted, error = self._scripted(action)
        return self._finish(action, [(q, r, r.text, None) for q, r in scripted], error)

    async def astep(self, action: Action) -> Observation:
        """Carry out one action (one round) and return what the agent observes."""
        scripted, error = self._scripted(action, await self._model_verdicts(action))
        phrased: list[_Written]
        if self.policy is not None:
            due = isinstance(action, WaitAction)
            policy = self.policy
            written = await asyncio.gather(
                *(policy.respond(r.role, q, r, self.colleagues.withheld(r.role), due)
                  for q, r in scripted)
            )  # fmt: skip
            phrased = [(q, r, t, c) for (q, r), (t, c) in zip(scripted, written, strict=True)]
        elif self.phraser is None:
            phrased = [(q, r, r.text, None) for q, r in scripted]
        else:
            results = await asyncio.gather(
                *(self.phraser.phrase(r.role, q, r) for q, r in scripted)
            )
            phrased = [
                (q, r, text, check) for (q, r), (text, check) in zip(scripted, results, strict=True)
            ]
        return self._finish(action, phrased, error)

    def _finish(
        self,
        action: Action,
        phrased: Sequence[_Written],
        ask_error: str | None,
    ) -> Observation:
        if self.finished:
            raise RuntimeError("the episode is over")
        if not isinstance(action, _ACTIONS):
            raise TypeError(f"an agent must return an action, not {type(action).__name__}")
        number = len(self.trace) + 1
        left = self.briefing.budget - number
        replies: list[ReplyRecord] = []
        error: str | None = ask_error
        note: str | None = None
        kind: ActionKind = "invalid" if ask_error is not None else action.kind
        waited = isinstance(action, WaitAction)
        views: list[ReplyView] = []
        prepared = self._prepared
        is_faithful = self._book.is_faithful
        for question, reply, text, check in phrased:
            if check is None and not waited and text is reply.text and is_faithful(reply):
                # (no pending reply to it either: a faithful reply answers nothing pending)
                _, record, view = prepared.faithful_record(question, reply)
                replies.append(record)
                views.append(view)
                continue
            answers = self._pending.pop(reply.role)[0] if reply.answers_pending else None
            if reply.pending:
                self._pending[reply.role] = (number, question)
            fidelity = policy = None  # (a scripted reply has no check)
            if check is not None:
                fidelity = check if isinstance(check, FidelityCheck) else None
                policy = check if isinstance(check, PolicyCheck) else None
            replies.append(
                _reply_record(
                    role=reply.role,
                    question=question,
                    text=text,
                    stated=reply.stated,
                    concerned=reply.concerned,
                    defects=reply.defects,
                    resolved=reply.resolved,
                    follow_up=reply.follow_up,
                    fidelity=fidelity,
                    policy=policy,
                    pending=reply.pending,
                    answers_round=answers,
                    delivered=waited,
                    readings=reply.readings,
                )
            )
            views.append(prepared.reply_view(reply.role, text))
        if waited:
            note = (
                "You waited; a reply to an earlier request arrived."
                if replies
                else "You waited; nothing was asked."
            )
        elif isinstance(action, InvalidAction):
            error = action.reason
        answer = action if isinstance(action, AnswerAction) else None
        delivered = self._intervention(replies)
        # Every value here is already typed and checked, so the trace and the observation are
        # built without re-validation: it keeps a round's cost small (see the benchmark).
        self.trace.append(
            _round_record(
                round=number,
                action=kind,
                replies=tuple(replies),
                answer=answer,
                error=error,
                intervention=delivered,
            )
        )
        if answer is not None:
            self.answer = answer
            self.status = "answered"
            note = "Answer received."
        elif left <= 0:
            self.status = "budget_exhausted"
            note = "The round budget is exhausted; the task ends without an answer."
        if delivered is not None and answer is None:
            note = f"{note} {delivered}" if note else delivered
        observation = _observation(
            round=number,
            rounds_left=max(left, 0),
            replies=tuple(views),
            note=note,
            error=error,
        )
        self._turns.append(_turn(action=action, observation=observation))
        return observation

    def _intervention(self, replies: list[ReplyRecord]) -> str | None:
        """The intervention text, once: with the first round in which a defect shows."""
        if self.intervention == "none" or self.intervention_delivered:
            return None
        shown = {kind for reply in replies for kind in reply.defects}
        if not shown:
            return None
        self.intervention_delivered = True
        defects = [d for d in self.defects if d.kind in shown]
        return intervention_text(self.intervention, self.task, defects, self.style)


def exhaust_context(environment: Environment, error: ContextWindowError) -> None:
    """End the episode as ``context_exhausted``: the conversation outgrew the model."""
    environment.status = "context_exhausted"
    environment.end_detail = str(error)[:_DETAIL_CHARACTERS]


def _record_output(environment: Environment, agent: Agent) -> None:
    """Keep what the agent's model wrote in the round just played (LLM agents say it)."""
    output = getattr(agent, "last_output", None)
    if isinstance(output, StoredOutput) and environment.trace:
        environment.trace[-1] = environment.trace[-1].model_copy(update={"output": output})


async def run_episode(environment: Environment, agent: Agent) -> Environment:
    """Let ``agent`` act until it answers, the budget runs out, or its conversation no longer
    fits its model's context window; returns the environment."""
    while not environment.finished:
        try:
            action = await agent.act(environment.conversation)
            await environment.astep(action)
        except ContextWindowError as error:
            exhaust_context(environment, error)
            break
        _record_output(environment, agent)
    return environment
