"""Killing a command part way, deterministically: the K-th filesystem step raises.

``killed_after(monkeypatch, k)`` makes the ``k``-th call of ``os.replace``, ``os.rename``,
``os.unlink``, ``os.rmdir`` or ``os.mkdir`` (from any code) do its work and then raise
:class:`Killed`, the state a ``kill -9`` right after that call leaves on disk (cleanups that
``except BaseException`` run in-process can only make the state tidier, never worse). Stepping
``k`` from 1 until the command finishes visits every such state.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

STEPS = ("replace", "rename", "unlink", "rmdir", "mkdir")


class Killed(BaseException):
    """What a killed process would not have survived."""


@contextmanager
def killed_after(monkeypatch: pytest.MonkeyPatch, step: int) -> Iterator[None]:
    count = 0

    def counted(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            result = real(*args, **kwargs)
            count += 1
            if count == step:
                raise Killed(f"killed after filesystem step {step}")
            return result

        return call

    with monkeypatch.context() as patched:
        for name in STEPS:
            patched.setattr(os, name, counted(getattr(os, name)))
        yield


def run_killed(
    monkeypatch: pytest.MonkeyPatch,
    step: int,
    command: Callable[..., Any],
    *args: Any,
    **kwargs: Any,
) -> bool:
    """Run ``command(*args, **kwargs)`` killed after ``step`` filesystem steps; whether it
    was killed (False: it finished in fewer steps)."""
    try:
        with killed_after(monkeypatch, step):
            command(*args, **kwargs)
    except Killed:
        killed = True
    else:
        killed = False
    gc.collect()  # a lock the command was taking when killed: the system frees a dead one's
    return killed
