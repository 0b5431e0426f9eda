"""One watchdog thread per process bounds the wall-clock time of every solver query.

Z3's own ``timeout`` parameter starts a timer for each ``check`` and joins it afterwards; on
the small queries of a task that costs more CPU than the check itself (the joining thread
spins in ``sched_yield``). Here a query *arms* the watchdog (a dictionary insert under a
lock) and *disarms* it when it returns; the thread sleeps until the earliest deadline and
wakes at most once per timeout period while queries keep finishing in time. A query still
running at its deadline is interrupted (``Z3_interrupt`` on its context) and answers
``unknown``. The deterministic bound of a query remains its ``rlimit``.
"""

from __future__ import annotations

import math
import os
import threading
import time

import z3


class Watchdog:
    """Interrupts Z3 contexts whose armed deadline has passed."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._armed: dict[int, tuple[float, z3.Context]] = {}
        self._fired: set[int] = set()
        self._next_token = 0
        self._wake_at = math.inf
        self._shortest = math.inf
        self._thread: threading.Thread | None = None
        self.wakeups = 0
        """how often the thread woke (a test checks that finishing queries do not wake it)"""

    def arm(self, context: z3.Context, timeout_ms: int) -> int:
        """Start the clock of one query on ``context``; returns a token for :meth:`disarm`."""
        deadline = time.monotonic() + timeout_ms / 1000
        with self._cond:
            self._shortest = min(self._shortest, timeout_ms / 1000)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="uncobench-z3-watchdog", daemon=True
                )
                self._thread.start()
            token = self._next_token
            self._next_token += 1
            self._armed[token] = (deadline, context)
            if deadline < self._wake_at:
                self._wake_at = deadline
                self._cond.notify()
        return token

    def disarm(self, token: int) -> bool:
        """Stop the clock; True when the query was interrupted for running out of time."""
        with self._cond:
            self._armed.pop(token, None)
            if token in self._fired:
                self._fired.discard(token)
                return True
            return False

    def _run(self) -> None:
        with self._cond:
            while True:
                self.wakeups += 1
                now = time.monotonic()
                for token, (deadline, context) in list(self._armed.items()):
                    if deadline <= now:
                        del self._armed[token]
                        self._fired.add(token)
                        context.interrupt()
                # Sleep until the earliest deadline armed now; deadlines armed later are
                # looked at when it passes (queries usually disarm long before). With nothing
                # armed, sleep one shortest timeout: no query armed meanwhile can expire
                # sooner, so arming it need not wake this thread.
                self._wake_at = min(
                    (d for d, _ in self._armed.values()), default=now + self._shortest
                )
                # (never longer than the platform can wait: the thread would die of it)
                self._cond.wait(min(self._wake_at - now, threading.TIMEOUT_MAX))


WATCHDOG = Watchdog()
# A forked worker inherits the object but not the thread (nor a usable lock): start afresh.
os.register_at_fork(after_in_child=WATCHDOG._reset)
