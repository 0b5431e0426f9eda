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
from collections.abc import Sequence
from typing import Literal

from .._trusted import (
    SharedFieldsSet,
    fields_of,
    new_model,
    set_model_extra,
    set_model_fields_set,
    set_model_private,
    set_model_state,
)
from ..construct import model_with_defaults
from ..errors import ConfigError, ContextWindowError
from ..models import StoredOutput
from ..settings import SettingName, TaskGroup
from ._colleagues import ColleagueReply, FollowUpReader, ScriptedColleagues
from ._followup_reader import ModelFollowUpReader
from ._interventions import InterventionArm, intervention_text
from ._llm_colleague import FidelityCheck, LLMPhraser, Phraser
from ._policy_colleague import LLMPolicyColleague, PolicyCheck, PolicyColleague
from ._prepared import _EVERY_REPLY_FIELD, PreparedGroup
from ._protocol import (
    DEFAULT_BUDGET,
    Action,
    Agent,
    AnswerAction,
    AskAction,
    Conversation,
    InvalidAction,
    Observation,
    ReplyView,
    Turn,
    WaitAction,
)
from ._trace import (
    ActionKind,
    EpisodeOutcome,
    EpisodeStatus,
    ReplyRecord,
    RoundRecord,
    episode_outcome,
)

# (the records are ._trace's and the prepared group ._prepared's, named here too)
__all__ = [
    "ActionKind",
    "ColleagueMode",
    "Environment",
    "EpisodeOutcome",
    "EpisodeStatus",
    "PreparedGroup",
    "ReplyRecord",
    "RoundRecord",
    "exhaust_context",
    "run_episode",
]

ColleagueMode = Literal["phrase", "policy"]
_DETAIL_CHARACTERS = 500


# The environment builds its records and observations from values it has typed and checked
# itself: made without validation, and without model_construct's per-call look-ups (see
# uncobench_z3._trusted), a faithful reply's record and view once per group and question
# (._prepared). A round's reply records, round record, observation and turn, and the
# conversation, are written out where they are made, as a trusted maker's compiled call makes
# them for the same keywords: the state in field order, a fields set shared by the models
# given the same fields (frozen models: it never changes), no extra, no private state
# (tests/test_environment_models.py compares them with the makers').
_ROUND_FIELDS = SharedFieldsSet(set(RoundRecord.model_fields) - {"output"})
"""a round record's fields set (every field but ``output``, which a round is not given)"""
_EVERY_OBSERVATION_FIELD = SharedFieldsSet(Observation.model_fields)
_EVERY_TURN_FIELD = SharedFieldsSet(Turn.model_fields)
_EVERY_CONVERSATION_FIELD = SharedFieldsSet(Conversation.model_fields)
_ACTIONS = (AskAction, WaitAction, AnswerAction, InvalidAction)
"""what an agent may return (four unrelated classes)"""
_ACTION_OF: dict[type, type] = {cls: cls for cls in _ACTIONS}


def _role_questions(action: AskAction) -> list[tuple[str, str]]:
    """(role, question) of each request of ``action``, in order, each read once from the
    request's fields (:func:`~uncobench_z3._trusted.fields_of`: a round read each request's
    fields up to six times)."""
    requests = action.requests
    if len(requests) == 1:  # (most asks: no comprehension, a call of its own in 3.11)
        fields = fields_of(requests[0])
        return [(fields["role"], fields["question"])]
    return [(fields["role"], fields["question"]) for fields in map(fields_of, requests)]


def _action_class(action: object) -> type | None:
    """The one of the four actions ``action`` is an instance of (None: none), by its type
    first: ``isinstance`` with a pydantic model's class it is not an instance of goes through
    the metaclass's ``__instancecheck__`` (about 0.2 us, several times a round)."""
    found = _ACTION_OF.get(type(action))
    if found is None:
        found = next((cls for cls in _ACTIONS if isinstance(action, cls)), None)
    return found


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
        defects, style = chosen.defects, rendered.style  # (models' fields: read once)
        self.colleagues = ScriptedColleagues(self.task, defects, style, prepared.book, missed_wait)
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
        self.defects = list(defects)
        self.style = style
        self.intervention: InterventionArm = intervention
        self.intervention_delivered = False
        self._told: set[str] = set()
        """the kinds of defect the intervention has told of (each once, when it first shows)"""
        self.role_names = prepared.role_names
        self._prepared = prepared
        self.briefing = prepared.briefing(budget, instructions)
        self._budget = self.briefing.budget  # (a model's field: read once, not every round)
        self._turns: list[Turn] = []
        self.trace: list[RoundRecord] = []
        self.answer: AnswerAction | None = None
        self.status: EpisodeStatus = "running"
        self.end_detail: str | None = None
        """why the episode ended early (the model's error for ``context_exhausted``)"""

    @property
    def conversation(self) -> Conversation:
        conversation = new_model(Conversation)
        set_model_state(conversation, {"briefing": self.briefing, "turns": tuple(self._turns)})
        set_model_fields_set(conversation, _EVERY_CONVERSATION_FIELD)
        set_model_extra(conversation, None)
        set_model_private(conversation, None)
        return conversation

    @property
    def finished(self) -> bool:
        return self.status != "running"

    @property
    def rounds(self) -> int:
        return len(self.trace)

    @property
    def outcome(self) -> EpisodeOutcome:
        return episode_outcome(
            status=self.status,
            answer=self.answer,
            trace=tuple(self.trace),
            intervention_delivered=self.intervention_delivered,
            end_detail=self.end_detail,
        )

    def _ask_error(self, requests: Sequence[tuple[str, str]]) -> str | None:
        """What is wrong with an ask action's ``requests`` (:func:`_role_questions`), if
        anything."""
        if len(requests) == 1 and requests[0][0] in self.role_names:
            return None  # (most rounds: one colleague, a known one)
        if not requests:
            return "ask at least one colleague"
        seen: set[str] = set()
        for role, _ in requests:
            if role not in self.role_names:
                known = ", ".join(self.role_names)
                return f"there is no colleague {role!r} (role ids: {known})"
            if role in seen:
                return f"{role} is asked twice in one round; ask one question each"
            seen.add(role)
        return None

    def _scripted(
        self, action: Action, verdicts: dict[str, dict[int, bool | None]] | None = None
    ) -> tuple[list[tuple[str, ColleagueReply]], str | None]:
        """The policy's replies to an action (in request order; after a wait, the pending
        replies it delivers), or the action's error."""
        base = _ACTION_OF.get(type(action)) or _action_class(action)  # (a call only if odd)
        if base is WaitAction:
            return [(self._pending[r.role][1], r) for r in self.colleagues.wait()], None
        if base is not AskAction or not isinstance(action, AskAction):  # (an instance: cheap)
            return [], None
        requests = _role_questions(action)
        error = self._ask_error(requests)
        if error is not None:
            return [], error
        return [
            (
                question,
                self.colleagues.reply(
                    role, question, None if verdicts is None else verdicts.get(role, {})
                ),
            )
            for role, question in requests
        ], None

    async def _model_verdicts(self, action: Action) -> dict[str, dict[int, bool | None]] | None:
        """The model's reading of every follow-up in an ask action (``--followup-reader``)."""
        if (
            self.reader is None
            or not isinstance(action, AskAction)
            or self._ask_error(_role_questions(action))
        ):
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
        return self._finish(action, scripted, error)

    async def astep(self, action: Action) -> Observation:
        """Carry out one action (one round) and return what the agent observes."""
        verdicts = None if self.reader is None else await self._model_verdicts(action)
        scripted, error = self._scripted(action, verdicts)
        written: Sequence[tuple[str | None, FidelityCheck | PolicyCheck | None]]
        if self.policy is not None:
            due = isinstance(action, WaitAction)
            policy = self.policy
            written = await asyncio.gather(
                *(policy.respond(r.role, q, r, self.colleagues.withheld(r.role), due)
                  for q, r in scripted)
            )  # fmt: skip
        elif self.phraser is None:
            return self._finish(action, scripted, error)  # (the scripted wording)
        else:
            written = await asyncio.gather(
                *(self.phraser.phrase(r.role, q, r) for q, r in scripted)
            )
        return self._finish(action, scripted, error, written)

    def _finish(
        self,
        action: Action,
        scripted: Sequence[tuple[str, ColleagueReply]],
        ask_error: str | None,
        written: Sequence[tuple[str | None, FidelityCheck | PolicyCheck | None]] | None = None,
    ) -> Observation:
        """The round: ``scripted``, the policy's (question, reply) pairs; ``written``, the
        text the agent sees of each and the check of a model's text (None: the scripted
        text, unchecked)."""
        if self.status != "running":
            raise RuntimeError("the episode is over")
        base = _ACTION_OF.get(type(action)) or _action_class(action)  # (as in _scripted)
        if base is None:
            raise TypeError(f"an agent must return an action, not {type(action).__name__}")
        number = len(self.trace) + 1
        left = self._budget - number
        replies: list[ReplyRecord] = []
        error: str | None = ask_error
        note: str | None = None
        kind: ActionKind = "invalid" if ask_error is not None else action.kind
        waited = base is WaitAction
        views: list[ReplyView] = []
        prepared = self._prepared
        for index, (question, reply) in enumerate(scripted):
            if written is None:
                text: str | None = reply.text
                check = None
                if not waited:  # (a faithful reply answers nothing pending)
                    faithful = prepared.faithful_record(question, reply)
                    if faithful is not None:
                        replies.append(faithful[1])
                        views.append(faithful[2])
                        continue
            else:
                text, check = written[index]
            answers = self._pending.pop(reply.role)[0] if reply.answers_pending else None
            if reply.pending:
                self._pending[reply.role] = (number, question)
            fidelity = policy = None  # (a scripted reply has no check)
            if check is not None:
                fidelity = check if isinstance(check, FidelityCheck) else None
                policy = check if isinstance(check, PolicyCheck) else None
            record = new_model(ReplyRecord)
            set_model_state(
                record,
                {
                    "role": reply.role,
                    "question": question,
                    "text": text,
                    "stated": reply.stated,
                    "concerned": reply.concerned,
                    "defects": reply.defects,
                    "resolved": reply.resolved,
                    "follow_up": reply.follow_up,
                    "fidelity": fidelity,
                    "policy": policy,
                    "pending": reply.pending,
                    "answers_round": answers,
                    "delivered": waited,
                    "readings": reply.readings,
                },
            )
            set_model_fields_set(record, _EVERY_REPLY_FIELD)
            set_model_extra(record, None)
            set_model_private(record, None)
            replies.append(record)
            views.append(prepared.reply_view(reply.role, text))
        if waited:
            note = (
                "You waited; a reply to an earlier request arrived."
                if replies
                else "You waited; nothing was asked."
            )
        elif base is InvalidAction and isinstance(action, InvalidAction):
            error = action.reason
        answer = action if base is AnswerAction and isinstance(action, AnswerAction) else None
        delivered = None if self.intervention == "none" else self._intervention(replies)
        # Every value here is already typed and checked, so the trace and the observation are
        # built without re-validation: it keeps a round's cost small (see the benchmark).
        made = new_model(RoundRecord)
        set_model_state(
            made,
            {
                "round": number,
                "action": kind,
                "replies": tuple(replies),
                "answer": answer,
                "error": error,
                "intervention": delivered,
                "output": None,
            },
        )
        set_model_fields_set(made, _ROUND_FIELDS)
        set_model_extra(made, None)
        set_model_private(made, None)
        self.trace.append(made)
        if answer is not None:
            self.answer = answer
            self.status = "answered"
            note = "Answer received."
        elif left <= 0:
            self.status = "budget_exhausted"
            note = "The round budget is exhausted; the task ends without an answer."
        if delivered is not None and answer is None:
            note = f"{note} {delivered}" if note else delivered
        observation = new_model(Observation)
        set_model_state(
            observation,
            {
                "round": number,
                "rounds_left": left if left > 0 else 0,  # (max() is ~700 instructions)
                "replies": tuple(views),
                "note": note,
                "error": error,
            },
        )
        set_model_fields_set(observation, _EVERY_OBSERVATION_FIELD)
        set_model_extra(observation, None)
        set_model_private(observation, None)
        turn = new_model(Turn)
        set_model_state(turn, {"action": action, "observation": observation})
        set_model_fields_set(turn, _EVERY_TURN_FIELD)
        set_model_extra(turn, None)
        set_model_private(turn, None)
        self._turns.append(turn)
        return observation

    def _intervention(self, replies: list[ReplyRecord]) -> str | None:
        """The intervention's text for the defects that show for the first time in this
        round (each defect's once; Mixed has three, which an agent may meet in different
        rounds); the first text says that a follow-up is needed, the arm's existence."""
        if self.intervention == "none":
            return None
        shown = {kind for reply in replies for kind in reply.defects}
        if not shown or shown <= self._told:
            return None
        new = [d for d in self.defects if d.kind in shown and d.kind not in self._told]
        self._told |= shown
        first = not self.intervention_delivered
        self.intervention_delivered = True
        return intervention_text(self.intervention, self.task, new, self.style, first=first)


def exhaust_context(environment: Environment, error: ContextWindowError) -> None:
    """End the episode as ``context_exhausted``: the conversation outgrew the model."""
    environment.status = "context_exhausted"
    environment.end_detail = str(error)[:_DETAIL_CHARACTERS]


def _record_output(environment: Environment, agent: Agent) -> None:
    """Keep what the agent's model wrote in the round just played (LLM agents say it)."""
    output = getattr(agent, "last_output", None)
    if output is not None and isinstance(output, StoredOutput) and environment.trace:
        environment.trace[-1] = environment.trace[-1].model_copy(update={"output": output})


async def run_episode(environment: Environment, agent: Agent) -> Environment:
    """Let ``agent`` act until it answers, the budget runs out, or its conversation no longer
    fits its model's context window; returns the environment.

    With scripted colleagues (no model phrases, reads or writes a reply) in an environment of
    the class itself, each round is :meth:`Environment.step` (:meth:`Environment.astep`'s
    scripted path), with no coroutine of its own: with the epoch seeds remembered
    (:func:`._sample.epoch_seed`) and a sample's usage and a one-request ask read without a
    comprehension, and matching's first stems found in one intersection, the first pass over
    80 built groups (1,075 rounds, 385 samples) went from 779.0, 779.1 to 768.8, 768.9 M
    instructions."""
    in_place = (
        type(environment) is Environment
        and environment.phraser is None
        and environment.reader is None
        and environment.policy is None
    )
    step = environment.step
    while not environment.finished:
        try:
            action = await agent.act(environment.conversation)
            if in_place:
                step(action)
            else:
                await environment.astep(action)
        except ContextWindowError as error:
            exhaust_context(environment, error)
            break
        _record_output(environment, agent)
    return environment
