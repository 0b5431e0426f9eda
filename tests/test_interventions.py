"""The intervention arms as an agent meets them: each defect told of once, when it first shows,
whatever the order in which the agent asks (Mixed's three may show in different rounds), and
the existence sentence true of every kind of defect (a silence is no reply received)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import AskAction, Environment, RoleRequest
from uncobench_z3.evaluation._interventions import INTERVENTION_ARMS, intervention_texts

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Please send all your records for every candidate, in the required contexts."


def _one_colleague_a_round(setting: str, arm: str) -> tuple[list[str], list[str]]:
    """(the texts delivered, the kinds of defect shown in each round that delivered one) for
    an agent that asks one colleague a round, every role in turn."""
    group = load_groups(ROOT / "examples" / "groups" / "mining_supervisor.group.json")[0]
    environment = Environment(group, setting, budget=20, intervention=arm)  # type: ignore[arg-type]
    texts, kinds = [], []
    for role in group.spec.roles:
        environment.step(AskAction(requests=(RoleRequest(role=role.id, question=QUESTION),)))
        record = environment.trace[-1]
        if record.intervention is not None:
            texts.append(record.intervention)
            kinds.append(",".join(sorted({k for r in record.replies for k in r.defects})))
    return texts, kinds


@pytest.mark.parametrize("arm", INTERVENTION_ARMS[1:])
def test_every_defect_of_mixed_is_told_of_when_it_shows(arm: str) -> None:
    """Before, the text came once, with the first defect met: an agent that asks one colleague
    a round heard of one of Mixed's three defects, one that asks everyone at once of all
    three."""
    texts, kinds = _one_colleague_a_round("mixed", arm)
    told = intervention_texts()
    assert texts[0].startswith(told["existence"])
    if arm == "existence":
        assert len(texts) == 1  # "at least one" is said once
        return
    assert sorted(kinds) == ["incomplete", "misaligned", "missed"]  # three rounds, one each
    assert len(texts) == 3 and all(t.startswith(told["existence_again"]) for t in texts[1:])
    # each arm says everything the arm before it says, delivery by delivery
    before = _one_colleague_a_round("mixed", INTERVENTION_ARMS[INTERVENTION_ARMS.index(arm) - 1])
    for text, shorter in zip(texts, before[0], strict=False):
        assert text.startswith(shorter)


def test_the_existence_sentence_claims_no_reply_where_the_defect_is_a_silence() -> None:
    """Missed: every reply received is right; "at least one reply you have received cannot be
    used" pointed the agent at replies that were fine."""
    texts, kinds = _one_colleague_a_round("missed", "location")
    assert kinds == ["missed"] and len(texts) == 1
    assert "received" not in texts[0] and "request" in texts[0]
