"""Item 10 of issue 12: ``uncobench build --generator-model/--renderer-model/--validator-model
/--no-cache`` (the docs promised them; the LLM stages existed only in Python), through the
scripted provider, and through the local llama.cpp server (marked ``llama``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncobench_z3.construct import MANIFEST_FILE, load_groups

from .cli_helpers import run_cli
from .test_llm_construct import fake_llm  # noqa: F401  (registers the fakellm/ provider)


def test_build_with_every_llm_stage_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "bench"
    result = run_cli(capsys, "build", "--groups", "2", "--seed", "2", "--workers", "1",
                     "--out", str(out), "--generator-model", "fakellm/gen",
                     "--renderer-model", "fakellm/render,temperature=0",
                     "--validator-model", "fakellm/validate")  # fmt: skip
    assert result.code == 0, result.err
    manifest = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))
    config = manifest["config"]
    assert config["generator"] == "fakellm/gen"
    assert config["renderer"] == "fakellm/render,temperature=0.0"
    assert config["validator"] == "fakellm/validate"
    groups = load_groups(out)
    assert len(groups) == 2
    assert all(g.spec.title.endswith("(rewritten)") for g in groups)
    assert all("Please decide:" in str((g.rendered or {})["task_text"]) for g in groups)
    assert list((tmp_path / "cache").rglob("*.json"))  # responses were cached
    verify = run_cli(capsys, "verify", str(out))
    assert verify.code == 0, verify.out  # model-rendered text passes verify's text check


def test_no_cache_turns_the_response_cache_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "bench"
    result = run_cli(capsys, "build", "--groups", "1", "--seed", "2", "--workers", "1",
                     "--out", str(out), "--renderer-model", "fakellm/render",
                     "--no-cache")  # fmt: skip
    assert result.code == 0, result.err
    config = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))["config"]
    assert config["renderer"] == "fakellm/render,cache=false"
    assert config["validator"] == "fakellm/render,cache=false"  # defaults to the renderer
    assert config["generator"] == "offline"
    assert not (tmp_path / "cache").exists()


def test_the_llm_stages_get_the_providers_default_reply_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--generator-model local/smollm2`` (and the renderer, the validator) are called with the
    reply limit an agent or colleague of that name gets (max_tokens=512; a limit in the name
    wins), and the build's configuration records it; here the validator of one candidate,
    against a stand-in server (no llama.cpp started)."""
    from uncobench_z3.cli._build import llm_stages
    from uncobench_z3.construct import SpecGenerator, build_config, load_library, process_candidate
    from uncobench_z3.models.testing import FaultServer

    stages = llm_stages("local/smollm2", "local/smollm2,max_tokens=900", None, no_cache=True)
    assert stages.generator is not None and stages.generator.config().max_tokens == 512
    assert stages.renderer is not None and stages.renderer.config().max_tokens == 900
    config = build_config(stages=stages)
    assert config.generator == "local/smollm2,max_tokens=512,cache=false"
    assert config.validator == "local/smollm2,max_tokens=900,cache=false"  # the renderer's
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(tmp_path / "cache"))
    validator = llm_stages(None, None, "local/smollm2", no_cache=True)
    draft = SpecGenerator(load_library(), seed=3).draft(0, False)
    with FaultServer() as server:
        monkeypatch.setenv("LOCAL_SMOLLM2_BASE_URL", server.base_url)
        process_candidate(draft, seed=3, index=0, stages=validator)
    assert server.requests and {body["max_tokens"] for body in server.requests} == {512}


@pytest.mark.parametrize(
    "option",
    [
        ["--generator-model", "fakellm/gen,temperature=-1"],
        ["--renderer-model", "nosuch/model"],
        ["--validator-model", "openai/gpt-4.1-mini"],
        ["--no-cache"],
    ],
)
def test_bad_build_models_fail_before_any_file(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "bench"
    result = run_cli(capsys, "build", "--groups", "1", "--out", str(out), *option)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.llama
def test_the_validator_stage_with_the_local_model(llama_server: str) -> None:
    """SmolLM2 as the full-information validator of one candidate, through the same stages
    object the CLI option builds (a whole CLI build would process a chunk of 20 candidates,
    minutes of a 135M model on two cores). A 135M model rarely recovers gold three times:
    the candidate is retained or rejected at rendering validation naming the validator run,
    never an error."""
    from uncobench_z3.cli._build import llm_stages
    from uncobench_z3.construct import SpecGenerator, load_library, process_candidate

    stages = llm_stages(None, None, "local/smollm2,max_tokens=60", no_cache=True)
    assert stages.validator is not None and stages.validator.describe().endswith("cache=false")
    draft = SpecGenerator(load_library(), seed=3).draft(0, False)
    outcome = process_candidate(draft, seed=3, index=0, stages=stages)
    if not outcome.retained and outcome.stage == "rendering_validation":
        assert outcome.reason is not None and "validator run" in outcome.reason
    else:
        assert outcome.retained or outcome.stage == "logical_verification"
