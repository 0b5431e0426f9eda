"""The replayed passes of ``eval_overhead.py`` (its cost per round, part 1 of its docstring).

``builtin/careful``'s decisions on every sample are recorded (:func:`record`) and a
:class:`ReplayAgent` answers from that memo with no thinking, so that a pass measures the
runner alone. Here: the copies of the examples the passes play, the first pass in a fresh
interpreter (:func:`fresh_passes`: what a user's ``uncobench eval`` pays) and where it spends
its CPU (:data:`PARTS`, ``--breakdown``), over the examples or a built benchmark's first groups
(:func:`first_pass_over`), and each built-in agent's own passes (:func:`_agent_passes`).

Not a script: ``eval_overhead.py`` imports it (with this folder on ``sys.path``, as the scripts
import ``_common``), and so does each fresh interpreter that runs one of its functions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import glob
import pickle
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from _common import in_fresh_process

from uncobench_z3._gc import fewer_collections
from uncobench_z3.construct import load_groups, render_task
from uncobench_z3.evaluation import (
    Action,
    AgentMaker,
    Conversation,
    Environment,
    PreparedGroup,
    SampleJob,
    let_group_go,
    make_agent,
    make_config,
    plan_jobs,
    run_sample,
    settings_stored_proofs,
)
from uncobench_z3.settings import DefectBalance, TaskGroup, perturb
from uncobench_z3.spec import check_structure, load_spec

ROOT = Path(__file__).resolve().parent.parent
MemoKey = tuple[str, tuple[str, ...]]


def memo_key(conversation: Conversation) -> MemoKey:
    """A deterministic agent's next action depends only on the task and what it observed."""
    seen = [
        f"{reply.role}:{reply.text}"
        for turn in conversation.turns
        for reply in turn.observation.replies
    ]
    seen.append(str(len(conversation.turns)))
    return conversation.briefing.task_text, tuple(seen)


class ReplayAgent:
    """Answers from a memo of a recorded agent, after a simulated latency per call.

    ``first_call``: shared memory (inherited by forked eval workers) where the agent notes
    when the run's first call began (``time.perf_counter``; negative until then).

    A pass gives each sample its own :meth:`for_sample` (the agent maker): the replay's own
    work is not the runner's, and :func:`memo_key` formats every reply of every turn again
    at each call, so that a call's cost grows with the conversation. A first pass over 80
    built groups: 1,122.9 M instructions with every call's key made by :func:`memo_key`
    (the conversation read from its start), 1,118.2 M with the cursors, and
    1,099.4 M with the recorded actions handed out in order with no key at all (no guard
    that the episode is the one recorded: not a replay)."""

    def __init__(
        self, memo: Mapping[MemoKey, Action], latency: float, first_call: Any = None
    ) -> None:
        self.memo = memo
        self.latency = latency
        self.first_call = first_call

    async def act(self, conversation: Conversation) -> Action:
        """The recorded action, the conversation read from its start (:meth:`for_sample`
        reads only what is new)."""
        return await ReplayCursor(self).act(conversation)

    async def wait(self) -> None:
        """The call's simulated latency, the run's first call noted first."""
        if self.first_call is not None and self.first_call.value < 0:
            with self.first_call.get_lock():
                if self.first_call.value < 0:
                    self.first_call.value = time.perf_counter()
        if self.latency:
            await asyncio.sleep(self.latency)

    def for_sample(self, name: str, seed: int) -> ReplayCursor:
        """An :data:`AgentMaker`: one sample's replay of this memo."""
        return ReplayCursor(self)


class ReplayCursor:
    """One sample's replay of a :class:`ReplayAgent`'s memo: the replies seen so far kept as
    :func:`memo_key` writes them, so that a call formats only the turns new since the last
    (the same key; a conversation that is not the one followed is read from its start)."""

    def __init__(self, replay: ReplayAgent) -> None:
        self.replay = replay
        self.briefing: object = None
        self.turns = 0
        self.seen: list[str] = []

    async def act(self, conversation: Conversation) -> Action:
        await self.replay.wait()
        turns = conversation.turns
        if conversation.briefing is not self.briefing or len(turns) < self.turns:
            self.briefing, self.turns, self.seen = conversation.briefing, 0, []
        seen = self.seen
        for turn in turns[self.turns :]:
            seen += [f"{reply.role}:{reply.text}" for reply in turn.observation.replies]
        self.turns = len(turns)
        return self.replay.memo[conversation.briefing.task_text, (*seen, str(len(turns)))]


def example_groups(copies: int) -> list[TaskGroup]:
    balance = DefectBalance()
    base = []
    for path in sorted(glob.glob(str(ROOT / "examples" / "*.json"))):
        found = perturb(load_spec(path), seed=0, balance=balance).group
        assert found is not None
        # a built benchmark stores the rendered text with each group, each setting's minimum
        # rounds and its decision records' first changes (`uncobench build` computes them,
        # `uncobench verify` checks them); so do these
        task = check_structure(found.spec).task
        assert task is not None and found.proofs is not None
        rendered = render_task(task, found.seed).model_dump(mode="json")
        group = found.model_copy(update={"rendered": rendered})
        stored = settings_stored_proofs(group, task).computed()
        proofs = found.proofs.model_copy(update=stored)
        base.append(group.model_copy(update={"proofs": proofs}))
    # distinct ids, so distinct content hashes and job keys, for every copy
    return [g.model_copy(update={"id": f"{g.id}-{i}"}) for i in range(copies) for g in base]


async def play_all(
    jobs: list[SampleJob],
    agents: AgentMaker,
    prepared: dict[int, PreparedGroup],
    let_go: bool = False,
) -> list[int]:
    """Every job in turn with ``agents``, collecting at the runner's pace; each sample's
    rounds (its record is dropped, as a run drops it once its line is written). With
    ``let_go``, each group is let go after its last sample, as a run lets it go (see
    :func:`_first_pass`)."""
    left = Counter(id(job.group) for job in jobs)
    rounds = []
    with fewer_collections():
        for job in jobs:
            rounds.append((await run_sample(job, agents, prepared[id(job.group)])).rounds)
            left[id(job.group)] -= 1
            if let_go and not left[id(job.group)]:
                let_group_go(prepared, job.group, job.group_hash)
    return rounds


def builtin_maker(name: str) -> AgentMaker:
    """Makes built-in agent ``name`` whatever name a job gives (the jobs were planned for
    the replay agent)."""
    return lambda _, seed: make_agent(name, seed)


async def record(jobs: list[SampleJob]) -> tuple[dict[MemoKey, Action], list[int]]:
    """Memorise builtin/careful's decisions on every job; returns the memo and rounds/job."""
    memo: dict[MemoKey, Action] = {}
    rounds = []
    for job in jobs:
        env = Environment(job.group, job.setting, job.budget)
        agent = make_agent("builtin/careful", job.seed)
        while not env.finished:
            conversation = env.conversation
            action = await agent.act(conversation)
            memo[memo_key(conversation)] = action
            env.step(action)
        rounds.append(env.rounds)
    return memo, rounds


class Recorded(NamedTuple):
    """The copies of the examples, their samples and ``builtin/careful``'s decisions on them."""

    groups: list[TaskGroup]
    jobs: list[SampleJob]
    memo: dict[MemoKey, Action]
    rounds: list[int]
    """a sample's rounds, in job order"""


def recorded_examples(copies: int) -> Recorded:
    """``copies`` copies of the examples, every sample played by ``builtin/careful`` and its
    decisions recorded."""
    groups = example_groups(copies)
    jobs, _ = plan_jobs(groups, make_config("examples", groups, ["bench/replay"]))
    memo, rounds = asyncio.run(record(jobs))
    return Recorded(groups, jobs, memo, rounds)


def pass_groups(copies: int, bench: str | None) -> list[TaskGroup]:
    """A first pass's groups: ``copies`` copies of the examples, or with ``bench`` the first
    ``5 * copies`` groups of that built benchmark (as many groups, all different; all of
    them when it has fewer)."""
    return example_groups(copies) if bench is None else load_groups(bench)[: 5 * copies]


def _first_pass(
    copies: int,
    memo_path: str,
    instrument: Callable[[], None] | None = None,
    bench: str | None = None,
) -> float:
    """In a new interpreter: every sample of :func:`pass_groups` played once by the replay
    agent with no latency, as the in-process first pass of ``eval_overhead.py``
    (``in_process``; groups prepared first, not counted), but with no process-wide memory
    warmed by having played the same groups before (the in-process pass follows the
    recording of the decisions: the task texts' readings, the reply lines' statements, the
    messages' tokens are known), and each group let go after its last sample, as a run lets
    it go. CPU s."""
    groups = pass_groups(copies, bench)
    agent = ReplayAgent(pickle.loads(Path(memo_path).read_bytes()), 0.0)
    jobs, _ = plan_jobs(groups, make_config("examples", groups, ["bench/replay"]))
    prepared = {id(g): PreparedGroup.of(g) for g in groups}
    if instrument is not None:  # only the pass itself is measured (not the groups' making)
        instrument()

    gc.collect()
    cpu = time.process_time()
    # each group is let go after its last sample, as the runner's Player does: a pass that
    # kept every group's readings, judge and labels gave the collector that much more to walk
    # (over the first 80 groups of a built benchmark, its instructions halved when they went:
    # 43.9 to 21.2 M of 1,363 M)
    asyncio.run(play_all(jobs, agent.for_sample, prepared, let_go=True))
    return time.process_time() - cpu


def _agent_passes(copies: int, name: str) -> tuple[float, float, int, int]:
    """In a new interpreter: every sample of :func:`example_groups` played by built-in agent
    ``name`` (groups prepared first, not counted), twice: the first pass (nothing of these
    groups known, what a user's run pays; the agent's own questions are read for the first
    time, whichever agent it is; each group let go after its last sample, as a run lets it
    go) and the same samples again (their groups prepared afresh and played once before,
    neither counted). CPU s of each, rounds, samples.

    Each agent in a process of its own, so that no agent plays after another: in one
    process the agents measured later would find the readings of the questions they share
    with the earlier ones already made (measured: builtin/naive, whose questions differ from
    the recorded agent's, looked 2.3 times as costly as the others that way)."""
    groups = example_groups(copies)
    jobs, _ = plan_jobs(groups, make_config("examples", groups, ["bench/replay"]))
    agents = builtin_maker(name)
    cpu: list[float] = []
    # the first pass lets each group go after its last sample, as a run does (see
    # :func:`_first_pass`); "again" plays groups prepared afresh once, not counted, then again
    for first in (True, False):
        prepared = {id(g): PreparedGroup.of(g) for g in groups}
        if not first:
            asyncio.run(play_all(jobs, agents, prepared))
        gc.collect()  # a pass is not charged for the previous one's garbage
        started = time.process_time()
        rounds = asyncio.run(play_all(jobs, agents, prepared, let_go=first))
        cpu.append(time.process_time() - started)
    return cpu[0], cpu[1], sum(rounds), len(rounds)


def agent_figures(passes: tuple[float, float, int, int]) -> dict[str, float]:
    """:func:`_agent_passes`' figures, per round and per sample."""
    first, again, rounds, samples = passes
    return {
        "rounds": rounds,
        "round_cpu_ms": round(1e3 * first / rounds, 3),
        "sample_cpu_ms": round(1e3 * first / samples, 3),
        "round_cpu_ms_again": round(1e3 * again / rounds, 3),
    }


PARTS: tuple[tuple[str, str, str | None, str], ...] = (
    # (label, module, class or None, attribute): where a first pass spends its CPU
    ("colleagues' readings of the agent's messages", "_colleagues", "RecordBook", "read"),
    # stored in the groups, as a built benchmark's: read, not searched for (an ideal agent's
    # episode; see the module docstring)
    ("minimum rounds (stored in the group)", "_run_sample", None, "minimum_rounds"),
    ("face-value evidence of each round", "_run_sample", None, "evidence_by_round"),
    ("justification of a right answer", "_run_sample", None, "justify_answer"),
    ("attribution of a wrong answer", "_run_sample", None, "attribute_error"),
    ("round notes", "_run_sample", None, "round_notes"),
    ("the record", "_run_sample", None, "_record"),
)


def _timed(
    fn: Callable[..., object], label: str, spent: dict[str, float], depth: list[int]
) -> Callable[..., object]:
    """``fn`` charging its CPU time to ``label`` - unless another timed part called it (a
    reading inside the minimum-rounds search, for a group that stores none, is the search's)."""
    if asyncio.iscoroutinefunction(fn):

        async def timed_coroutine(*args: object, **kwargs: object) -> object:
            if depth[0]:
                return await fn(*args, **kwargs)  # type: ignore[misc]
            depth[0] += 1
            started = time.process_time()
            try:
                return await fn(*args, **kwargs)  # type: ignore[misc]
            finally:
                depth[0] -= 1
                spent[label] += time.process_time() - started

        return timed_coroutine

    def timed(*args: object, **kwargs: object) -> object:
        if depth[0]:
            return fn(*args, **kwargs)
        depth[0] += 1
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            depth[0] -= 1
            spent[label] += time.process_time() - started

    return timed


def _breakdown(
    copies: int, memo_path: str, bench: str | None = None
) -> tuple[float, dict[str, float]]:
    """In a new interpreter: the first pass of :func:`_first_pass`, with the CPU time of each
    of :data:`PARTS` measured (the outermost part called is charged); (total, by part)."""
    import importlib

    spent = dict.fromkeys((label for label, *_ in PARTS), 0.0)
    depth = [0]

    def instrument() -> None:
        for label, module_name, class_name, attribute in PARTS:
            module = importlib.import_module(f"uncobench_z3.evaluation.{module_name}")
            owner = getattr(module, class_name) if class_name else module
            setattr(owner, attribute, _timed(getattr(owner, attribute), label, spent, depth))

    total = _first_pass(copies, memo_path, instrument, bench)
    return total, spent


def fresh_passes(
    copies: int, memo: Mapping[MemoKey, Action], bench: str | None, breakdown: bool
) -> tuple[float, tuple[float, dict[str, float]] | None]:
    """:func:`_first_pass` in a new interpreter, and :func:`_breakdown` in another when
    ``breakdown``, over :func:`pass_groups`, replaying ``memo``."""
    with tempfile.TemporaryDirectory() as scratch:
        memo_file = Path(scratch) / "memo.pickle"
        memo_file.write_bytes(pickle.dumps(memo))
        cpu = in_fresh_process(_first_pass, copies, str(memo_file), None, bench)
        parts = in_fresh_process(_breakdown, copies, str(memo_file), bench) if breakdown else None
    return cpu, parts


def breakdown_table(
    total: float, by_part: dict[str, float], groups: int
) -> dict[str, dict[str, float]]:
    """:func:`_breakdown`'s figures a group, the rest of the pass included."""
    rest = total - sum(by_part.values())
    parts = {**by_part, "the rest: the episode's own work, scoring the answer, the runner": rest}
    return {
        label: {
            "cpu_ms_per_group": round(1e3 * spent / groups, 3),
            "share": round(spent / total, 3),
        }
        for label, spent in parts.items()
    }


def say_breakdown(
    say: Callable[[str], None], breakdown: dict[str, dict[str, float]], what: str
) -> None:
    say(f"where a first pass spends its CPU (fresh interpreter, {what}):")
    for label, figures_of in breakdown.items():
        say(
            f"  {label}: {figures_of['cpu_ms_per_group']:.3f} ms a group "
            f"({100 * figures_of['share']:.0f}%)"
        )


def first_pass_over(
    bench: Path, bench_groups: list[TaskGroup], args: argparse.Namespace, say: Callable[[str], None]
) -> dict[str, object]:
    """The fresh first pass over the first ``5 * copies`` groups of a built benchmark (its
    groups, loaded: ``bench_groups``): the copies of the examples share their messages and
    tagged words, which the reader keeps across groups, so they flatter a first pass; a
    benchmark's groups share only some. Played ``--bench-passes`` times, each in a fresh
    interpreter: the figure is their median, each run's beside it."""
    groups = bench_groups[: 5 * args.copies]  # what pass_groups loads in the fresh processes
    jobs, _ = plan_jobs(groups, make_config(str(bench), groups, ["bench/replay"]))
    memo, rounds = asyncio.run(record(jobs))
    total_rounds = sum(rounds)
    # each pass in a fresh interpreter of its own, one after another (the breakdown with the
    # first): on a shared machine a run is only ever slowed by its neighbours, so the figure
    # is the median run, every run reported beside it
    runs_ms: list[float] = []
    parts = None
    for number in range(args.bench_passes):
        cpu, measured = fresh_passes(args.copies, memo, str(bench), args.breakdown and not number)
        parts = parts or measured
        runs_ms.append(1e3 * cpu / total_rounds)
    figure = statistics.median(runs_ms)
    each = ", ".join(f"{ms:.3f}" for ms in runs_ms)
    say(
        f"first pass over {len(groups)} groups of {bench} ({len(jobs)} samples, "
        f"{total_rounds} rounds), fresh process: {figure:.3f} ms CPU a round "
        f"(the median of {len(runs_ms)}: {each})"
    )
    breakdown = None
    if parts is not None:
        breakdown = breakdown_table(parts[0], parts[1], len(groups))
        say_breakdown(say, breakdown, f"{len(groups)} groups of {bench}")
    return {
        "groups": len(groups),
        "samples": len(jobs),
        "rounds": total_rounds,
        "round_cpu_ms_fresh_process": round(figure, 3),
        "round_cpu_ms_fresh_process_runs": [round(ms, 3) for ms in runs_ms],
        "breakdown": breakdown,
    }
