"""UNCOBENCH inside inspect_ai: the task, its tools and scorer, the default benchmark, and
``import-inspect``. Everything runs offline: the evaluated model is inspect's ``mockllm/model``
with scripted outputs (each carries its usage, so mockllm never counts tokens with tiktoken,
which would download its encoding), or a built-in policy acting through the same tools."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Epochs, eval, score
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import generate
from inspect_ai.tool import ToolChoice, ToolInfo

from tests.cli_helpers import run_cli
from tests.policy_helpers import oracle
from uncobench_z3.construct import MANIFEST_FILE, load_groups
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    Environment,
    SampleRecord,
    compute_metrics,
    conversation_messages,
    example_benchmark,
    make_config,
    plan_jobs,
    read_log,
    run_evaluation,
)
from uncobench_z3.integrations.inspect import (
    RECORD_KEY,
    STORE_KEY,
    default_benchmark,
    default_benchmark_dir,
    read_inspect_log,
    uncobench,
)
from uncobench_z3.models import ChatMessage as ProjectMessage
from uncobench_z3.models import register_provider
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.report import METRICS_FILE
from uncobench_z3.settings import TaskGroup

GROUPS = 2
EPOCHS = 2


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("bench") / "bench", groups=GROUPS)


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


def records_of(log: EvalLog) -> list[SampleRecord]:
    """The sample records an inspect log holds (score metadata + the store's trace)."""
    found = []
    for sample in log.samples or []:
        (score,) = (sample.scores or {}).values()
        assert score.metadata is not None
        trace = sample.store[STORE_KEY]["outcome"]["trace"]
        found.append(SampleRecord.model_validate({**score.metadata[RECORD_KEY], "trace": trace}))
    return found


def comparable(records: list[SampleRecord]) -> list[str]:
    """Records up to order and wall time (the only field that differs between re-runs)."""
    return sorted(r.model_dump_json(exclude={"elapsed_seconds"}) for r in records)


def metric_values(log: EvalLog, reducer: str | None) -> dict[str, float]:
    """The metrics of the scores reduced with ``reducer`` (None: a run of one epoch)."""
    assert log.results is not None
    (scores,) = [s for s in log.results.scores if s.reducer == reducer]
    return {name: metric.value for name, metric in scores.metrics.items()}


@pytest.fixture(scope="module")
def builtin_logs(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    """The careful and the naive policy through inspect: 2 groups x 5 settings x 2 epochs."""
    log_dir = tmp_path_factory.mktemp("logs")
    tasks = [uncobench(bench=str(bench), agent=a) for a in ("builtin/careful", "builtin/naive")]
    logs = eval(
        tasks,
        model="mockllm/model",
        epochs=Epochs(EPOCHS, ["mean", "pass_at_2"]),
        log_dir=str(log_dir),
        display="none",
    )
    found = {str(log.eval.task_args["agent"]): log for log in logs}
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return found


def test_the_careful_policy_through_inspect_scores_what_the_runner_scores(
    builtin_logs: dict[str, EvalLog], groups: list[TaskGroup], bench: Path, tmp_path: Path
) -> None:
    """Same groups, agents and epochs: the runner's records and inspect's are identical (up
    to wall time), key, score, attribution, justification and trace included."""
    config = make_config(bench, groups, ["builtin/careful", "builtin/naive"], epochs=EPOCHS)
    summary = asyncio.run(run_evaluation(groups, config, tmp_path / "run"))
    for agent, log in builtin_logs.items():
        ours = [r for r in summary.records if r.agent == agent]
        assert comparable(records_of(log)) == comparable(ours)
    naive = [r for r in summary.records if r.agent == "builtin/naive"]
    assert not all(r.correct for r in naive)  # the comparison covers wrong answers too


def test_missed_wait_reaches_the_environment_as_in_the_runner(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    """``missed_wait`` is the runner's ``--missed-wait``: same records, key included."""
    (log,) = eval(
        uncobench(bench=str(bench), setting="missed", agent="builtin/patient", missed_wait=2),
        model="mockllm/model",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    config = make_config(bench, groups, ["builtin/patient"], ["missed"], missed_wait=2)
    summary = asyncio.run(run_evaluation(groups, config, tmp_path / "run"))
    assert comparable(records_of(log)) == comparable(summary.records)
    plain = make_config(bench, groups, ["builtin/patient"], ["missed"])
    default = asyncio.run(run_evaluation(groups, plain, tmp_path / "default"))
    assert not {r.key for r in default.records} & {r.key for r in summary.records}


def test_inspect_metrics_are_the_projects_metrics(builtin_logs: dict[str, EvalLog]) -> None:
    """accuracy per setting (reducer mean) and pass@2 (reducer pass_at_2) equal the project's
    figures over the same records."""
    for log in builtin_logs.values():
        metrics = {m.setting: m for m in compute_metrics(records_of(log))}
        means, pass_at = metric_values(log, "mean"), metric_values(log, "pass_at_2")
        for setting, m in metrics.items():
            assert m.accuracy is not None
            assert means[setting] == pytest.approx(float(m.accuracy), abs=1e-12)
            assert pass_at[setting] == pytest.approx(float(m.pass_at_k[2]), abs=1e-12)
        records = records_of(log)
        overall = Fraction(sum(r.correct for r in records), len(records))
        assert means["accuracy"] == pytest.approx(float(overall), abs=1e-12)
    naive = metric_values(builtin_logs["builtin/naive"], "mean")
    assert min(naive[s] for s in ("misaligned", "incomplete", "missed")) < 1  # not all 1s


def test_a_logged_episode_scores_again_from_its_store(
    builtin_logs: dict[str, EvalLog], bench: Path
) -> None:
    """``inspect score``: the scorer needs only the logged state (the episode in the store)."""
    log = builtin_logs["builtin/naive"]
    task = uncobench(bench=str(bench), agent="builtin/naive")
    assert task.scorer is not None
    rescored = score(log, task.scorer, action="overwrite", display="none")
    assert comparable(records_of(rescored)) == comparable(records_of(log))
    # what is scored is the store: an episode edited there to end without an answer is wrong
    edited = log.model_copy(deep=True)
    assert edited.samples is not None
    first = next(s for s in edited.samples if s.scores["uncobench_scorer"].value == "C")  # type: ignore[index]
    first.store[STORE_KEY]["outcome"].update(answer=None, status="budget_exhausted")
    rescored = score(edited, task.scorer, action="overwrite", display="none")
    assert rescored.samples is not None
    again = next(s for s in rescored.samples if (s.id, s.epoch) == (first.id, first.epoch))
    assert again.scores is not None and again.scores["uncobench_scorer"].value == "I"
    assert again.scores["uncobench_scorer"].metadata["result"] == "budget_exhausted"  # type: ignore[index]


def test_samples_carry_the_group_setting_and_gold(builtin_logs: dict[str, EvalLog]) -> None:
    log = builtin_logs["builtin/careful"]
    assert log.samples is not None
    sample = log.samples[0]
    assert sample.id == f"{sample.metadata['group_id']}:{sample.metadata['setting']}:none"
    assert set(sample.metadata) >= {"group_id", "group_hash", "setting", "arm", "gold"}
    (score,) = (sample.scores or {}).values()
    assert score.metadata is not None
    assert score.metadata["rounds"] == score.metadata[RECORD_KEY]["rounds"] >= 1
    assert score.metadata["justification"] in ("justified", "lucky", "unknown")
    wrong = [
        s
        for s in builtin_logs["builtin/naive"].samples or []
        if (s.scores or {})["uncobench_scorer"].value == "I"
    ]
    assert wrong
    labels = {s.scores["uncobench_scorer"].metadata["attribution"] for s in wrong}  # type: ignore[index]
    assert labels <= {"integration_error", "misled", "gathering_failure", "unknown"}
    assert labels - {"unknown"}


def test_import_inspect_round_trips_to_report_and_compare(
    builtin_logs: dict[str, EvalLog], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [log.location for log in builtin_logs.values()]
    out = tmp_path / "runs"
    result = run_cli(capsys, "import-inspect", *paths, "--out", str(out))
    assert result.code == 0, result.err
    umask = os.umask(0)
    os.umask(umask)
    for run in (p for p in out.iterdir() if p.is_dir()):  # not private (mkdtemp: 0700)
        assert run.stat().st_mode & 0o777 == 0o777 & ~umask
    result = run_cli(capsys, "report", str(out), "--out", str(tmp_path / "report"))
    assert result.code == 0, result.err
    document = json.loads((tmp_path / "report" / METRICS_FILE).read_text())
    cells = {(c["agent"], c["setting"]): c for c in document["results"]}
    for agent, log in builtin_logs.items():
        for setting, value in metric_values(log, "mean").items():
            if setting in ("accuracy", "stderr"):
                continue
            assert float(Fraction(cells[(agent, setting)]["accuracy"])) == pytest.approx(value)
    result = run_cli(
        capsys, "compare", str(out), "--a", "builtin/careful", "--b", "builtin/naive", "--json"
    )
    assert result.code == 0, result.err
    # importing the same logs again replaces their runs; another folder in the way is refused
    assert run_cli(capsys, "import-inspect", *paths, "--out", str(out)).code == 0
    for log in builtin_logs.values():
        records, _ = read_log(out / Path(log.location).stem / "samples.jsonl")
        assert len(records) == len(log.samples or []) == (GROUPS * 5 - 1) * EPOCHS  # no Mixed
    (out / "stray").mkdir()
    clash = tmp_path / "clash"
    (clash / Path(paths[0]).stem).mkdir(parents=True)
    result = run_cli(capsys, "import-inspect", paths[0], "--out", str(clash))
    assert result.code == 2 and "does not hold an import" in result.err


def test_import_inspect_refuses_what_is_not_a_log_of_the_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.eval"
    junk.write_text("not a zip")
    other = tmp_path / "manifest.json"  # JSON, but another document: pydantic's many lines
    other.write_text(json.dumps({"kind": "uncobench-benchmark", "version": "0.1.0"}))
    for path in (junk, other):
        result = run_cli(capsys, "import-inspect", str(path), "--out", str(tmp_path / "out"))
        assert result.code == 2
        assert "not an inspect_ai log" in result.err and "Traceback" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert not (tmp_path / "out").exists()  # checked before anything is written


# -- a scripted model through the inspect agent loop -------------------------------------------
Script = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]


def scripted(steps: list[Callable[[list[ToolInfo]], ModelOutput]], seen: list[Any]) -> Script:
    """A mockllm output function: step n answers the n-th call; every output has its usage."""

    def output(
        messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, _: GenerateConfig
    ) -> ModelOutput:
        seen.append((messages, tools, choice))
        made = steps[len(seen) - 1](tools)
        made.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return made

    return output


def roles_of(tools: list[ToolInfo]) -> list[str]:
    (ask,) = [t for t in tools if t.name == "ask_colleagues"]
    items = ask.parameters.properties["requests"].items
    assert items is not None and items.properties is not None
    enum = items.properties["role"].enum
    assert enum is not None
    return [str(role) for role in enum]


def test_a_model_plays_the_protocol_through_inspect_tools(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    """Multi-role ask in one call, wait, a call the schema refuses and a reply without a tool
    call (invalid rounds, charged), then two calls in one message (the first is the action)."""
    group = groups[0]
    gold = group.gold
    answer = {"decision": gold.decision, "candidate": gold.candidate_name,
              "number": gold.number, "unit": gold.unit}  # fmt: skip
    call = ModelOutput.for_tool_call
    two_calls = call("mockllm/model", "submit_answer", answer)
    two_calls.choices[0].message.tool_calls.append(  # type: ignore[union-attr]
        call("mockllm/model", "wait", {}).choices[0].message.tool_calls[0]  # type: ignore[index]
    )
    steps: list[Callable[[list[ToolInfo]], ModelOutput]] = [
        lambda tools: call(
            "mockllm/model",
            "ask_colleagues",
            {
                "requests": [
                    {"role": r, "question": "Please send all your records."}
                    for r in roles_of(tools)[:2]
                ]
            },
        ),
        lambda tools: call("mockllm/model", "wait", {}),
        lambda tools: call("mockllm/model", "ask_colleagues", {"requests": "everyone"}),
        lambda tools: ModelOutput.from_content("mockllm/model", "Let me think about it."),
        lambda tools: two_calls,
    ]
    seen: list[Any] = []
    model = get_model("mockllm/model", custom_outputs=scripted(steps, seen), memoize=False)
    (log,) = eval(
        uncobench(bench=str(bench), setting="reliable"),
        model=model,
        sample_id=f"{group.id}:reliable:none",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    (record,) = records_of(log)
    assert [r.action for r in record.trace] == ["ask", "wait", "invalid", "invalid", "answer"]
    assert record.correct and record.result == "correct" and record.rounds == 5
    assert record.agent == "inspect/mockllm/model"
    assert record.behaviour.contacts == 2 and record.behaviour.waits == 1
    assert record.behaviour.invalid_actions == 2
    assert "is not of type 'array'" in (record.trace[2].error or "")
    assert record.trace[3].error == "no tool call: use one of the tools"
    assert record.usage["agent"].input_tokens == 500 and record.usage["agent"].output_tokens == 50
    # the model saw the project's three tools, had to call one, and read each round's result
    messages, tools, choice = seen[-1]
    assert sorted(t.name for t in tools) == ["ask_colleagues", "submit_answer", "wait"]
    assert choice == "any"
    results = [m for m in messages if isinstance(m, ChatMessageTool)]
    assert [r.text.splitlines()[0] for r in results] == [
        "Round 1 done; 19 rounds left.",
        "Round 2 done; 18 rounds left.",
        "Round 3 done; 17 rounds left.",
    ]
    assert "Error:" in results[2].text and results[2].error is None
    # and started from the very messages the project's LLM agents start from
    project = conversation_messages(Environment(group, "reliable").conversation)
    assert [(m.role, m.text) for m in messages[:2]] == [(m.role, m.content) for m in project]


def test_another_inspect_solver_can_drive_the_episode_tools(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    """The setup solver offers the tools in ``state.tools``: inspect's own ``generate()``
    loop plays the episode with them, stops when the answer ends it, and is scored."""
    group = groups[0]
    gold = group.gold
    answer = {"decision": gold.decision, "candidate": gold.candidate_name,
              "number": gold.number, "unit": gold.unit}  # fmt: skip
    steps: list[Callable[[list[ToolInfo]], ModelOutput]] = [
        lambda tools: ModelOutput.for_tool_call("mockllm/model", "wait", {}),
        lambda tools: ModelOutput.for_tool_call("mockllm/model", "submit_answer", answer),
        lambda tools: ModelOutput.from_content("mockllm/model", "called after the end"),
    ]
    seen: list[Any] = []
    model = get_model("mockllm/model", custom_outputs=scripted(steps, seen), memoize=False)
    (log,) = eval(
        uncobench(bench=str(bench), setting="reliable"),
        model=model,
        solver=generate(),
        sample_id=f"{group.id}:reliable:none",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    (record,) = records_of(log)
    assert [r.action for r in record.trace] == ["wait", "answer"] and record.correct
    assert len(seen) == 2  # the finished episode completed the sample: no third call


def test_a_model_that_never_answers_runs_out_of_rounds(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    steps = [lambda tools: ModelOutput.from_content("mockllm/model", "Hmm.")] * 3
    model = get_model("mockllm/model", custom_outputs=scripted(steps, []), memoize=False)
    (log,) = eval(
        uncobench(bench=str(bench), setting="missed", budget=3),
        model=model,
        sample_id=f"{groups[0].id}:missed:none",
        log_dir=str(tmp_path),
        display="none",
    )
    (record,) = records_of(log)
    assert record.result == "budget_exhausted" and record.rounds == 3
    assert record.attribution is not None and record.attribution.label == "gathering_failure"
    assert log.samples is not None and log.samples[0].scores is not None
    assert log.samples[0].scores["uncobench_scorer"].value == "I"


def _echo_records(
    messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, _: GenerateConfig
) -> ModelOutput:
    """A colleague model that says exactly the records it was asked to convey."""
    prompt = messages[-1].text
    records = prompt.split("nothing else:\n\n", 1)[1].split("\n\nRules:", 1)[0]
    output = ModelOutput.from_content("mockllm/colleague", f"Here you are.\n{records}")
    output.usage = ModelUsage(input_tokens=50, output_tokens=20, total_tokens=70)
    return output


def test_llm_colleagues_are_the_inspect_model_role_colleague(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    colleague = get_model("mockllm/colleague", custom_outputs=_echo_records, memoize=False)
    (log,) = eval(
        uncobench(
            bench=str(bench), setting="misaligned", agent="builtin/careful", colleague="model"
        ),
        model="mockllm/model",
        model_roles={"colleague": colleague},
        sample_id=f"{groups[0].id}:misaligned:none",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    (record,) = records_of(log)
    assert record.colleague == "inspect/mockllm/colleague"
    checks = [reply.fidelity for rnd in record.trace for reply in rnd.replies if reply.text]
    assert checks and all(c is not None and c.passed for c in checks)
    assert all(reply.text.startswith("Here you are.") for rnd in record.trace  # type: ignore[union-attr]
               for reply in rnd.replies if reply.text)  # fmt: skip
    assert record.usage["colleagues"].output_tokens == 20 * len(checks)
    assert record.correct  # the careful policy recovers from the misaligned reply as phrased


def _written(record: SampleRecord) -> list[list[tuple[str | None, Any]]]:
    """Each round's colleague replies: what the policy colleague wrote, and its verdict."""
    return [
        [(r.text, r.policy.verdict if r.policy else None) for r in rnd.replies]
        for rnd in record.trace
    ]


def test_policy_colleagues_are_the_inspect_model_role_as_in_the_runner(
    bench: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    """``colleague_mode=policy``: the ``colleague`` role writes every reply under its policy,
    judged against the scripted reference; given the same colleague replies, the episodes,
    verdicts and scores are the runner's with ``--colleague-mode policy``."""
    group, settings = groups[0], ("misaligned", "missed")
    respond = oracle(group)

    def colleague_output(
        messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, _: GenerateConfig
    ) -> ModelOutput:
        sent = [ProjectMessage(role=m.role, content=m.text) for m in messages]  # type: ignore[arg-type]
        output = ModelOutput.from_content("mockllm/colleague", respond(sent, []))
        output.usage = ModelUsage(input_tokens=50, output_tokens=20, total_tokens=70)
        return output

    colleague = get_model("mockllm/colleague", custom_outputs=colleague_output, memoize=False)
    task = uncobench(bench=str(bench), setting=",".join(settings), agent="builtin/careful",
                     colleague="model", colleague_mode="policy")  # fmt: skip
    (log,) = eval(
        task,
        model="mockllm/model",
        model_roles={"colleague": colleague},
        sample_id=[f"{group.id}:{s}:none" for s in settings],
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    ours = {r.setting: r for r in records_of(log)}
    checks = [reply.policy for r in ours.values() for rnd in r.trace for reply in rnd.replies]
    assert checks and all(c is not None and c.model == "inspect/mockllm/colleague" for c in checks)
    for record in ours.values():
        assert (record.colleague, record.colleague_mode) == ("inspect/mockllm/colleague", "policy")
        assert record.colleague_policy is not None and not record.colleague_policy.broken
        calls = sum(reply.policy is not None for rnd in record.trace for reply in rnd.replies)
        assert record.usage["colleagues"].output_tokens == 20 * calls  # one call per reply

    # the runner, its policy colleague served the same replies by the project's mock provider
    register_provider("inspectpolicy", lambda rest, **_: MockProvider("inspectpolicy", respond))
    config = make_config(bench, groups, ["builtin/careful"], list(settings), limit=1,
                         colleague="inspectpolicy/x,cache=false",
                         colleague_mode="policy")  # fmt: skip
    summary = asyncio.run(run_evaluation(groups, config, tmp_path / "run"))
    runner = {r.setting: r for r in summary.records}
    assert runner.keys() == ours.keys()
    for setting, record in ours.items():
        theirs = runner[setting]
        assert (record.result, record.answer, record.rounds, record.colleague_policy) == (
            theirs.result, theirs.answer, theirs.rounds, theirs.colleague_policy
        )  # fmt: skip
        assert _written(record) == _written(theirs)
    silences = [r for rnd in ours["missed"].trace for r in rnd.replies if r.text is None]
    assert silences and all(r.policy and r.policy.kept for r in silences)  # the owed silence
    assert read_inspect_log(Path(log.location)).config.colleague_mode == "policy"


def test_bad_task_parameters_fail_before_any_work(bench: Path) -> None:
    for options in (
        {"setting": "sometimes"},
        {"arm": "loud"},
        {"budget": 0},
        {"limit": 0},
        {"agent": "openai/gpt-4o"},
        {"colleague": "chatty"},
        {"tool_choice": "required"},
        {"missed_wait": -1},
        {"colleague_mode": "loose"},
        {"colleague_mode": "policy"},  # needs a colleague model
        {"bench": str(bench / "missing")},
    ):
        with pytest.raises(ConfigError):
            uncobench(**{"bench": str(bench), **options})  # type: ignore[arg-type]


def test_task_parameters_of_the_wrong_type_are_named(bench: Path) -> None:
    # `-T limit=abc` reaches the task as the string 'abc' (inspect reads -T values as YAML),
    # `-T budget=true` as True: each is one ConfigError naming its parameter, not a
    # TypeError from a comparison nor a run of one round
    for name, value in (("limit", "abc"), ("budget", "ten"), ("budget", True),
                        ("seed", "x"), ("missed_wait", 1.5), ("colleague", 5)):  # fmt: skip
        with pytest.raises(ConfigError, match=name):
            uncobench(bench=str(bench), **{name: value})  # type: ignore[arg-type]


def test_a_group_no_episode_can_be_scored_by_fails_when_the_task_is_made() -> None:
    """As ``uncobench eval`` refuses it: a group whose gold answer is not the one its records
    give (which verify refutes) would score every right answer wrong."""
    wrong = Path(__file__).parent.parent / "examples/groups/invalid/wrong_gold.group.json"
    with pytest.raises(ConfigError, match="is not the one its records give"):
        uncobench(bench=str(wrong), agent="builtin/careful")


def test_arms_and_settings_choose_the_samples_the_runner_plans(
    bench: Path, groups: list[TaskGroup]
) -> None:
    task = uncobench(bench=str(bench), setting="misaligned, reliable", arm="action,none")
    config = make_config(bench, groups, ["builtin/careful"], ["reliable", "misaligned"],
                         interventions=["none", "action"])  # fmt: skip
    jobs, _ = plan_jobs(groups, config)
    assert [s.id for s in task.dataset] == [
        f"{j.group.id}:{j.setting}:{j.intervention}" for j in jobs
    ]
    arms = {str(s.id).split(":", 1)[1] for s in task.dataset}
    assert arms == {"reliable:none", "misaligned:none", "misaligned:action"}


# -- the default benchmark -----------------------------------------------------------------------
def test_the_default_benchmark_is_built_once_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path))
    folder, groups = default_benchmark(groups=2)
    assert folder == default_benchmark_dir(groups=2)
    assert folder.parent == tmp_path / "benchmarks" and len(groups) == 2
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["config_hash"].startswith(folder.name)  # keyed by the build configuration
    stamp = (folder / MANIFEST_FILE).stat().st_mtime_ns
    again, same = default_benchmark(groups=2)
    assert again == folder and same == groups
    assert (folder / MANIFEST_FILE).stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no scratch left


def test_two_processes_building_the_default_benchmark_at_once(tmp_path: Path) -> None:
    code = (
        "from uncobench_z3.integrations.inspect._bench import default_benchmark;"
        "folder, groups = default_benchmark(groups=1); print(folder, len(groups))"
    )
    env = {**os.environ, "UNCOBENCH_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300)[0].strip() for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert outputs[0] == outputs[1] and outputs[0].endswith(" 1")
    assert len(list((tmp_path / "benchmarks").iterdir())) == 1


# -- installation and layering ---------------------------------------------------------------------
def test_inspect_eval_finds_the_task_by_its_registered_name(tmp_path: Path) -> None:
    """The entry point: ``inspect eval uncobench_z3/uncobench`` after ``pip install``."""
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "UNCOBENCH_CACHE_DIR": str(tmp_path / "cache")}
    bench = example_benchmark(tmp_path / "bench", groups=1)
    run = subprocess.run(
        [str(inspect), "eval", "uncobench_z3/uncobench", "--model", "mockllm/model",
         "-T", f"bench={bench}", "-T", "agent=builtin/careful", "-T", "setting=reliable",
         "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "uncobench_z3/uncobench" and log.status == "success"
    assert metric_values(log, None)["accuracy"] == 1.0


BLOCK_INSPECT = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'inspect_ai' or name.startswith('inspect_ai.'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "sys.meta_path.insert(0, Block())\n"
)


def test_the_core_needs_no_inspect_ai(tmp_path: Path) -> None:
    """With inspect_ai unimportable, the package and the core commands work (every command
    module is loaded by the CLI), and import-inspect says what to install (one line, exit
    2)."""
    bench = example_benchmark(tmp_path / "bench", groups=1)
    commands = [
        ["eval", str(bench), "--agent", "builtin/careful", "--setting", "reliable",
         "--out", str(tmp_path / "run"), "--no-progress"],
        ["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")],
        ["import-inspect", str(bench / "manifest.json"), "--out", str(tmp_path / "out")],
    ]  # fmt: skip
    code = BLOCK_INSPECT + (
        "import uncobench_z3, uncobench_z3.integrations\n"
        "from uncobench_z3.cli import main\n"
        "for command in " + repr(commands) + ":\n"
        "    try:\n"
        "        main(command)\n"
        "    except SystemExit as exit:\n"
        "        print('exit', exit.code, flush=True)\n"
        "print('loaded', any(m.startswith('inspect_ai') for m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    exits = [line for line in run.stdout.splitlines() if line.startswith(("exit", "loaded"))]
    assert exits == ["exit 0", "exit 0", "exit 2", "loaded False"], run.stderr[-2000:]
    assert "pip install 'uncobench-z3[inspect]'" in run.stderr and "Traceback" not in run.stderr
