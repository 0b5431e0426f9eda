"""A run's memory: the summary keeps outcomes (records are read back from the log), and the
player lets a group go, with what the process remembers of it, after its last sample."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import pytest

from uncobench_z3.errors import ModelAPIError, UncobenchError
from uncobench_z3.evaluation import (
    SAMPLES_FILE,
    Environment,
    PreparedGroup,
    SampleJob,
    SampleOutcome,
    SampleRecord,
    _attribution,
    _min_rounds,
    compute_metrics,
    evaluate,
    example_groups,
    group_digest,
    justify_answer,
    make_agent,
    make_config,
    read_log,
)
from uncobench_z3.evaluation._play import Player
from uncobench_z3.evaluation._run_sample import PlayedSample
from uncobench_z3.evaluation._sample import AgentMaker
from uncobench_z3.settings import TaskGroup, Vocabulary, _vocabulary, forget_vocabulary

AGENTS = ["builtin/naive", "builtin/careful"]


@pytest.fixture(scope="module")
def groups() -> list[TaskGroup]:
    return example_groups()


def without_time(records: list[SampleRecord]) -> list[str]:
    return [r.model_dump_json(exclude={"elapsed_seconds"}) for r in records]


def live_records() -> int:
    # evaluate() freezes what is alive and unfreezes it at its end: what an earlier test froze
    # (a report read under long_lived) and still holds (test_sample_record.py's module-level
    # records, in a worker that collected it) is counted before as after
    gc.unfreeze()
    gc.collect()
    return sum(isinstance(o, SampleRecord) for o in gc.get_objects())


def test_the_summary_keeps_outcomes_and_reads_records_from_the_log(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("ex", groups, AGENTS, limit=2)
    before = live_records()
    summary = evaluate(groups, config, tmp_path, concurrency=4)
    assert live_records() <= before  # no record outlives the run (they are in the log)
    assert all(isinstance(o, SampleOutcome) for o in summary.outcomes)
    assert summary.ran == len(summary.outcomes) == (5 + 4) * 2
    logged, _ = read_log(tmp_path / SAMPLES_FILE)
    assert without_time(summary.records) == without_time(logged)  # the log's order
    lazily = summary.iter_records()
    assert next(lazily).key == summary.outcomes[0].key
    assert [SampleOutcome.of(r) for r in logged] == summary.outcomes
    assert repr(summary) == f"RunSummary({str(tmp_path)!r}, records=18, ran=18)"
    light = list(summary.iter_records(traces=False))
    assert without_time(light) == without_time(
        [r.model_copy(update={"trace": [], "notes": []}) for r in logged]
    )
    unavailable = summary.unavailable
    assert compute_metrics(light, unavailable) == compute_metrics(logged, unavailable)


def test_a_resumed_summary_lists_the_reused_samples_first(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    first = evaluate(groups, make_config("ex", groups, AGENTS, limit=1), tmp_path, concurrency=2)
    config = make_config("ex", groups, AGENTS, limit=2)
    second = evaluate(groups, config, tmp_path, force=True, concurrency=4)
    assert second.reused == first.ran and second.ran == 4 * 2
    assert [o.key for o in second.outcomes[: second.reused]] == [o.key for o in first.outcomes]
    assert [r.key for r in second.records] == [o.key for o in second.outcomes]
    assert second.errors == 0 and {o.result for o in second.outcomes} <= {
        "correct",
        "wrong_answer",
        "budget_exhausted",
    }


def test_a_summary_whose_log_changed_says_so(groups: list[TaskGroup], tmp_path: Path) -> None:
    summary = evaluate(groups, make_config("ex", groups, AGENTS, limit=1), tmp_path)
    log = tmp_path / SAMPLES_FILE
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[1:]), encoding="utf-8")
    with pytest.raises(UncobenchError, match=r"1 record\(s\) of this run are missing"):
        _ = summary.records
    log.unlink()
    with pytest.raises(UncobenchError, match="missing"):
        list(summary.iter_records())


def test_the_player_lets_a_group_go_after_its_last_sample(groups: list[TaskGroup]) -> None:
    first, second = groups[0], groups[1]
    jobs = [
        SampleJob.make(group, setting, "builtin/careful")
        for group in (first, second)
        for setting in ("reliable", "misaligned")
    ]
    player = Player(make_agent, concurrency=1)  # in plan order: the first group, then the second
    held: dict[str, list[bool]] = {"prepared": [], "memo": [], "rounds": []}
    alive: list[weakref.ref[object]] = []
    first_hash = group_digest(first)

    async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
        if job.group is first and not alive:
            prepared = player._prepared[id(first)]
            alive.append(weakref.ref(prepared))
            alive.append(weakref.ref(Vocabulary.of(prepared.task)))
        if job.group is second:  # the first group's samples are done
            gc.collect()
            held["prepared"].append(id(first) in player._prepared)
            held["memo"].append(any(k[0] == first_hash for k in _attribution._memos))
            held["rounds"].append(any(k[0] == first_hash for k in _min_rounds._cache))
            held["prepared"].append(any(ref() is not None for ref in alive))

    asyncio.run(player.play(jobs, sink))
    assert not player.failures
    assert held == {"prepared": [False, False] * 2, "memo": [False] * 2, "rounds": [False] * 2}
    assert not player._prepared and not player._left  # nothing kept once the queue is done


class _Broken:
    """An agent whose provider fails: every sample is an error sample."""

    async def act(self, conversation: object) -> object:
        raise ModelAPIError("the provider broke", status_code=500, attempts=2)


def _alive(kinds: tuple[type, ...]) -> int:
    gc.collect()
    return sum(isinstance(o, kinds) for o in gc.get_objects())


@pytest.mark.parametrize("agents", [make_agent, lambda name, seed: _Broken()], ids=["ok", "error"])
def test_a_sample_waiting_for_its_sink_holds_neither_its_episode_nor_its_group(
    groups: list[TaskGroup], agents: AgentMaker
) -> None:
    """The driver's sink waits for the log's fsync, while other samples play: a sample
    waiting there holds only its job, outcome and line; after its group's last sample, the
    group's prepared data is let go before the wait (both samples of a group, and the
    second group, are in play at once here; the error samples take the slot's other path)."""
    first, second = groups[0], groups[1]
    jobs = [
        SampleJob.make(group, setting, "builtin/careful")
        for group in (first, second)
        for setting in ("reliable", "misaligned")
    ]
    kinds = (PlayedSample, Environment, SampleRecord, PreparedGroup)
    before = _alive(kinds)
    player = Player(agents, concurrency=len(jobs))
    waited: list[SampleOutcome] = []
    seen: dict[str, object] = {}

    async def play() -> None:
        every_one_waits = asyncio.Event()

        async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
            waited.append(outcome)
            if len(waited) == len(jobs):  # every sample is played, scored and waits here
                seen["alive"] = _alive(kinds) - before
                seen["prepared"] = len(player._prepared)
                every_one_waits.set()
            await every_one_waits.wait()

        await player.play(jobs, sink)

    asyncio.run(play())
    assert not player.failures
    assert seen == {"alive": 0, "prepared": 0}
    assert [o.result == "error" for o in waited] == [agents is not make_agent] * len(jobs)
    assert not player._prepared and not player._left


def test_a_vocabulary_is_kept_only_while_held_or_recent(
    groups: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_vocabulary, "RECENT_VOCABULARIES", 2)
    tasks = [PreparedGroup.of(g).task for g in groups[:4]]
    vocabularies = [Vocabulary.of(t) for t in tasks]
    assert all(Vocabulary.of(t) is v for t, v in zip(tasks, vocabularies, strict=True))
    refs = [weakref.ref(v) for v in vocabularies]
    held = vocabularies[0]
    del vocabularies
    gc.collect()
    # the first is held by this test, the last two are the recent ones; the second is gone
    assert [r() is not None for r in refs] == [True, False, True, True]
    assert Vocabulary.of(tasks[0]) is held  # now among the recent two, with the fourth
    assert refs[2]() is None
    forget_vocabulary(tasks[3])
    gc.collect()
    assert [r() is not None for r in refs] == [True, False, False, False]


def test_forgetting_a_group_drops_its_labels_and_judge(groups: list[TaskGroup]) -> None:
    group = groups[0]
    task, digest = PreparedGroup.of(group).task, group_digest(group)
    justify_answer(task, group.gold, [], group_hash=digest)
    assert any(k[0] == digest for k in _attribution._memos)
    assert any(k[0] == digest for k in _attribution._shared)
    _attribution.forget_group(digest)
    assert not any(k[0] == digest for k in (*_attribution._memos, *_attribution._shared))


def test_records_of_one_agent_are_read_alone_in_log_order(
    groups: list[TaskGroup], tmp_path: Path
) -> None:
    config = make_config("ex", groups, AGENTS, limit=2)
    summary = evaluate(groups, config, tmp_path, concurrency=4)
    everything = summary.records
    assert summary.agents == list(dict.fromkeys(r.agent for r in everything)) == AGENTS
    for agent in AGENTS:
        alone = list(summary.iter_records(agent=agent))
        assert alone and without_time(alone) == without_time(
            [r for r in everything if r.agent == agent]
        )
    # a damaged line concerns only its own agent's reading, which says one is missing
    log = tmp_path / SAMPLES_FILE
    lines = log.read_text().splitlines(keepends=True)
    torn = next(i for i, line in enumerate(lines) if '"agent":"builtin/careful"' in line)
    lines[torn] = lines[torn][: len(lines[torn]) // 2] + "\n"
    log.write_text("".join(lines))
    assert len(list(summary.iter_records(agent="builtin/naive"))) == sum(
        r.agent == "builtin/naive" for r in everything
    )
    with pytest.raises(UncobenchError, match="1 record"):
        list(summary.iter_records(agent="builtin/careful"))


def test_each_group_in_play_gets_one_judge(
    groups: list[TaskGroup], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more groups in play than a smaller limit kept, a group's judge was made again
    while its samples still played (and its remembered verdicts with it)."""
    many = [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(8) for g in groups]
    assert len(many) == 40 > 32
    made: list[str] = []
    original = _attribution.EvidenceJudge.__init__

    def counting(self: _attribution.EvidenceJudge, *args: object, **kwargs: object) -> None:
        made.append(self.__class__.__name__)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_attribution.EvidenceJudge, "__init__", counting)
    jobs = [
        SampleJob.make(group, setting, "builtin/careful")
        for setting in ("reliable", "misaligned", "incomplete")
        for group in many
    ]  # every group in play at once: its settings come one round of groups apart
    player = Player(make_agent, concurrency=len(jobs))

    async def sink(job: SampleJob, outcome: SampleOutcome, line: str) -> None:
        pass

    asyncio.run(player.play(jobs, sink))
    assert not player.failures
    assert len(made) == len(many), len(made)
