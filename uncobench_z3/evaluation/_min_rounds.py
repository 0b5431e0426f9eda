"""The minimum possible rounds of a group in a setting, decided by the solver.

An ideal agent asks every colleague for every decision-relevant record in round 1 and follows
every problem up as soon as it shows (a wrong context, an imprecise value, a silence) - which
is exactly what ``builtin/careful`` does, and no question can get more out of the scripted
colleagues in one round: a colleague's first statement of a defective record is defective
however it is asked. After each round the solver decides whether the evidence received so
far, taken at face value (:class:`._evidence_judge.EvidenceJudge`), already determines
the gold answer; the first round after which it does is followed by the answer. So the
minimum is ``1 + (rounds of asking until the evidence determines gold)``: 2 in Reliable
(every role is necessary, so nothing is determined before asking), 2 or 3 under defects
(2 when the other records and a defect's imprecise statement settle the answer anyway).

It is computed with scripted colleagues (the response policy an LLM colleague phrases is the
same), once per group content and setting in a process, and is ``None`` when the solver could
not decide or the careful agent's rounds ran out first.

``uncobench build`` stores every setting's minimum in the group
(``proofs.minimum_rounds``, from :func:`settings_minimum_rounds`) and ``uncobench verify``
computes it again and compares: an evaluation of a built benchmark reads it instead of
playing the ideal agent's episode for every group and setting (a fifth of a first pass's CPU
with scripted colleagues). A group without it (an older build, a spec, a perturbed file) gets
it computed here, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

from .._memo import remember
from ..settings import SETTING_NAMES, SettingName, TaskGroup, forget_vocabulary
from ..solver import SolverBudget
from ..spec import TypedTask
from ._attribution import ATTRIBUTION_BUDGET, forget_group, shared_judge
from ._builtin import CarefulAgent
from ._environment import Environment, PreparedGroup
from ._evidence import EvidenceReader
from ._protocol import DEFAULT_BUDGET, AnswerAction

_CACHE_LIMIT = 8192
T = TypeVar("T")
_cache: dict[tuple[str, SettingName], int | None] = {}


async def minimum_rounds(
    group: TaskGroup,
    setting: SettingName,
    group_hash: str,
    prepared: PreparedGroup | None = None,
) -> int | None:
    """Rounds (the answer included) an ideal agent needs (module docstring): the group's
    stored figure when it has one, else computed and cached by ``group_hash`` (the group's
    content hash) and setting."""
    stored = group.proofs.minimum_rounds if group.proofs is not None else None
    if stored is not None:
        return stored.get(setting)  # a setting left out was undecided when it was built
    key = (group_hash, setting)
    if key in _cache:
        return _cache[key]
    try:
        found = await _search(group, setting, group_hash, prepared)
    except _SolverUndecided:
        found = None
    return remember(_cache, key, found, _CACHE_LIMIT)


STORED_SEARCH_BUDGET = SolverBudget(timeout_ms=0, rlimit=ATTRIBUTION_BUDGET.rlimit)
"""the budget of the search whose figures a build stores and verify checks: Z3's resource
count only, with no wall-clock bound, so that a verdict it leaves undecided is undecided on
any machine at any load, and the build's bytes and verify's verdicts do not depend on them
(an evaluation's own search keeps the evaluation's budget and shares its judges)"""


def settings_minimum_rounds(
    group: TaskGroup, task: TypedTask | None = None
) -> dict[SettingName, int] | None:
    """Setting -> :func:`minimum_rounds` for every available setting of ``group``, searched
    for afresh whatever the group stores: what ``uncobench build`` stores in
    ``proofs.minimum_rounds`` and ``uncobench verify`` compares with it. A setting where the
    careful agent cannot settle the answer is left out (every search says so again); None
    when the solver left a verdict undecided within :data:`STORED_SEARCH_BUDGET` (Z3's
    deterministic resource count): the build then stores nothing, and an evaluation
    searches itself. What the search remembered of the group is let go
    afterwards. ``task``: the group's typed task, when the caller has made it already
    (a build, and verify's structure check)."""
    # the group's judge is shared under a key of this call's own (no content hash to compute:
    # nothing outlives the call), which no content hash can equal
    key = f"settings-minimum-rounds:{id(group)}"
    offered = {setting.name for setting in group.settings if setting.available}
    available = [name for name in SETTING_NAMES if name in offered]

    prepared = PreparedGroup.of(group, task)

    async def every_setting() -> dict[SettingName, int]:
        found: dict[SettingName, int] = {}
        for name in available:
            rounds = await _search(group, name, key, prepared, STORED_SEARCH_BUDGET)
            if rounds is not None:
                found[name] = rounds
        return found

    try:
        return _without_a_loop(every_setting)
    except _SolverUndecided:
        return None
    finally:
        forget_group(key)
        forget_vocabulary(prepared.task)


def _without_a_loop(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """The result of the coroutine ``make()`` makes, run without an event loop when it never
    waits (the search's agent and colleagues only compute: a loop per group cost a twentieth
    of the search), else made again and run on one."""
    coroutine = make()
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coroutine.close()  # it waited for something: only an event loop can give it that
    return asyncio.run(make())


def forget_minimum_rounds(group_hash: str) -> None:
    """Drop the group's remembered minimum rounds (every setting)."""
    for key in [key for key in _cache if key[0] == group_hash]:
        del _cache[key]


class _SolverUndecided(Exception):
    """The solver left a verdict of the search undecided within its budget (unlike the other
    ``None`` of the search, which any run reaches again, this one may not)."""


async def _search(
    group: TaskGroup,
    setting: SettingName,
    group_hash: str,
    prepared: PreparedGroup | None,
    budget: SolverBudget = ATTRIBUTION_BUDGET,
) -> int | None:
    """The minimum rounds of ``group`` in ``setting``; None when the careful agent's rounds
    ran out or it answered before the evidence settled the answer. Raises
    :class:`_SolverUndecided` when the solver left a verdict undecided."""
    environment = Environment(group, setting, DEFAULT_BUDGET, prepared=prepared)
    judge = shared_judge(group_hash, environment.task, group.gold, budget)
    agent = CarefulAgent(seed=0)
    evidence = EvidenceReader(environment.task, judge.readings)  # reads each new round once
    while True:
        status = judge.verdict(evidence.read_up_to(environment.trace))
        if status == "unsat":
            return environment.rounds + 1
        if status == "unknown":
            raise _SolverUndecided(setting)
        if environment.finished:
            return None
        action = await agent.act(environment.conversation)
        if isinstance(action, AnswerAction):
            return None  # the agent saw everything, yet the evidence did not settle it
        environment.step(action)
