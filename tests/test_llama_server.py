"""The ``uncobench-tools`` chat format of the llama server, over a stand-in model that records
what it is asked to complete (llama-cpp-python is not needed; the real format is exercised by
the ``llama`` tests)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from uncobench_z3.models import llama_server
from uncobench_z3.models.llama_server import render_prompt, tools_chat_handler

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "ask",
            "description": "Ask a colleague.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "wait", "description": "Wait.", "parameters": {}}},
]


class FakeLlama:
    """Answers each completion with the next scripted text, spending one token per character
    (and never more than ``max_tokens``, as llama.cpp does)."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.calls: list[dict[str, Any]] = []

    def create_completion(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        text = self.texts.pop(0)
        limit = request["max_tokens"]
        finish = "stop"
        if limit > 0 and len(text) > limit:
            text, finish = text[:limit], "length"
        return {
            "choices": [{"text": text, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(request["prompt"]), "completion_tokens": len(text)},
        }


@pytest.fixture(autouse=True)
def _grammars_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_server, "_grammar", lambda text: text)
    monkeypatch.setattr(llama_server, "_arguments_grammar", lambda schema: f"json:{schema}")


MESSAGES = [
    {"role": "system", "content": "You coordinate."},
    {"role": "user", "content": "Find the answer."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ask", "arguments": '{"q": "x"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Ann has 17 years."},
]


def test_the_prompt_keeps_tool_results_and_describes_the_tools_once() -> None:
    prompt = render_prompt(MESSAGES, TOOLS)
    assert "Ann has 17 years." in prompt  # chatml-function-calling drops tool messages
    assert prompt.count("functions.ask: Ask a colleague.") == 1
    assert 'functions.ask:\n{"q": "x"}<|im_end|>' in prompt
    assert "Result of functions.ask:\nAnn has 17 years." in prompt
    assert prompt.startswith("<|im_start|>system\nYou coordinate.")
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "message:" in prompt
    assert "'message:'" not in render_prompt(MESSAGES, TOOLS, allow_message=False)


def test_required_forces_a_call_and_max_tokens_covers_every_step() -> None:
    llama = FakeLlama("functions.ask:", '{"q": "' + "y" * 100 + '"}')
    reply = tools_chat_handler(llama, MESSAGES, tools=TOOLS, tool_choice="required", max_tokens=30)
    choose, arguments = llama.calls
    assert choose["grammar"] == 'root ::= "functions.ask:" | "functions.wait:"\n'  # no message
    assert arguments["max_tokens"] == 30 - len("functions.ask:")  # one budget for the reply
    assert arguments["prompt"].endswith("functions.ask:\n")
    assert arguments["grammar"].startswith("json:")
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "length"
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "ask" and len(call["function"]["arguments"]) == 16
    assert reply["usage"]["completion_tokens"] == 30


def test_auto_may_answer_with_a_message_within_the_budget() -> None:
    llama = FakeLlama("message:", "I think it is Ann.")
    reply = tools_chat_handler(llama, MESSAGES, tools=TOOLS, tool_choice="auto", max_tokens=100)
    assert '"message:"' in llama.calls[0]["grammar"]
    assert llama.calls[1]["prompt"].endswith("message:\n")
    assert llama.calls[1]["max_tokens"] == 100 - len("message:")
    message = reply["choices"][0]["message"]
    assert message["content"] == "I think it is Ann." and "tool_calls" not in message


def test_a_named_tool_skips_the_choice() -> None:
    llama = FakeLlama("{}")
    choice = {"type": "function", "function": {"name": "wait"}}
    reply = tools_chat_handler(llama, MESSAGES, tools=TOOLS, tool_choice=choice, max_tokens=10)
    (only,) = llama.calls
    assert only["prompt"].endswith("functions.wait:\n") and only["max_tokens"] == 10
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    with pytest.raises(ValueError, match="not one of the tools"):
        tools_chat_handler(
            FakeLlama(), MESSAGES, tools=TOOLS, tool_choice={"function": {"name": "x"}}
        )


def test_no_tools_is_plain_chat_and_the_budget_can_run_out_while_choosing() -> None:
    llama = FakeLlama("Hello there, friend.")
    reply = tools_chat_handler(llama, [{"role": "user", "content": "hi"}], max_tokens=5)
    assert reply["choices"][0]["message"]["content"] == "Hello"
    assert reply["choices"][0]["finish_reason"] == "length"
    assert "functions." not in llama.calls[0]["prompt"]
    starved = FakeLlama("functions.ask:")
    reply = tools_chat_handler(starved, MESSAGES, tools=TOOLS, tool_choice="required", max_tokens=4)
    assert len(starved.calls) == 1 and reply["choices"][0]["finish_reason"] == "length"


def test_a_streamed_request_gets_the_reply_as_chunks() -> None:
    llama = FakeLlama("functions.ask:", '{"q": "z"}')
    chunks = list(
        tools_chat_handler(llama, MESSAGES, tools=TOOLS, tool_choice="required", stream=True)
    )
    first, last = chunks
    (call,) = first["choices"][0]["delta"]["tool_calls"]
    assert call["index"] == 0 and json.loads(call["function"]["arguments"]) == {"q": "z"}
    assert last["choices"][0]["finish_reason"] == "tool_calls" and last["usage"]
