"""The event loop of ``uncobench eval``'s worker processes: uvloop where it is installed.

With ``--workers N`` each eval worker plays its shard in one event loop: at high concurrency
against a slow agent, thousands of timers, task switches and socket writes a second, and the
loop's own work is part of what keeps a run from the latency-bound ideal. `uvloop
<https://github.com/MagicStack/uvloop>`_ (libuv, in C) does that work for less CPU. It is an
optional extra, for Linux and macOS: ``pip install "uncobench-z3[fast]"``; without it the
workers run on asyncio's loop, the same.

The driver stays on asyncio's own loop: it forks the workers from inside its running loop,
and a forked child of a running libuv loop inherits that loop's state (its epoll instance
among it), which libuv does not promise to be safe; a worker whose parent never ran libuv
starts it clean. (A uvloop driver measured no less CPU: 0.50 against 0.51 CPU-s in
``benchmarks/eval_overhead.py``'s run at concurrency 256 over two workers.)

The loop decides nothing a record holds (the samples' lines are the same bytes on either,
but for ``elapsed_seconds``, which differs between any two runs), so a run may be resumed on
the other loop. ``UNCOBENCH_EVENT_LOOP`` chooses: ``asyncio`` (asyncio's loop even where
uvloop is installed), ``uvloop`` (uvloop, or an error when it is not installed), unset or
``auto`` (uvloop if installed). The workers inherit it with the environment; the driver
checks it before the run folder is touched.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .errors import ConfigError

__all__ = ["EVENT_LOOP_VARIABLE", "event_loop_name", "loop_factory", "run"]

EVENT_LOOP_VARIABLE = "UNCOBENCH_EVENT_LOOP"
_CHOICES = ("auto", "asyncio", "uvloop")
T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory() -> LoopFactory | None:
    """What makes the event loop (:data:`EVENT_LOOP_VARIABLE`, see the module docstring):
    uvloop's ``new_event_loop``, or None for asyncio's own loop. A value not understood, or
    ``uvloop`` where it is not installed, is a :class:`ConfigError`."""
    choice = os.environ.get(EVENT_LOOP_VARIABLE, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ConfigError(
            f"{EVENT_LOOP_VARIABLE} must be one of {', '.join(_CHOICES)}, not {choice!r}"
        )
    if choice == "asyncio":
        return None
    try:  # (imported by name: the type checker need not know the optional extra)
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        if choice == "uvloop":
            raise ConfigError(
                f"{EVENT_LOOP_VARIABLE}=uvloop, but uvloop is not installed "
                '(pip install "uncobench-z3[fast]", Linux and macOS)'
            ) from None
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def event_loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop :func:`run` uses here and now."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` on the loop :func:`loop_factory` makes (the coroutine is
    closed, never started, when the choice is refused)."""
    try:
        factory = loop_factory()
    except ConfigError:
        coroutine.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coroutine)
