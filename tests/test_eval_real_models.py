"""What real models bring into an evaluation, over scripted providers (no network): a context
window that runs out, what the model wrote in every round, invalid-action counts, connection
limits, and report rows keyed by the whole configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    Environment,
    SampleRecord,
    compute_metrics,
    default_concurrency,
    evaluate,
    example_benchmark,
    make_config,
    read_log,
)
from uncobench_z3.models import ChatMessage, ModelOutput, ToolCall, ToolDef, register_provider
from uncobench_z3.models.providers._base import ProviderCallError
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.report import write_report
from uncobench_z3.settings import TaskGroup


def _rounds(messages: list[ChatMessage]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


def _overflowing(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
    """Round 1 writes text that is no tool call (an invalid action), round 2 waits, round 3's
    conversation no longer fits the context window."""
    rounds = _rounds(messages)
    if rounds == 0:
        return ModelOutput(text="I shall think about it " * 3)
    if rounds == 1:
        return ModelOutput(tool_calls=(ToolCall(id="w", function="wait"),))
    raise ProviderCallError.from_status(
        400, "This model's maximum context length is 8192 tokens. However, you requested 9001"
    )


def _answering(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
    answer = {"decision": "Do not appoint", "candidate": None, "number": None}
    return ModelOutput(tool_calls=(ToolCall(id="a", function="submit_answer", arguments=answer),))


class OneSlot(MockProvider):
    async def parallel_slots(self) -> int:
        return 1


register_provider("mockctx", lambda rest, **_: MockProvider(f"mockctx/{rest}", _overflowing))
register_provider("mockslot", lambda rest, **_: OneSlot(f"mockslot/{rest}", _answering))


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("bench") / "bench")


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


def _run(groups: list[TaskGroup], bench: Path, out: Path, agents: list[str], **kw: object):  # type: ignore[no-untyped-def]
    config = make_config(bench, groups, agents, ["reliable", "misaligned"], **kw)  # type: ignore[arg-type]
    return evaluate(groups, config, out)


def test_a_context_overflow_ends_the_sample_not_the_run(
    groups: list[TaskGroup], bench: Path, tmp_path: Path
) -> None:
    summary = _run(groups, bench, tmp_path / "run", ["mockctx/a,cache=false"])
    records, _ = read_log(tmp_path / "run" / "samples.jsonl")
    assert len(records) == len(summary.records) == 2 * len(groups)  # every sample recorded
    for record in records:
        assert (record.status, record.result, record.correct) == (
            "context_exhausted",
            "context_exhausted",
            False,
        )
        assert record.rounds == 2 and record.answer is None
        assert record.end_detail and "maximum context length" in record.end_detail
        first, second = record.trace
        # what the model wrote is kept with the round, the invalid one included
        assert first.action == "invalid" and first.output is not None
        assert first.output.text is not None and "think about it" in first.output.text.text
        assert second.output is not None and second.output.tool_calls[0].function == "wait"
        assert record.behaviour.invalid_actions == 1
    (metrics, *_) = compute_metrics(records)
    assert metrics.context_exhausted == metrics.samples == len(groups)
    assert (metrics.invalid_actions, metrics.actions) == (len(groups), 2 * len(groups))
    assert metrics.invalid_rate == 0.5


def test_the_cli_and_the_report_show_invalid_actions_and_context_exhaustion(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["eval", str(bench), "--agent", "mockctx/b,cache=false", "--setting", "reliable"]
    result = run_cli(capsys, *args, "--out", str(out), "--no-progress")
    assert result.code == 0, result.err
    header = next(line for line in result.out.splitlines() if "accuracy" in line)
    assert "inv" in header and "ctx" in header
    row = next(line for line in result.out.splitlines() if "mockctx/b" in line)
    assert "50%" in row  # one invalid action of two rounds in each sample
    files = write_report(out, tmp_path / "report", plots=False)
    text = files.markdown.read_text()
    header = next(line for line in text.splitlines() if "| redundant contacts" in line)
    assert "invalid actions" in header and "context exhausted" in header
    assert "50.0% (" in text
    assert "(no answer: context exhausted)" in text


async def test_default_concurrency_follows_the_smallest_connection_limit(
    groups: list[TaskGroup], bench: Path
) -> None:
    def config(*agents: str, colleague: str = "scripted"):  # type: ignore[no-untyped-def]
        return make_config(bench, groups, list(agents), colleague=colleague)

    assert await default_concurrency(config("builtin/careful")) == 8
    assert await default_concurrency(config("builtin/careful", "mockslot/x")) == 1
    assert await default_concurrency(config("mockslot/y,max_connections=3")) == 3
    assert await default_concurrency(config("mockctx/z,max_connections=20")) == 8
    assert await default_concurrency(config("builtin/naive", colleague="mockslot/c")) == 1


def test_max_connections_does_not_change_a_sample_s_identity(
    groups: list[TaskGroup], bench: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = _run(groups, bench, out, ["mockslot/x,cache=false"])
    again = _run(groups, bench, out, ["mockslot/x,cache=false,max_connections=2"])
    assert first.ran > 0 and again.ran == 0 and again.reused == first.ran  # resumed, not redone
    assert {r.agent for r in again.records} == {"mockslot/x,cache=false"}


def _record(groups: list[TaskGroup], **fields: object) -> SampleRecord:
    base = {
        "key": "k",
        "group_id": groups[0].id,
        "group_hash": "h",
        "setting": "misaligned",
        "agent": "a/b",
        "seed": 0,
        "budget": 20,
        "status": "answered",
        "result": "wrong_answer",
        "correct": False,
        "gold": groups[0].gold,
        "rounds": 1,
        "behaviour": {},
    }
    return SampleRecord.model_validate({**base, **fields})


def test_configurations_are_never_merged(groups: list[TaskGroup]) -> None:
    samples = [
        _record(groups, key="1"),
        _record(groups, key="2", budget=5),
        _record(groups, key="3", colleague="openai/gpt-4.1-mini"),
        _record(groups, key="4", correct=True, result="correct", epoch=2),
        # the same model writing the replies itself: other colleagues
        _record(groups, key="5", colleague="openai/gpt-4.1-mini", colleague_mode="policy"),
    ]
    metrics = compute_metrics(samples)
    assert [(m.agent, m.samples) for m in metrics] == [
        ("a/b", 2),
        ("a/b (budget 5)", 1),
        ("a/b (colleagues openai/gpt-4.1-mini)", 1),
        ("a/b (policy colleagues openai/gpt-4.1-mini)", 1),
    ]


def test_wrong_answers_have_an_arm_and_are_spread_over_configurations(
    groups: list[TaskGroup],
) -> None:
    from uncobench_z3.report._tables import MAX_WRONG_EXAMPLES, wrong_examples

    many = [_record(groups, key=f"a{i}", agent="a/first") for i in range(40)]
    few = [_record(groups, key="b", agent="z/last", intervention="diagnosis")]
    # a colleague that broke its policy: not scored, so not a wrong answer of the agent's
    broken = {"replies": 1, "unfaithful": 1, "incomplete": 0}
    apart = [_record(groups, key="c", agent="p/olicy", colleague_policy=broken)]
    table = wrong_examples(many + few + apart)
    assert table.headers[:3] == ["agent", "setting", "arm"]
    assert len(table.rows) == MAX_WRONG_EXAMPLES
    assert ["z/last", "Misaligned", "diagnosis"] in [row[:3] for row in table.rows]
    assert "41 wrong answers" in table.caption
    assert all(row[0] != "p/olicy" for row in table.rows)


def test_intervention_panels_keep_configurations_apart(groups: list[TaskGroup]) -> None:
    from uncobench_z3.report._interventions import intervention_panels

    samples = [
        _record(groups, key="1"),
        _record(groups, key="2", intervention="diagnosis"),
        _record(groups, key="3", budget=5),  # one arm only: no panel of its own
    ]
    (panel,) = intervention_panels(samples)
    assert (panel.agent, panel.arms) == ("a/b", ["none", "diagnosis"])
    assert [(m.agent, m.samples) for m in panel.cells] == [("a/b", 1), ("a/b", 1)]


def test_the_leaderboard_ranks_each_configuration_on_its_own_samples(
    groups: list[TaskGroup], bench: Path, tmp_path: Path
) -> None:
    from uncobench_z3.report import build_leaderboard

    for name, budget in (("default", 20), ("short", 5)):
        config = make_config(bench, groups, ["builtin/careful"], ["reliable"], budget=budget)
        evaluate(groups, config, tmp_path / name)
    board = build_leaderboard([tmp_path / "default", tmp_path / "short"])
    rows = {row.agent: row for row in board.rows}
    assert set(rows) == {"builtin/careful", "builtin/careful (budget 5)"}
    assert {row.samples for row in rows.values()} == {len(groups)}


def test_the_leaderboard_does_not_score_samples_whose_policy_colleague_broke_it(
    groups: list[TaskGroup], bench: Path, tmp_path: Path
) -> None:
    """Such a sample is reported apart in every cell; the overall figures left it in, as a
    wrong answer when the broken policy misled the agent."""
    import json

    from uncobench_z3.evaluation import SAMPLES_FILE
    from uncobench_z3.report import build_leaderboard

    config = make_config(bench, groups, ["builtin/careful"], ["reliable"])
    evaluate(groups, config, tmp_path / "run")
    log = tmp_path / "run" / SAMPLES_FILE
    records = [json.loads(line) for line in log.read_text().splitlines()]
    broken = {"replies": 2, "unfaithful": 1, "incomplete": 0}
    records[0].update(colleague_policy=broken, correct=False, result="wrong_answer")
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    (row,) = build_leaderboard([tmp_path / "run"]).rows
    assert row.settings["reliable"].accuracy == 1  # the cell leaves it out ...
    assert (row.accuracy, row.samples) == (1, len(groups) - 1)  # ... and so does the row


@pytest.mark.parametrize(
    ("mode", "reader"), [("phrase", "rules"), ("policy", "rules"), ("phrase", "model")]
)
def test_a_local_colleague_gets_the_providers_default_reply_limit(
    groups: list[TaskGroup], bench: Path, mode: str, reader: str
) -> None:
    """``--colleague-model local/smollm2`` is called with the 512-token limit an agent of that
    name gets (a policy colleague without one wrote until its context was full, past the 300 s
    timeout, and every retry queued behind the abandoned reply); a limit in the name wins, and
    run.json records the limit used. Making the models starts no server."""
    from uncobench_z3.evaluation._plan import generation_record

    for name, limit in [("local/smollm2", 512), ("local/smollm2,max_tokens=80", 80)]:
        environment = Environment(groups[0], "missed", colleague=name, colleague_mode=mode,  # type: ignore[arg-type]
                                  followup_reader=reader)  # type: ignore[arg-type]  # fmt: skip
        caller = environment.policy if mode == "policy" else environment.phraser
        assert caller is not None and caller.ref.config().max_tokens == limit  # type: ignore[attr-defined]
        if reader == "model":
            assert environment.reader is not None
            assert environment.reader.ref.config().max_tokens == limit
        config = make_config(bench, groups, ["builtin/naive"], colleague=name, colleague_mode=mode)  # type: ignore[arg-type]
        assert generation_record(config)[f"colleague:{name}"]["max_tokens"] == limit
    ref = Environment(groups[0], "missed", colleague="mock/echo", colleague_mode=mode).phraser  # type: ignore[arg-type]
    assert ref is None or ref.ref.config().max_tokens is None  # type: ignore[attr-defined]
