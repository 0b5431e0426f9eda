"""Worker processes that die with their parent.

``build`` and ``verify`` hand chunks of work to a process pool. When the parent is killed
(``kill -9``, an OOM kill, a closed terminal) its workers would live on: busy with chunks
nobody will read, holding CPU, and - since forked workers inherit the parent's open files -
holding the output folder's lock, so the resumed command would be told the folder is in use.
Every pool made here runs :func:`die_with_parent` in each worker first:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through ``ctypes``): the kernel kills the
  worker the moment its parent dies; a parent that died before the call is caught by
  comparing ``getppid()`` with the pid the parent passed;
* elsewhere, a daemon thread polls ``getppid()`` and ends the worker when the parent is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

__all__ = ["die_with_parent", "worker_pool"]

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.5


def _kernel_watch() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; whether that worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL_SECONDS)
    os._exit(1)


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when the process ``parent`` ends."""
    watched = _kernel_watch()
    if os.getppid() != parent:  # the parent died before (or while) we asked
        os._exit(1)
    if not watched:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool of ``workers`` processes that die with this process."""
    return ProcessPoolExecutor(
        max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)
    )
