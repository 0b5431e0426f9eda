"""One episode inside inspect_ai: the environment behind three inspect tools, and the loop.

The setup solver (:func:`episode_setup`) makes the sample's
:class:`~uncobench_z3.evaluation.Environment` - the project's own, with its scripted
colleagues, or LLM colleagues phrased by the inspect model role ``colleague`` - and puts the
ask / wait / answer tools in ``state.tools``. Each tool call is one round: the tool maps its
arguments to an action exactly as the project's LLM agents do
(:func:`~uncobench_z3.evaluation.action_from_tool_call`), steps the environment and returns
the observation text the project's agents read. When the episode ends, the sample is marked
completed, which also ends the tool loop of any other inspect agent that uses these tools.
The episode is written to the sample's store (:class:`EpisodeLog`) when the solver ends and
again before scoring, so the scorer - and ``inspect score`` on a log - needs nothing but the
logged state.

The main solver (:func:`episode_agent`) plays the project's protocol: one action per round,
the model's first call of an episode tool taken (further calls in the same message are
dropped, as the project's LLM agents do), a reply without a tool call read with the
plain-text protocol or rejected as invalid, a tool call inspect refuses (arguments that do
not match the schema) charged as an invalid action, until the answer or the round budget.
With ``agent=builtin/...`` a built-in policy chooses the actions instead of the model; its
actions still go through the same inspect tools.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    execute_tools,
    get_model,
)
from inspect_ai.model import ModelUsage as InspectUsage
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolDef, ToolError, ToolParams
from pydantic import BaseModel, ConfigDict, Field

from ...errors import ConfigError
from ...evaluation import (
    TOOL_NAMES,
    Action,
    AnswerAction,
    Briefing,
    ColleagueMode,
    Environment,
    EpisodeOutcome,
    InvalidAction,
    Observation,
    Phraser,
    PolicyColleague,
    PreparedGroup,
    RecordBook,
    SampleJob,
    action_from_tool_call,
    briefing_text,
    job_environment,
    make_agent,
    observation_text,
    tool_arguments,
    untooled_action,
)
from ...models import ChatMessage as ProjectMessage
from ...models import ModelUsage
from ...models import ToolCall as ProjectToolCall
from ...settings import SettingName, TaskGroup
from ...spec import TypedTask

STORE_KEY = "uncobench_z3:episode"
"""the store entry that holds a sample's :class:`EpisodeLog`"""
COLLEAGUE_ROLE = "colleague"
"""the inspect model role that phrases LLM colleagues' replies"""
INSPECT_PREFIX = "inspect/"
"""agents and colleagues played by inspect models are named ``inspect/<model>``"""


class EpisodeLog(BaseModel):
    """What a sample's store holds about its episode: enough to score it again."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    """``inspect/<model>`` for the evaluated model, or the built-in policy's name"""
    colleague: str = "scripted"
    """``scripted``, or ``inspect/<model>`` of the ``colleague`` role"""
    epoch_seed: int
    outcome: EpisodeOutcome
    usage: dict[str, ModelUsage] = Field(default_factory=dict)
    elapsed_seconds: float = 0.0


@dataclass
class EpisodeConfig:
    """What every sample of one task shares: the groups and the run's parameters."""

    groups: dict[str, TaskGroup]
    digests: dict[str, str]
    seed: int = 0
    budget: int = 20
    colleague: str = "scripted"
    """``scripted``, ``model`` (the ``colleague`` role) or a model name (the role's default)"""
    agent: str | None = None
    """a built-in policy that chooses the actions, or None for the evaluated model"""
    tool_choice: str = "any"
    missed_wait: int | None = None
    """overrides the groups' Missed policy (wait rounds before a missed reply arrives)"""
    colleague_mode: ColleagueMode = "phrase"
    """with a colleague model: it phrases the scripted replies, or writes them (``policy``)"""
    _prepared: dict[str, PreparedGroup] = field(default_factory=dict)

    def prepared(self, group_id: str) -> PreparedGroup:
        """The group's derived data, made once per task (shared by solver and scorer)."""
        found = self._prepared.get(group_id)
        if found is None:
            found = self._prepared[group_id] = PreparedGroup.of(self.groups[group_id])
        return found

    def job(self, metadata: dict[str, Any], epoch: int, agent: str, colleague: str) -> SampleJob:
        """The project's job for a sample: same key, seeds and record as the runner's."""
        group_id = str(metadata["group_id"])
        group = self.groups.get(group_id)
        if group is None or self.digests[group_id] != metadata.get("group_hash"):
            raise ConfigError(
                f"sample {group_id}: the benchmark does not hold this group's content (the "
                "log was made from another benchmark)"
            )
        setting: SettingName = metadata["setting"]
        return SampleJob.make(
            group,
            setting,
            agent,
            self.seed,
            self.budget,
            self.digests[group_id],
            colleague,
            metadata["arm"],
            epoch=epoch,
            missed_wait=self.missed_wait,
            colleague_mode=self.colleague_mode,
        )


def briefing_messages(briefing: Briefing) -> list[ChatMessage]:
    """The messages a main agent starts from: the project's instructions and briefing."""
    return [
        ChatMessageSystem(content=briefing.instructions),
        ChatMessageUser(content=briefing_text(briefing)),
    ]


def inspect_usage(usage: InspectUsage | None) -> ModelUsage:
    """An inspect usage in the project's terms (cached input tokens count as input)."""
    if usage is None:
        return ModelUsage()
    read = usage.input_tokens_cache_read or 0
    written = usage.input_tokens_cache_write or 0
    return ModelUsage(
        input_tokens=usage.input_tokens + read + written,
        output_tokens=usage.output_tokens,
        cost_usd=usage.total_cost,
    )


class InspectPhraser(Phraser):
    """LLM colleagues phrased by an inspect model (the ``colleague`` role)."""

    def __init__(self, model: Model, task: TypedTask, book: RecordBook) -> None:
        super().__init__(f"{INSPECT_PREFIX}{model}", task, book)
        self.model = model

    async def write(self, prompt: str) -> tuple[str, ModelUsage, bool]:
        output = await self.model.generate([ChatMessageUser(content=prompt)])
        return output.completion, inspect_usage(output.usage), False


class InspectPolicyColleague(PolicyColleague):
    """Policy colleagues (``colleague_mode="policy"``) played by an inspect model (the
    ``colleague`` role): each colleague's conversation is sent as inspect messages."""

    def __init__(self, model: Model, job: SampleJob, prepared: PreparedGroup) -> None:
        defects = job.group.setting(job.setting).defects
        super().__init__(f"{INSPECT_PREFIX}{model}", prepared.task, prepared.rendered,
                         job.setting, defects, job.missed_wait)  # fmt: skip
        self.model = model

    async def write(self, messages: list[ProjectMessage]) -> tuple[str, ModelUsage, bool]:
        kinds = {"system": ChatMessageSystem, "user": ChatMessageUser,
                 "assistant": ChatMessageAssistant}  # fmt: skip
        sent: list[ChatMessage] = [kinds[m.role](content=m.content) for m in messages]
        output = await self.model.generate(sent)
        return output.completion, inspect_usage(output.usage), False


def colleague_model(colleague: str) -> Model:
    """The inspect model that phrases colleagues: the ``colleague`` role, which ``model``
    requires and a model name stands in for when the role is not given."""
    if colleague == "model":
        return get_model(role=COLLEAGUE_ROLE, required=True)
    return get_model(role=COLLEAGUE_ROLE, default=colleague)


class Episode:
    """A sample's environment, stepped by the inspect tools and logged to the store."""

    def __init__(
        self, environment: Environment, state: TaskState, agent: str, colleague: str, seed: int
    ) -> None:
        self.environment = environment
        self.state = state
        self.log = EpisodeLog(
            agent=agent, colleague=colleague, epoch_seed=seed, outcome=environment.outcome
        )
        self.agent_usage: ModelUsage | None = None

    @property
    def finished(self) -> bool:
        return self.environment.finished

    async def step(self, action: Action) -> Observation:
        """One round; a finished episode completes the sample."""
        if self.finished:
            raise ToolError("the task is over: no further actions are carried out")
        observation = await self.environment.astep(action)
        if self.finished:
            self.state.completed = True
        return observation

    def save(self, elapsed: float | None = None) -> None:
        """Write the episode to the sample's store (once per episode, not per round: inspect
        copies the store around every tool call, so a growing trace there costs)."""
        usage: dict[str, ModelUsage] = {}
        if self.agent_usage is not None:
            usage["agent"] = self.agent_usage
        colleagues = self.environment.phraser or self.environment.policy
        if colleagues is not None:
            usage["colleagues"] = colleagues.usage
        update: dict[str, Any] = {"outcome": self.environment.outcome, "usage": usage}
        if elapsed is not None:
            update["elapsed_seconds"] = round(elapsed, 6)
        self.log = self.log.model_copy(update=update)
        self.state.store.set(STORE_KEY, self.log.model_dump(mode="json"))

    def tools(self) -> list[ToolDef]:
        """The episode's three tools, with the project's names, descriptions and schemas."""
        return [
            self._tool(d.name, d.description, d.parameters) for d in self.environment.briefing.tools
        ]

    def _tool(self, name: str, description: str, parameters: dict[str, Any]) -> ToolDef:
        async def execute(**arguments: Any) -> str:
            call = ProjectToolCall(id=name, function=name, arguments=arguments)
            return observation_text(await self.step(action_from_tool_call(call)))

        return ToolDef(
            execute,
            name=name,
            description=description,
            parameters=ToolParams.model_validate(parameters),
        )


_LIVE: dict[str, Episode] = {}
"""episodes in play, by the sample run's uuid (from setup to cleanup)"""


def find_episode(state: TaskState) -> Episode | None:
    """The sample's episode in play, if it is (not when a logged sample is scored again)."""
    return _LIVE.get(state.uuid)


def live_episode(state: TaskState) -> Episode:
    episode = find_episode(state)
    if episode is None:
        raise RuntimeError(
            "the uncobench episode is not set up (the task's setup solver did not run)"
        )
    return episode


async def end_episode(state: TaskState) -> None:
    """The task's cleanup: forget the sample's environment."""
    _LIVE.pop(state.uuid, None)


@solver
def episode_setup(config: EpisodeConfig) -> Solver:
    """Make the sample's environment and offer its tools (runs even under another solver)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        colleague = "scripted"
        agent = config.agent or f"{INSPECT_PREFIX}{state.model}"
        phraser: Phraser | None = None
        policy: PolicyColleague | None = None
        prepared = config.prepared(str(meta["group_id"]))
        model = colleague_model(config.colleague) if config.colleague != "scripted" else None
        if model is not None:
            colleague = f"{INSPECT_PREFIX}{model}"
        job = config.job(meta, state.epoch, agent, colleague)
        if model is not None and config.colleague_mode == "policy":
            policy = InspectPolicyColleague(model, job, prepared)
        elif model is not None:
            phraser = InspectPhraser(model, prepared.task, prepared.book)
        environment = job_environment(job, prepared, phraser, policy)
        episode = _LIVE[state.uuid] = Episode(environment, state, agent, colleague, job.epoch_seed)
        state.tools = episode.tools()
        state.messages = briefing_messages(environment.briefing)
        episode.save()
        return state

    return solve


def _policy_message(action: Action, number: int, agent: str) -> ChatMessageAssistant:
    """A built-in policy's action as the tool call that carries it out."""
    name, arguments = tool_arguments(action)
    if isinstance(action, AnswerAction):  # every field the answer tool requires, null or not
        arguments = action.model_dump(include={"decision", "candidate", "number", "unit"})
    call = ToolCall(id=f"call_{number}", function=name, arguments=arguments)
    return ChatMessageAssistant(content="", tool_calls=[call], model=agent, source="generate")


def _first_call(message: ChatMessageAssistant) -> ChatMessageAssistant:
    """The message with its first call of an episode tool only (one action per round)."""
    calls = message.tool_calls or []
    if len(calls) <= 1:
        return message
    chosen = next((c for c in calls if c.function in TOOL_NAMES), calls[0])
    return message.model_copy(update={"tool_calls": [chosen]})


async def _refused(episode: Episode, call: ToolCall, result: list[ChatMessage]) -> None:
    """A call inspect refused before the tool ran (arguments against the schema, unknown
    tool) still costs its round, as an invalid action; the model reads the round's
    observation."""
    tool_message = next(m for m in result if isinstance(m, ChatMessageTool))
    reason = tool_message.error.message if tool_message.error else "the tool call was refused"
    action = InvalidAction(reason=reason, raw=json.dumps(call.arguments), tool=call.function)
    observation = await episode.step(action)
    tool_message.content = observation_text(observation)
    tool_message.error = None


@solver
def episode_agent(config: EpisodeConfig) -> Solver:
    """Play the episode to its end: the evaluated model (or a built-in policy) acts, one
    action per round, through the episode's tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = live_episode(state)
        environment = episode.environment
        policy = make_agent(config.agent, episode.log.epoch_seed) if config.agent else None
        model = None if policy is not None else get_model()
        tool_choice: Literal["any", "auto"] = "any" if config.tool_choice == "any" else "auto"
        started = time.perf_counter()
        while not episode.finished:
            if policy is not None:
                action = await policy.act(environment.conversation)
                message = _policy_message(action, environment.rounds + 1, episode.log.agent)
            else:
                assert model is not None
                output = await model.generate(
                    state.messages, tools=state.tools, tool_choice=tool_choice
                )
                state.output = output
                spent = inspect_usage(output.usage)
                episode.agent_usage = (episode.agent_usage or ModelUsage()) + spent
                message = _first_call(output.message)
            state.messages.append(message)
            if message.tool_calls:
                before = environment.rounds
                result = await execute_tools(state.messages, state.tools)
                if environment.rounds == before:
                    await _refused(episode, message.tool_calls[0], result.messages)
                state.messages.extend(result.messages)
            else:
                observation = await episode.step(untooled_action(message.text))
                state.messages.append(ChatMessageUser(content=observation_text(observation)))
        episode.save(elapsed=time.perf_counter() - started)
        return state

    return solve
