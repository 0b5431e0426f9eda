"""A response cache on disk, one JSON file per request.

The key is a SHA-256 of everything that determines the answer — model name, endpoint,
messages, tools, tool choice and generation settings, and the *trial* the call belongs to (an
evaluation passes its epoch seed, so a repeated identical call is served from the cache
within one epoch and never across epochs) — and of nothing secret: API keys
and headers never enter it, so rotating a key keeps the cache and the files hold no key.
Writes go to a temporary file that is renamed into place, so a crash or a concurrent
writer never leaves a half-written entry. Each entry stores the SHA-256 of its output
(``sha256``); an entry whose output does not match it - edited by hand, or written before
digests were stored - is ignored with a warning and the model is asked again, so a changed
file can never silently change a result.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._secrets import logger
from ._types import ChatMessage, GenerateConfig, ModelOutput, ToolDef, ToolFunction, ToolMode

__all__ = ["CACHE_DIR_ENV", "ResponseCache", "cache_key", "default_cache_dir", "output_digest"]

CACHE_DIR_ENV = "UNCOBENCH_CACHE_DIR"
# Bumped whenever the key's ingredients or the entry format change.
_CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$UNCOBENCH_CACHE_DIR``, else ``~/.cache/uncobench-z3/models``."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "uncobench-z3" / "models"


def cache_key(
    model_name: str,
    endpoint: str,
    messages: list[ChatMessage],
    tools: list[ToolDef],
    tool_choice: ToolMode | ToolFunction | None,
    config: GenerateConfig,
    trial: int | str | None = None,
) -> str:
    """Hex SHA-256 identifying one request; equal requests of the same trial give equal keys
    (``trial`` None leaves the key as it was before trials existed)."""
    ingredients: dict[str, Any] = {
        "format": _CACHE_FORMAT,
        "model": model_name,
        "endpoint": endpoint,
        "messages": [message.model_dump(mode="json") for message in messages],
        "tools": [tool.model_dump(mode="json") for tool in tools],
        "tool_choice": tool_choice.model_dump(mode="json")
        if isinstance(tool_choice, ToolFunction)
        else tool_choice,
        # The timeout bounds the wait, not the answer.
        "config": config.model_dump(mode="json", exclude={"timeout"}),
    }
    if trial is not None:
        ingredients["trial"] = trial
    canonical = json.dumps(ingredients, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def output_digest(stored: Any) -> str:
    """SHA-256 of a stored output's canonical JSON (what an entry's ``sha256`` holds)."""
    canonical = json.dumps(stored, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Model outputs stored under ``directory/<key[:2]>/<key>.json``."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.mismatches = 0
        """entries ignored because their output did not match their digest"""

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelOutput | None:
        """The stored output, marked ``from_cache``; ``None`` on a miss, a damaged entry, or
        an entry whose output no longer matches its digest (edited: ignored and reported)."""
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            stored = entry["output"]
            digest = entry.get("sha256")
            output = ModelOutput.model_validate(stored)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, ValidationError) as error:
            # A damaged entry is a miss; the fresh answer will overwrite it.
            logger.warning("ignoring unreadable cache entry %s: %s", path, type(error).__name__)
            return None
        if digest != output_digest(stored):
            self.mismatches += 1
            logger.warning(
                "ignoring cache entry %s: its output does not match its digest (edited, or "
                "written by an older version); asking the model again",
                path,
            )
            return None
        return output.model_copy(update={"from_cache": True})

    def put(self, key: str, model_name: str, output: ModelOutput) -> None:
        """Store ``output`` atomically; a failure to write is logged, not raised."""
        path = self._path(key)
        stored = output.model_copy(update={"from_cache": False}).model_dump(mode="json")
        entry = {
            "format": _CACHE_FORMAT,
            "model": model_name,
            "output": stored,
            "sha256": output_digest(stored),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(
                dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp"
            )
            try:
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    # in the output's own order: sorted, a tool call's arguments came back
                    # from the cache in another order than the model wrote them, and a
                    # sample's trace read from the cache differed from the one first written
                    # (the digest is of the canonical, sorted text either way)
                    json.dump(entry, handle)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            logger.warning("could not write cache entry %s: %s", path, error)
