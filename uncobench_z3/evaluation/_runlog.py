"""A run's log on disk: reading and repairing ``samples.jsonl``, checking a run folder
against a configuration, and appending records safely.

The log holds one :class:`SampleRecord` a line. What a crash can leave at its end is repaired
without losing a record (see :mod:`uncobench_z3.spec._jsonl`): an unterminated last record is
kept and terminated, a torn last line is kept aside as ``samples.torn-<n>.txt`` and its
sample done again. A line that is not a record anywhere else is refused with its line number;
``--force`` sets such lines aside in ``samples.bad-<n>.txt`` and keeps every valid record.
Error samples (``result == "error"``) are not done: a resumed run tries them again, and their
earlier lines move to ``samples.errors.jsonl`` so the log keeps one line per sample.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import ResumeError
from ..spec import (
    LogContents,
    append_aside,
    copy_file_atomic,
    load_json,
    open_for_append,
    read_jsonl_log,
    read_utf8,
    remove_stale_temps,
    repair_log,
)
from ._sample import SampleRecord

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
ERROR_SAMPLES_FILE = "samples.errors.jsonl"


def read_sample_log(path: Path) -> LogContents[SampleRecord]:
    return read_jsonl_log(path, SampleRecord.model_validate_json)


def _bad_line_message(path: Path, contents: LogContents[SampleRecord]) -> str:
    number, _ = contents.bad[0]
    more = f" (and {len(contents.bad) - 1} more)" if len(contents.bad) > 1 else ""
    return (
        f"{path}: line {number}{more} is not a sample record ({contents.reason}); fix or "
        "delete it, or run "
        f"`uncobench eval` again with --force to set it aside and keep the "
        f"{len(contents.records)} valid record(s)"
    )


def read_log(path: Path) -> tuple[list[SampleRecord], bool]:
    """The records of a log, and whether its end was damaged by a crash (a torn or
    unterminated last line; the torn one is skipped). Other bad lines are a
    :class:`ResumeError` naming the line."""
    contents = read_sample_log(path)
    if contents.bad:
        raise ResumeError(_bad_line_message(path, contents))
    return contents.records, contents.damaged


def keep_copy(path: Path) -> Path | None:
    """Copy the log, byte for byte, to the first free ``samples.discarded-<n>.jsonl``.

    A copy (written atomically), never a move: the log itself stays whole until it is
    replaced at once by what is kept, so a run killed at any moment leaves a log it can
    resume from (and at worst a second copy)."""
    if not path.exists():
        return None
    number = 1
    while (target := path.with_name(f"samples.discarded-{number}.jsonl")).exists():
        number += 1
    copy_file_atomic(path, target)
    return target


DISCARDED_NAME = re.compile(r"samples\.discarded-\d+\.jsonl")
ASIDE_NAME = re.compile(r"samples\.(torn|bad)-\d+\.txt")


def remove_stale_run_temps(out: Path) -> list[Path]:
    """The temporary files that evaluations killed part way left in the run folder ``out``
    (the lock's own go when it is taken). Call it holding that lock."""
    targets = (RUN_FILE, SAMPLES_FILE, DISCARDED_NAME, ASIDE_NAME)
    return remove_stale_temps(out, targets)


@dataclass(frozen=True)
class PreparedLog:
    """What :func:`prepare_run_dir` found and did."""

    done: list[SampleRecord]
    """the samples already done, which the log now holds, one terminated line each"""
    copy: Path | None = None
    """where a copy of the whole earlier log went, when lines left it"""
    dropped: int = 0
    """earlier samples that left the log (``--restart``, or not of this configuration)"""
    duplicates: int = 0
    """lines that left the log because an earlier line holds the same sample"""

    def what_left(self, restart: bool) -> str:
        """What left the log, and why."""
        if restart:
            return f"{self.dropped} earlier sample(s) left the log (--restart)"
        parts = []
        if self.dropped:
            parts.append(
                f"{self.dropped} earlier sample(s) left the log (not of this run's configuration)"
            )
        if self.duplicates:
            parts.append(
                f"{self.duplicates} duplicate line(s) left the log (their samples stay, once)"
            )
        return "; ".join(parts)


def prepare_run_dir(
    out: Path, config: Any, job_keys: Callable[[], Collection[str]], restart: bool, force: bool
) -> PreparedLog:
    """Check the directory against ``config``; the samples that are already done.

    The log is left holding exactly those samples, one terminated line each. ``job_keys``
    gives the keys of the run's jobs; it is called only when the log holds samples to match
    against them (a key is a hash: a new run of 1,000 groups and three agents would hash
    14,463 jobs here, before its first sample could start).
    """
    run_file, log = out / RUN_FILE, out / SAMPLES_FILE
    if restart:
        copy = keep_copy(log)  # counted, not parsed: every line leaves, valid or not
        held = sum(1 for line in copy.read_bytes().splitlines() if line.strip()) if copy else 0
        log.unlink(missing_ok=True)
        return PreparedLog([], copy, held)
    previous = load_json(run_file) if run_file.exists() else None
    same = isinstance(previous, dict) and previous.get("config_hash") == config.digest()
    if not same and (run_file.exists() or log.exists()) and not force:
        raise ResumeError(_mismatch(out, previous, config))
    held = _epochs_held(previous) if same else 0
    if held > config.epochs and not force:
        raise ResumeError(
            f"{out} holds {held} epochs; --epochs {config.epochs} would set epochs "
            f"{config.epochs + 1}-{held} aside: pass --epochs {held} (or more) to resume, or "
            "--force to set them aside"
        )
    contents = read_sample_log(log)
    if contents.bad:
        if not force:
            raise ResumeError(_bad_line_message(log, contents))
        append_aside(log, "bad", "".join(row + "\n" for _, row in contents.bad))
    keep: dict[str, tuple[SampleRecord, str]] = {}
    errors: list[str] = []
    foreign = duplicates = 0
    wanted = job_keys() if contents.records else frozenset()
    for record, line in zip(contents.records, contents.lines, strict=True):
        if record.key in keep:
            duplicates += 1
        elif record.key not in wanted:
            foreign += 1
        elif record.result == "error":
            errors.append(line)  # done again; the line moves to samples.errors.jsonl
        else:
            keep[record.key] = (record, line)
    copy = None
    if foreign or duplicates:
        copy = keep_copy(log)  # a copy of everything, before the rewrite drops what does not apply
    if errors:
        _move_errors(out / ERROR_SAMPLES_FILE, errors)
    if foreign or duplicates or log.exists():
        repair_log(log, contents, [line for _, line in keep.values()])
    return PreparedLog([record for record, _ in keep.values()], copy, foreign, duplicates)


def _move_errors(path: Path, lines: list[str]) -> None:
    """Append the lines of error samples to ``path``, but not those it holds already: a run
    killed after appending them and before the log lost them appends them again."""
    held = set(read_utf8(path).splitlines()) if path.exists() else set()
    text = "".join(line + "\n" for line in lines if line not in held)
    if not text:
        return
    with open_for_append(path) as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _epochs_held(previous: Any) -> int:
    config = previous.get("config") if isinstance(previous, dict) else None
    epochs = config.get("epochs", 1) if isinstance(config, dict) else 1
    return epochs if isinstance(epochs, int) else 1


def _changed(name: str, old: dict[str, Any]) -> str:
    """A changed field's name, and what it means where the name alone does not say."""
    if name != "followup_rules":
        return name
    if name not in old:
        return f"{name} (an earlier version's run, which does not record the rules it read by)"
    return f"{name} (this version reads follow-ups by other rules than the run's)"


def _mismatch(out: Path, previous: Any, config: Any) -> str:
    if not isinstance(previous, dict):
        exists = (out / RUN_FILE).exists()  # (a run.json of [] or null is not "no run.json")
        why = f"its {RUN_FILE} is not a JSON object" if exists else f"no {RUN_FILE}"
        return (
            f"{out} holds samples of an unknown run ({why}); use --restart to set them aside "
            "or choose another --out"
        )
    old = previous.get("config", {})
    old = old if isinstance(old, dict) else {}
    new = config.model_dump(mode="json")
    changed = [
        _changed(k, old) for k in new if k not in ("benchmark", "epochs") and old.get(k) != new[k]
    ]
    if not changed and "epochs" not in old:
        changed = ["sample identity (written before epochs existed)"]
    return (
        f"{out} holds a run with another configuration (changed: {', '.join(changed) or 'hash'})"
        "; use --restart to start over or --force to keep the samples that still apply"
    )


class LogNotWritten(OSError):
    """A log (``samples.jsonl``, ``judge.jsonl``) could not be written (a full disk): the
    command stops, with one line that names the log (``filename``) and says what it holds
    is kept. Not a failure of the sample whose line it was, so no traceback is kept for it
    in ``errors.log`` (which could not be written either)."""

    @classmethod
    def of(cls, path: Path, exc: OSError, held: str) -> LogNotWritten:
        """The error of a write to ``path`` that failed with ``exc``; ``held``: what the log
        holds (``samples``)."""
        return cls(
            exc.errno,
            f"{exc.strerror or exc}; the {held} it holds are kept, run the same command to "
            "resume once it can be written",
            str(path),
        )


class SampleLog:
    """Appends whole lines, flushed and fsynced, from one writer thread.

    Lines that finish while a write is in progress are written together by the next one
    (group commit), so the fsync cost does not grow with the concurrency. ``append``
    returns once its line is on disk. A line handed to ``append`` is written even when the
    run is interrupted meanwhile: a cancelled writer finishes its batch and what is queued
    behind it before it ends, and ``close`` writes whatever is left. Opening terminates a
    last line that lacks its newline.

    A write that fails (:class:`LogNotWritten`) fails every later one too, without writing:
    it may have left part of its text, and a later line written after it (the disk having
    room again) would be glued onto that part in the middle of the log, where resuming
    refuses it. Stopped there, the log ends at worst in one torn line, which resuming sets
    aside (its sample is done again).
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: IO[str] = open_for_append(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uncobench-log")
        self._pending: list[tuple[str, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._failed: LogNotWritten | None = None

    def _write(self, text: str) -> None:
        if self._failed is not None:
            raise self._failed
        try:
            self._handle.write(text)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as exc:
            self._failed = self._not_written(exc)
            raise self._failed from exc

    def _not_written(self, exc: OSError) -> LogNotWritten:
        return LogNotWritten.of(self._path, exc, "samples")

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            text = "".join(line for line, _ in batch)
            writing = self._executor.submit(self._write, text)
            try:
                await asyncio.wrap_future(writing)
            except asyncio.CancelledError:
                # interrupted: the batch and the lines behind it are still written (here,
                # blocking; the run is ending) and their writers told
                if not writing.cancel():  # the writer thread had started it: let it end
                    concurrent.futures.wait([writing])
                    _settle(batch, writing.exception())
                else:
                    self._pending = batch + self._pending
                self._write_pending_now()
                raise
            except Exception as exc:
                _settle(batch, exc)
                continue
            _settle(batch, None)

    def _write_pending_now(self) -> None:
        """Write every queued line at once, in this thread (an interrupted run's last lines)."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        error: BaseException | None = None
        try:
            self._write("".join(line for line, _ in batch))
        except Exception as exc:
            error = exc
        _settle(batch, error)

    async def append_line(self, line: str) -> None:
        """Append a record's JSON line (without its newline) and wait until it is on disk."""
        await self._append(line + "\n")

    async def append_lines(self, lines: Sequence[str]) -> None:
        """Append records' JSON lines (without their newlines), written together, and wait
        until they are on disk: one waiter for all (eval shards send tens of samples at a
        time, and a waiter a line cost the driver a task and a future each)."""
        await self._append("\n".join([*lines, ""]))  # (one copy of the lines, not two)

    async def _append(self, text: str) -> None:
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((text, written))
        self._start_writer()
        await written

    def _start_writer(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
            self._flusher.add_done_callback(self._writer_ended)

    def _writer_ended(self, _: asyncio.Task[None]) -> None:
        # a writer cancelled before it began leaves its lines queued: another writes them
        if self._pending:
            self._start_writer()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self._write_pending_now()  # lines handed over after the last writer ended
        try:
            self._handle.close()  # (flushes what a failed write left in its buffer)
        except OSError as exc:
            if self._failed is None:  # (a failed write's writers were told already)
                raise self._not_written(exc) from exc


def _settle(batch: list[tuple[str, asyncio.Future[None]]], error: BaseException | None) -> None:
    """Tell the writers of ``batch`` their lines are on disk (or why not); a writer that
    stopped waiting (cancelled) is skipped."""
    for _, done in batch:
        if done.done():
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
