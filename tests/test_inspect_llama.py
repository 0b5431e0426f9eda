"""A real small model inside inspect_ai, offline: SmolLM2-135M behind the project's llama.cpp
server, reached through inspect's OpenAI-compatible provider (``openai-api/llama/smollm2``),
as the evaluated model and as the ``colleague`` model role. Structure is asserted, not
wording: the episode runs to its end through the inspect tools, every round is a valid or an
invalid action, the scorer's record is complete, and the log imports as a run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval
from inspect_ai.model import GenerateConfig, get_model

from tests.cli_helpers import run_cli
from uncobench_z3.construct import build_benchmark
from uncobench_z3.evaluation import SampleRecord, read_log
from uncobench_z3.integrations.inspect import RECORD_KEY, STORE_KEY, uncobench
from uncobench_z3.report import find_run_dirs

pytestmark = pytest.mark.llama

MODEL = "openai-api/llama/smollm2"


def test_smollm2_through_inspects_openai_compatible_provider(
    llama_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LLAMA_BASE_URL", llama_server)
    monkeypatch.setenv("LLAMA_API_KEY", "local")  # the provider wants one; the server ignores it
    bench = tmp_path / "bench"
    build_benchmark(bench, groups=1, seed=3, workers=1)
    # llama.cpp's server rejects a required tool choice: the model may call a tool ("auto");
    # small budgets because a 135M model on two cores takes seconds per call
    runs = [
        uncobench(bench=str(bench), setting="reliable", budget=2, tool_choice="auto"),
        uncobench(
            bench=str(bench), setting="reliable", budget=2, agent="builtin/naive", colleague="model"
        ),
    ]
    # inspect gives eval's max_tokens to the evaluated model only, not to a model role: the
    # colleague's model gets its own (unbounded, SmolLM2 can ramble to the end of its 8,192
    # token context: one such reply took 6 minutes)
    colleague = get_model(MODEL, config=GenerateConfig(max_tokens=120), memoize=False)
    logs = eval(
        runs,
        model=MODEL,
        model_roles={"colleague": colleague},
        max_tokens=120,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    for log in logs:
        assert log.status == "success", log.error
        (sample,) = log.samples or []
        (score,) = (sample.scores or {}).values()
        assert score.value in ("C", "I") and score.metadata is not None
        trace = sample.store[STORE_KEY]["outcome"]["trace"]
        record = SampleRecord.model_validate({**score.metadata[RECORD_KEY], "trace": trace})
        assert record.status in ("answered", "budget_exhausted")
        assert record.rounds == len(record.trace)
        if record.status == "answered":  # the episode ends with the answer that was scored
            assert record.trace[-1].action == "answer" and record.answer is not None
        else:  # no answer within the budget of 2: both rounds were played
            assert record.rounds == 2 and record.answer is None
        for number, played in enumerate(record.trace, start=1):
            assert played.round == number
            assert played.action in ("ask", "wait", "answer", "invalid")
            if played.action == "invalid":
                assert played.error  # the model was told what went wrong
        if record.agent == f"inspect/{MODEL}":
            assert record.usage["agent"].output_tokens > 0
        else:  # the naive policy asked every colleague; the role model phrased the replies
            assert record.colleague == f"inspect/{MODEL}"
            checks = [r.fidelity for played in record.trace for r in played.replies if r.text]
            assert checks and all(c is not None and c.model == record.colleague for c in checks)
            assert record.usage["colleagues"].output_tokens > 0
    out = tmp_path / "runs"
    result = run_cli(capsys, "import-inspect", *[log.location for log in logs], "--out", str(out))
    assert result.code == 0, result.err
    imported = [read_log(folder / "samples.jsonl")[0] for folder in find_run_dirs(out)]
    assert sorted(len(records) for records in imported) == [1, 1]
