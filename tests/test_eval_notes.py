"""The solver's note per round (what the evidence so far determined, which records are open)
and the behaviour classes the report stacks: checked against justification, attribution,
minimum rounds and hand-made behaviour."""

from __future__ import annotations

import pytest

from tests.sample_helpers import stored_example_groups
from uncobench_z3.evaluation import (
    BEHAVIOUR_CLASSES,
    Behaviour,
    SampleJob,
    SampleRecord,
    behaviour_class,
    behaviour_classes,
    round_notes,
    run_sample,
    typed_task,
)
from uncobench_z3.settings import SETTING_NAMES, SettingName

from .test_eval_metrics import record

GROUPS = stored_example_groups()


async def _sample(agent: str, setting: SettingName, group_index: int = 0) -> SampleRecord:
    group = GROUPS[group_index]
    return await run_sample(SampleJob.make(group, setting, agent))


@pytest.mark.parametrize("setting", SETTING_NAMES)
async def test_a_careful_agent_is_determined_exactly_when_it_may_answer(
    setting: SettingName,
) -> None:
    """The careful agent is the ideal agent of minimum rounds: its first determined round is
    the one before its answer, and its final note agrees with its justification."""
    for index in range(len(GROUPS)):
        if not GROUPS[index].setting(setting).available:
            continue
        sample = await _sample("builtin/careful", setting, index)
        notes = sample.notes
        assert [n.round for n in notes] == [r.round for r in sample.trace]
        determined = [n.round for n in notes if n.determined]
        assert determined and determined[0] + 1 == sample.min_rounds == sample.rounds
        assert notes[-1].determined is (sample.justification.label == "justified")  # type: ignore[union-attr]
        assert notes[-1].received == notes[-1].needed and notes[-1].open == ()
        task = typed_task(GROUPS[index])
        assert notes[-1].needed == len(task.candidates) * len(task.decision_facts())


@pytest.mark.parametrize("setting", ["misaligned", "incomplete", "missed", "mixed"])
async def test_a_defect_leaves_its_record_open_until_followed_up(setting: SettingName) -> None:
    index = next(i for i, g in enumerate(GROUPS) if g.setting(setting).available)
    sample = await _sample("builtin/naive", setting, index)
    first = sample.notes[0]
    assert first.determined is False and first.open
    defects = GROUPS[index].setting(setting).defects
    defective = {(c, d.fact) for d in defects if d.fact for c in d.candidates}
    assert defective & set(first.open) or any(d.kind == "missed" for d in defects)
    # exact evidence that determined gold (an integration error) determines it at face value
    if sample.attribution is not None and sample.attribution.label == "integration_error":
        assert sample.notes[-1].determined


def test_notes_follow_the_rounds_of_any_trace() -> None:
    """Recomputed from a stored trace, the notes are the ones the sample recorded."""
    import asyncio

    index = next(i for i, g in enumerate(GROUPS) if g.setting("mixed").available)
    sample = asyncio.run(_sample("builtin/patient", "mixed", index))
    task = typed_task(GROUPS[index])
    assert round_notes(task, GROUPS[index].gold, sample.trace) == sample.notes
    assert round_notes(task, GROUPS[0].gold, []) == []
    received = [n.received for n in sample.notes]
    assert received == sorted(received)  # truthful colleagues: evidence only grows


def _behaviour(**counts: object) -> Behaviour:
    return Behaviour.model_validate(counts)


@pytest.mark.parametrize(
    ("behaviour", "correct", "expected"),
    [
        (_behaviour(), True, "defect_not_shown"),
        (_behaviour(defects_seen=["missed"], defects_resolved=["missed"],
                    targeted_follow_ups=1), True, "recovered_correct"),
        (_behaviour(defects_seen=["missed"], defects_resolved=["missed"],
                    targeted_follow_ups=1), False, "recovered_wrong"),
        (_behaviour(defects_seen=["missed", "misaligned"], defects_resolved=["missed"],
                    targeted_follow_ups=1, generic_follow_ups=2), False, "partly_recovered"),
        (_behaviour(defects_seen=["incomplete"], generic_follow_ups=1), True, "generic_only"),
        (_behaviour(defects_seen=["incomplete"]), True, "no_follow_up"),
    ],
)  # fmt: skip
def test_behaviour_classes_in_order(behaviour: Behaviour, correct: bool, expected: str) -> None:
    sample = record("g", "mixed", correct, behaviour=behaviour)
    assert behaviour_class(sample) == expected


def test_behaviour_classes_partition_the_samples() -> None:
    samples = [
        record("g1", "misaligned", True, behaviour=_behaviour()),
        record("g2", "misaligned", False, behaviour=_behaviour(defects_seen=["misaligned"])),
        record("g3", "misaligned", False, behaviour=_behaviour(defects_seen=["misaligned"])),
    ]
    counts = behaviour_classes(samples)
    assert list(counts) == list(BEHAVIOUR_CLASSES) and sum(counts.values()) == 3
    assert counts["no_follow_up"] == 2 and counts["defect_not_shown"] == 1
