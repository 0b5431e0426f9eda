"""Output folders: one writer at a time, no stray files, no path outside its root.

**The lock.** ``eval`` and ``build`` write into an output folder, the LLM judge into its log's
folder, ``report``, ``leaderboard``, ``import-inspect``, ``demo`` and ``verify --emit-smt2``
into theirs; two writers on one folder would run every sample twice (or mix two
configurations, replace each other's benchmark, leave one's report beside the other's
metrics or run). Every writer, whatever its kind, takes the folder's one exclusive,
non-blocking lock (:func:`lock_output`) *before any work*, checks the folder again under it
(it may have changed since the first look), and a second writer is refused with one line
naming the holder.

Two files, both hidden in the folder:

* ``.uncobench-folder.lock`` - the lock itself: an empty file locked with ``flock`` through
  the ``filelock`` library. The operating system releases it when the holder exits in any
  way, ``kill -9`` included (worker processes die with their parent, see
  :mod:`uncobench_z3._workers`, so they cannot keep it alive);
* ``.uncobench-folder.lock.json`` - who holds it: ``{"pid", "host", "kind", "command",
  "started"}`` (UTC, ISO 8601). Written after the lock is taken, removed when it is released.

A holder file found when the lock is *free* is stale: its process ended without releasing
(a crash, ``kill -9``). The lock is taken over and :attr:`OutputLock.stale` says whose it was,
so the command can mention it. (The holder file is separate from the lock file because older
``filelock`` releases truncate the lock file whenever a contender opens it.) A writer that is
refused or fails while the folder holds nothing of its own leaves nothing behind: the lock
file it created goes, and so does the folder it created.

**Unrelated files.** :func:`check_output_folder` refuses an existing folder that holds files
and is not a folder of the expected kind, so ``--out ~/Documents`` cannot scatter files
among someone's papers, and a report or a demo cannot be written into a run folder.
**Incomplete output.** :func:`incomplete_marker` marks a set of files being replaced (a
report: its files are each atomic, the set is not) so an interrupted writer is detected.
**Containment.** :func:`contained` joins path parts that come from data (task ids) and
refuses any result outside the root.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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
    "incomplete_marker",
    "lock_output",
]

LOCK_FILE = ".uncobench-folder.lock"
"""the lock of an output folder, one for every kind of writer"""
HOLDER_FILE = LOCK_FILE + ".json"


def _holder_text(holder: dict[str, Any]) -> str:
    command = str(holder.get("command", ""))
    if len(command) > 120:  # a long command line is cut, and shown to be
        command = command[:120] + " ..."
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
    """The exclusive lock on an output folder, whatever the kind of writer; use it as a
    context manager. ``check`` (the folder check of the writer's kind) runs before anything
    is created and again under the lock."""

    def __init__(
        self, folder: str | Path, kind: str, check: Callable[[], None] | None = None
    ) -> None:
        self.folder = Path(folder)
        self.kind = kind
        self.check = check
        self.lock_path = self.folder / LOCK_FILE
        self.holder_path = self.folder / HOLDER_FILE
        self.stale: dict[str, Any] | None = None
        """the holder file a previous holder left behind, when the lock was taken over"""
        self._lock = FileLock(str(self.lock_path))
        self._created_folder = False
        self._created_lock = False

    def acquire(self) -> OutputLock:
        if self.check is not None:
            self.check()  # nothing is created for a folder that is refused anyway
        self._created_folder = not self.folder.exists()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{self.folder}: cannot be created ({exc.strerror})") from None
        self._created_lock = not self.lock_path.exists()
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
            self._discard_created()
            raise ConfigError(f"{self.lock_path}: cannot be locked ({exc.strerror})") from None
        if not self._holds_the_file():
            self._lock.release()
            raise InputError(
                f"{self.folder} changed hands while its lock was taken (another writer ended "
                "and removed the lock it had made); run the command again"
            )
        try:
            if self.check is not None:
                self.check()  # again: the folder may have changed before the lock was ours
        except BaseException:
            self._discard_created()
            self._lock.release()
            raise
        self.stale = _read_holder(self.holder_path) if self.holder_path.exists() else None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "kind": self.kind,
            "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
            "started": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        from .spec import remove_stale_temps, write_text_atomic

        # a holder file a killed writer was writing is the lock's own leftover: it goes here,
        # under the lock, for every kind of writer
        remove_stale_temps(self.folder, (HOLDER_FILE,))
        try:
            write_text_atomic(self.holder_path, json.dumps(holder) + "\n")
        except BaseException:  # (a full disk): the writer fails, leaving nothing it created
            self._discard_created()
            self._lock.release()
            raise
        return self

    def _holds_the_file(self) -> bool:
        """Whether the file this lock holds is still the folder's lock file. A writer that
        created the lock file removes it when it fails (:meth:`_discard_created`); a
        contender that opened the file just before would otherwise hold a lock on a removed
        file while a third writer locks a new one (newer filelock versions refuse such a
        lock themselves; this check does not depend on the version)."""
        descriptor = getattr(getattr(self._lock, "_context", None), "lock_file_fd", None)
        if not isinstance(descriptor, int):
            return True  # (a filelock without the descriptor in sight: its own check only)
        try:
            return os.stat(self.lock_path).st_ino == os.fstat(descriptor).st_ino
        except OSError:
            return False

    def stale_note(self) -> str | None:
        """One line about a stale lock that was taken over, if one was."""
        if self.stale is None:
            return None
        return (
            f"took over a stale lock of {self.folder}: {_holder_text(self.stale)} ended "
            "without releasing it"
        )

    def _discard_created(self) -> None:
        """Remove the lock file this writer created, and the folder it created if nothing
        else is in it: a refused or failed writer that wrote nothing leaves nothing. (Called
        while the lock is held: a contender that opened the file before it went finds the
        lock taken, and filelock refuses a lock on a removed file.)"""
        if self._created_lock:
            self.lock_path.unlink(missing_ok=True)
        if self._created_folder:
            with suppress(OSError):  # only an empty folder goes
                self.folder.rmdir()

    def release(self, failed: bool = False) -> None:
        """Release the lock; when the writer stopped on an error (``failed``) or wrote nothing
        into the folder it created, what it created and left empty goes."""
        self.holder_path.unlink(missing_ok=True)
        if failed or self._wrote_nothing():
            self._discard_created()
        self._lock.release()

    def _wrote_nothing(self) -> bool:
        try:
            return self._created_folder and [p.name for p in self.folder.iterdir()] == [LOCK_FILE]
        except OSError:
            return False

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release(failed=kind is not None)


def lock_output(
    folder: str | Path, kind: str, check: Callable[[], None] | None = None
) -> OutputLock:
    """The lock on ``folder`` for a writer of ``kind`` (``eval``, ``build``, ``report``, ...:
    said in the holder file; the lock is the same for every kind), to be entered with
    ``with`` before any work; entering it when another process holds it raises
    :class:`InputError` naming the holder. ``check`` is the folder check (such as
    :func:`check_output_folder`), run before and again under the lock."""
    return OutputLock(folder, kind, check)


def _ours(name: str) -> bool:
    return name.startswith(".uncobench-") or (name.startswith(".") and name.endswith(".tmp"))


def check_output_folder(
    folder: str | Path,
    markers: tuple[str, ...],
    what: str,
    allowed: tuple[str, ...] = (),
    option: str = "--out",
) -> None:
    """Refuse ``folder`` if it is a file, or an existing folder that holds files but none of
    ``markers`` (the files a ``what`` folder has): it belongs to something else. Names in
    ``allowed`` (what a ``what`` folder may hold besides its markers, such as the demo's
    ``bench/``) do not count as something else's. ``option`` names the option the folder
    came from, in the message."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file, not a {what}")
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
            f"empty folder for {option}"
        )


@contextmanager
def incomplete_marker(marker: Path, what: str) -> Iterator[bool]:
    """Mark the set of files written inside the block as incomplete until it is all written.

    Each file of a report is replaced atomically, the set is not: a writer killed between two
    files would leave one run's metrics beside another's pages. ``marker`` is written first
    (saying so in words) and removed only after the last file, so an interrupted writer
    leaves it behind; readers refuse or warn, the next writer replaces everything. Yields
    whether an earlier writer had been interrupted (the marker was there)."""
    from .spec import write_text_atomic

    interrupted = marker.exists()
    write_text_atomic(
        marker,
        f"incomplete: the {what} in this folder was being replaced and the writer stopped "
        "before its last file; its files may come from two different runs. Write it again.\n",
    )
    yield interrupted
    marker.unlink()


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
