"""The minimum possible rounds of a group in a setting, decided by the solver.

An ideal agent asks every colleague for every decision-relevant record in round 1 and follows
every problem up as soon as it shows (a wrong context, an imprecise value, a silence) - which
is exactly what ``builtin/careful`` does, and no question can get more out of the scripted
colleagues in one round: a colleague's first statement of a defective record is defective
however it is asked. After each round the solver decides whether the evidence received so
far, taken at face value (:class:`._attribution.EvidenceJudge`), already determines
the gold answer; the first round after which it does is followed by the answer. So the
minimum is ``1 + (rounds of asking until the evidence determines gold)``: 2 in Reliable
(every role is necessary, so nothing is determined before asking), 2 or 3 under defects
(2 when the other records and a defect's imprecise statement settle the answer anyway).

It is computed with scripted colleagues (the response policy an LLM colleague phrases is the
same), once per group content and setting in a process, and is ``None`` when the solver could
not decide or the careful agent's rounds ran out first.
"""

from __future__ import annotations

from .._memo import remember
from ..settings import SettingName, TaskGroup
from ._attribution import shared_judge
from ._builtin import CarefulAgent
from ._environment import Environment, PreparedGroup
from ._evidence import EvidenceReader
from ._protocol import DEFAULT_BUDGET, AnswerAction

_CACHE_LIMIT = 8192
_cache: dict[tuple[str, SettingName], int | None] = {}


async def minimum_rounds(
    group: TaskGroup,
    setting: SettingName,
    group_hash: str,
    prepared: PreparedGroup | None = None,
) -> int | None:
    """Rounds (the answer included) an ideal agent needs (module docstring); cached by
    ``group_hash`` (the group's content hash) and setting."""
    key = (group_hash, setting)
    if key in _cache:
        return _cache[key]
    found = await _search(group, setting, group_hash, prepared)
    return remember(_cache, key, found, _CACHE_LIMIT)


def forget_minimum_rounds(group_hash: str) -> None:
    """Drop the group's remembered minimum rounds (every setting)."""
    for key in [key for key in _cache if key[0] == group_hash]:
        del _cache[key]


async def _search(
    group: TaskGroup, setting: SettingName, group_hash: str, prepared: PreparedGroup | None
) -> int | None:
    environment = Environment(group, setting, DEFAULT_BUDGET, prepared=prepared)
    judge = shared_judge(group_hash, environment.task, group.gold)
    agent = CarefulAgent(seed=0)
    evidence = EvidenceReader(environment.task, judge.readings)  # reads each new round once
    while True:
        status = judge.verdict(evidence.read_up_to(environment.trace))
        if status == "unsat":
            return environment.rounds + 1
        if status == "unknown":
            return None
        if environment.finished:
            return None
        action = await agent.act(environment.conversation)
        if isinstance(action, AnswerAction):
            return None  # the agent saw everything, yet the evidence did not settle it
        environment.step(action)
