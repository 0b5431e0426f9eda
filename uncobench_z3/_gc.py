"""The garbage collector's pace for the package's long-running work.

CPython runs a collection of its youngest generation every 700 net allocations of container
objects, and promotes what survives. Building, verifying and playing a benchmark allocate
millions of short-lived, acyclic objects (models of records and replies, tuples of slots),
so most of those collections find nothing, yet each one, and each full collection that the
promotions trigger, walks every young (or every) object. A larger youngest generation makes
them rarer and leaves the reclaiming to reference counting, as it would anyway.

Measured on ``uncobench eval`` of 150 groups with three built-in agents (whole process, CPU
time): 7.18-7.59 s at the default pace, 6.27-6.48 s with a youngest generation of 10,000.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_GENERATION = 10_000
"""container allocations between collections of the youngest generation (CPython: 700)"""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect less often for the duration (never more often than the process already does);
    the previous pace is restored after."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_GENERATION), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
