"""Pending requests (the paper's Missed) in traces and metrics, and the model reading of
follow-ups (``--followup-reader model``) over a scripted provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    AnswerAction,
    AskAction,
    Environment,
    RoleRequest,
    WaitAction,
    behaviour_of,
    compute_metrics,
    make_config,
    parse_reader_verdict,
    reader_agreement,
)
from uncobench_z3.evaluation import evaluate as run_config
from uncobench_z3.models import ChatMessage, ToolDef, register_provider
from uncobench_z3.models.providers._mock import MockProvider

ROOT = Path(__file__).resolve().parent.parent
GROUP_FILE = ROOT / "examples/groups/mining_supervisor.group.json"
GROUP = load_groups(GROUP_FILE)[0]
ANSWER = AnswerAction(decision="Appoint", candidate="Marcus Vance", number="60000")


def ask(role: str, question: str) -> AskAction:
    return AskAction(requests=(RoleRequest(role=role, question=question),))


def required() -> dict[str, str]:
    return {f.key: f.context for f in GROUP.spec.facts}


def test_answering_with_a_request_pending_is_counted() -> None:
    env = Environment(GROUP, "missed")
    env.step(ask("security", "clearances please"))
    env.step(ANSWER)
    behaviour = behaviour_of(env.trace, required())
    assert behaviour.answered_pending and behaviour.designated_contacts == 1


def test_a_wait_delivery_is_no_contact_and_resolves_the_defect() -> None:
    env = Environment(GROUP, "missed")
    env.step(ask("security", "clearances please"))
    env.step(WaitAction())
    env.step(ANSWER)
    behaviour = behaviour_of(env.trace, required())
    assert not behaviour.answered_pending
    assert (behaviour.contacts, behaviour.designated_contacts, behaviour.waits) == (1, 1, 1)
    assert behaviour.defects_resolved == ("missed",) and behaviour.recovered


def test_re_asking_counts_contacts_to_the_designated_role() -> None:
    env = Environment(GROUP, "missed")
    env.step(ask("security", "clearances please"))
    env.step(ask("security", "hello?"))
    env.step(ANSWER)
    behaviour = behaviour_of(env.trace, required())
    assert behaviour.designated_contacts == 2 and not behaviour.answered_pending
    assert behaviour.targeted_follow_ups == 1


def test_pending_metrics_per_setting(tmp_path: Path) -> None:
    config = make_config(GROUP_FILE, [GROUP], ["builtin/naive", "builtin/careful"], ["missed"])
    summary = run_config([GROUP], config, tmp_path / "run")
    metrics = {m.agent: m for m in compute_metrics(summary.records)}
    naive, careful = metrics["builtin/naive"], metrics["builtin/careful"]
    assert (naive.answered_pending, naive.missed_cases, naive.missed_multi_contact) == (1, 1, 0)
    assert (careful.answered_pending, careful.missed_multi_contact) == (0, 1)
    assert careful.missed_multi_contact_share == 1.0


def test_eval_missed_wait_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run_cli(
        capsys, "eval", str(GROUP_FILE), "--agent", "builtin/patient", "--setting", "missed",
        "--missed-wait", "0", "--out", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    assert result.code == 0, result.err
    record = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert [r["action"] for r in record["trace"]] == ["ask", "wait", "ask", "answer"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["missed_wait"] == 0
    bad = run_cli(
        capsys, "eval", str(GROUP_FILE), "--agent", "builtin/patient", "--missed-wait", "-1",
        "--out", str(tmp_path / "run2"),
    )  # fmt: skip
    assert bad.code == 2


# -- the model reading ---------------------------------------------------------------------------
def _colleague(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    prompt = messages[-1].content
    if "Decide whether this message is a *targeted* follow-up" in prompt:
        # a reader that only ever calls a follow-up targeted when it says "exact"
        message = prompt.split("Now they write to you again:\n\n", 1)[1].split("\n\n", 1)[0]
        return json.dumps({"targeted": "exact" in message.lower(), "reason": "scripted"})
    return prompt.split("and nothing else:\n\n", 1)[1].split("\n\nRules:", 1)[0]


def _garbled(messages: list[ChatMessage], tools: list[ToolDef]) -> str:
    prompt = messages[-1].content
    if "Decide whether this message" in prompt:
        return "I think so, probably."
    return prompt.split("and nothing else:\n\n", 1)[1].split("\n\nRules:", 1)[0]


register_provider("mockreader", lambda rest, **_: MockProvider(f"mockreader/{rest}", _colleague))
register_provider("mockgarbled", lambda rest, **_: MockProvider(f"mockgarbled/{rest}", _garbled))


def test_parse_reader_verdict() -> None:
    assert parse_reader_verdict('{"targeted": true, "reason": "x"}') is True
    assert parse_reader_verdict('Sure.\n```json\n{"targeted": false}\n```') is False
    assert parse_reader_verdict("yes") is None and parse_reader_verdict('{"targeted": 1}') is None
    # a brace inside the reason, or a nested object, used to cut the object short (unread)
    assert parse_reader_verdict('{"targeted": false, "reason": "asks about {the} rate"}') is False
    assert parse_reader_verdict('{"reason": {"why": "names the fact"}, "targeted": true}') is True
    assert parse_reader_verdict('{"a": 1} then {"targeted": true}') is True


async def test_the_model_decides_and_both_readings_are_traced() -> None:
    env = Environment(GROUP, "incomplete", colleague="mockreader/x,cache=false",
                      followup_reader="model")  # fmt: skip
    await env.astep(ask("security", "Send me the clearance results."))
    # the rules call this targeted (an options question); the scripted model does not
    await env.astep(ask("security", "Did Marcus Vance pass or fail?"))
    (reading,) = env.trace[1].replies[0].readings
    assert (reading.rules, reading.model, reading.used) == (True, False, "model")
    assert env.trace[1].replies[0].follow_up == "generic"
    await env.astep(ask("security", "Marcus Vance's exact clearance result?"))
    (reading,) = env.trace[2].replies[0].readings
    assert (reading.rules, reading.model) == (True, True)
    assert env.trace[2].replies[0].resolved == ("incomplete",)


async def test_an_unreadable_model_answer_leaves_the_decision_to_the_rules() -> None:
    env = Environment(GROUP, "incomplete", colleague="mockgarbled/x,cache=false",
                      followup_reader="model")  # fmt: skip
    await env.astep(ask("security", "Send me the clearance results."))
    await env.astep(ask("security", "Did Marcus Vance pass or fail?"))
    (reading,) = env.trace[1].replies[0].readings
    assert reading.model is None and reading.used == "rules" and reading.model_note
    assert env.trace[1].replies[0].resolved == ("incomplete",)


def test_reader_agreement_over_a_run(tmp_path: Path) -> None:
    config = make_config(GROUP_FILE, [GROUP], ["builtin/careful"], ["misaligned", "incomplete"],
                         colleague="mockreader/x,cache=false", followup_reader="model")  # fmt: skip
    summary = run_config([GROUP], config, tmp_path / "run")
    agreement = reader_agreement(summary.records)
    # careful's precision follow-up says "exact" (both readers: targeted); its context
    # follow-up does not, so this model never resolves the Misaligned defect: careful asks
    # again every round (18 more readings) until its last round
    assert (agreement.readings, agreement.rules_targeted, agreement.model_targeted) == (19, 19, 1)
    assert agreement.agreed == 1 and agreement.unreadable == 0


def test_a_model_reader_needs_a_colleague_model() -> None:
    with pytest.raises(Exception, match="colleague-model"):
        Environment(GROUP, "incomplete", followup_reader="model")


async def test_the_reader_gets_the_epoch_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Epochs are independent trials of the reader too: its calls carry the epoch's seed (the
    API's seed and the response cache's scope), as the colleague's replies do."""
    from uncobench_z3.evaluation import _followup_reader
    from uncobench_z3.models import ModelOutput, ModelUsage

    calls: list[dict[str, object]] = []

    class Spy:
        async def generate(self, messages: list[ChatMessage], **kwargs: object) -> ModelOutput:
            calls.append(kwargs)
            return ModelOutput(text='{"targeted": true}', usage=ModelUsage())

    monkeypatch.setattr(_followup_reader, "shared_model", lambda ref: Spy())
    env = Environment(GROUP, "incomplete", colleague="mockreader/x,cache=false",
                      followup_reader="model", trial=1234)  # fmt: skip
    await env.astep(ask("security", "Send me the clearance results."))
    await env.astep(ask("security", "Did Marcus Vance pass or fail?"))
    assert calls and all(c["trial"] == 1234 for c in calls)
    assert all(getattr(c["config"], "seed", None) == 1234 for c in calls)
