"""Shared model handles for a run: one :class:`~uncobench_z3.models.Model` per name and loop.

The ``Model`` wrapper owns retries, the concurrency limit and the response cache, so every
sample of a run must go through the same one (a fresh wrapper per sample would lift the
concurrency limit). Handles hold no state that changes results; they are created lazily per
event loop because their HTTP clients belong to the loop that made them.
"""

from __future__ import annotations

import asyncio

from ..construct import ModelRef
from ..models import GenerateConfig, Model

_POOL: dict[tuple[int, str, bool], Model] = {}


def shared_model(ref: ModelRef) -> Model:
    """The run's model for ``ref`` (made on first use in the running event loop)."""
    loop = id(asyncio.get_running_loop())
    key = (loop, ref.describe(), ref.cache)
    model = _POOL.get(key)
    if model is None:
        model = _POOL[key] = ref.create()
    return model


async def close_models() -> None:
    """Close the handles of the running loop (the runner calls this when it ends)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _POOL if k[0] == loop]:
        await _POOL.pop(key).aclose()


def trial_config(ref: ModelRef, seed: int | None) -> GenerateConfig | None:
    """The generation settings an epoch adds: its seed, unless the name pins one (then the
    name's seed is what the user asked for; the cache is still scoped by the epoch)."""
    if seed is None or any(key == "seed" for key, _ in ref.settings):
        return None
    return GenerateConfig(seed=seed)
