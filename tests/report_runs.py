"""Runs for the report tests: two groups (one with a candidate whose name is a script tag),
three agents (one answering in markup) over every setting for two epochs, and intervention
arms run on one group only (so the plain arm has more groups than the others)."""

from __future__ import annotations

import json
from pathlib import Path

from uncobench_z3.evaluation import (
    Action,
    Agent,
    AnswerAction,
    Conversation,
    evaluate,
    make_agent,
    make_config,
    write_benchmark,
)
from uncobench_z3.settings import TaskGroup, perturb
from uncobench_z3.spec import TaskSpec

ROOT = Path(__file__).resolve().parent.parent
EVIL_NAME = "Marcus <script>alert(1)</script> Vance"
EVIL_AGENT = "evil/<img src=x onerror=alert(2)>"
EVIL_ANSWER = "</td><script>alert(3)</script> | ** Appoint"
AGENTS = ["builtin/naive", "builtin/careful", EVIL_AGENT]


class EvilAgent:
    """Answers in free text full of markup."""

    async def act(self, conversation: Conversation) -> Action:
        return AnswerAction(text=EVIL_ANSWER)


def maker(name: str, seed: int) -> Agent:
    return EvilAgent() if name == EVIL_AGENT else make_agent(name, seed)


def report_groups() -> list[TaskGroup]:
    data = json.loads((ROOT / "examples" / "mining_supervisor.json").read_text())
    for candidate in data["candidates"]:
        if candidate["id"] == "vance":
            candidate["name"] = EVIL_NAME
    groups = []
    healthcare = (ROOT / "examples" / "healthcare_nurse_manager.json").read_text()
    for spec in (TaskSpec.model_validate(data), TaskSpec.model_validate_json(healthcare)):
        group = perturb(spec, seed=0).group
        assert group is not None
        groups.append(group)
    return groups


def make_report_runs(root: Path) -> Path:
    """``root/runs`` (two runs of one benchmark) and ``root/bench``."""
    groups = report_groups()
    stats = {"groups": 2, "<b>domains</b>": {"<i>mining</i>": {"groups": 1, "percent": 50.0}}}
    bench = write_benchmark(root / "bench", groups, stats)
    config = make_config(str(bench), groups, AGENTS, epochs=2)
    evaluate(groups, config, root / "runs" / "first", agents=maker)
    arms = make_config(str(bench), groups, ["builtin/naive", "builtin/careful"],
                       settings=["reliable", "misaligned"], limit=1,
                       interventions=["none", "existence", "action"])  # fmt: skip
    evaluate(groups, arms, root / "runs" / "arms", agents=maker)
    return root / "runs"
