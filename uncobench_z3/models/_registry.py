"""Model names (``provider/model``) and the providers behind them.

Built-in providers are named by module path and imported on first use, so importing
this package never imports an SDK; :func:`register_provider` adds others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ModelConfigError
from ._cache import ResponseCache
from ._model import DEFAULT_MAX_ATTEMPTS, Model, RetryCallback, Sleep
from ._types import GenerateConfig
from ._usage import ModelPrice
from .providers._base import ModelProvider

__all__ = [
    "PROVIDER_DEFAULTS",
    "ModelName",
    "ProviderFactory",
    "get_model",
    "parse_model_name",
    "provider_names",
    "register_provider",
    "with_provider_defaults",
]

ProviderFactory: TypeAlias = Callable[..., ModelProvider]
"""``factory(rest_of_name, **model_args) -> ModelProvider``."""

# provider -> (module, factory function); imported when the provider is first used.
_BUILTIN_PROVIDERS: dict[str, tuple[str, str]] = {
    "anthropic": ("uncobench_z3.models.providers._anthropic", "create_anthropic_provider"),
    "openai": ("uncobench_z3.models.providers._openai", "create_openai_provider"),
    "openai-api": ("uncobench_z3.models.providers._openai", "create_openai_api_provider"),
    "mock": ("uncobench_z3.models.providers._mock", "create_mock_provider"),
    "local": ("uncobench_z3.models.providers._local", "create_local_provider"),
}
# Which pip extra provides the SDK a provider module imports.
_INSTALL_HINTS = {
    "anthropic": "pip install 'uncobench-z3[llm]' (or: pip install anthropic)",
    "openai": "pip install 'uncobench-z3[llm]' (or: pip install openai)",
}

_registered: dict[str, ProviderFactory] = {}

_EXAMPLES = (
    "anthropic/claude-sonnet-4-5, openai/gpt-4.1-mini, openai-api/<service>/<model>, "
    "local/smollm2, mock/echo"
)


#: Model settings for providers that need them, for every caller of a model by name (agents,
#: colleagues, the judge, build's LLM stages): a small model rambles, and every token it writes
#: costs seconds on a CPU (a policy colleague on ``local/smollm2`` without a limit wrote until
#: its context was full, past the 300 s timeout, and every retry queued behind the abandoned
#: reply on the one-slot server).
PROVIDER_DEFAULTS: dict[str, dict[str, str]] = {
    "local": {"max_tokens": "512"},
}


def with_provider_defaults(name: str) -> str:
    """``provider/model[,key=value...]`` with the provider's :data:`PROVIDER_DEFAULTS` added
    where the name gives none."""
    parts = [part.strip() for part in name.split(",")]
    given = {part.partition("=")[0] for part in parts[1:]}
    defaults = PROVIDER_DEFAULTS.get(parts[0].split("/", 1)[0], {})
    added = [f"{key}={value}" for key, value in defaults.items() if key not in given]
    return ",".join([*parts, *added])


@dataclass(frozen=True)
class ModelName:
    """A parsed model name: ``provider`` and the ``rest`` that provider interprets."""

    provider: str
    rest: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.rest}"


def provider_names() -> list[str]:
    return sorted({*_BUILTIN_PROVIDERS, *_registered})


def parse_model_name(name: str) -> ModelName:
    """Split ``provider/model``; the model part may itself contain slashes."""
    provider, separator, rest = name.strip().partition("/")
    if not separator or not provider or not rest or rest.startswith("/"):
        raise ModelConfigError(
            f"model name {name!r} must look like provider/model, for example: {_EXAMPLES}"
        )
    if provider not in _BUILTIN_PROVIDERS and provider not in _registered:
        raise ModelConfigError(
            f"unknown model provider {provider!r} in {name!r}; "
            f"known providers: {', '.join(provider_names())} (for example: {_EXAMPLES})"
        )
    return ModelName(provider, rest)


def register_provider(provider: str, factory: ProviderFactory) -> None:
    """Make ``provider/<rest>`` names resolve through ``factory(rest, **model_args)``."""
    if "/" in provider or not provider:
        raise ValueError(f"provider name {provider!r} must be non-empty and contain no '/'")
    _registered[provider] = factory


def _factory(provider: str) -> ProviderFactory:
    if provider in _registered:
        return _registered[provider]
    module_name, function_name = _BUILTIN_PROVIDERS[provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = error.name or "a dependency"
        hint = _INSTALL_HINTS.get(missing, f"pip install {missing}")
        raise ModelConfigError(
            f"the {provider!r} provider needs the package {missing!r}: {hint}"
        ) from None
    factory: ProviderFactory = getattr(module, function_name)
    return factory


def get_model(
    name: str,
    config: GenerateConfig | None = None,
    *,
    cache: bool | ResponseCache = False,
    max_connections: int | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_retry_wait: float = 60.0,
    on_retry: RetryCallback | None = None,
    sleep: Sleep | None = None,
    price: ModelPrice | None = None,
    **model_args: Any,
) -> Model:
    """A :class:`Model` for ``name`` (``provider/model``).

    ``config`` holds the default generation settings. ``cache`` turns the on-disk
    response cache on (``True`` uses :func:`default_cache_dir`; pass a
    :class:`ResponseCache` for another directory). ``model_args`` go to the provider:
    ``api_key``, ``base_url`` and ``http_client`` (an ``httpx.AsyncClient`` of the kind
    the SDK accepts) for the HTTP providers, ``outputs`` for ``mock/``, and
    ``startup_timeout`` for ``local/``. ``max_connections`` bounds the calls that run at once
    (default: the endpoint's parallel slots when the provider knows them, else 8).
    """
    parsed = parse_model_name(name)
    provider = _factory(parsed.provider)(parsed.rest, **model_args)
    response_cache = ResponseCache() if cache is True else (cache or None)
    return Model(
        provider,
        config=config,
        cache=response_cache,
        max_connections=max_connections,
        max_attempts=max_attempts,
        max_retry_wait=max_retry_wait,
        on_retry=on_retry,
        sleep=sleep,
        price=price,
    )
