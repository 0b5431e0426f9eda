"""The runner: the log, resumption after an interruption, the configuration guard."""

from __future__ import annotations

import gc
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.sample_helpers import jobs_planned, typed_tasks_made
from uncobench_z3._assets import asset_path
from uncobench_z3.construct import load_groups
from uncobench_z3.errors import ConfigError, ResumeError, UncobenchError
from uncobench_z3.evaluation import (
    RUN_FILE,
    SAMPLES_FILE,
    Action,
    Agent,
    Conversation,
    SampleJob,
    SampleRecord,
    _plan,
    _sample,
    epoch_seed,
    evaluate,
    example_benchmark,
    example_groups,
    generation_settings,
    make_agent,
    make_config,
    plan_jobs,
    read_log,
    run_evaluation,
    run_sample,
)
from uncobench_z3.evaluation._registry import configuration_name
from uncobench_z3.evaluation._run_sample import play_sample
from uncobench_z3.settings import READER_RULES, TaskGroup, _phrases, group_digest
from uncobench_z3.settings._reader_rules import reader_rules_digest

AGENTS = ["builtin/naive", "builtin/careful"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny mock benchmark: the example specs, perturbed, in a built-benchmark folder."""
    return example_benchmark(tmp_path_factory.mktemp("bench") / "bench")


@pytest.fixture(scope="module")
def groups(bench: Path) -> list[TaskGroup]:
    return load_groups(bench)


def content(records: list[SampleRecord]) -> list[str]:
    """The records without wall-clock time, as a sorted list (comparison up to order)."""
    return sorted(r.model_dump_json(exclude={"elapsed_seconds"}) for r in records)


def log_lines(out: Path) -> list[str]:
    return (out / SAMPLES_FILE).read_text(encoding="utf-8").splitlines()


class Interrupter:
    """Makes real agents, but the agent of sample number ``after + 1`` presses Ctrl-C."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.made = 0

    def __call__(self, name: str, seed: int) -> Agent:
        self.made += 1
        if self.made > self.after:
            return _CtrlC()
        return make_agent(name, seed)


class _CtrlC:
    async def act(self, conversation: Conversation) -> Action:
        raise KeyboardInterrupt


def test_the_plan_skips_and_counts_unavailable_settings(groups: list[TaskGroup]) -> None:
    config = make_config("bench", groups, AGENTS)
    jobs, unavailable = plan_jobs(groups, config)
    assert unavailable == {"mixed": ["healthcare_nurse_manager"]}
    assert len(jobs) == (5 * 5 - 1) * len(AGENTS)
    assert len({job.key for job in jobs}) == len(jobs)


def test_the_planned_jobs_are_the_jobs_made_one_by_one(groups: list[TaskGroup]) -> None:
    """The plan validates its first job and copies the others from it: each equals the job
    made (and validated) from its own values, with the same fields set, key and group."""
    config = make_config(
        "bench", groups, AGENTS, seed=7, budget=9, limit=3, epochs=2, missed_wait=1,
        interventions=("none", "existence", "diagnosis"),
    )  # fmt: skip
    digests = [f"{index:064x}" for index in range(len(groups))]  # passed, so taken
    jobs, _ = plan_jobs(groups, config, digests)
    assert len({(j.group.id, j.setting, j.agent, j.intervention, j.epoch) for j in jobs}) == len(
        jobs
    )
    assert {j.intervention for j in jobs} == {"none", "existence", "diagnosis"}
    for job in jobs:
        prompts = _plan.sample_prompts(config, job.agent, job.intervention)
        made = SampleJob.make(job.group, job.setting, job.agent, 7, 9,
                              digests[groups.index(job.group)], "scripted", job.intervention,
                              epoch=job.epoch, missed_wait=1,
                              prompts=prompts)  # fmt: skip
        assert job == made and job.model_fields_set == made.model_fields_set
        assert job.key == made.key and job.group is made.group
    # an arm's samples read its texts; the plain arm's read no prompt: their keys stay
    assert {j.prompts for j in jobs if j.intervention == "none"} == {""}
    assert {j.prompts for j in jobs if j.intervention != "none"} == {
        f"prompts:{config.prompts_hash}"
    }
    # without digests passed, each job carries its group's own content hash
    assert all(j.group_hash == group_digest(j.group) for j in plan_jobs(groups, config)[0])


class _OwnKind(BaseException):
    """Neither an ``Exception`` nor an interrupt (``pytest.fail`` raises one of these)."""


class OwnKindAfter(Interrupter):
    """Makes real agents, but the agent of sample number ``after + 1`` raises :class:`_OwnKind`."""

    def __call__(self, name: str, seed: int) -> Agent:
        self.made += 1
        return _RaisesItsOwnKind() if self.made > self.after else make_agent(name, seed)


class _RaisesItsOwnKind:
    async def act(self, conversation: Conversation) -> Action:
        raise _OwnKind("raised by an agent")


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_base_exception_of_another_kind_stops_the_run_as_itself(
    groups: list[TaskGroup], tmp_path: Path, concurrency: int
) -> None:
    """It used to end its slot quietly: the run went on without the sample and finished."""
    config = make_config("bench", groups, AGENTS, limit=2)
    with pytest.raises(_OwnKind, match="raised by an agent"):
        evaluate(groups, config, tmp_path, concurrency=concurrency, agents=OwnKindAfter(after=3))
    kept = len(log_lines(tmp_path))
    assert 3 - concurrency + 1 <= kept <= 3  # the samples played before it are kept
    # the same command resumes and finishes the run, every sample once
    summary = evaluate(groups, config, tmp_path, concurrency=concurrency)
    assert summary.reused == kept and summary.ran + kept == len(log_lines(tmp_path)) == 18


def test_a_run_logs_every_sample_once(groups: list[TaskGroup], tmp_path: Path) -> None:
    config = make_config("bench", groups, AGENTS, limit=2)
    summary = evaluate(groups, config, tmp_path, concurrency=4)
    lines = log_lines(tmp_path)
    # aerospace: 5 settings; healthcare: 4 (no Mixed); two agents
    assert summary.ran == len(lines) == (5 + 4) * 2 and summary.reused == 0
    assert summary.unavailable == {"mixed": ["healthcare_nurse_manager"]}
    records, truncated = read_log(tmp_path / SAMPLES_FILE)
    assert not truncated and content(records) == content(summary.records)
    meta = json.loads((tmp_path / RUN_FILE).read_text())
    assert meta["config_hash"] == config.digest() and meta["samples"] == len(lines)


def test_resume_after_an_interruption_redoes_nothing(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, AGENTS)
    reference = evaluate(groups, config, tmp_path / "reference", concurrency=3)

    out = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        evaluate(groups, config, out, concurrency=1, agents=Interrupter(after=7))
    assert len(log_lines(out)) == 7  # the finished samples are on disk, whole
    done_before = {json.loads(line)["key"] for line in log_lines(out)}

    ran: list[str] = []

    def watching(name: str, seed: int) -> Agent:
        ran.append(name)
        return make_agent(name, seed)

    resumed = evaluate(groups, config, out, concurrency=5, agents=watching)
    assert resumed.reused == 7 and resumed.ran == len(ran) == len(reference.records) - 7
    final = read_log(out / SAMPLES_FILE)[0]
    assert len({r.key for r in final}) == len(final) == len(reference.records)
    assert done_before <= {r.key for r in final}
    assert content(final) == content(reference.records)

    again = evaluate(groups, config, out, agents=watching)  # nothing left to do
    assert again.ran == 0 and again.reused == len(reference.records)


def test_a_new_run_hashes_no_job_key_before_its_first_sample(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key is a hash; a new run has no earlier samples to match, so none is made before
    the agents start (each is made with its sample's record). A resumed run still matches
    every key (test_resume_after_an_interruption_redoes_nothing)."""
    planned = jobs_planned(monkeypatch)
    keyed_at_first_call: list[int] = []

    def watching(name: str, seed: int) -> Agent:
        agent = make_agent(name, seed)
        act = agent.act

        async def first_act(conversation: Conversation) -> Action:
            if not keyed_at_first_call:
                keyed_at_first_call.append(sum("key" in job.__dict__ for job in planned))
            return await act(conversation)

        agent.act = first_act  # type: ignore[method-assign]
        return agent

    config = make_config("bench", groups, AGENTS, limit=2)
    summary = evaluate(groups, config, tmp_path, concurrency=1, agents=watching)
    assert planned and keyed_at_first_call == [0]
    assert {r.key for r in summary.records} == {job.key for job in planned}


def test_the_groups_are_checked_before_the_run_and_their_typed_tasks_are_used_once(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every group the run plays is checked (its typed task made) before anything is written;
    playing in this process, the run prepares each group with that task, not a new one."""
    from uncobench_z3.evaluation import _inputs, _prepared

    checked = typed_tasks_made(monkeypatch, _inputs)
    made_again = typed_tasks_made(monkeypatch, _prepared)
    summary = evaluate(groups, make_config("bench", groups, AGENTS, limit=2), tmp_path / "run")
    assert checked == [group.id for group in groups[:2]]
    assert summary.ran > 0 and made_again == []


def test_a_changed_configuration_refuses_to_resume(groups: list[TaskGroup], tmp_path: Path) -> None:
    first = make_config("bench", groups, ["builtin/naive"], limit=2)
    evaluate(groups, first, tmp_path)
    edited = [groups[0].model_copy(update={"seed": 99}), *groups[1:]]  # other content
    for changed_groups, changed in (
        (groups, make_config("bench", groups, AGENTS, limit=2)),
        (groups, make_config("bench", groups, ["builtin/naive"], limit=2, seed=1)),
        (groups, make_config("bench", groups, ["builtin/naive"], limit=2, budget=5)),
        (groups, make_config("bench", groups, ["builtin/naive"], limit=3)),
        (groups, make_config("bench", groups, ["builtin/naive"], ["reliable"], limit=2)),
        (edited, make_config("bench", edited, ["builtin/naive"], limit=2)),
    ):
        assert changed.digest() != first.digest()
        with pytest.raises(ResumeError, match="another configuration"):
            evaluate(changed_groups, changed, tmp_path)
    # the benchmark's path is not part of the hash: a moved benchmark still resumes
    moved = make_config("elsewhere/bench", groups, ["builtin/naive"], limit=2)
    assert moved.digest() == first.digest()
    assert evaluate(groups, moved, tmp_path).ran == 0


def test_a_configuration_made_for_other_groups_is_refused(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups[:3], ["builtin/naive"])
    with pytest.raises(ConfigError, match="other task groups"):
        evaluate(groups, config, tmp_path)


def test_force_keeps_the_samples_that_still_apply(groups: list[TaskGroup], tmp_path: Path) -> None:
    evaluate(groups, make_config("bench", groups, ["builtin/naive"], limit=2), tmp_path)
    wider = make_config("bench", groups, AGENTS, limit=2)
    summary = evaluate(groups, wider, tmp_path, force=True)
    assert summary.reused == 9 and summary.ran == 9
    narrower = make_config("bench", groups, ["builtin/careful"], limit=1)
    summary = evaluate(groups, narrower, tmp_path, force=True)
    assert summary.reused == 5 and summary.ran == 0
    assert len(log_lines(tmp_path)) == 5  # the others are set aside, not lost
    assert (tmp_path / "samples.discarded-1.jsonl").exists()


def test_restart_sets_the_old_log_aside(groups: list[TaskGroup], tmp_path: Path) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    summary = evaluate(groups, config, tmp_path, restart=True)
    assert summary.ran == 5 and summary.reused == 0
    assert len((tmp_path / "samples.discarded-1.jsonl").read_text().splitlines()) == 5


def test_a_log_without_run_file_is_refused(groups: list[TaskGroup], tmp_path: Path) -> None:
    (tmp_path / SAMPLES_FILE).write_text("")
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    with pytest.raises(ResumeError, match=r"unknown run \(no run.json\)"):
        evaluate(groups, config, tmp_path)
    (tmp_path / "run.json").write_text("[]")  # there, but no run's: not "no run.json"
    with pytest.raises(ResumeError, match=r"unknown run \(its run.json is not a JSON object\)"):
        evaluate(groups, config, tmp_path)


def test_a_cut_off_last_line_is_dropped_and_redone(groups: list[TaskGroup], tmp_path: Path) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    lines = log_lines(tmp_path)
    (tmp_path / SAMPLES_FILE).write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    summary = evaluate(groups, config, tmp_path)
    assert summary.reused == 4 and summary.ran == 1
    assert len(log_lines(tmp_path)) == 5
    assert all(json.loads(line) for line in log_lines(tmp_path))


def test_a_corrupt_line_in_the_middle_is_an_error(groups: list[TaskGroup], tmp_path: Path) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    lines = log_lines(tmp_path)
    lines[1] = "{not json"
    (tmp_path / SAMPLES_FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(ResumeError, match="line 2"):
        evaluate(groups, config, tmp_path)


class Broken:
    async def act(self, conversation: Conversation) -> Action:
        raise ValueError("the agent broke")


async def test_a_failing_sample_stops_the_run_with_one_message(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    with pytest.raises(UncobenchError, match="ValueError: the agent broke") as caught:
        await run_evaluation(groups, config, tmp_path, agents=lambda name, seed: Broken())
    assert "resume" in str(caught.value)
    assert "Traceback" in (tmp_path / "errors.log").read_text()


async def test_an_unknown_agent_or_setting_is_a_config_error(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="unknown agent"):
        await run_evaluation(groups, make_config("b", groups, ["gpt/none"]), tmp_path)
    with pytest.raises(ConfigError, match="unknown setting"):
        make_config("b", groups, AGENTS, ["sometimes"])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        make_config("b", groups, [])


async def test_a_sample_is_a_plain_function_of_its_job(groups: list[TaskGroup]) -> None:
    job = SampleJob.make(groups[0], "misaligned", "builtin/naive")
    copy = SampleJob.model_validate_json(job.model_dump_json())
    assert copy.key == job.key
    first, second = await run_sample(job), await run_sample(copy)
    strip: Any = {"elapsed_seconds"}
    assert first.model_dump(exclude=strip) == second.model_dump(exclude=strip)


# -- epochs ------------------------------------------------------------------------------------
def test_epochs_repeat_every_sample_with_a_seed_per_group_and_epoch(
    groups: list[TaskGroup],
) -> None:
    config = make_config("bench", groups, AGENTS, limit=2, epochs=3)
    jobs, _ = plan_jobs(groups, config)
    assert len(jobs) == 3 * (5 + 4) * len(AGENTS) and len({j.key for j in jobs}) == len(jobs)
    assert [j.epoch for j in jobs] == sorted(j.epoch for j in jobs)  # epoch by epoch
    seeds: dict[tuple[str, int], set[int]] = {}
    for job in jobs:
        seeds.setdefault((job.group.id, job.epoch), set()).add(job.epoch_seed)
        assert job.epoch_seed == epoch_seed(config.seed, job.group.id, job.epoch)
    # one seed per group and epoch, shared by its settings, agents and arms; all distinct
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)
    other_run = make_config("bench", groups, AGENTS, limit=2, epochs=3, seed=1)
    assert not {j.epoch_seed for j in plan_jobs(groups, other_run)[0]} & {
        j.epoch_seed for j in jobs
    }


def test_a_job_key_is_computed_once_and_a_copy_has_its_own(groups: list[TaskGroup]) -> None:
    job = SampleJob.make(groups[0], "reliable", "builtin/careful")
    key = job.key
    assert job.key is key  # remembered, not hashed again
    later = job.model_copy(update={"epoch": 2})
    fresh = SampleJob.make(groups[0], "reliable", "builtin/careful", epoch=2)
    assert later.key == fresh.key != key
    assert job.model_copy().key == key
    # the remembered key is not a field: equality and the JSON form ignore it
    twin = SampleJob.make(groups[0], "reliable", "builtin/careful")
    assert twin == job
    assert "key" not in json.loads(job.model_dump_json())


def _key_by_json_dumps(job: SampleJob, *optional: str) -> str:
    """A job's key as its definition reads: SHA-256 of ``json.dumps`` of its fields
    (``optional``: the fields its arguments other than the defaults add)."""
    fields = [job.group_hash or group_digest(job.group), job.setting]
    fields += [configuration_name(job.agent), job.seed, job.budget, f"epoch={job.epoch}"]
    fields.append(f"rules={READER_RULES}")
    return hashlib.sha256(json.dumps([*fields, *optional]).encode()).hexdigest()


def test_a_job_key_is_the_hash_of_its_fields_json(groups: list[TaskGroup]) -> None:
    """The key's text is written out (not made by ``json.dumps``): the same text for plain
    fields, texts the encoder escapes (quotes, backslashes, control and non-ASCII
    characters) and every optional field."""
    group = groups[0]
    odd = 'b\\ench/"r\u00e9play"\t\u2603,max_connections=4'
    plain = SampleJob.make(group, "reliable", "builtin/careful")
    assert plain.key == _key_by_json_dumps(plain)
    other = SampleJob.make(group, "missed", "builtin/naive", seed=7, budget=5, epoch=3)
    assert other.key == _key_by_json_dumps(other)
    escaped = SampleJob.make(group, "reliable", odd, group_hash='h\u00e4sh "x"')
    assert escaped.key == _key_by_json_dumps(escaped)
    every = SampleJob.make(
        group, "missed", "builtin/careful", colleague=f"openai/{odd}", intervention="diagnosis",
        missed_wait=2, followup_reader="model", colleague_mode="policy", seed=-1,
    )  # fmt: skip
    optional = [f"colleague={configuration_name(f'openai/{odd}')}", "intervention=diagnosis"]
    optional += ["missed_wait=2", "followup_reader=model", "colleague_mode=policy"]
    assert every.key == _key_by_json_dumps(every, *optional)
    # a seed that is not a plain int (a bool) is written by json.dumps itself
    flagged = SampleJob.model_construct(**{**dict(other), "seed": True})
    assert flagged.key == _key_by_json_dumps(flagged)


async def test_a_record_names_its_job_and_counts_its_trace(groups: list[TaskGroup]) -> None:
    """A record names its job's fields and counts its trace's rounds."""
    job = SampleJob.make(groups[0], "missed", "builtin/careful", seed=3, budget=9, epoch=2)
    record = await run_sample(job)
    assert record.rounds == len(record.trace) > 1
    assert (record.key, record.group_id, record.group_hash) == (
        job.key,
        job.group.id,
        job.group_hash,
    )
    assert (record.setting, record.agent, record.seed, record.budget) == (
        "missed",
        "builtin/careful",
        3,
        9,
    )
    assert (record.epoch, record.epoch_seed, record.colleague) == (2, job.epoch_seed, "scripted")
    assert record.defects == tuple(d.kind for d in job.group.setting("missed").defects) != ()


async def test_a_record_names_its_jobs_arm_and_its_episodes_end(groups: list[TaskGroup]) -> None:
    """The fields a record reads from its job's and its episode's ``__dict__``: the arm, the
    delivery, the gold answer, the colleague mode and the end."""
    job = SampleJob.make(groups[0], "missed", "builtin/careful", intervention="diagnosis")
    played = await play_sample(job)
    record = await played.score()
    outcome = played.environment.outcome
    assert (record.intervention, record.intervention_delivered) == ("diagnosis", True)
    assert record.intervention_delivered == outcome.intervention_delivered
    assert (record.gold, record.colleague_mode, record.colleague_policy) == (
        job.group.gold,
        "phrase",
        None,
    )
    assert record.end_detail is outcome.end_detail is None
    assert record.rounds == outcome.rounds == len(record.trace) > 1
    assert record.epoch_seed == epoch_seed(0, job.group.id, 1)


def test_the_agent_is_made_with_its_epoch_seed(groups: list[TaskGroup], tmp_path: Path) -> None:
    made: list[int] = []

    def maker(name: str, seed: int) -> Agent:
        made.append(seed)
        return make_agent(name, seed)

    config = make_config("bench", groups, ["builtin/naive"], ["missed"], limit=2, epochs=2)
    summary = evaluate(groups, config, tmp_path, agents=maker)
    assert sorted(made) == sorted(r.epoch_seed for r in summary.records)
    assert {(r.epoch, r.epoch_seed) for r in summary.records} == {
        (job.epoch, job.epoch_seed) for job in plan_jobs(groups, config)[0]
    }


async def test_a_builtin_guess_varies_with_the_epoch(groups: list[TaskGroup]) -> None:
    """``builtin/optimist`` breaks ties with its seed: across epochs it picks differently
    (in the mining example two candidates pass what the operand owners hold)."""
    mining = next(g for g in example_groups() if g.id == "mining_supervisor")
    picks = {
        (await run_sample(SampleJob.make(mining, "reliable", "builtin/optimist", epoch=e))).answer
        for e in range(1, 7)
    }
    assert len({p.candidate for p in picks if p is not None}) == 2


def test_a_run_grows_by_epochs_without_redoing_any(groups: list[TaskGroup], tmp_path: Path) -> None:
    one = make_config("bench", groups, ["builtin/naive"], limit=1, epochs=1)
    first = evaluate(groups, one, tmp_path)
    three = make_config("bench", groups, ["builtin/naive"], limit=1, epochs=3)
    assert three.digest() == one.digest()  # the epoch count is not in the hash
    ran: list[str] = []

    def watching(name: str, seed: int) -> Agent:
        ran.append(name)
        return make_agent(name, seed)

    grown = evaluate(groups, three, tmp_path, agents=watching)
    assert (grown.reused, grown.ran, len(ran)) == (5, 10, 10)
    by_epoch = {r.epoch for r in read_log(tmp_path / SAMPLES_FILE)[0]}
    assert by_epoch == {1, 2, 3}
    epoch_one = [r for r in grown.records if r.epoch == 1]
    assert content(epoch_one) == content(first.records)
    assert json.loads((tmp_path / RUN_FILE).read_text())["config"]["epochs"] == 3

    fewer = make_config("bench", groups, ["builtin/naive"], limit=1, epochs=2)
    with pytest.raises(ResumeError, match="holds 3 epochs"):
        evaluate(groups, fewer, tmp_path)
    kept = evaluate(groups, fewer, tmp_path, force=True)
    assert (kept.reused, kept.ran) == (10, 0)
    assert (tmp_path / "samples.discarded-1.jsonl").exists()


def test_a_run_directory_from_before_epochs_is_not_resumed_silently(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    meta = json.loads((tmp_path / RUN_FILE).read_text())
    del meta["config"]["epochs"]
    meta["config_hash"] = "written-by-an-earlier-version"
    (tmp_path / RUN_FILE).write_text(json.dumps(meta))
    with pytest.raises(ResumeError, match="before epochs"):
        evaluate(groups, config, tmp_path)


def test_the_readers_rules_hash_follows_its_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reader_rules_digest() == READER_RULES
    monkeypatch.setattr(_phrases, "EXACT", _phrases.EXACT[1:])  # "exact" no longer asks for it
    assert reader_rules_digest() != READER_RULES


def test_a_run_is_not_resumed_across_a_change_of_the_readers_rules(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Samples read under other follow-up rules (an earlier version's) are refused, not mixed
    into one log with samples read under this version's; ``force`` sets them aside."""
    config = make_config("bench", groups, ["builtin/careful"], limit=1)
    earlier = "0" * 16
    monkeypatch.setattr(_sample, "_RULES", f"rules={earlier}")
    monkeypatch.setattr(_sample, "_RULES_FIELD", json.dumps(f"rules={earlier}"))
    evaluate(groups, config.model_copy(update={"followup_rules": earlier}), tmp_path)
    monkeypatch.undo()
    with pytest.raises(ResumeError, match=r"changed: followup_rules \(this version reads"):
        evaluate(groups, config, tmp_path)
    with pytest.raises(ResumeError, match="followup_rules"):
        evaluate(groups, config.model_copy(update={"epochs": 2}), tmp_path)  # nor extended
    kept = evaluate(groups, config, tmp_path, force=True)
    assert (kept.reused, kept.ran) == (0, 5)
    meta = json.loads((tmp_path / RUN_FILE).read_text())
    del meta["config"]["followup_rules"]  # as a version before the rules were recorded wrote it
    meta["config_hash"] = "written-by-an-earlier-version"
    (tmp_path / RUN_FILE).write_text(json.dumps(meta))
    with pytest.raises(ResumeError, match=r"followup_rules \(an earlier version's run"):
        evaluate(groups, config, tmp_path)


def test_a_run_is_not_resumed_across_a_change_of_a_colleague_prompt(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a colleague model is told changes its replies as the main agent's instructions
    change the agent's: a run extended after its prompt changed would hold epochs of both."""
    run = tmp_path / "run"
    made = {"settings": ["reliable"], "limit": 1, "colleague": "mock/echo,cache=false"}
    config = make_config("bench", groups, ["builtin/careful"], **made)  # type: ignore[arg-type]
    assert make_config("bench", groups, ["builtin/careful"]).prompts_hash == ""  # scripted
    evaluate(groups, config, run)
    prompts = tmp_path / "evaluators"
    shutil.copytree(asset_path("evaluators"), prompts)
    with (prompts / "colleague.md").open("a", encoding="utf-8") as prompt:
        prompt.write("Answer in French.\n")
    monkeypatch.setattr(_plan, "asset_path", lambda name: tmp_path / name)
    changed = make_config("bench", groups, ["builtin/careful"], epochs=2, **made)  # type: ignore[arg-type]
    assert changed.prompts_hash != config.prompts_hash
    with pytest.raises(ResumeError, match="changed: prompts_hash"):
        evaluate(groups, changed, run)


def test_force_sets_aside_a_model_agents_samples_written_under_other_instructions(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--force`` keeps the samples that still apply: a built-in agent's (it reads no
    instructions), not a model agent's written under instructions since changed, which
    were kept before while run.json took the new instructions' hash."""
    agents = ["builtin/careful", "mock/echo,cache=false"]
    made: dict[str, Any] = {"settings": ["reliable"], "limit": 1}
    first = evaluate(groups, make_config("bench", groups, agents, **made), tmp_path)
    assert (first.ran, first.reused) == (2, 0)
    told = _plan.default_instructions() + "\nAlways ask the finance desk first.\n"
    monkeypatch.setattr(_plan, "default_instructions", lambda: told)
    changed = make_config("bench", groups, agents, **made)
    with pytest.raises(ResumeError, match="changed: instructions_hash"):
        evaluate(groups, changed, tmp_path)
    forced = evaluate(groups, changed, tmp_path, force=True)
    assert (forced.ran, forced.reused) == (1, 1)  # the model agent's sample runs again
    keys = [job.key for job in plan_jobs(groups, changed)[0]]
    assert sorted(r.key for r in read_log(tmp_path / SAMPLES_FILE)[0]) == sorted(keys)


def test_run_json_records_how_each_agent_samples(groups: list[TaskGroup], tmp_path: Path) -> None:
    config = make_config("bench", groups, ["builtin/naive"], limit=1)
    evaluate(groups, config, tmp_path)
    generation = json.loads((tmp_path / RUN_FILE).read_text())["generation"]
    assert generation == {"builtin/naive": {"kind": "builtin", "seed": "per epoch"}}
    named = generation_settings("openai/gpt-4.1-mini,temperature=0.7")
    assert named["temperature"] == 0.7 and named["seed"] == "per epoch"
    assert generation_settings("openai/gpt-4.1-mini")["temperature"] == "provider default"
    assert generation_settings("openai/gpt-4.1-mini,seed=5")["seed"] == 5


def test_the_benchmark_is_frozen_while_played_without_a_full_collection_first(
    groups: list[TaskGroup], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loaded groups are moved out of the collector's reach while samples play (no
    collection scans them again) and given back after; only the youngest generation is
    collected before, and the start (the groups' check) collects at the run's pace, so the
    first sample does not wait for scans of the whole benchmark or of every job."""
    from uncobench_z3._gc import YOUNG_GENERATION
    from uncobench_z3.evaluation import _inputs

    collections: list[int] = []
    frozen_while_playing: list[int] = []
    pace_of_the_check: list[int] = []
    check = _inputs.typed_task

    def checking(group: TaskGroup) -> Any:
        pace_of_the_check.append(gc.get_threshold()[0])
        return check(group)

    monkeypatch.setattr(_inputs, "typed_task", checking)

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and not frozen_while_playing:
            collections.append(info["generation"])

    class Watching:
        def __init__(self, name: str, seed: int) -> None:
            self.agent = make_agent(name, seed)

        async def act(self, conversation: Conversation) -> Action:
            frozen_while_playing.append(gc.get_freeze_count())
            return await self.agent.act(conversation)

    gc.collect()
    gc.callbacks.append(watch)
    try:
        evaluate(groups, make_config("bench", groups, AGENTS, limit=2), tmp_path, agents=Watching)
    finally:
        gc.callbacks.remove(watch)
    assert frozen_while_playing and min(frozen_while_playing) > 0
    assert collections and set(collections) == {0}  # before the first sample: the youngest
    assert pace_of_the_check and min(pace_of_the_check) >= YOUNG_GENERATION
    assert gc.get_freeze_count() == 0
