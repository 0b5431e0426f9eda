"""The provider-neutral types, tool-choice resolution, usage sums and prices."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from uncobench_z3.errors import ModelConfigError
from uncobench_z3.models import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelPrice,
    ModelUsage,
    ToolCall,
    ToolDef,
    ToolFunction,
    price_for,
)
from uncobench_z3.models._secrets import redact, register_secret
from uncobench_z3.models._types import resolve_tool_choice
from uncobench_z3.models.providers._openai import parse_tool_arguments

LOOKUP = ToolDef(
    name="lookup",
    description="Look a word up.",
    parameters={"type": "object", "properties": {"word": {"type": "string"}}},
)


def test_message_constructors_set_roles_and_tool_fields() -> None:
    call = ToolCall(id="call_1", function="lookup", arguments={"word": "x"})
    assert ChatMessage.system("s").role == "system"
    assert ChatMessage.user("u").content == "u"
    assistant = ChatMessage.assistant("thinking", (call,))
    assert assistant.tool_calls == (call,)
    result = ChatMessage.tool("42", call, is_error=True)
    assert (result.role, result.tool_call_id, result.name, result.is_error) == (
        "tool",
        "call_1",
        "lookup",
        True,
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"role": "user", "tool_calls": [{"id": "a", "function": "f"}]},
        {"role": "tool", "content": "x"},
        {"role": "user", "tool_call_id": "a"},
        {"role": "narrator", "content": "x"},
    ],
)
def test_inconsistent_messages_are_rejected(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ChatMessage.model_validate(fields)


def test_messages_are_frozen() -> None:
    message = ChatMessage.user("hi")
    with pytest.raises(ValidationError):
        message.content = "changed"  # type: ignore[misc]


def test_tool_names_must_suit_the_providers() -> None:
    with pytest.raises(ValidationError):
        ToolDef(name="has space", description="d")
    assert ToolDef(name="ok_name-2", description="d").parameters["type"] == "object"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (None, "auto"),
        ("auto", "auto"),
        ("none", "none"),
        ("any", "any"),
        ("lookup", ToolFunction(name="lookup")),
        (ToolFunction(name="lookup"), ToolFunction(name="lookup")),
    ],
)
def test_tool_choice_resolution(choice: object, expected: object) -> None:
    assert resolve_tool_choice(choice, [LOOKUP]) == expected  # type: ignore[arg-type]


def test_tool_choice_without_tools_is_omitted_or_rejected() -> None:
    assert resolve_tool_choice(None, None) is None
    assert resolve_tool_choice("auto", []) is None
    with pytest.raises(ModelConfigError):
        resolve_tool_choice("lookup", [])
    with pytest.raises(ModelConfigError, match="not among the tools"):
        resolve_tool_choice("missing", [LOOKUP])


def test_config_merge_overrides_only_fields_that_are_set() -> None:
    base = GenerateConfig(temperature=0.0, max_tokens=100, seed=1)
    merged = base.merged(GenerateConfig(max_tokens=5, stop=("END",)))
    assert (merged.temperature, merged.max_tokens, merged.seed, merged.stop) == (
        0.0,
        5,
        1,
        ("END",),
    )
    assert base.merged(None) is base


def test_usage_sums_tokens_and_keeps_unknown_costs_unknown() -> None:
    priced = ModelUsage(input_tokens=10, output_tokens=5, cost_usd=0.5)
    total = ModelUsage() + priced + priced
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (20, 10, 30)
    assert total.cost_usd == pytest.approx(1.0)
    unknown = priced + ModelUsage(input_tokens=1, output_tokens=1)
    assert unknown.cost_usd is None


def test_output_message_is_the_assistant_turn() -> None:
    call = ToolCall(id="c", function="lookup")
    output = ModelOutput(text="t", tool_calls=(call,))
    assert output.message == ChatMessage.assistant("t", (call,))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai/gpt-4o", ModelPrice(2.5, 10.0)),
        ("openai/gpt-4o-mini-2024-07-18", ModelPrice(0.15, 0.60)),
        ("anthropic/claude-3-5-sonnet-20241022", ModelPrice(3.0, 15.0)),
        ("anthropic/claude-sonnet-4-5-latest", ModelPrice(3.0, 15.0)),
        ("openai/gpt-4o-audio-preview", None),
        ("openai-api/vllm/gpt-4o", None),
        ("mock/echo", None),
    ],
)
def test_prices_match_snapshots_but_not_other_models(
    name: str, expected: ModelPrice | None
) -> None:
    assert price_for(name) == expected


def test_price_cost_is_per_million_tokens() -> None:
    assert ModelPrice(2.0, 8.0).cost(1_000_000, 500_000) == pytest.approx(6.0)


@given(st.text())
def test_tool_argument_parsing_never_raises(raw: str) -> None:
    arguments, problem = parse_tool_arguments(raw)
    assert isinstance(arguments, dict)
    assert (problem is None) or arguments == {}


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4))
def test_tool_argument_objects_round_trip(arguments: dict[str, object]) -> None:
    assert parse_tool_arguments(json.dumps(arguments)) == (arguments, None)


@given(prefix=st.text(max_size=20), suffix=st.text(max_size=20))
def test_a_registered_secret_never_survives_redaction(prefix: str, suffix: str) -> None:
    secret = "registered-secret-value-777"
    register_secret(secret)
    assert secret not in redact(prefix + secret + suffix)
