"""LLM main agents and LLM colleagues over scripted providers (no network), and interventions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import (
    AnswerAction,
    AskAction,
    Environment,
    GroupJudges,
    InvalidAction,
    LLMAgent,
    RunSummary,
    WaitAction,
    close_models,
    make_config,
    parse_agent_name,
    parse_text_action,
    read_log,
    run_episode,
    shared_model,
    validity_cells,
)
from uncobench_z3.evaluation import evaluate as run_config
from uncobench_z3.evaluation._llm_agent import untooled_action
from uncobench_z3.models import (
    CACHE_DIR_ENV,
    ChatMessage,
    ModelOutput,
    ToolCall,
    ToolDef,
    register_provider,
)
from uncobench_z3.models.providers._mock import MockCall, MockProvider


def evaluate(
    bench: Path,
    agents: list[str],
    out: Path,
    settings: list[str],  # type: ignore[no-untyped-def]
    colleague: str = "scripted",
    interventions=("none",),
) -> RunSummary:
    groups = load_groups(bench)
    config = make_config(
        bench,
        groups,
        agents,
        settings,
        colleague=colleague,  # type: ignore[arg-type]
        interventions=interventions,
    )
    return run_config(groups, config, out)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("llm-eval") / "bench"
    build_benchmark(out, groups=3, seed=4, workers=1)
    return out


def _scripted_agent(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
    """Round 1: ask everyone; round 2: a malformed call; round 3: answer."""
    assistant_turns = sum(1 for m in messages if m.role == "assistant")
    if assistant_turns == 0:
        roles = next(t for t in tools if t.name == "ask_colleagues").parameters["properties"][
            "requests"
        ]["items"]["properties"]["role"]["enum"]
        requests = [{"role": r, "question": "Please send all your records."} for r in roles]
        call = ToolCall(id="a", function="ask_colleagues", arguments={"requests": requests})
        return ModelOutput(tool_calls=(call,))
    if assistant_turns == 1:
        return ModelOutput(
            tool_calls=(
                ToolCall(
                    id="b", function="ask_colleagues", raw_arguments="{not json", parse_error="bad"
                ),
            )
        )
    answer = {"decision": "Do not appoint", "candidate": None, "number": None}
    return ModelOutput(tool_calls=(ToolCall(id="c", function="submit_answer", arguments=answer),))


def _echo_colleague(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    prompt = messages[-1].content
    return prompt.split("and nothing else:\n\n", 1)[1].split("\n\nRules:", 1)[0]


def _lossy_colleague(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    return "I have nothing useful to say."


register_provider("mockagent", lambda rest, **_: MockProvider(f"mockagent/{rest}", _scripted_agent))
register_provider(
    "mockcolleague", lambda rest, **_: MockProvider(f"mockcolleague/{rest}", _echo_colleague)
)
register_provider(
    "mocklossy", lambda rest, **_: MockProvider(f"mocklossy/{rest}", _lossy_colleague)
)


def test_text_protocol_parsing() -> None:
    ask = parse_text_action("ASK hr: What is Ann's experience?\nASK [finance]: the grant?")
    assert isinstance(ask, AskAction) and [r.role for r in ask.requests] == ["hr", "finance"]
    assert isinstance(parse_text_action("wait"), WaitAction)
    answer = parse_text_action("ANSWER\nDecision: Appoint\nCandidate: Ann\nNumber: 60,000 AUD")
    assert isinstance(answer, AnswerAction) and "60,000" in (answer.text or "")
    assert isinstance(parse_text_action("I am thinking..."), InvalidAction)


def test_reasoning_that_mentions_an_answer_is_not_one() -> None:
    """After other text, a line starting with "Answer:" is an answer only in the protocol's
    form (the word alone, or the answer's fields follow): reasoning does not end the episode."""
    reasoning = "I lack finance's figure.\nAnswer: it depends on it, so I will ask them next."
    for text in (reasoning, reasoning.replace("Answer:", "ANSWER -")):
        assert isinstance(parse_text_action(text), InvalidAction)
        assert isinstance(untooled_action(text), InvalidAction)
    assert "ANSWER alone on a line" in str(parse_text_action(reasoning).reason)
    formed = (
        "Everyone has replied, so:\nANSWER\nDecision: Appoint\nCandidate: Ann\nNumber: 60,000 AUD",
        "Done.\nAnswer: Decision: Appoint, Candidate: Ann, Number: 60,000 AUD",
        "Done.\nAnswer:\n- **Decision:** Appoint\n- **Candidate:** Ann",
        "Answer: appoint Ann at 60,000 AUD",  # a message that starts with it is the action
    )
    for text in formed:
        answer = parse_text_action(text)
        assert isinstance(answer, AnswerAction) and "Ann" in (answer.text or ""), text


def test_agent_names_carry_settings() -> None:
    ref, protocol = parse_agent_name("openai-api/vllm/Qwen3-8B,temperature=0,protocol=text")
    assert ref.name == "openai-api/vllm/Qwen3-8B" and dict(ref.settings) == {"temperature": 0.0}
    assert protocol == "text"


async def test_llm_agent_round_trip_with_a_malformed_call(bench: Path) -> None:
    group = load_groups(bench)[0]
    environment = Environment(group, "reliable")
    await run_episode(environment, LLMAgent(parse_agent_name("mockagent/x")[0]))
    kinds = [r.action for r in environment.trace]
    assert kinds == ["ask", "invalid", "answer"]
    assert environment.trace[1].error and "not JSON" in environment.trace[1].error
    assert all(reply.text for reply in environment.trace[0].replies)


def test_eval_with_llm_agent_and_colleagues(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = evaluate(
        bench,
        ["mockagent/x,cache=false"],
        out,
        settings=["reliable", "misaligned"],
        colleague="mockcolleague/y,cache=false",
    )
    records, _ = read_log(out / "samples.jsonl")
    assert len(records) == len(summary.records) > 0
    for record in records:
        assert set(record.usage) == {"agent", "colleagues"}  # tokens and cost per sample
        assert record.colleague == "mockcolleague/y,cache=false"
        replies = [reply for rnd in record.trace for reply in rnd.replies if reply.text]
        assert replies and all(r.fidelity is not None and r.fidelity.passed for r in replies)
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["colleague"] == "mockcolleague/y,cache=false"


def test_unfaithful_colleague_falls_back_and_is_logged(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "lossy"
    evaluate(
        bench,
        ["builtin/careful"],
        out,
        settings=["misaligned"],
        colleague="mocklossy/z,cache=false",
    )
    records, _ = read_log(out / "samples.jsonl")
    checks = [r.fidelity for rec in records for rnd in rec.trace for r in rnd.replies if r.fidelity]
    assert checks and not any(c.passed for c in checks)
    assert all(c.rejected_text == "I have nothing useful to say." for c in checks)
    assert all(rec.correct for rec in records)  # the scripted wording kept the setting intact
    # the validity judge judges what the model wrote, not the scripted stand-in
    cells = validity_cells(records, GroupJudges(load_groups(bench)))
    assert cells and all(c.colleague.startswith("mocklossy/") for c in cells)
    assert all(c.judged > 0 and c.fidelity == 0 and c.mean_coverage == 0 for c in cells)


def test_an_echoing_phrasing_colleague_is_caught(bench: Path, tmp_path: Path) -> None:
    # mock/echo sends its whole prompt back: every record is in it, the instructions too
    out = tmp_path / "echo"
    evaluate(bench, ["builtin/careful"], out, settings=["reliable"],
             colleague="mock/echo,cache=false")  # fmt: skip
    records, _ = read_log(out / "samples.jsonl")
    checks = [r.fidelity for rec in records for rnd in rec.trace for r in rnd.replies if r.fidelity]
    assert checks and all(c.problems[0] == "the model repeated its instructions" for c in checks)
    assert all(rec.correct for rec in records)  # the agent saw the scripted wording
    cells = validity_cells(records, GroupJudges(load_groups(bench)))
    assert sum(c.echoes for c in cells) == sum(c.judged for c in cells) == len(checks)
    assert all(c.fidelity == 0 and c.mean_coverage == 0 for c in cells)


def test_interventions_are_delivered_once_with_the_defect(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "arms"
    evaluate(
        bench,
        ["builtin/careful"],
        out,
        settings=["misaligned", "missed"],
        interventions=["none", "diagnosis", "action"],
    )
    records, _ = read_log(out / "samples.jsonl")
    by_arm: dict[str, list] = {}  # type: ignore[type-arg]
    for record in records:
        by_arm.setdefault(record.intervention, []).append(record)
    assert set(by_arm) == {"none", "diagnosis", "action"}
    for record in by_arm["none"]:
        assert not record.intervention_delivered
        assert all(rnd.intervention is None for rnd in record.trace)
    for arm in ("diagnosis", "action"):
        for record in by_arm[arm]:
            delivered = [rnd.intervention for rnd in record.trace if rnd.intervention]
            assert record.intervention_delivered and len(delivered) == 1
            text = delivered[0]
            assert text.startswith("Note from the task owner")
            assert record.gold.number is None or record.gold.number not in text  # never the answer
            if arm == "action":
                assert "Ask " in text
    from uncobench_z3.report import write_report

    files = write_report(out, tmp_path / "report", figures=False)
    markdown = files.markdown.read_text()
    assert "## Causal interventions" in markdown and "diagnosis" in markdown


register_provider(
    "mockseeded", lambda rest, **_: MockProvider(f"mockseeded/{rest}", _scripted_agent)
)


async def test_an_llm_agent_gets_its_epoch_seed_and_a_cache_scoped_to_the_epoch(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The epoch seed reaches the model's ``seed`` and the cache key: a repeated identical
    call is served from the cache within its epoch, never across epochs."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    group = load_groups(bench)[0]

    async def episode(name: str, seed: int) -> list[MockCall]:
        ref = parse_agent_name(name)[0]
        await run_episode(Environment(group, "reliable"), LLMAgent(ref, seed=seed))
        provider = shared_model(ref).provider
        assert isinstance(provider, MockProvider)
        return provider.calls

    try:
        calls = await episode("mockseeded/x", 11)
        per_episode = len(calls)
        assert per_episode == 3 and {c.config.seed for c in calls} == {11}
        await episode("mockseeded/x", 11)  # the same epoch: every call repeats, from the cache
        assert len(calls) == per_episode
        await episode("mockseeded/x", 12)  # another epoch: asked again, with its own seed
        assert len(calls) == 2 * per_episode
        assert {c.config.seed for c in calls[per_episode:]} == {12}
        # a seed pinned in the name is the one sent, yet the cache still keeps epochs apart
        pinned = await episode("mockseeded/y,seed=5", 11)
        await episode("mockseeded/y,seed=5", 12)
        assert len(pinned) == 2 * per_episode and {c.config.seed for c in pinned} == {5}
    finally:
        await close_models()
