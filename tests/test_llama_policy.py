"""SmolLM2-135M (llama.cpp, offline) as a policy colleague on a few samples.

Structure is asserted, not quality: every reply the model wrote is judged against the scripted
reference as it is written, the verdict logged in the trace is the one the judge gives again
from the trace, broken samples are reported apart, and Table 7's figures are exact fractions
with intervals. The figures it measures are printed (``pytest -s``); docs/judge.md states
those of a larger run and the command that made them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import load_groups
from uncobench_z3.evaluation import (
    GroupJudges,
    compute_metrics,
    evaluate,
    judge_reply,
    make_config,
    policy_keeping,
    read_log,
    validity_cells,
)
from uncobench_z3.stats import decimal_text, percent_text

pytestmark = pytest.mark.llama

GROUP_FILE = Path(__file__).resolve().parent.parent / "examples/groups/mining_supervisor.group.json"


def test_smollm2_as_a_policy_colleague(llama_server: str, tmp_path: Path) -> None:
    groups = load_groups(GROUP_FILE)
    # the naive agent asks every colleague once, then answers: six model calls per sample
    config = make_config(GROUP_FILE, groups, ["builtin/naive"], ["reliable", "missed"],
                         colleague="local/smollm2,max_tokens=80,cache=false",
                         colleague_mode="policy")  # fmt: skip
    out = tmp_path / "roles"
    evaluate(groups, config, out, concurrency=2)
    samples, _ = read_log(out / "samples.jsonl")
    assert len(samples) == 2
    judges = GroupJudges(groups)
    judge = judges.get(samples[0].group_hash)
    assert judge is not None
    for sample in samples:
        assert sample.colleague_mode == "policy"
        assert sample.colleague_policy == policy_keeping(sample.trace)
        replies = [reply for record in sample.trace for reply in record.replies]
        assert replies
        for reply in replies:
            assert reply.policy is not None  # every reply the model wrote was judged
            assert judge_reply(judge.task, reply, judge.catalog) == reply.policy.verdict
            assert (reply.text is None) == reply.policy.verdict.silent
    owed = [r for s in samples for rnd in s.trace for r in rnd.replies if r.pending]
    assert len(owed) == 1 and owed[0].policy and owed[0].policy.verdict.silence_required
    metrics = compute_metrics(samples)
    assert sum(m.samples + m.colleague_breaches for m in metrics) == 2
    cells = validity_cells(samples, judges)
    for cell in cells:
        assert cell.judged > 0 and cell.fidelity is not None and cell.mean_coverage is not None
        assert 0 <= cell.fidelity <= 1 and 0 <= cell.mean_coverage <= 1
        assert cell.fidelity_ci is not None and cell.coverage_ci is not None
        coverage = decimal_text(cell.mean_coverage, 3)
        print(f"SmolLM2 policy colleague, {cell.setting}: {cell.judged} replies, fidelity "
              f"{percent_text(cell.fidelity)}, mean coverage {coverage}, "
              f"samples that broke the policy {cell.breached}/{cell.samples}")  # fmt: skip
