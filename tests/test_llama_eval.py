"""A real small model, offline: SmolLM2-135M through llama.cpp's OpenAI-compatible server as
the main agent and as the colleagues' phrasing model. Structure is asserted, not wording: a
full evaluation completes, every model action becomes a valid or an invalid action (never a
crash), and the trace is complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import evaluate, make_config, read_log

pytestmark = pytest.mark.llama


def test_full_evaluation_with_a_real_model(llama_server: str, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    build_benchmark(bench, groups=1, seed=3, workers=1)
    groups = load_groups(bench)
    # a real model as the main agent (native tools and the plain-text protocol), and as the
    # colleagues' phrasing model behind the naive agent (which asks every colleague at once);
    # budgets are small because a 135M model on two cores takes seconds per call
    runs = [
        (["local/smollm2,max_tokens=200,cache=false"], "scripted", 2),
        (["local/smollm2,protocol=text,max_tokens=120,cache=false"], "scripted", 1),
        (["builtin/naive"], "local/smollm2,max_tokens=120,cache=false", 2),
    ]
    for number, (agents, colleague, budget) in enumerate(runs):
        config = make_config(
            bench, groups, agents, ["reliable"], budget=budget, colleague=colleague
        )
        out = tmp_path / f"run{number}"
        summary = evaluate(groups, config, out, concurrency=2)
        records, _ = read_log(out / "samples.jsonl")
        assert len(records) == len(summary.records) == 1
        record = records[0]
        assert record.status in ("answered", "budget_exhausted")
        assert record.rounds == len(record.trace) <= budget
        for round_number, rnd in enumerate(record.trace, start=1):
            assert rnd.round == round_number
            assert rnd.action in ("ask", "wait", "answer", "invalid")
            if rnd.action == "invalid":
                assert rnd.error  # the model was told what went wrong
            for reply in rnd.replies:
                if colleague != "scripted" and reply.text is not None:
                    assert reply.fidelity is not None  # every phrased reply was checked
        if record.status == "answered":
            assert record.answer is not None and record.score is not None
        if colleague != "scripted":
            assert any(reply.fidelity for rnd in record.trace for reply in rnd.replies)
