"""Shared model handles for a run: one :class:`~uncobench_z3.models.Model` per name and loop.

The ``Model`` wrapper owns retries, the concurrency limit and the response cache, so every
sample of a run must go through the same one (a fresh wrapper per sample would lift the
concurrency limit). Handles hold no state that changes results; they are created lazily per
event loop because their HTTP clients belong to the loop that made them.
"""

from __future__ import annotations

import asyncio
import math
from contextvars import ContextVar
from dataclasses import dataclass

from ..construct import ModelRef
from ..errors import ConfigError
from ..models import DEFAULT_MAX_ATTEMPTS, GenerateConfig, Model

DEFAULT_MAX_RETRY_WAIT = 60.0


@dataclass(frozen=True)
class CallPolicy:
    """How a run calls its models: ``--timeout`` (seconds per attempt; ``None``: the model
    layer's default), ``--max-attempts`` and ``--max-retry-wait`` (the cap on one wait
    between attempts). They bound the waiting, never the answer, so they are not part of
    the run's configuration hash."""

    timeout: float | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT

    def __post_init__(self) -> None:
        # (infinity is refused like nan: a wait without end is what these options bound)
        if self.timeout is not None and not 0 < self.timeout < math.inf:
            raise ConfigError(
                f"--timeout must be a finite number of seconds more than 0, not {self.timeout:g}"
            )
        if self.max_attempts < 1:
            raise ConfigError(f"--max-attempts must be at least 1, not {self.max_attempts}")
        if not 0 <= self.max_retry_wait < math.inf:
            raise ConfigError(
                "--max-retry-wait must be a finite number of seconds, 0 or more, not "
                f"{self.max_retry_wait:g}"
            )


_DEFAULT_POLICY = CallPolicy()  # frozen: safe to share as the default
CALL_POLICY: ContextVar[CallPolicy] = ContextVar("uncobench_call_policy", default=_DEFAULT_POLICY)
"""the policy of the run in progress (the runner sets it; tasks inherit it)"""

CONNECTION_SHARE: ContextVar[tuple[int, int]] = ContextVar(
    "uncobench_connection_share", default=(0, 1)
)
"""(this shard, shards): an eval shard calls each model with its share of the model's
connections, so that the limit holds across the shards of a run (:func:`connection_share`)"""

_POOL: dict[tuple[int, str, bool, CallPolicy], Model] = {}
_INHERITED: list[Model] = []


def connection_share(limit: int, shard: int, shards: int) -> int:
    """Shard ``shard``'s part of ``limit`` connections split over ``shards`` (the parts add
    up to ``limit``; a run never has more shards than a model has connections)."""
    return max(1, limit // shards + (1 if shard < limit % shards else 0))


def shared_model(ref: ModelRef) -> Model:
    """The run's model for ``ref`` (made on first use in the running event loop)."""
    loop = id(asyncio.get_running_loop())
    policy = CALL_POLICY.get()
    key = (loop, ref.describe(), ref.cache, policy)
    model = _POOL.get(key)
    if model is None:
        model = _POOL[key] = ref.create(
            timeout=policy.timeout,
            max_attempts=policy.max_attempts,
            max_retry_wait=policy.max_retry_wait,
        )
        shard, shards = CONNECTION_SHARE.get()
        if shards > 1:
            # a shard is only made when every model's limit is known to exceed one (the
            # runner asks each model first); the share applies to the limit the model finds,
            # its server's slots included
            model.share_connections(lambda limit: connection_share(limit, shard, shards))
    return model


def forget_models() -> None:
    """Drop the handles a forked worker inherited: they belong to the driver's event loop
    and connections (kept referenced, never used or closed here)."""
    _INHERITED.extend(_POOL.values())
    _POOL.clear()


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
