"""A llama.cpp server (llama-cpp-python) whose tool calling does what the OpenAI API says.

::

    python -m uncobench_z3.models.llama_server --model PATH.gguf --port 8080 [options]

``local/<model>`` starts this server; start it yourself to reach the same server through
``openai-api/<service>/<model>``. It is ``python -m llama_cpp.server`` with three changes:

* the chat format ``uncobench-tools`` (the default here). llama-cpp-python's
  ``chatml-function-calling`` (0.3.x), the format that offers tools, fails an agent
  benchmark three ways: ``tool_choice: "required"`` fails an assertion (HTTP 500 with an empty
  message); with ``"auto"`` every step generates with ``max_tokens=None`` and keeps calling
  tools in a loop (one request produced 6,684 tokens); and its template drops ``tool``
  messages, so the model never reads what its calls returned. ``uncobench-tools`` renders
  every message (tool results included) in ChatML, honours ``tool_choice`` ("none", "auto",
  "required", or a named function; a grammar constrains the choice and the arguments' JSON
  schema) and spends at most ``max_tokens`` over all the steps of one reply, which holds
  at most one tool call;
* the context defaults to the model's own (``<arch>.context_length`` in the GGUF, 8,192 for
  SmolLM2) instead of llama-cpp-python's 2,048;
* ``GET /props`` answers in llama.cpp's shape (``total_slots``: 1, since this server answers
  one request at a time; ``default_generation_settings.n_ctx``), so clients size their
  concurrency from it;
* ``--watch-pid PID`` exits when that process is gone, so a server is never orphaned, even
  when its owner is killed with SIGKILL;
* idle OpenMP threads sleep (``OMP_WAIT_POLICY=PASSIVE`` unless set) rather than spin.

Only the server process imports llama_cpp; nothing else in the package imports this module.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["CHAT_FORMAT", "main", "process_alive", "render_prompt", "tools_chat_handler"]

CHAT_FORMAT = "uncobench-tools"
_END = "<|im_end|>"
_SAMPLING = (
    "temperature", "top_p", "top_k", "min_p", "typical_p", "presence_penalty",
    "frequency_penalty", "repeat_penalty", "tfs_z", "mirostat_mode", "mirostat_tau",
    "mirostat_eta", "seed", "logits_processor", "logit_bias",
)  # fmt: skip
_WATCH_INTERVAL = 0.5
_EXIT_GRACE = 5.0


# -- the chat format ---------------------------------------------------------------------------
def _text(content: Any) -> str:
    """A message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}{_END}\n"


def _tools_text(tools: list[dict[str, Any]], allow_message: bool) -> str:
    lines = ["You can call these functions:", ""]
    for tool in tools:
        function = tool["function"]
        lines.append(f"functions.{function['name']}: {function.get('description', '')}".rstrip())
        lines.append(f"arguments (JSON schema): {json.dumps(function.get('parameters', {}))}")
        lines.append("")
    lines.append(
        "To call a function, write 'functions.<name>:' on one line and its arguments as one "
        "JSON object on the next."
    )
    if allow_message:
        lines.append("To reply with text instead, write 'message:' on one line and then the text.")
    return "\n".join(lines)


def render_prompt(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, allow_message: bool = True
) -> str:
    """The ChatML prompt for ``messages``, with the tools described in the system turn.

    Assistant tool calls are written the way the model is asked to write them
    (``functions.<name>:`` and the arguments); a tool result becomes a user turn that names
    the function it answers, since a small model reads user turns best.
    """
    names = {
        call.get("id"): call["function"]["name"]
        for message in messages
        for call in message.get("tool_calls") or []
    }
    described = _tools_text(tools, allow_message) if tools else ""
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role in ("system", "developer"):
            text = f"{content}\n\n{described}" if described else content
            described = ""  # once, in the first system turn
            parts.append(_turn("system", text))
        elif role == "assistant":
            said = [f"message:\n{content}" if tools and content else content] if content else []
            for call in message.get("tool_calls") or []:
                said.append(
                    f"functions.{call['function']['name']}:\n{call['function']['arguments']}"
                )
            parts.append(_turn("assistant", "\n".join(said)))
        elif role in ("tool", "function"):
            name = names.get(message.get("tool_call_id")) or message.get("name") or "the function"
            parts.append(_turn("user", f"Result of functions.{name}:\n{content}"))
        else:
            parts.append(_turn("user", content))
    if described:  # no system message: the tools still need describing
        parts.insert(0, _turn("system", described))
    return "".join(parts) + "<|im_start|>assistant\n"


class _Budget:
    """``max_tokens`` spent over every step of one reply (``None``: up to the context's end)."""

    def __init__(self, max_tokens: int | None) -> None:
        self.left = max_tokens if max_tokens is not None and max_tokens > 0 else None
        self.prompt_tokens = 0
        self.completion_tokens = 0

    @property
    def exhausted(self) -> bool:
        return self.left is not None and self.left <= 0

    def generate(
        self, llama: Any, prompt: str, sampling: dict[str, Any], **options: Any
    ) -> tuple[str, str]:
        """One completion within the budget: its text and finish reason."""
        if self.exhausted:
            return "", "length"
        # llama-cpp-python reads max_tokens <= 0 or None as "until the context ends"
        result = llama.create_completion(
            prompt=prompt, max_tokens=self.left or -1, stream=False, **sampling, **options
        )
        usage = result["usage"]
        if not self.prompt_tokens:
            self.prompt_tokens = int(usage["prompt_tokens"])
        spent = int(usage["completion_tokens"])
        self.completion_tokens += spent
        if self.left is not None:
            self.left -= spent
        choice = result["choices"][0]
        return str(choice["text"]), str(choice.get("finish_reason") or "stop")


def _grammar(text: str) -> Any:
    return _module("llama_cpp.llama_grammar").LlamaGrammar.from_string(text, verbose=False)


def _arguments_grammar(schema: dict[str, Any]) -> Any:
    llama_grammar = _module("llama_cpp.llama_grammar")
    try:
        return llama_grammar.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception:  # a schema the converter does not handle: any JSON value
        return llama_grammar.LlamaGrammar.from_string(llama_grammar.JSON_GBNF, verbose=False)


def _choice_grammar(names: list[str], allow_message: bool) -> Any:
    options = [json.dumps(f"functions.{name}:") for name in names]
    if allow_message:
        options.append('"message:"')
    return _grammar("root ::= " + " | ".join(options) + "\n")


def _response(
    llama: Any, model: str | None, text: str | None, call: tuple[str, str] | None,
    finish: str, budget: _Budget,
) -> dict[str, Any]:  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if call is not None:
        name, arguments = call
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model or Path(str(getattr(llama, "model_path", "model"))).name,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": budget.prompt_tokens,
            "completion_tokens": budget.completion_tokens,
            "total_tokens": budget.prompt_tokens + budget.completion_tokens,
        },
    }


def _as_stream(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A finished reply as a stream of chat completion chunks (one delta, then the end)."""
    choice = response["choices"][0]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
    base = {key: response[key] for key in ("id", "created", "model")}
    kind = {"object": "chat.completion.chunk"}
    yield {**base, **kind, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    end = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    yield {**base, **kind, "choices": [end], "usage": response["usage"]}


def tools_chat_handler(
    llama: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    functions: list[dict[str, Any]] | None = None,
    function_call: Any = None,
    max_tokens: int | None = None,
    stop: str | list[str] | None = None,
    stream: bool = False,
    model: str | None = None,
    **options: Any,
) -> Any:
    """The ``uncobench-tools`` chat format (see the module docstring)."""
    if functions and not tools:  # the legacy spelling of tools
        tools = [{"type": "function", "function": f} for f in functions]
        tool_choice = function_call if tool_choice is None else tool_choice
    if isinstance(tool_choice, dict) and "name" in tool_choice and "function" not in tool_choice:
        tool_choice = {"type": "function", "function": {"name": tool_choice["name"]}}
    sampling = {key: options[key] for key in _SAMPLING if options.get(key) is not None}
    stops = [_END, *([stop] if isinstance(stop, str) else list(stop or []))]
    budget = _Budget(max_tokens)
    offered = tools or []
    if tool_choice in (None, "auto") and offered:
        tool_choice = "auto"

    def reply(text: str | None, call: tuple[str, str] | None, finish: str) -> Any:
        response = _response(llama, model, text, call, finish, budget)
        return _as_stream(response) if stream else response

    if not offered or tool_choice == "none":
        text, finish = budget.generate(llama, render_prompt(messages, None), sampling, stop=stops)
        return reply(text, None, finish)
    names = [tool["function"]["name"] for tool in offered]
    allow_message = tool_choice == "auto"
    prompt = render_prompt(messages, offered, allow_message)
    if isinstance(tool_choice, dict):
        chosen = str(tool_choice.get("function", {}).get("name"))
        if chosen not in names:
            raise ValueError(f"tool_choice names {chosen!r}, not one of the tools {names}")
    elif tool_choice in ("auto", "required"):
        # the model chooses under a grammar that admits only the allowed openings
        picked, finish = budget.generate(
            llama, prompt, sampling, grammar=_choice_grammar(names, allow_message)
        )
        if finish == "length":
            return reply("", None, "length")  # max_tokens ran out while choosing
        if not picked.startswith("functions."):
            text, finish = budget.generate(llama, prompt + "message:\n", sampling, stop=stops)
            return reply(text, None, finish)
        chosen = picked.removeprefix("functions.").rstrip(":")
    else:
        raise ValueError(f"tool_choice {tool_choice!r} is not none, auto, required or a function")
    parameters = offered[names.index(chosen)]["function"].get("parameters") or {"type": "object"}
    arguments, finish = budget.generate(
        llama,
        prompt + f"functions.{chosen}:\n",
        sampling,
        stop=stops,
        grammar=_arguments_grammar(parameters),
    )
    return reply(None, (chosen, arguments), "length" if finish == "length" else "tool_calls")


# -- the server process ------------------------------------------------------------------------
def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat.rpartition(")")[2].split()[0] != "Z"


def _watch(pid: int) -> None:
    """Exit when ``pid`` is gone: first as SIGTERM would (uvicorn shuts down), then for sure."""
    while process_alive(pid):
        time.sleep(_WATCH_INTERVAL)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_EXIT_GRACE)
    os._exit(0)


def _context_length(model_path: str) -> int:
    """The model's own context length, from the GGUF metadata (the vocabulary alone is loaded)."""
    header = _module("llama_cpp").Llama(model_path=model_path, vocab_only=True, verbose=False)
    metadata = header.metadata
    architecture = metadata.get("general.architecture", "llama")
    return int(metadata.get(f"{architecture}.context_length", 0))


def _module(name: str) -> Any:
    """A module of llama-cpp-python or uvicorn, imported here only (the server process), and
    typed loosely: their signatures change between releases."""
    return importlib.import_module(name)


def main(argv: list[str] | None = None) -> None:
    # Idle OpenMP threads sleep instead of spinning (read when llama.cpp loads, so before the
    # imports below): on a busy machine spinning doubled the CPU a prompt costs (measured:
    # 20.0 against 10.1 CPU seconds for a 983-token prompt).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cli, settings = _module("llama_cpp.server.cli"), _module("llama_cpp.server.settings")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    cli.add_args_from_model(parser, settings.Settings)
    parser.add_argument("--watch-pid", type=int, default=None, help="Exit when this process ends.")
    arguments = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(arguments)
    given = {a.split("=", 1)[0] for a in arguments if a.startswith("--")}
    if "--chat_format" not in given:
        args.chat_format = CHAT_FORMAT
    if "--n_ctx" not in given:
        args.n_ctx = _context_length(args.model)
    registry = _module("llama_cpp.llama_chat_format").LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(CHAT_FORMAT, tools_chat_handler, overwrite=True)
    if args.watch_pid is not None:
        threading.Thread(target=_watch, args=(args.watch_pid,), daemon=True).start()
    server_settings = cli.parse_model_from_args(settings.ServerSettings, args)
    model_settings = cli.parse_model_from_args(settings.ModelSettings, args)
    app = _module("llama_cpp.server.app").create_app(
        server_settings=server_settings, model_settings=[model_settings]
    )
    properties = {
        "total_slots": 1,  # llama-cpp-python's server holds one lock around its model
        "default_generation_settings": {"n_ctx": model_settings.n_ctx},
        "chat_format": model_settings.chat_format,
    }
    app.add_api_route("/props", lambda: properties, methods=["GET"])
    print(
        f"uncobench llama server: n_ctx={model_settings.n_ctx} "
        f"chat_format={model_settings.chat_format}",
        flush=True,
    )
    _module("uvicorn").run(app, host=server_settings.host, port=server_settings.port)


if __name__ == "__main__":
    main()
