"""LLM construction stages over a scripted provider: generator (with one repair), renderer
(values must survive), validator (three shuffled runs), and the build pipeline with them."""

from __future__ import annotations

import dataclasses
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from uncobench_z3.construct import (
    LLMStages,
    ModelRef,
    SpecGenerator,
    SpecRejected,
    answer_matches,
    build_benchmark,
    check_rendering,
    generate_spec,
    instantiate,
    load_groups,
    load_library,
    read_full_information,
    render_task,
    render_with_llm,
    surviving_problems,
    validate_with_llm,
)
from uncobench_z3.construct import _pipeline as pipeline
from uncobench_z3.errors import ConfigError
from uncobench_z3.models import (
    ChatMessage,
    ModelOutput,
    ToolCall,
    ToolDef,
    get_model,
    register_provider,
)
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.solver import Verdict
from uncobench_z3.spec import check_structure, format_fraction

LIBRARY = load_library()


def _reference_spec(messages: list[ChatMessage]) -> dict:  # type: ignore[type-arg]
    system = messages[0].content
    start = system.index("{")
    end = system.index("\n\nRecently written tasks")
    return json.loads(system[start:end])


def _answer_from_text(text: str) -> dict:  # type: ignore[type-arg]
    task_text, _, records = text.partition("Records of ")
    blocks = ("Records of " + records).split("\n\nRecords of ")
    lines = {f"r{i}": [ln for ln in b.splitlines()[1:] if ln.strip()] for i, b in enumerate(blocks)}
    task_part = task_text[task_text.index("\n\n") + 2 :]
    read = read_full_information(task_part, lines)
    outcome = read.outcome()
    if outcome.kind != "eligible":
        return {"decision": read.negative, "candidate": None, "number": None}
    return {
        "decision": read.positive,
        "candidate": outcome.candidate,
        "number": format_fraction(outcome.number),  # a decimal, as a model would write it
    }


def fake_llm(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput | str:
    names = {t.name for t in tools}
    if "submit_spec" in names:
        spec = _reference_spec(messages)
        spec["title"] = spec["title"] + " (rewritten)"
        return ModelOutput(tool_calls=(ToolCall(id="c1", function="submit_spec", arguments=spec),))
    if "submit_answer" in names:
        answer = _answer_from_text(messages[-1].content)
        return ModelOutput(
            tool_calls=(ToolCall(id="c2", function="submit_answer", arguments=answer),)
        )
    text = messages[-1].content
    if text.startswith("Rephrase"):
        return "Please decide: " + text.split("Question: ", 1)[1].split("\n\n")[0]
    return text.split("Records:\n", 1)[1].split("\n\nAnswer with the rewritten records only.")[0]


register_provider("fakellm", lambda rest, **_: MockProvider(f"fakellm/{rest}", fake_llm))


def test_model_ref_parsing() -> None:
    ref = ModelRef.parse("openai/gpt-x,temperature=0.2,max_tokens=900")
    assert ref.name == "openai/gpt-x" and dict(ref.settings) == {
        "temperature": 0.2,
        "max_tokens": 900,
    }
    assert ref.describe() == "openai/gpt-x,temperature=0.2,max_tokens=900"
    with pytest.raises(ConfigError):
        ModelRef.parse("openai/gpt-x,colour=blue")
    with pytest.raises(ConfigError):
        ModelRef.parse("openai/gpt-x,max_tokens=lots")


async def test_generator_repairs_once() -> None:
    draft = SpecGenerator(LIBRARY, 3).draft(0)
    good = json.loads(draft.spec.model_dump_json(exclude={"records"}))
    bad = {**good, "candidates": good["candidates"][:2]}
    calls = [
        ModelOutput(tool_calls=(ToolCall(id="a", function="submit_spec", arguments=bad),)),
        ModelOutput(tool_calls=(ToolCall(id="b", function="submit_spec", arguments=good),)),
    ]
    model = get_model("mock/gen", outputs=calls)
    repaired = await generate_spec(model, draft, ["mining / sum: something"])
    assert repaired.spec.id == draft.spec.id and len(repaired.spec.candidates) == 3
    sent = model.provider.calls  # type: ignore[attr-defined]
    assert len(sent) == 2
    assert "exactly 3 candidates" in sent[1].messages[-1].content  # the problems went back
    worse = [ModelOutput(tool_calls=(ToolCall(id="a", function="submit_spec", arguments=bad),))] * 2
    with pytest.raises(SpecRejected) as caught:
        await generate_spec(get_model("mock/gen2", outputs=worse), draft, [])
    assert any("candidate" in p for p in caught.value.problems)
    no_call = await _rejects(get_model("mock/gen3", outputs=["I refuse", "still no"]), draft)
    assert "no submit_spec" in no_call


async def test_the_repair_answers_every_call_of_the_turn() -> None:
    """Two submit_spec calls in one turn: the repair answered the first alone, and a call
    left without its result is a conversation the OpenAI and Anthropic APIs refuse (400)."""
    draft = SpecGenerator(LIBRARY, 3).draft(0)
    good = json.loads(draft.spec.model_dump_json(exclude={"records"}))
    bad = {**good, "candidates": good["candidates"][:2]}
    both = (
        ToolCall(id="a1", function="submit_spec", arguments=bad),
        ToolCall(id="a2", function="submit_spec", arguments=good),
    )
    again = ToolCall(id="b", function="submit_spec", arguments=good)
    model = get_model(
        "mock/gen5", outputs=[ModelOutput(tool_calls=both), ModelOutput(tool_calls=(again,))]
    )
    await generate_spec(model, draft, [])
    sent = model.provider.calls[1].messages  # type: ignore[attr-defined]
    answers = {m.tool_call_id: m.content for m in sent if m.role == "tool"}
    assert set(answers) == {"a1", "a2"}
    assert "exactly 3 candidates" in answers["a1"] and "Not read" in answers["a2"]


async def _rejects(model, draft) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecRejected) as caught:
        await generate_spec(model, draft, [])
    return str(caught.value)


def _instance():  # type: ignore[no-untyped-def]
    draft = SpecGenerator(LIBRARY, 5).draft(1)
    spec = instantiate(draft, 5)
    task = check_structure(spec).task
    assert task is not None
    return task, render_task(task, 5)


async def test_renderer_keeps_values_and_check_catches_losses() -> None:
    task, template = _instance()
    rendered, problems = await render_with_llm(get_model("fakellm/r"), task, template)
    assert problems == []
    assert "Please decide:" in rendered.task_text
    role = next(iter(template.records))
    text = "\n".join(template.records[role])
    assert surviving_problems(task, role, text) == []
    first_value_line = template.records[role][0]
    damaged = text.replace(first_value_line, first_value_line.rsplit(":", 1)[0] + ": unknown")
    if damaged == text:  # frames ending in "is <value>."
        damaged = text.replace(
            first_value_line, first_value_line.rsplit(" is ", 1)[0] + " is unknown."
        )
    assert any(
        p.startswith("fact lost in rendering") for p in surviving_problems(task, role, damaged)
    )


def test_every_lost_record_line_is_found() -> None:
    """A record is kept only with its candidate, context and value together: each part found
    somewhere in the role's text let a lost line pass (its value stood in another record,
    ``5`` in ``15``), and so did verify's check of a model-rendered group."""
    task, template = _instance()
    for role, lines in template.records.items():
        for k, line in enumerate(lines):
            kept = "\n".join(lines[:k] + lines[k + 1 :])
            assert surviving_problems(task, role, kept), f"{role}: lost {line!r} unnoticed"
        # a list grouped under each candidate's name keeps every record
        grouped = []
        for candidate in task.candidates:
            name = task.candidate_name(candidate)
            grouped.append(f"{name}:")
            grouped += [f"- {ln.replace(name, 'this one')}" for ln in lines if name in ln]
        assert surviving_problems(task, role, "\n".join(grouped)) == []


@pytest.mark.parametrize("stop", ["max_tokens", "content_filter"])
async def test_a_question_cut_short_is_not_the_tasks(stop: str) -> None:
    """A rephrased question cut at its token limit went into the task text agents read."""
    task, template = _instance()
    cut = ModelOutput(text="Please decide which of the three", stop_reason=stop)  # type: ignore[arg-type]
    records = [ModelOutput(text="\n".join(lines)) for lines in template.records.values()]
    model = get_model("mock/cut", outputs=[cut, *records])
    rendered, problems = await render_with_llm(model, task, template)
    assert problems == [] and rendered.task_text == template.task_text


async def test_validator_needs_three_matching_runs() -> None:
    task, template = _instance()
    assert await validate_with_llm(get_model("fakellm/v"), task, template, task.outcome(), 5) == []
    wrong = ModelOutput(
        tool_calls=(
            ToolCall(
                id="w",
                function="submit_answer",
                arguments={"decision": "nonsense", "candidate": None, "number": None},
            ),
        )
    )
    problems = await validate_with_llm(
        get_model("mock/v", outputs=[wrong] * 3), task, template, task.outcome(), 5
    )
    assert problems and "not the gold answer" in problems[0]
    unreadable = await validate_with_llm(
        get_model("mock/v2", outputs=["just text"] * 3), task, template, task.outcome(), 5
    )
    assert unreadable and "no readable answer" in unreadable[0]


async def test_the_validator_reads_the_number_it_wrote() -> None:
    """-24.554999999999999999 rounds half up to the gold -24.55; its float's -24.555 does not."""
    task, template = _instance()
    gold = task.outcome()
    assert (gold.number, task.rule.digits, task.rule.mode) == (Fraction(-491, 20), 2, "half_up")
    raw = (
        f'{{"decision": "{task.spec.decision.positive}", "candidate": "{gold.candidate}", '
        '"number": -24.554999999999999999}'
    )
    call = ToolCall(id="v", function="submit_answer", arguments=json.loads(raw), raw_arguments=raw)
    answers = [ModelOutput(tool_calls=(call,))] * 3
    assert (
        await validate_with_llm(get_model("mock/v3", outputs=answers), task, template, gold, 5)
        == []
    )


@pytest.mark.parametrize("number", [0, "0", "0.00", None])
def test_a_number_of_zero_matches_a_gold_of_zero(number: object) -> None:
    task, _ = _instance()
    gold = dataclasses.replace(task.outcome(), number=Fraction(0))
    answer = {"decision": task.spec.decision.positive, "candidate": gold.candidate}
    assert answer_matches(task, gold, {**answer, "number": number}) is (number is not None)


async def test_a_generated_spec_is_checked_with_the_numbers_it_wrote() -> None:
    """A maximum of 120000.00000000000000001 is no multiple of the step 500 (its float is)."""
    draft = SpecGenerator(LIBRARY, 3).draft(0)
    good = json.loads(draft.spec.model_dump_json(exclude={"records"}))
    (index,) = [i for i, fact in enumerate(good["facts"]) if fact.get("max") == 120000]
    good["facts"][index]["max"] = "WRITTEN"
    raw = json.dumps(good).replace('"WRITTEN"', "120000.00000000000000001")
    call = ToolCall(id="s", function="submit_spec", arguments=json.loads(raw), raw_arguments=raw)
    model = get_model("mock/gen4", outputs=[ModelOutput(tool_calls=(call,))] * 2)
    problem = f"$.facts[{index}].max: 120000.00000000000000001 is not a multiple of the step 500"
    assert problem in await _rejects(model, draft)


def test_build_with_llm_stages(tmp_path: Path) -> None:
    stages = LLMStages(
        generator=ModelRef("fakellm/gen", cache=False),
        renderer=ModelRef("fakellm/render", cache=False),
        validator=ModelRef("fakellm/validate", cache=False),
    )
    out = tmp_path / "llm-bench"
    result = build_benchmark(out, groups=3, seed=2, workers=1, stages=stages)
    assert result.manifest["config"]["generator"] == "fakellm/gen,cache=false"  # type: ignore[index]
    groups = load_groups(out)
    assert len(groups) == 3
    for group in groups:
        assert group.spec.title.endswith("(rewritten)")
        assert group.provenance["renderer"] == "fakellm/render,cache=false"
        assert group.rendered is not None and "Please decide:" in str(group.rendered["task_text"])
        assert "faithful" not in group.rendered  # (the template's places are not the model's)
        # verify's text check accepts the model's phrasing, but not an edited condition
        assert check_rendering(group).verdict == Verdict.PROVED, check_rendering(group).summary
        rendered = dict(group.rendered)
        rendered["task_text"] = str(rendered["task_text"]).replace("1. ", "1. Not: ", 1)
        forged = group.model_copy(update={"rendered": rendered})
        assert check_rendering(forged).verdict == Verdict.REFUTED
    assert re.search(r"generator", json.dumps(result.manifest["config"]))


def test_a_generator_that_fails_every_spec_is_not_blamed_on_the_solver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build that keeps nothing named a solver budget whatever the rejection; a model
    that never calls submit_spec is not helped by --rlimit."""
    monkeypatch.setattr(pipeline, "MAX_CANDIDATES_PER_GROUP", 1)
    monkeypatch.setattr(pipeline, "MIN_CANDIDATES", 0)
    stages = LLMStages(generator=ModelRef("mock/echo", cache=False))
    with pytest.raises(ConfigError, match="no submit_spec tool call") as caught:
        build_benchmark(tmp_path / "b", groups=1, workers=1, stages=stages)
    assert "--rlimit" not in str(caught.value)
