"""The garbage collector's pace for the package's long-running work.

CPython runs a collection of its youngest generation every 700 net allocations of container
objects, and promotes what survives. Building, verifying and playing a benchmark allocate
millions of short-lived, acyclic objects (models of records and replies, tuples of slots),
so most of those collections find nothing, yet each one, and each full collection that the
promotions trigger, walks every young (or every) object. A larger youngest generation makes
them rarer and leaves the reclaiming to reference counting, as it would anyway.

Measured on ``uncobench eval`` of 150 groups with three built-in agents (whole process, CPU
time): 7.18-7.59 s at the default pace, 6.27-6.48 s with a youngest generation of 10,000.
The collector's own time in that command (``gc.callbacks``, two runs each, the benchmark
loaded by :func:`long_lived`): 0.35 and 0.46 s with 10,000, 0.19 and 0.19 s with 50,000 -
the objects of a sample in play are mostly gone by the next collection, instead of being
walked in two generations. (Without :func:`long_lived`: 0.59-0.64 s against 0.41-0.47 s,
three runs each; 200,000 gave no less than 50,000.) At most 50,000 objects' worth of
cyclic garbage waits for a collection: a few megabytes.

When a command has finished, the interpreter's shutdown runs about four full collections as
it takes the modules apart, each walking every object still alive: 40-55 ms each after the
imports alone (75,000 objects), 0.2 s in all for ``uncobench --help``, 0.55-0.6 s after
``uncobench eval`` of 150 groups with three agents, 1.4-1.7 s after a first pass over 320
groups of a benchmark. The program ends without them (:func:`end_without_collecting`): the
operating system takes the memory back at once.

The middle generation is collected after every ten young collections (CPython's pace), and
walks every object that survived them: at this young pace about half a million objects (the
run's memos, the samples in play), 0.2 s each time over a built benchmark, and most of them
alive still, as the memos are. ``uncobench eval`` over 1,000 built groups with
builtin/careful, one process (4,821 samples, 14 young collections while playing; the
collector's time while playing by ``gc.callbacks``, three runs each, alternated): 0.44-0.58 s
with a middle collection after ten young ones, 0.29-0.32 s after a hundred (none in that run;
the whole process 7.07-7.81 against 6.90-7.02 CPU-s), the objects found the same but 15 of
about 1,100. Cyclic garbage that survives a young collection waits longer in the middle
generation: the whole run above made about 1,100 objects of it.

A benchmark that a command loads lives until the command ends, and parsing it makes
hundreds of thousands of objects, none in a reference cycle: the collections that ran
while the 1,000-group benchmark was read (44 young, 4 middle) walked them and found nothing,
0.11-0.14 of its 0.60 CPU-s. :func:`long_lived` makes them with the collector paused and
moves them out of its reach after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_GENERATION = 50_000
"""container allocations between collections of the youngest generation (CPython: 700)"""

MIDDLE_GENERATION = 100
"""young collections between collections of the middle generation (CPython: 10)"""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect less often for the duration, the young and the middle generations (never more
    often than the process already does); the previous pace is restored after."""
    before = gc.get_threshold()
    gc.set_threshold(
        max(before[0], YOUNG_GENERATION), max(before[1], MIDDLE_GENERATION), *before[2:]
    )
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def long_lived() -> Iterator[None]:
    """Make objects that live for the rest of the process (a loaded benchmark): no collection
    runs while they are made, and when the block ends every object alive is frozen
    (``gc.freeze``: no later collection walks them; forked workers then share their pages
    unwritten). The collector is left as it was (running, or paused by the caller). A block
    that raises freezes nothing: the process is about to report the error.

    Only for data without reference cycles made by this block: what is alive when it ends,
    the garbage of the young generations included (at most a collection's worth), is never
    collected."""
    with paused():
        yield
        gc.freeze()


@contextmanager
def paused() -> Iterator[None]:
    """No collection runs for the duration; the collector is left as it was after. For a block
    that makes many objects and no reference cycle (reading a benchmark's groups: see
    :func:`uncobench_z3.construct._benchfile._parse_lines`), whose collections would walk
    them and find nothing."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def end_without_collecting() -> None:
    """Let the process end without the shutdown's full collections (see the module docstring).

    Every object alive is moved out of the collector's reach (``gc.freeze``); the shutdown
    still runs ``atexit`` functions, ``weakref.finalize`` callbacks and the destructors of
    objects freed by reference counting, and flushes the standard streams, but no longer
    walks the heap looking for cycles to free just before the process's memory is released
    whole. Only for the end of a program: what was alive is never collected after this."""
    gc.freeze()
