"""Output folders: one writer at a time, no stray files, no path outside its root.

**The lock.** ``eval`` and ``build`` write into an output folder, the LLM judge into its log's
folder, ``report``, ``leaderboard`` and ``import-inspect`` into theirs; two writers on one
folder would run every sample twice (or mix two configurations, replace each other's
benchmark, leave one's report beside the other's metrics). Each writer takes an exclusive,
non-blocking lock first (:func:`lock_output`) and a second writer is refused with one line
naming the holder.

Two files, both hidden in the folder:

* ``.uncobench-<kind>.lock`` - the lock itself: an empty file locked with ``flock`` through
  the ``filelock`` library. The operating system releases it when the holder exits in any
  way, ``kill -9`` included (worker processes die with their parent, see
  :mod:`uncobench_z3._workers`, so they cannot keep it alive);
* ``.uncobench-<kind>.lock.json`` - who holds it: ``{"pid", "host", "kind", "command",
  "started"}`` (UTC, ISO 8601). Written after the lock is taken, removed when it is released.

A holder file found when the lock is *free* is stale: its process ended without releasing
(a crash, ``kill -9``). The lock is taken over and :attr:`OutputLock.stale` says whose it was,
so the command can mention it. (The holder file is separate from the lock file because older
``filelock`` releases truncate the lock file whenever a contender opens it.)

**Unrelated files.** :func:`check_output_folder` refuses an existing folder that holds files
and is not a folder of the expected kind, so ``--out ~/Documents`` cannot scatter files
among someone's papers, and a report or a demo cannot be written into a run folder. Every
command that writes a folder checks it before any work: ``build``, ``eval``, ``demo``,
``report``, ``leaderboard``. **Containment.** :func:`contained` joins path parts that come from
data (task ids) and refuses any result outside the root.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from filelock import FileLock, Timeout

from .errors import ConfigError, InputError

__all__ = [
    "HOLDER_FILE",
    "LOCK_FILE",
    "OutputLock",
    "check_output_folder",
    "contained",
    "lock_output",
]

LOCK_FILE = ".uncobench-eval.lock"
"""the lock of a run folder (other kinds: ``.uncobench-<kind>.lock``)"""
HOLDER_FILE = LOCK_FILE + ".json"


def _lock_names(kind: str) -> tuple[str, str]:
    name = f".uncobench-{kind}.lock"
    return name, name + ".json"


def _holder_text(holder: dict[str, Any]) -> str:
    command = str(holder.get("command", ""))[:120]
    return (
        f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')} since "
        f"{holder.get('started', '?')} ({command})"
    )


def _read_holder(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class OutputLock:
    """An exclusive lock on a folder for one kind of writer; use it as a context manager."""

    def __init__(self, folder: str | Path, kind: str) -> None:
        self.folder = Path(folder)
        self.kind = kind
        lock_name, holder_name = _lock_names(kind)
        self.lock_path = self.folder / lock_name
        self.holder_path = self.folder / holder_name
        self.stale: dict[str, Any] | None = None
        """the holder file a previous holder left behind, when the lock was taken over"""
        self._lock = FileLock(str(self.lock_path))

    def acquire(self) -> OutputLock:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{self.folder}: cannot be created ({exc.strerror})") from None
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            holder = _read_holder(self.holder_path)
            who = _holder_text(holder) if holder else "another process"
            raise InputError(
                f"{self.folder} is in use by {who}; wait for it to finish or stop it "
                "(one writer per folder)"
            ) from None
        except OSError as exc:
            raise ConfigError(f"{self.lock_path}: cannot be locked ({exc.strerror})") from None
        self.stale = _read_holder(self.holder_path) if self.holder_path.exists() else None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "kind": self.kind,
            "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
            "started": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        from .spec import write_text_atomic

        write_text_atomic(self.holder_path, json.dumps(holder) + "\n")
        return self

    def stale_note(self) -> str | None:
        """One line about a stale lock that was taken over, if one was."""
        if self.stale is None:
            return None
        return (
            f"took over a stale lock of {self.folder}: {_holder_text(self.stale)} ended "
            "without releasing it"
        )

    def release(self) -> None:
        self.holder_path.unlink(missing_ok=True)
        self._lock.release()

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def lock_output(folder: str | Path, kind: str) -> OutputLock:
    """A lock on ``folder`` for a writer of ``kind`` (``eval``, ``build``, ``judge``), to be
    entered with ``with``; entering it when another process holds it raises
    :class:`InputError` naming the holder."""
    return OutputLock(folder, kind)


def _ours(name: str) -> bool:
    return name.startswith(".uncobench-") or (name.startswith(".") and name.endswith(".tmp"))


def check_output_folder(
    folder: str | Path, markers: tuple[str, ...], what: str, allowed: tuple[str, ...] = ()
) -> None:
    """Refuse ``folder`` if it is a file, or an existing folder that holds files but none of
    ``markers`` (the files a ``what`` folder has): it belongs to something else. Names in
    ``allowed`` (what a ``what`` folder may hold besides its markers, such as the demo's
    ``bench/``) do not count as something else's."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file, not a {what} folder")
    if not target.is_dir():
        return
    try:
        names = [entry.name for entry in target.iterdir()]
    except OSError as exc:
        raise ConfigError(f"{target}: cannot be read ({exc.strerror})") from None
    others = sorted(name for name in names if not _ours(name) and name not in allowed)
    if others and not any(marker in names for marker in markers):
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise ConfigError(
            f"{target} is not a {what} and is not empty (it holds {shown}); choose a new or "
            "empty folder for --out"
        )


def contained(root: str | Path, *parts: str) -> Path:
    """``root / parts...``, refused (:class:`InputError`) unless it stays inside ``root``
    (no ``..``, no absolute part, no symlink out)."""
    base = Path(root)
    target = base.joinpath(*parts)
    resolved_root = base.resolve()
    resolved = target.resolve()
    if not resolved.is_relative_to(resolved_root) or resolved == resolved_root:
        raise InputError(
            f"refusing to write {'/'.join(parts)!r}: the path leaves the folder {base}"
        )
    return target
