"""LLM versions of the construction stages: generator, renderer, validator.

They plug into the same places as the offline stages and are checked by the same programs:

* **generator** - writes a spec in the schema through a forced ``submit_spec`` tool call,
  guided by the balancer's reference scenario and recent task summaries; the structural
  problems go back to it for exactly one repair attempt;
* **renderer** - phrases the question and each role's records; the program keeps writing the
  conditions, the calculation rule, the record keys and the candidate directory, and checks
  that every recorded value, candidate and context survives in the role's text;
* **validator** - the full-information check: three runs over independently shuffled records,
  each answering through a ``submit_answer`` tool call, all must match gold.

Models are described by :class:`ModelRef` (a name and settings, picklable), and created inside
the worker that uses them.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import random
import re
from dataclasses import dataclass
from fractions import Fraction
from string import Template
from typing import Any

from pydantic import ValidationError

from .._assets import asset_path
from ..errors import ConfigError
from ..models import (
    DEFAULT_MAX_ATTEMPTS,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ToolDef,
    get_model,
    with_provider_defaults,
)
from ..spec import (
    Outcome,
    Problem,
    TaskSpec,
    TypedTask,
    Value,
    check_structure,
    round_fraction,
)
from ._generate import Draft
from ._render import SECTION_CANDIDATES, RenderedTask
from ._text import Style, format_date, format_number, step_decimals

_GENERATION_KEYS = {"temperature": float, "max_tokens": int, "top_p": float, "seed": int,
                    "reasoning_effort": str}  # fmt: skip


@dataclass(frozen=True)
class ModelRef:
    """A model by name with its settings: ``provider/model,key=value,...``.

    Generation settings change what the model writes; ``cache=true|false`` and
    ``max_connections=N`` (how many calls run at once, default: the endpoint's parallel slots
    when the provider knows them, else 8) change only how it is called.
    """

    name: str
    settings: tuple[tuple[str, Any], ...] = ()
    cache: bool = True
    max_connections: int | None = None

    @classmethod
    def parse(cls, text: str, cache: bool = True) -> ModelRef:
        name, *pairs = [part.strip() for part in text.split(",")]
        settings = []
        connections = None
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if key == "cache" and raw in ("true", "false"):
                cache = raw == "true"
                continue
            if key == "max_connections":
                if not raw.isdigit() or int(raw) < 1:
                    raise ConfigError(f"model option {pair!r}: max_connections is an integer >= 1")
                connections = int(raw)
                continue
            if not sep or key not in _GENERATION_KEYS:
                raise ConfigError(
                    f"model option {pair!r} of {name!r}: use key=value with key among "
                    f"{', '.join(_GENERATION_KEYS)}, or cache=true|false, or max_connections=N"
                )
            try:
                settings.append((key, _GENERATION_KEYS[key](raw)))
            except ValueError:
                raise ConfigError(f"model option {pair!r}: {raw!r} is not a valid {key}") from None
        ref = cls(name, tuple(settings), cache, connections)
        ref.config()  # out-of-range settings fail here, before any work
        return ref

    def config(self) -> GenerateConfig:
        """The generation settings; out-of-range values (``temperature=-1``) are a
        :class:`ConfigError` naming the option."""
        try:
            return GenerateConfig(**dict(self.settings))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            key = ".".join(str(part) for part in first["loc"])
            value = dict(self.settings).get(key)
            raise ConfigError(
                f"model option {key}={value} of {self.name!r}: {first['msg'].lower()}"
            ) from None

    def create(
        self,
        *,
        timeout: float | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_retry_wait: float = 60.0,
    ) -> Model:
        """The model; ``timeout`` (seconds per attempt), ``max_attempts`` and
        ``max_retry_wait`` bound the waiting (they are not part of :meth:`describe`)."""
        config = self.config()
        if timeout is not None:
            config = config.model_copy(update={"timeout": timeout})
        return get_model(
            self.name,
            config=config,
            cache=self.cache,
            max_attempts=max_attempts,
            max_retry_wait=max_retry_wait,
            max_connections=self.max_connections,
        )

    @property
    def writer(self) -> str:
        """The name with its generation settings and nothing else: what decides what the
        model writes (the cache and ``max_connections`` only change how it is called)."""
        return ",".join([self.name, *(f"{k}={v}" for k, v in self.settings)])

    def describe(self) -> str:
        extra = [] if self.cache else ["cache=false"]
        if self.max_connections is not None:
            extra.append(f"max_connections={self.max_connections}")
        return ",".join([self.writer, *extra])


def model_with_defaults(name: str, cache: bool = True) -> ModelRef:
    """The model ``provider/model[,key=value...]`` names, for any caller (an agent's, once its
    protocol and tool choice are taken off, a colleague, the judge, an LLM stage of build): the
    settings its name gives, and the provider's defaults where it gives none
    (:data:`~uncobench_z3.models.PROVIDER_DEFAULTS`: ``local/...`` writes at most 512 tokens)."""
    return ModelRef.parse(with_provider_defaults(name), cache=cache)


@dataclass(frozen=True)
class LLMStages:
    generator: ModelRef | None = None
    renderer: ModelRef | None = None
    validator: ModelRef | None = None

    @property
    def any(self) -> bool:
        return any((self.generator, self.renderer, self.validator))

    def describe(self) -> dict[str, str]:
        return {
            name: ref.describe() if ref else "offline"
            for name, ref in (("generator", self.generator), ("renderer", self.renderer),
                              ("validator", self.validator))
        }  # fmt: skip


@functools.cache
def prompt(folder: str, name: str) -> Template:
    return Template((asset_path(folder) / "prompts" / name).read_text(encoding="utf-8"))


def spec_tool() -> ToolDef:
    schema = TaskSpec.model_json_schema()
    schema["properties"].pop("records", None)
    return ToolDef(
        name="submit_spec", description="Submit the task specification.", parameters=schema
    )


ANSWER_TOOL = ToolDef(
    name="submit_answer",
    description="Submit the decision, the eligible candidate's name (or null) and the number "
    "(or null).",
    parameters={
        "type": "object",
        "properties": {
            "decision": {"type": "string"},
            "candidate": {"type": ["string", "null"]},
            "number": {"type": ["string", "number", "null"]},
        },
        "required": ["decision", "candidate", "number"],
    },
)


class SpecRejected(Exception):
    """The generated spec failed structural validation twice (first try and one repair)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems[:5]))


def _spec_problems(output: ModelOutput, draft: Draft) -> tuple[TaskSpec | None, list[str]]:
    calls = [c for c in output.tool_calls if c.function == "submit_spec"]
    if not calls:
        return None, ["$: no submit_spec tool call"]
    call = calls[0]
    if call.parse_error:
        return None, [f"$: the tool arguments are not JSON ({call.parse_error})"]
    # the numbers as written (120000.00000000000000001 is no multiple of 500; its float is)
    data = dict(call.exact_arguments())
    data.update({"id": draft.spec.id, "domain": draft.domain, "records": []})
    try:
        spec = TaskSpec.model_validate(json.loads(json.dumps(data), parse_float=str))
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False)[:12]:
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            problems.append(f"{path}: {error['msg']}")
        return None, problems
    found: list[Problem] = list(check_structure(spec).problems)
    if spec.rule.operation != draft.operation:
        found.append(
            Problem(
                path="$.rule.operation",
                code="operation",
                message=f"use the operation {draft.operation!r}",
            )
        )
    if draft.plan_none:
        owners = {f.owner for f in spec.facts if any(c.fact == f.key for c in spec.conditions)}
        found += [Problem(path="$.roles", code="role_without_condition",
                          message=f"role {r.id!r} needs a condition of its own")
                  for r in spec.roles if r.id not in owners]  # fmt: skip
    return spec, [str(p) for p in found]


_NOT_READ = "Not read: only the first submit_spec call of a turn is read."


async def generate_spec(model: Model, draft: Draft, recent: list[str]) -> Draft:
    """Ask the model for a spec like ``draft`` (same domain, operation and plan)."""
    none_note = (
        "\nThis task must be designed so that possibly NO candidate is eligible: give every "
        "role at least one condition of its own.\n"
        if draft.plan_none
        else ""
    )
    reference = draft.spec.model_dump_json(exclude={"records"}, indent=1)
    system = prompt("generators", "generate_spec.md").substitute(
        operation=draft.operation,
        none_note=none_note,
        domain=draft.domain,
        reference=reference,
        recent="\n".join(f"- {r}" for r in recent) or "- (none yet)",
    )
    messages = [ChatMessage.system(system), ChatMessage.user("Write the task specification.")]
    tool = spec_tool()
    output = await model.generate(messages, tools=[tool], tool_choice="submit_spec")
    spec, problems = _spec_problems(output, draft)
    if problems:
        repair = prompt("generators", "repair_spec.md").substitute(problems="\n".join(problems))
        messages.append(output.message)
        if not output.tool_calls:
            messages.append(ChatMessage.user(repair))
        read = next((c for c in output.tool_calls if c.function == "submit_spec"), None)
        # every call of the turn gets its result (the APIs refuse a conversation that leaves
        # one without); the problems go with the call that was read
        for call in output.tool_calls:
            answer = repair if call is (read or output.tool_calls[0]) else _NOT_READ
            messages.append(ChatMessage.tool(answer, call))
        output = await model.generate(messages, tools=[tool], tool_choice="submit_spec")
        spec, problems = _spec_problems(output, draft)
    if problems or spec is None:
        raise SpecRejected(problems)
    hints = {k: v for k, v in draft.hints.items() if any(f.key == k for f in spec.facts)}
    return Draft(
        spec=spec,
        scenario_id=f"llm:{draft.scenario_id}",
        domain=draft.domain,
        operation=draft.operation,
        plan_none=draft.plan_none,
        hints=hints,
    )


# -- rendering ---------------------------------------------------------------------------------
def value_variants(task: TypedTask, fact_key: str, value: Value) -> list[str]:
    """Ways a value may be written that still count as the same value."""
    fact = task.facts[fact_key]
    if fact.type == "bool":
        return ["yes", "no", "true", "false", "not"] if value is False else ["yes", "true"]
    if fact.type == "enum":
        return [str(value)]
    if fact.type == "date":
        assert isinstance(value, _dt.date)
        return [format_date(value, Style(dates=d)) for d in ("day_month", "iso", "month_day")]
    decimals = step_decimals(fact.step) if fact.type == "decimal" else 0
    assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    number = Fraction(value)
    variants = {format_number(number, decimals), format_number(number, decimals).replace(",", "")}
    if number.denominator == 1:
        variants |= {format_number(number, 0), str(int(number))}
    return sorted(variants)


def surviving_problems(task: TypedTask, role: str, text: str) -> list[str]:
    """Every record of ``role`` must keep its candidate, context and value together in
    ``text``: on one line, which may take its candidate or context from the nearest line above
    that names one (a heading of a list grouped by candidate or by context). Each part found
    anywhere in the text would not do: a lost record's value usually stands in another record
    (``5`` in ``15`` or in a date), and its candidate and context always do."""
    lines = [line.lower() for line in text.splitlines() if line.strip()]
    names = {candidate: task.candidate_name(candidate).lower() for candidate in task.candidates}
    records = [
        (candidate, key, context, value)
        for candidate in task.candidates
        for key in task.facts_of(role)
        for context, value in [
            (task.facts[key].context, task.values[(candidate, key)]),
            *sorted(task.alternatives.get((candidate, key), {}).items()),
        ]
    ]
    contexts = {context.lower() for _, _, context, _ in records}
    # what each line speaks of: the candidates and contexts it names, else the nearest above's
    scopes: list[tuple[set[str], set[str]]] = []
    about: set[str] = set()
    within: set[str] = set()
    for line in lines:
        about = {c for c, name in names.items() if name in line} or about
        within = {context for context in contexts if context in line} or within
        scopes.append((about, within))
    problems = []
    for candidate, key, context, value in records:
        written = [_written(v) for v in value_variants(task, key, value)]
        if any(
            candidate in about and context.lower() in within and pattern.search(line)
            for line, (about, within) in zip(lines, scopes, strict=True)
            for pattern in written
        ):
            continue
        missing = [part for part, present in (
            ("candidate", any(names[candidate] in line for line in lines)),
            ("context", any(context.lower() in line for line in lines)),
            ("value", any(pattern.search(line) for pattern in written for line in lines)),
        ) if not present]  # fmt: skip
        fact = task.facts[key]
        problems.append(
            f"fact lost in rendering: {task.candidate_name(candidate)}'s {fact.label} ({context}): "
            + (f"{', '.join(missing)} missing" if missing else "not with its candidate and context")
        )
    return problems


def _written(variant: str) -> re.Pattern[str]:
    """A value as written, not as part of a longer number or word (``5`` is not in ``15``,
    ``5.5`` or ``5th``)."""
    return re.compile(rf"(?<![\w.]){re.escape(variant.lower())}(?![\w]|[.,]\d)")


async def render_with_llm(
    model: Model, task: TypedTask, template: RenderedTask
) -> tuple[RenderedTask, list[str]]:
    question_prompt = prompt("generators", "render_question.md").substitute(
        question=task.spec.question
    )
    asked = await model.generate([ChatMessage.user(question_prompt)])
    question = asked.text.strip()
    # (a reply cut at its token limit, or by a content filter, is no whole question)
    if not question or "\n\n" in question or asked.stop_reason in ("max_tokens", "content_filter"):
        question = task.spec.question
    records: dict[str, list[str]] = {}
    problems: list[str] = []
    for card in template.role_directory:
        text = prompt("generators", "render_records.md").substitute(
            role_name=card.name,
            role_description=card.description or "-",
            records="\n".join(template.records[card.id]),
        )
        written = (await model.generate([ChatMessage.user(text)])).text.strip()
        problems += surviving_problems(task, card.id, written)
        records[card.id] = [line for line in written.splitlines() if line.strip()]
    task_text = template.task_text.replace(f"\n{task.spec.question}\n", f"\n{question}\n", 1)
    if SECTION_CANDIDATES not in task_text:
        problems.append("the task text lost its candidate directory")
    # (the template's places of the faithful lines are not the model's records')
    update = {"task_text": task_text, "records": records, "faithful": None}
    return template.model_copy(update=update), problems


# -- validation --------------------------------------------------------------------------------
def answer_matches(task: TypedTask, gold: Outcome, arguments: dict[str, Any]) -> bool:
    decision = str(arguments.get("decision") or "").strip().lower()
    positive = task.spec.decision.positive.lower()
    negative = task.spec.decision.negative.lower()
    if gold.kind == "none":
        return decision == negative or (negative in decision and positive != decision)
    if decision != positive:
        return False
    name = str(arguments.get("candidate") or "").strip().lower()
    assert gold.candidate is not None and gold.number is not None
    if name not in (task.candidate_name(gold.candidate).lower(), gold.candidate.lower()):
        return False
    written = arguments.get("number")  # (a JSON 0 is a number written, not a missing one)
    raw = re.sub(r"[^0-9.\-]", "", "" if written is None else str(written))
    try:
        number = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        return False
    return round_fraction(number, task.rule.digits, task.rule.mode) == gold.number


async def validate_with_llm(
    model: Model, task: TypedTask, rendered: RenderedTask, gold: Outcome, seed: int, runs: int = 3
) -> list[str]:
    for run in range(runs):
        rng = random.Random(f"llm-validate:{seed}:{task.id}:{run}")
        roles = list(rendered.records)
        rng.shuffle(roles)
        blocks = []
        for role in roles:
            lines = list(rendered.records[role])
            rng.shuffle(lines)
            name = next(c.name for c in rendered.role_directory if c.id == role)
            blocks.append(f"Records of {name}:\n" + "\n".join(lines))
        text = prompt("generators", "validate.md").substitute(
            task_text=rendered.task_text, records="\n\n".join(blocks)
        )
        output = await model.generate(
            [ChatMessage.user(text)], tools=[ANSWER_TOOL], tool_choice="submit_answer"
        )
        calls = [
            c for c in output.tool_calls if c.function == "submit_answer" and not c.parse_error
        ]
        if not calls:
            return [f"validator run {run + 1} gave no readable answer"]
        # the number as written, not the float JSON parsing made of it (scored numbers are exact)
        answer = calls[0].exact_arguments()
        if not answer_matches(task, gold, answer):
            return [f"validator run {run + 1} answered {json.dumps(answer)}, not the gold answer"]
    return []


async def run_with_model(ref: ModelRef, work: Any, *args: Any) -> Any:
    """Create the model, run ``work(model, *args)``, close the model (one event loop)."""
    model = ref.create()
    try:
        return await work(model, *args)
    finally:
        await model.aclose()
