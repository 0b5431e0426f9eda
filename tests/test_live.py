"""Live tests against the real provider APIs; skipped unless the keys are in the environment.

    ANTHROPIC_API_KEY=... OPENAI_API_KEY=... pytest -m live tests/test_live.py

Models can be chosen with UNCOBENCH_LIVE_ANTHROPIC / UNCOBENCH_LIVE_OPENAI. They assert
structure, not wording.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import evaluate, make_config, read_log
from uncobench_z3.models import ChatMessage, get_model

pytestmark = pytest.mark.live

PROVIDERS = [
    (
        "ANTHROPIC_API_KEY",
        "anthropic/" + os.environ.get("UNCOBENCH_LIVE_ANTHROPIC", "claude-haiku-4-5"),
    ),
    ("OPENAI_API_KEY", "openai/" + os.environ.get("UNCOBENCH_LIVE_OPENAI", "gpt-4.1-mini")),
]


def _needs(key: str) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} is not set")


@pytest.mark.parametrize(("key", "model"), PROVIDERS)
async def test_one_generation(key: str, model: str) -> None:
    _needs(key)
    handle = get_model(model, cache=False)
    try:
        output = await handle.generate([ChatMessage.user("Reply with the single word: ready")])
    finally:
        await handle.aclose()
    assert output.text.strip()
    assert output.usage.output_tokens > 0


@pytest.mark.parametrize(("key", "model"), PROVIDERS)
def test_one_sample_as_main_agent_and_colleague(key: str, model: str, tmp_path: Path) -> None:
    _needs(key)
    bench = tmp_path / "bench"
    build_benchmark(bench, groups=1, seed=1, workers=1)
    groups = load_groups(bench)
    config = make_config(
        bench,
        groups,
        [f"{model},cache=false"],
        ["misaligned"],
        budget=8,
        colleague=f"{model},cache=false",
    )
    evaluate(groups, config, tmp_path / "run")
    records, _ = read_log(tmp_path / "run" / "samples.jsonl")
    assert len(records) == 1 and records[0].rounds == len(records[0].trace)
    assert records[0].status in ("answered", "budget_exhausted")
