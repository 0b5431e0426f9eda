"""Language models behind one interface: ``await get_model(name).generate(messages)``.

Names have the form ``provider/model``:

* ``anthropic/<model>`` — ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL;
* ``openai/<model>`` — OPENAI_API_KEY, optional OPENAI_BASE_URL;
* ``openai-api/<service>/<model>`` — any OpenAI-compatible server at
  ``<SERVICE>_BASE_URL``, key from ``<SERVICE>_API_KEY`` if the server needs one;
* ``local/smollm2`` — a llama.cpp server this process starts (or
  ``LOCAL_SMOLLM2_BASE_URL``);
* ``mock/<name>`` — scripted answers for tests; ``mock/echo`` works unscripted.

Providers only translate; :class:`Model` owns retries (honouring Retry-After),
concurrency, timeouts, the response cache and usage accounting. Importing this package
imports no provider SDK.
"""

from __future__ import annotations

from ._cache import CACHE_DIR_ENV, ResponseCache, cache_key, default_cache_dir
from ._model import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_TIMEOUT,
    Model,
    RetryCallback,
    Sleep,
)
from ._registry import (
    PROVIDER_DEFAULTS,
    ModelName,
    ProviderFactory,
    get_model,
    parse_model_name,
    provider_names,
    register_provider,
    with_provider_defaults,
)
from ._secrets import redact
from ._stored import DEFAULT_STORED_CHARACTERS, StoredCall, StoredOutput, StoredText, stored_text
from ._types import (
    ChatMessage,
    ChatRole,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    ReasoningEffort,
    StopReason,
    ToolCall,
    ToolChoice,
    ToolDef,
    ToolFunction,
    ToolMode,
)
from ._usage import MODEL_PRICES, ModelPrice, model_usage, price_for, reset_model_usage
from .providers._base import ModelProvider, ProviderCallError, parse_retry_after, server_slots
from .providers._local import find_local_gguf, start_local_server, stop_local_servers
from .providers._mock import MockCall, MockProvider

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_STORED_CHARACTERS",
    "DEFAULT_TIMEOUT",
    "MODEL_PRICES",
    "PROVIDER_DEFAULTS",
    "ChatMessage",
    "ChatRole",
    "GenerateConfig",
    "MockCall",
    "MockProvider",
    "Model",
    "ModelName",
    "ModelOutput",
    "ModelPrice",
    "ModelProvider",
    "ModelUsage",
    "ProviderCallError",
    "ProviderFactory",
    "ReasoningEffort",
    "ResponseCache",
    "RetryCallback",
    "Sleep",
    "StopReason",
    "StoredCall",
    "StoredOutput",
    "StoredText",
    "ToolCall",
    "ToolChoice",
    "ToolDef",
    "ToolFunction",
    "ToolMode",
    "cache_key",
    "default_cache_dir",
    "find_local_gguf",
    "get_model",
    "model_usage",
    "parse_model_name",
    "parse_retry_after",
    "price_for",
    "provider_names",
    "redact",
    "register_provider",
    "reset_model_usage",
    "server_slots",
    "start_local_server",
    "stop_local_servers",
    "stored_text",
    "with_provider_defaults",
]
