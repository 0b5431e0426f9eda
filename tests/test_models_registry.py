"""Model names, provider resolution from the environment, lazy SDK imports, exports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import uncobench_z3.models as models
from uncobench_z3.errors import ModelConfigError
from uncobench_z3.models import (
    ChatMessage,
    ModelName,
    ModelOutput,
    get_model,
    parse_model_name,
    register_provider,
)
from uncobench_z3.models.providers._anthropic import AnthropicProvider
from uncobench_z3.models.providers._base import PLACEHOLDER_API_KEY
from uncobench_z3.models.providers._mock import MockProvider
from uncobench_z3.models.providers._openai import OpenAIProvider

KEY = "sk-test-SECRET-1234"
PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "VLLM_BASE_URL",
    "VLLM_API_KEY",
    "TOGETHER_AI_BASE_URL",
    "TOGETHER_AI_API_KEY",
    "LOCAL_SMOLLM2_BASE_URL",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in PROVIDER_ENV:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", ModelName("anthropic", "claude-sonnet-4-5")),
        ("openai/gpt-4.1-mini", ModelName("openai", "gpt-4.1-mini")),
        ("openai-api/vllm/Qwen/Qwen2.5-7B", ModelName("openai-api", "vllm/Qwen/Qwen2.5-7B")),
        ("local/smollm2", ModelName("local", "smollm2")),
        ("mock/echo", ModelName("mock", "echo")),
    ],
)
def test_every_name_form_parses(name: str, expected: ModelName) -> None:
    assert parse_model_name(name) == expected
    assert str(expected) == name


@pytest.mark.parametrize("name", ["gpt-4o", "openai/", "/gpt-4o", "openai//x", ""])
def test_malformed_names_explain_the_form(name: str) -> None:
    with pytest.raises(ModelConfigError, match="provider/model"):
        parse_model_name(name)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ModelConfigError, match="unknown model provider 'gemini'") as caught:
        get_model("gemini/pro")
    assert "anthropic" in str(caught.value) and "openai-api" in str(caught.value)


def test_anthropic_reads_key_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy.example/anthropic")
    provider = get_model("anthropic/claude-sonnet-4-5").provider
    assert isinstance(provider, AnthropicProvider)
    assert (provider.model, provider.base_url) == ("claude-sonnet-4-5", provider.cache_identity)
    assert provider.base_url == "https://proxy.example/anthropic"


def test_openai_defaults_to_the_public_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = get_model("openai/gpt-4.1-mini").provider
    assert isinstance(provider, OpenAIProvider)
    assert provider.base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize(
    ("name", "variable"),
    [("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("openai/gpt-4o", "OPENAI_API_KEY")],
)
def test_missing_key_names_the_variable(name: str, variable: str) -> None:
    with pytest.raises(ModelConfigError, match=variable):
        get_model(name)


def test_openai_api_service_env_with_and_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOGETHER_AI_BASE_URL", "http://127.0.0.1:9/v1")
    provider = get_model("openai-api/together-ai/meta/llama-3").provider
    assert isinstance(provider, OpenAIProvider)
    assert provider.name == "openai-api/together-ai/meta/llama-3"
    assert provider.model == "meta/llama-3"
    assert provider.base_url == "http://127.0.0.1:9/v1"
    assert provider._client.api_key == PLACEHOLDER_API_KEY

    monkeypatch.setenv("TOGETHER_AI_API_KEY", KEY)
    keyed = get_model("openai-api/together-ai/meta/llama-3").provider
    assert isinstance(keyed, OpenAIProvider)
    assert keyed._client.api_key == KEY


def test_openai_api_needs_base_url_and_model() -> None:
    with pytest.raises(ModelConfigError, match="VLLM_BASE_URL"):
        get_model("openai-api/vllm/some-model")
    with pytest.raises(ModelConfigError, match="openai-api/<service>/<model>"):
        get_model("openai-api/vllm")


def test_local_can_point_at_a_running_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_SMOLLM2_BASE_URL", "http://127.0.0.1:9/v1")
    model = get_model("local/smollm2")
    assert model.name == "local/smollm2"
    assert model.provider.cache_identity == "http://127.0.0.1:9/v1"


def test_unknown_local_model_and_unknown_option_are_config_errors() -> None:
    with pytest.raises(ModelConfigError, match="local/smollm2"):
        get_model("local/llama-70b")
    with pytest.raises(ModelConfigError, match="does not take option"):
        get_model("mock/echo", temperature_typo=1)


async def test_registered_provider_is_used() -> None:
    register_provider("scripted", lambda rest, **_: MockProvider(f"scripted/{rest}", ["ok"]))
    model = get_model("scripted/anything")
    assert model.name == "scripted/anything"
    assert (await model.generate([ChatMessage.user("hi")])).text == "ok"
    with pytest.raises(ValueError):
        register_provider("bad/name", lambda rest: MockProvider(rest, []))


def test_importing_the_package_imports_no_sdk() -> None:
    code = textwrap.dedent(
        """
        import sys
        import uncobench_z3.models
        import uncobench_z3.models.testing
        loaded = sorted(name for name in ("openai", "anthropic") if name in sys.modules)
        assert not loaded, loaded
        uncobench_z3.models.get_model("mock/echo")
        assert "openai" not in sys.modules and "anthropic" not in sys.modules
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr


def test_all_lists_exactly_the_public_names() -> None:
    for name in models.__all__:
        assert hasattr(models, name), name
    public = {
        name
        for name, value in vars(models).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "uncobench_z3.models").startswith("uncobench_z3.models")
        and not (isinstance(value, type(models)))
    }
    public -= {"annotations"}
    assert public <= set(models.__all__), sorted(public - set(models.__all__))
    assert len(models.__all__) == len(set(models.__all__))


def test_modules_stay_small() -> None:
    package = Path(models.__file__).parent
    for source in package.rglob("*.py"):
        assert len(source.read_text().splitlines()) < 500, source


def test_mock_output_objects_are_models() -> None:
    assert get_model("mock/x", outputs=[ModelOutput(text="a")]).provider.name == "mock/x"
