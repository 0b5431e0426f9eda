"""Role-agent validity: the programmatic judge, the LLM judge over a mock model, the report."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import Style, build_benchmark, load_groups, statement_text
from uncobench_z3.errors import ConfigError, ResumeError
from uncobench_z3.evaluation import (
    JUDGE_FILE,
    SAMPLES_FILE,
    GroupJudge,
    GroupJudges,
    JudgeLine,
    ReplyRecord,
    ReplyRef,
    SampleRecord,
    evaluate,
    judge_agreement,
    judge_messages,
    judge_reply,
    judge_run,
    make_config,
    read_judgements,
    read_log,
    sample_replies,
    validity_cells,
)
from uncobench_z3.models import ChatMessage, Model, ModelOutput, ToolCall, ToolDef, get_model
from uncobench_z3.report import read_metrics, write_report
from uncobench_z3.settings import StatedValue, TaskGroup
from uncobench_z3.spec import TypedFact, Value, to_json_scalar

AGENTS = ["builtin/careful", "builtin/naive"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("judge") / "bench"
    build_benchmark(out, groups=4, seed=1, workers=1)
    return out


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


@pytest.fixture(scope="module")
def run(bench: Path, groups: list[TaskGroup], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("judge-run") / "run"
    evaluate(groups, make_config(str(bench), groups, AGENTS), out)
    return out


@pytest.fixture(scope="module")
def samples(run: Path) -> list[SampleRecord]:
    return read_log(run / SAMPLES_FILE)[0]


@pytest.fixture(scope="module")
def judges(groups: list[TaskGroup]) -> GroupJudges:
    return GroupJudges(groups)


def given(samples: list[SampleRecord]) -> list[ReplyRef]:
    return [ref for ref in sample_replies(samples) if ref.reply.text is not None]


def find(
    samples: list[SampleRecord], judges: GroupJudges, defect: str
) -> tuple[GroupJudge, ReplyRecord]:
    """A reply that carried ``defect`` and states more than one record."""
    for ref in given(samples):
        if defect in ref.reply.defects and len(ref.reply.stated) > 1:
            judge = judges.get(ref.sample.group_hash)
            assert judge is not None
            return judge, ref.reply
    raise AssertionError(f"no {defect} reply in the run")


def another_value(fact: TypedFact, value: Value) -> Value:
    """A neighbour of ``value`` in the fact's domain."""
    if fact.type == "bool":
        return not value
    code, (_, high) = fact.code(value), fact.code_range()
    return fact.value_of(int(code) + 1 if code < high else int(code) - 1)


def with_text(reply: ReplyRecord, text: str) -> ReplyRecord:
    return reply.model_copy(update={"text": text})


# -- the programmatic judge -------------------------------------------------------------------
def test_scripted_replies_are_faithful_and_complete(
    samples: list[SampleRecord], judges: GroupJudges, groups: list[TaskGroup]
) -> None:
    refs = given(samples)
    kinds = {kind for ref in refs for kind in ref.reply.defects}
    assert {"misaligned", "incomplete"} <= kinds  # other contexts and ranges are covered
    for ref in refs:
        judge = judges.get(ref.sample.group_hash)
        assert judge is not None
        verdict = judge.judge(ref.reply)
        assert verdict.fidelity and verdict.coverage == 1, verdict.problems
        assert verdict.statements == verdict.required == len(ref.reply.stated) > 0
        assert not verdict.unverifiable and not verdict.echo
    cells = validity_cells(samples, GroupJudges(groups))
    assert {(c.colleague, c.mode) for c in cells} == {("scripted", "scripted")}
    assert {(c.agent, c.setting) for c in cells} == {(s.agent, s.setting) for s in samples}
    missed = sum(ref.reply.text is None for ref in sample_replies(samples))
    assert missed > 0
    assert sum(c.judged for c in cells) == sum(c.faithful for c in cells) == len(refs)
    assert sum(c.full_coverage for c in cells) == len(refs)
    assert sum(c.missed for c in cells) == missed
    for cell in cells:
        assert cell.fidelity in (1, None) and cell.mean_coverage in (1, None)
        assert cell.unverifiable_lines == 0 and cell.unmatched == 0 and cell.breached == 0


def test_a_changed_value_is_a_contradiction(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "misaligned")
    task, style = judge.task, judge.rendered.style
    item = next(s for s in reply.stated if s.is_exact)
    record = task.values[(item.candidate, item.fact)]
    if item.context != task.facts[item.fact].context:
        record = task.alternatives[(item.candidate, item.fact)][item.context]
    changed = item.model_copy(
        update={"value": to_json_scalar(another_value(task.facts[item.fact], record))}
    )
    line = statement_text(task, item, style)
    assert line in (reply.text or "")
    verdict = judge.judge(
        with_text(reply, (reply.text or "").replace(line, statement_text(task, changed, style)))
    )
    assert not verdict.fidelity
    assert len(verdict.contradictions) == 1 and "the record is" in verdict.contradictions[0]
    assert verdict.coverage == Fraction(len(reply.stated) - 1, len(reply.stated))
    assert len(verdict.missing) == 1


def test_a_dropped_line_lowers_coverage_only(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "misaligned")
    lines = (reply.text or "").splitlines()
    verdict = judge.judge(with_text(reply, "\n".join(lines[1:])))
    assert verdict.fidelity
    assert verdict.conveyed == len(reply.stated) - 1
    assert verdict.coverage == Fraction(len(reply.stated) - 1, len(reply.stated))
    assert verdict.missing and "not stated" in verdict.missing[0]


def test_a_wrong_context_label_is_caught(samples: list[SampleRecord], judges: GroupJudges) -> None:
    judge, reply = find(samples, judges, "misaligned")
    task, style = judge.task, judge.rendered.style
    # the misaligned line relabelled with the required context: its value is not that record
    wrong = next(s for s in reply.stated if s.context != task.facts[s.fact].context)
    relabelled = wrong.model_copy(update={"context": task.facts[wrong.fact].context})
    text = (reply.text or "").replace(
        statement_text(task, wrong, style), statement_text(task, relabelled, style)
    )
    verdict = judge.judge(with_text(reply, text))
    assert not verdict.fidelity and verdict.coverage < 1
    # a faithful line labelled with a context the records do not hold at all
    right = next(s for s in reply.stated if s.context == task.facts[s.fact].context)
    invented = right.model_copy(update={"context": "audit of 1999"})
    text = (reply.text or "").replace(
        statement_text(task, right, style), statement_text(task, invented, style)
    )
    verdict = judge.judge(with_text(reply, text))
    assert not verdict.fidelity
    assert any("hold no" in c and "audit of 1999" in c for c in verdict.contradictions)


def test_an_exact_value_where_the_policy_wanted_a_range_is_not_coverage(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "incomplete")
    task, style = judge.task, judge.rendered.style
    vague = next(s for s in reply.stated if not s.is_exact)
    slot = (vague.candidate, vague.fact)
    exact = StatedValue(candidate=slot[0], fact=slot[1], context=vague.context,
                        value=to_json_scalar(task.values[slot]))  # fmt: skip
    text = (reply.text or "").replace(
        statement_text(task, vague, style), statement_text(task, exact, style)
    )
    verdict = judge.judge(with_text(reply, text))
    # the truth, but not what the policy required: it agrees with the records, yet it states
    # the record the policy withholds in this reply, so it breaks the policy
    assert not verdict.contradictions and not verdict.fidelity
    assert any("the policy gives only" in b for b in verdict.breaches)
    assert verdict.coverage == Fraction(len(reply.stated) - 1, len(reply.stated))


def test_another_roles_record_and_free_text(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "misaligned")
    task = judge.task
    other_role = next(r for r in task.roles if r != reply.role)
    slot = task.slots_of(other_role)[0]
    foreign = StatedValue(candidate=slot[0], fact=slot[1], context=task.facts[slot[1]].context,
                          value=to_json_scalar(task.values[slot]))  # fmt: skip
    text = f"Happy to help.\n{reply.text}\n{statement_text(task, foreign, judge.rendered.style)}"
    verdict = judge.judge(with_text(reply, text))
    assert not verdict.fidelity and verdict.coverage == 1
    assert verdict.unverifiable == ("Happy to help.",)
    assert any(f"{reply.role} keeps no" in c for c in verdict.contradictions)


def test_prose_and_lists_are_read_statement_by_statement(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "misaligned")
    task = judge.task
    for frame in range(4):
        style = Style(frame=frame, dates=judge.rendered.style.dates)
        lines = [statement_text(task, s, style).rstrip(".") for s in reply.stated]
        for separator in ("; ", ", and ", " "):
            verdict = judge.judge(with_text(reply, "Sure: " + separator.join(lines) + "."))
            assert verdict.fidelity and verdict.coverage == 1, (frame, separator, verdict)
    # a candidate heading a list of its records (frame 0: "name — label (context): value")
    style = Style(frame=0, dates=judge.rendered.style.dates)
    blocks = []
    for candidate in task.candidates:
        name = task.candidate_name(candidate)
        items = [s for s in reply.stated if s.candidate == candidate]
        if items:
            blocks.append(f"{name}:")
            blocks += [f"- {statement_text(task, s, style).split(' — ', 1)[1]}" for s in items]
    verdict = judge.judge(with_text(reply, "\n".join(blocks)))
    assert verdict.fidelity and verdict.coverage == 1, verdict
    assert all(line.endswith(":") for line in verdict.unverifiable)


def test_missed_replies_and_unknown_groups_are_not_judged(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    silent = next(ref for ref in sample_replies(samples) if ref.reply.text is None)
    judge = judges.get(silent.sample.group_hash)
    assert judge is not None
    with pytest.raises(ValueError, match="missed"):
        judge_reply(judge.task, silent.reply, judge.catalog)
    cells = validity_cells(samples, GroupJudges([]))
    assert sum(c.judged for c in cells) == 0
    assert sum(c.unmatched for c in cells) == len(given(samples))
    assert all(c.fidelity is None and c.fidelity_ci is None for c in cells)


def test_a_named_colleague_model_gets_its_own_row(
    samples: list[SampleRecord], groups: list[TaskGroup]
) -> None:
    named = [s.model_copy(update={"colleague": "mock/phraser"}) for s in samples[:3]]
    cells = validity_cells([*named, *samples[3:]], GroupJudges(groups))
    rows = list(dict.fromkeys(cell.row for cell in cells))
    assert rows == ["mock/phraser (phrase)", "scripted"]


def test_nothing_checkable_and_echoes_fail(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "misaligned")
    for text in ("Sure, I will look into it.", ""):
        verdict = judge.judge(with_text(reply, text))
        assert not verdict.fidelity and verdict.coverage == 0 and verdict.conveyed == 0
    # the phrasing prompt, records and all, sent back as the reply
    from uncobench_z3.evaluation._llm_colleague import _prompt

    echoed = _prompt().substitute(role_name="HR", question=reply.question, records=reply.text or "")
    verdict = judge.judge(with_text(reply, echoed))
    assert verdict.echo and verdict.statements == len(reply.stated)  # every record is there
    assert not verdict.fidelity and verdict.coverage == 0
    assert "breaks the policy: repeats its instructions" in verdict.problems


# -- the LLM judge ----------------------------------------------------------------------------
def reply_of(messages: list[ChatMessage]) -> str:
    return messages[-1].content.split("## The reply\n\n", 1)[1].rstrip("\n")


def ranges_are_unfaithful(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
    """A judge that finds every reply with a range unfaithful and half complete."""
    vague = "between" in reply_of(messages)
    verdict = {"fidelity": not vague, "coverage": 0.5 if vague else 1, "notes": ""}
    return ModelOutput(tool_calls=(ToolCall(id="j", function=tools[0].name, arguments=verdict),))


def mock(
    responder: Callable[[list[ChatMessage], list[ToolDef]], ModelOutput], name: str = "mock/judge"
) -> Model:
    return get_model(name, outputs=responder)


def test_the_prompt_holds_records_question_required_items_and_reply(
    samples: list[SampleRecord], judges: GroupJudges
) -> None:
    judge, reply = find(samples, judges, "incomplete")
    [message] = judge_messages(judge, reply)
    text = message.content
    assert "$" not in text.replace("$" + "{", "")  # every placeholder filled
    for line in judge.rendered.records[reply.role]:
        assert line in text
    assert reply.question in text and reply_of([message]) == reply.text
    for item in reply.stated:
        assert f"- {statement_text(judge.task, item, judge.rendered.style)}" in text


async def test_llm_judge_agreement_and_resumption(
    run: Path, groups: list[TaskGroup], samples: list[SampleRecord], tmp_path: Path
) -> None:
    out = tmp_path / JUDGE_FILE
    refs = given(samples)
    vague = sum("between" in (ref.reply.text or "") for ref in refs)
    assert 0 < vague < len(refs)
    result = await judge_run(run, mock(ranges_are_unfaithful), groups, out=out)
    assert (result.judged, result.reused) == (len(refs), 0)
    agreement = result.agreement
    assert agreement.compared == len(refs) and agreement.no_verdict == 0
    assert agreement.fidelity_agreed == len(refs) - vague
    assert agreement.fidelity_agreement == Fraction(len(refs) - vague, len(refs))
    assert agreement.only_program_faithful == vague and agreement.only_llm_faithful == 0
    assert agreement.mean_coverage_difference == Fraction(vague, 2 * len(refs))
    lines = read_judgements(out)
    assert len({line.key for line in lines}) == len(lines) == len(refs)

    def never(messages: list[ChatMessage], tools: list[ToolDef]) -> ModelOutput:
        raise AssertionError("a finished judgement was asked again")

    again = await judge_run(run, mock(never), groups, out=out)
    assert (again.judged, again.reused) == (0, len(refs))
    assert again.agreement == agreement
    # a crash mid-line: the partial line is dropped and that reply judged again
    text = out.read_text()
    kept = text.splitlines()[:-1]
    out.write_text("\n".join(kept) + "\n" + text.splitlines()[-1][:40])
    resumed = await judge_run(run, mock(ranges_are_unfaithful), groups, out=out)
    assert (resumed.judged, resumed.reused) == (1, len(refs) - 1)
    assert resumed.agreement == agreement
    with pytest.raises(ResumeError, match="mock/judge"):
        await judge_run(run, mock(ranges_are_unfaithful, "mock/other"), groups, out=out)


async def test_llm_judge_sample_is_seeded_and_grows(
    run: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    first = await judge_run(
        run, mock(ranges_are_unfaithful), groups, out=tmp_path / "a.jsonl", limit=5, seed=3
    )
    second = await judge_run(
        run, mock(ranges_are_unfaithful), groups, out=tmp_path / "b.jsonl", limit=5, seed=3
    )
    assert [line.key for line in first.lines] == [line.key for line in second.lines]
    assert len(first.lines) == 5
    grown = await judge_run(
        run, mock(ranges_are_unfaithful), groups, out=tmp_path / "a.jsonl", limit=8, seed=3
    )
    assert grown.reused == 5 and len(grown.lines) >= 8
    with pytest.raises(ConfigError, match="--limit"):
        await judge_run(run, mock(ranges_are_unfaithful), groups, out=tmp_path / "c.jsonl", limit=0)


async def test_unusable_llm_answers_are_recorded_not_compared(
    run: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    def judgement(**arguments: object) -> ModelOutput:
        return ModelOutput(tool_calls=(ToolCall(id="j", function="submit_judgement",
                                                arguments=arguments),))  # fmt: skip

    answers = iter([
        ModelOutput(text="looks fine to me"),
        judgement(fidelity=True, coverage=2),
        judgement(fidelity=False, coverage=0.25, notes="x"),
    ])  # fmt: skip
    result = await judge_run(run, mock(lambda m, t: next(answers)), groups,
                             out=tmp_path / "j.jsonl", limit=3, concurrency=1)  # fmt: skip
    errors = {line.error for line in result.lines}
    assert errors == {
        None,
        "no submit_judgement tool call",
        "coverage: Input should be less than or equal to 1",
    }
    agreement = result.agreement
    assert (agreement.lines, agreement.compared, agreement.no_verdict) == (3, 1, 2)
    assert agreement.fidelity_agreement == 0 and agreement.only_program_faithful == 1
    assert agreement.mean_coverage_difference == Fraction(3, 4)  # 0.25 read as 1/4 exactly


def test_the_llm_judges_coverage_is_the_decimal_it_wrote() -> None:
    """More digits than a float holds are kept (the float's repr used to stand in for them)."""
    from uncobench_z3.evaluation._judge_llm import parse_verdict

    raw = '{"fidelity": true, "coverage": 0.66666666666666666667, "notes": ""}'
    call = ToolCall(id="j", function="submit_judgement", arguments=json.loads(raw),
                    raw_arguments=raw)  # fmt: skip
    verdict, error = parse_verdict(ModelOutput(tool_calls=(call,)))
    assert error is None and verdict is not None
    assert verdict.coverage == Fraction(66666666666666666667, 10**20)


def test_agreement_of_no_lines() -> None:
    agreement = judge_agreement([])
    assert agreement.compared == 0 and agreement.fidelity_agreement is None


# -- command line and report ------------------------------------------------------------------
def test_judge_command(
    run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = run_cli(capsys, "judge", str(run), "--json")
    assert result.code == 0, result.err
    cells = json.loads(result.out)["programmatic"]
    assert {c["colleague"] for c in cells} == {"scripted"}
    assert {c["agent"] for c in cells} == set(AGENTS) and len(cells) == 2 * 5
    assert all(c["mean_coverage"] in ("1", None) for c in cells)
    monkeypatch.setattr(
        "uncobench_z3.cli._judge.make_judge_model", lambda name, cache: mock(ranges_are_unfaithful)
    )
    out = tmp_path / "judged.jsonl"
    result = run_cli(capsys, "judge", str(run), "--judge-model", "mock/judge", "--limit", "6",
                     "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    assert "fidelity agreement" in result.out and "6 reply(ies) judged now" in result.out
    lines = [JudgeLine.model_validate_json(x) for x in out.read_text().splitlines()]
    assert len(lines) == 6 and all(line.judge_model == "mock/judge" for line in lines)
    # the same model with other settings is another judge: its verdicts are not these
    # (it used to "reuse" them and name itself as the judge that made them)
    result = run_cli(capsys, "judge", str(run), "--judge-model", "mock/judge,temperature=1",
                     "--limit", "6", "--out", str(out))  # fmt: skip
    assert result.code != 0 and "holds judgements by mock/judge;" in result.err
    assert "mock/judge,temperature=1" in result.err
    assert len(out.read_text().splitlines()) == 6


def test_a_run_with_fewer_samples_than_planned_is_judged_with_a_note(
    run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """eval still writing the run (or interrupted): the table is of the samples it holds, and
    says so; it read as the whole run's."""
    partial = tmp_path / "partial"
    shutil.copytree(run, partial)
    lines = (partial / SAMPLES_FILE).read_text().splitlines(keepends=True)
    (partial / SAMPLES_FILE).write_text("".join(lines[:7]))
    result = run_cli(capsys, "judge", str(partial), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["programmatic"]  # stdout stays one JSON document
    assert f"holds 7 of its {len(lines)} planned samples" in result.err
    whole = run_cli(capsys, "judge", str(run), "--format", "plain")
    assert whole.code == 0 and "planned" not in whole.out + whole.err


def test_a_local_judge_model_gets_the_providers_default_reply_limit(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--judge-model local/smollm2`` is called with the reply limit an agent or colleague of
    that name gets (max_tokens=512), here against a stand-in server (no llama.cpp started); a
    limit in the name wins; the command names the settings it used."""
    from uncobench_z3.models.testing import FaultServer

    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
    for name, limit in [("local/smollm2", 512), ("local/smollm2,max_tokens=80", 80)]:
        with FaultServer() as server:
            monkeypatch.setenv("LOCAL_SMOLLM2_BASE_URL", server.base_url)
            out = tmp_path / f"judged-{limit}.jsonl"
            result = run_cli(capsys, "judge", str(run), "--judge-model", name, "--limit", "1",
                             "--out", str(out), "--no-cache")  # fmt: skip
        assert result.code == 0, result.err
        assert server.requests and {body["max_tokens"] for body in server.requests} == {limit}
        said = " ".join(result.out.split())
        assert f"LLM judge local/smollm2,max_tokens={limit},cache=false:" in said


def test_judge_command_bad_input(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "judge", str(tmp_path))
    assert result.code == 2 and "not a run directory" in result.err
    assert "Traceback" not in result.err
    for alone in (["--limit", "3"], ["--out", str(tmp_path / "j.jsonl")], ["--no-cache"]):
        result = run_cli(capsys, "judge", str(run), *alone)  # options of the LLM judge alone
        assert result.code == 2 and "--judge-model" in result.err and alone[0] in result.err
    (tmp_path / "judge.jsonl").write_text("not a line\n{}\n")
    result = run_cli(capsys, "judge", str(run), "--judge-model", "mock/echo", "--no-cache",
                     "--out", str(tmp_path / "judge.jsonl"))  # fmt: skip
    assert result.code == 2 and f"{tmp_path / 'judge.jsonl'}:1" in result.err


async def test_report_has_a_role_agent_validity_section(
    run: Path, groups: list[TaskGroup], tmp_path: Path
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)

    def section() -> str:
        files = write_report(copy, tmp_path / "report", figures=False)
        assert "Role-agent validity" in files.html.read_text()
        text = files.markdown.read_text()
        return text.split("## Role-agent validity", 1)[1].split("\n## ", 1)[0]

    before = section()
    assert "| scripted |" in before and "100.0%" in before and "1.000" in before
    # metrics.json holds the same cells, exact
    document = read_metrics(tmp_path / "report" / "metrics.json")
    assert {(c.colleague, c.mode) for c in document.validity} == {("scripted", "scripted")}
    assert sum(c.judged for c in document.validity) == len(given(read_log(copy / SAMPLES_FILE)[0]))
    assert all(c.fidelity in (1, None) for c in document.validity)
    assert "judge model" not in before  # no judge.jsonl yet
    await judge_run(copy, mock(ranges_are_unfaithful), groups, limit=4)
    after = section()
    assert "judge model" in after and "| scripted | mock/judge | 4 |" in after


def test_validity_intervals_do_not_depend_on_the_order_of_the_samples(
    samples: list[SampleRecord], groups: list[TaskGroup]
) -> None:
    """A log written by other workers or resumed holds the same samples in another order."""

    def dropping(sample: SampleRecord) -> SampleRecord:  # coverage below 1 in some groups
        if sample.group_hash == samples[0].group_hash:
            return sample
        trace = [
            record.model_copy(update={"replies": [
                reply if reply.text is None else with_text(reply, reply.text.split("\n", 1)[-1])
                for reply in record.replies
            ]})
            for record in sample.trace
        ]  # fmt: skip
        return sample.model_copy(update={"trace": trace})

    changed = [dropping(s) for s in samples]
    cells = {(c.agent, c.setting): c for c in validity_cells(changed, GroupJudges(groups))}
    backwards = validity_cells(changed[::-1], GroupJudges(groups))
    assert {(c.agent, c.setting): c for c in backwards} == cells
