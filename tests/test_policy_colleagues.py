"""Policy colleagues (``--colleague-mode policy``) over the mock provider, and their judge.

Four kinds of colleague model, each judged as it should be: a *faithful* one (an oracle that
follows the policy from its own conversation, in its own wording), an *unfaithful* one (the
same oracle leaking the true value the policy withholds), an *echoing* one (its request, or
its whole prompt, back) and a *silent* one (always NO REPLY).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.policy_helpers import Responder, oracle
from uncobench_z3.construct import load_groups, statement_text
from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    DUE_PREFIX,
    SILENCE,
    Environment,
    GroupJudges,
    PreparedGroup,
    ReplyRecord,
    SampleJob,
    compute_metrics,
    evaluate,
    judge_messages,
    make_agent,
    make_config,
    policy_text,
    read_log,
    repeats_instructions,
    response_policy,
    run_episode,
    run_sample,
    select_replies,
    validity_cells,
)
from uncobench_z3.models import ChatMessage, ToolDef, register_provider
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.report import find_run_dirs, read_metrics, write_report
from uncobench_z3.settings import SETTING_NAMES, TaskGroup, rule_text

GROUP_FILE = Path(__file__).resolve().parent.parent / "examples/groups/mining_supervisor.group.json"


@pytest.fixture(scope="module")
def group() -> TaskGroup:
    return load_groups(GROUP_FILE)[0]


def echo_prompt(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    return messages[0].content


def silent(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    return SILENCE


@pytest.fixture(scope="module", autouse=True)
def providers(group: TaskGroup) -> None:
    kinds: dict[str, Responder] = {
        "faithful": oracle(group),
        "leaky": oracle(group, leak=True),
        "promptecho": echo_prompt,
        "silent": silent,
    }
    for name, responder in kinds.items():
        register_provider(
            f"pc{name}",
            lambda rest, _r=responder, _n=name, **_: MockProvider(f"pc{_n}/{rest}", _r),
        )


async def play(group: TaskGroup, setting: str, colleague: str, agent: str = "builtin/careful"):  # type: ignore[no-untyped-def]
    environment = Environment(
        group,
        setting,
        colleague=f"{colleague},cache=false",
        colleague_mode="policy",  # type: ignore[arg-type]
    )
    await run_episode(environment, make_agent(agent, 0))
    return environment


def replies(environment: Environment) -> list[ReplyRecord]:
    return [reply for record in environment.trace for reply in record.replies]


# -- the policy as data -----------------------------------------------------------------------
def test_the_policy_is_rendered_from_the_group(group: TaskGroup) -> None:
    prepared = PreparedGroup.of(group)
    task, style = prepared.task, prepared.rendered.style
    for setting in SETTING_NAMES:
        defects = group.setting(setting).defects
        for role in task.roles:
            policy = response_policy(task, role, setting, defects, style)
            text = policy_text(policy)
            assert f"setting: {setting}" in text
            for fact in task.facts_of(role):
                assert f"{task.facts[fact].label}: {task.facts[fact].context}" in text
            own = [d for d in defects if d.role == role]
            assert len(policy.exceptions) == len(own)
            if not own:
                assert "exceptions: none" in text
            for defect in own:
                if defect.kind == "missed":
                    assert f"write exactly {SILENCE}" in text
                    continue
                assert rule_text(task, defect.targeted_follow_up) in text
                for stated in defect.first_reply or []:
                    line = prepared.book.line(stated)
                    assert (line in text) == (stated.candidate in defect.candidates)


def test_the_model_gets_role_records_policy_and_its_own_conversation(group: TaskGroup) -> None:
    environment = Environment(group, "misaligned", colleague="pcsilent/x", colleague_mode="policy")
    assert environment.policy is not None and environment.phraser is None
    role = group.setting("misaligned").defects[0].role
    messages = environment.policy.messages(role, "hello")
    system = messages[0].content
    for line in environment.policy.rendered.records[role]:
        assert line in system  # every context of every record
    assert "exceptions:" in system and "$" not in system
    assert [m.role for m in messages] == ["system", "user"] and messages[1].content == "hello"


# -- the four colleagues ----------------------------------------------------------------------
@pytest.mark.parametrize("setting", SETTING_NAMES)
async def test_a_faithful_colleague_keeps_the_policy_and_changes_nothing(
    group: TaskGroup, setting: str
) -> None:
    environment = await play(group, setting, "pcfaithful/x")
    scripted = Environment(group, setting)
    await run_episode(scripted, make_agent("builtin/careful", 0))
    for reply in replies(environment):
        assert reply.policy is not None
        verdict = reply.policy.verdict
        assert verdict.fidelity and verdict.coverage == 1, verdict.problems
        assert verdict.unverifiable == ("Here is what I have on file:",) or reply.text is None
    # the agent saw the same records, so it acted and answered the same way
    assert [r.action for r in environment.trace] == [r.action for r in scripted.trace]
    assert environment.answer == scripted.answer
    if setting in ("missed", "mixed"):
        silences = [r for r in replies(environment) if r.pending]
        assert silences and all(r.text is None and r.policy.verdict.silent for r in silences)  # type: ignore[union-attr]


async def test_a_reply_held_back_is_written_when_it_is_due(group: TaskGroup) -> None:
    # the patient agent waits for the silent colleague: the model is asked again, told that
    # its reply is due, and the oracle (replaying its conversation) gives the pending reply
    environment = await play(group, "missed", "pcfaithful/x", agent="builtin/patient")
    delivered = [r for r in replies(environment) if r.delivered]
    assert delivered and all(r.text and r.answers_round for r in delivered)
    assert all(r.policy and r.policy.kept for r in replies(environment))
    assert environment.policy is not None
    history = environment.policy.messages(delivered[0].role, "next")
    assert any(m.content.startswith(DUE_PREFIX) for m in history if m.role == "user")
    assert any(m.content == SILENCE for m in history if m.role == "assistant")


async def test_an_unfaithful_colleague_is_seen_by_the_agent_and_judged(group: TaskGroup) -> None:
    environment = await play(group, "misaligned", "pcleaky/x")
    defect = group.setting("misaligned").defects[0]
    leaked = [r for r in replies(environment) if "misaligned" in r.defects]
    assert leaked
    first = leaked[0]
    assert first.policy is not None
    verdict = first.policy.verdict
    assert not verdict.fidelity and verdict.contradictions == ()  # true to the records...
    assert any("the policy gives only" in b for b in verdict.breaches)  # ...not to the policy
    assert verdict.coverage < 1
    truth = environment.colleagues.records.faithful[(defect.candidates[0], defect.fact or "")]
    assert environment.colleagues.records.line(truth) in (first.text or "")  # not replaced


async def test_an_echoing_colleague_fails_fidelity_and_conveys_nothing(group: TaskGroup) -> None:
    for colleague in ("mock/echo", "pcpromptecho/x"):
        environment = await play(group, "missed", colleague)
        verdicts = [r.policy.verdict for r in replies(environment) if r.policy is not None]
        assert verdicts and len(verdicts) == len(replies(environment))
        for verdict in verdicts:
            assert not verdict.fidelity and verdict.coverage == 0 and verdict.conveyed == 0
        if colleague.startswith("pcpromptecho"):
            # the prompt holds every record; repeating it is still no reply
            assert all(v.echo for v in verdicts)
            assert all(v.statements > 0 for v in verdicts if not v.silence_required)


async def test_a_silent_colleague_keeps_only_the_silences_it_owes(group: TaskGroup) -> None:
    environment = await play(group, "missed", "pcsilent/x")
    all_replies = replies(environment)
    assert all(r.text is None for r in all_replies)  # the agent saw no reply at all
    owed = [r for r in all_replies if r.pending]
    assert len(owed) == 1
    for reply in all_replies:
        assert reply.policy is not None
        verdict = reply.policy.verdict
        if reply.pending:
            assert verdict.fidelity and verdict.coverage == 1 and verdict.silence_required
        else:
            assert not verdict.fidelity and verdict.coverage == 0
            assert any("stays silent" in b for b in verdict.breaches)


def test_silence_is_read_loosely_and_instructions_strictly() -> None:
    from uncobench_z3.evaluation import is_silence

    assert is_silence(None) and is_silence("") and is_silence(' "No reply." ')
    assert not is_silence("No, the reply is 12 years")
    # a reply of digits, or of letters beyond a-z, is a reply (it used to count as silence:
    # the agent saw nothing of what the model wrote)
    assert not any(is_silence(text) for text in ("60000", "$1,250,000", "是的", "Да"))
    assert is_silence("NO_REPLY") and is_silence("— no reply —")
    prompt_line = "Write every record you state on a line of its own, exactly as your records"
    assert repeats_instructions(f"Sure. {prompt_line} write it.")
    assert not repeats_instructions(
        "years of underground hardrock experience for Marcus Vance (verified employment "
        "history): 17 years"
    )


# -- runs, metrics, Table 7, judge and CLI ----------------------------------------------------
@pytest.fixture(scope="module")
def bench() -> Path:
    return GROUP_FILE  # a group file is a benchmark of one group


def run_with(bench: Path, out: Path, colleague: str, settings: list[str]) -> list:  # type: ignore[type-arg]
    groups = load_groups(bench)
    config = make_config(bench, groups, ["builtin/careful"], settings,
                         colleague=f"{colleague},cache=false", colleague_mode="policy")  # fmt: skip
    evaluate(groups, config, out)
    return read_log(out / "samples.jsonl")[0]


def test_broken_samples_are_reported_apart_and_table_7_has_them(
    bench: Path, tmp_path: Path, group: TaskGroup
) -> None:
    faithful = run_with(bench, tmp_path / "faithful", "pcfaithful/x", ["misaligned", "missed"])
    leaky = run_with(bench, tmp_path / "leaky", "pcleaky/x", ["misaligned", "missed"])
    assert all(s.colleague_mode == "policy" for s in faithful + leaky)
    assert all(s.colleague_policy and not s.colleague_policy.broken for s in faithful)
    broken = {s.setting: s.colleague_policy.broken for s in leaky}  # type: ignore[union-attr]
    assert broken == {"misaligned": True, "missed": False}  # Missed withholds no value
    metrics = {m.setting: m for m in compute_metrics(leaky)}
    assert metrics["misaligned"].colleague_breaches == 1 and metrics["misaligned"].samples == 0
    assert metrics["misaligned"].accuracy is None  # a colleague error is not the agent's
    assert metrics["missed"].colleague_breaches == 0 and metrics["missed"].samples == 1
    cells = validity_cells(faithful + leaky, GroupJudges([group]))
    by_row = {(c.row, c.setting): c for c in cells}
    kept = by_row[("pcfaithful/x,cache=false (policy)", "misaligned")]
    assert kept.fidelity == 1 and kept.mean_coverage == 1 and kept.breached == 0
    assert kept.fidelity_ci == (1, 1) and kept.judged > 0
    missed = by_row[("pcfaithful/x,cache=false (policy)", "missed")]
    assert missed.silences_required == missed.silences_kept == 1
    bad = by_row[("pcleaky/x,cache=false (policy)", "misaligned")]
    assert bad.breached == 1 and bad.fidelity is not None and bad.fidelity < 1
    assert bad.fidelity == Fraction(bad.faithful, bad.judged)
    assert isinstance(bad.mean_coverage, Fraction) and bad.mean_coverage < 1


def test_the_reports_table_7_is_the_judge_over_the_whole_records(
    bench: Path, tmp_path: Path, group: TaskGroup
) -> None:
    """The report judges each distinct reply once, from the fields a verdict reads, as it
    streams the traces: the same cells, to the digit, as judging every full record."""
    settings, runs = ["reliable", "misaligned", "missed"], tmp_path / "runs"
    for colleague in ("faithful", "leaky", "silent"):
        run_with(bench, runs / colleague, f"pc{colleague}/x", settings)
    groups = load_groups(bench)
    config = make_config(
        bench, groups, ["builtin/careful"], settings, colleague="pcpromptecho/x,cache=false"
    )  # phrase mode: rejected wording
    evaluate(groups, config, runs / "phrase")
    samples = [s for run in find_run_dirs(runs) for s in read_log(run / "samples.jsonl")[0]]
    replies = [r for s in samples for rnd in s.trace for r in rnd.replies]
    assert any(r.fidelity is not None and r.fidelity.rejected_text for r in replies)
    expected = validity_cells(samples, GroupJudges([group]))
    assert {c.mode for c in expected} == {"policy", "phrase"}
    assert any(c.silences_required for c in expected) and any(c.breached for c in expected)
    files = write_report(tmp_path / "runs", tmp_path / "report", figures=False)
    assert read_metrics(files.metrics).validity == expected


def test_the_report_shows_the_policy_cells_the_judge_computes(
    bench: Path, tmp_path: Path, group: TaskGroup
) -> None:
    # the report reads traces apart from the records and tallies them with a visitor: its
    # cells (metrics.json, the validity section) must be the ones computed from the records
    runs = tmp_path / "runs"
    samples = run_with(bench, runs / "faithful", "pcfaithful/x", ["missed"])
    samples += run_with(bench, runs / "leaky", "pcleaky/x", ["misaligned"])
    files = write_report(runs, tmp_path / "report", figures=False)
    document = read_metrics(tmp_path / "report" / "metrics.json")
    assert sorted(document.validity, key=lambda c: c.row) == sorted(
        validity_cells(samples, GroupJudges([group])), key=lambda c: c.row
    )
    section = files.markdown.read_text().split("## Role-agent validity", 1)[1]
    section = section.split("\n## ", 1)[0]
    leaky = next(line for line in section.splitlines() if "| Misaligned |" in line)
    assert "pcleaky/x,cache=false (policy)" in leaky and "| 0/0 | 1/1 |" in leaky  # broke it
    kept = next(line for line in section.splitlines() if "| Missed |" in line)
    assert "pcfaithful/x,cache=false (policy)" in kept and "100.0%" in kept
    assert "| 1/1 | 0/1 |" in kept  # the silence it owed kept; no sample broke the policy


def test_policy_mode_is_part_of_the_job_and_needs_a_model(bench: Path, group: TaskGroup) -> None:
    phrase = SampleJob.make(group, "missed", "builtin/careful", colleague="mock/echo")
    policy = SampleJob.make(group, "missed", "builtin/careful", colleague="mock/echo",
                            colleague_mode="policy")  # fmt: skip
    assert phrase.key != policy.key
    groups = [group]
    phrase_config = make_config(bench, groups, ["builtin/careful"], colleague="mock/echo")
    policy_config = make_config(bench, groups, ["builtin/careful"], colleague="mock/echo",
                                colleague_mode="policy")  # fmt: skip
    assert phrase_config.digest() != policy_config.digest()
    with pytest.raises(ConfigError, match="colleague-model"):
        make_config(bench, groups, ["builtin/careful"], colleague_mode="policy")
    with pytest.raises(ConfigError, match="colleague-model"):
        Environment(group, "missed", colleague_mode="policy")


async def test_the_llm_judge_sees_silence_and_withheld_records(group: TaskGroup) -> None:
    job = SampleJob.make(group, "mixed", "builtin/careful", colleague="pcsilent/x,cache=false",
                         colleague_mode="policy")  # fmt: skip
    sample = await run_sample(job)
    judges = GroupJudges([group])
    refs = select_replies([sample], judges, None, 0)
    # every reply of a policy colleague is judged, its silences too
    assert len(refs) == sum(len(r.replies) for r in sample.trace)
    judge = judges.get(sample.group_hash)
    assert judge is not None
    owed = next(ref.reply for ref in refs if ref.reply.pending)
    text = judge_messages(judge, owed)[0].content
    assert "the policy prescribes silence" in text and "the colleague stayed silent" in text
    withheld = next(ref.reply for ref in refs if ref.reply.policy and ref.reply.policy.withheld)
    section = judge_messages(judge, withheld)[0].content.split("## Records the policy", 1)[1]
    assert withheld.policy is not None
    for item in withheld.policy.withheld:
        assert f"- {statement_text(judge.task, item, judge.rendered.style)}" in section


def test_eval_and_judge_commands_in_policy_mode(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "roles"
    result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/careful", "--setting",
                     "misaligned", "--setting", "reliable", "--colleague-model",
                     "pcleaky/x,cache=false", "--colleague-mode", "policy", "--out", str(out),
                     "--no-progress")  # fmt: skip
    assert result.code == 0, result.err
    assert "broke its policy in 1 of 2 sample(s)" in result.out
    result = run_cli(capsys, "judge", str(out), "--json")
    assert result.code == 0, result.err
    cells = json.loads(result.out)["programmatic"]
    assert {c["setting"] for c in cells} == {"reliable", "misaligned"}
    assert all(c["mode"] == "policy" for c in cells)
    assert next(c for c in cells if c["setting"] == "reliable")["fidelity"] == "1"
    result = run_cli(capsys, "judge", str(out), "--format", "plain")
    assert result.code == 0 and "(policy)" in result.out
    result = run_cli(capsys, "eval", str(bench), "--agent", "builtin/careful",
                     "--colleague-mode", "policy", "--out", str(tmp_path / "x"))  # fmt: skip
    assert result.code == 2 and "--colleague-model" in result.err


async def test_a_cut_reply_keeps_the_verdict_it_was_logged_with(group: TaskGroup) -> None:
    from uncobench_z3._textcap import cap_text
    from uncobench_z3.evaluation import judge_reply

    environment = await play(group, "reliable", "pcsilent/x", agent="builtin/naive")
    reply = replies(environment)[0]
    assert reply.policy is not None
    stored = reply.model_copy(update={"text": cap_text("far too long " * 5000)})
    judge = GroupJudges([group]).get(SampleJob.make(group, "reliable", "x").group_hash)
    assert judge is not None
    assert judge.judge(stored) == reply.policy.verdict  # what was judged when it was written
    assert judge_reply(judge.task, stored, judge.catalog) != reply.policy.verdict
