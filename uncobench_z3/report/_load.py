"""Reading evaluation runs for a report: one run directory, or a folder of them.

A run log can hold tens of thousands of samples, most of whose bytes are traces. The report
reads each log line once: the record is validated without its trace (the metrics never read
it), and the trace, validated as the report reads it (:class:`ViewRound`), goes to the
*visitors* (the trace viewer, the validity judge) and is then dropped, with the per-round
solver notes. So :attr:`ReportData.samples` hold neither, and memory stays proportional to
the samples' summaries, not their conversations.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._gc import long_lived
from ..construct import GROUPS_FILE, MANIFEST_FILE, check_benchmark, load_benchmark
from ..errors import ConfigError, SpecReadError, UncobenchError
from ..evaluation import (
    RUN_FILE,
    SAMPLES_FILE,
    SampleRecord,
    UnreadableStatement,
    run_benchmark_path,
    typed_task,
    unreadable_sample_error,
)
from ..settings import TaskGroup
from ..spec import TypedTask, cut_in_a_character, first_problem, load_json, validate_document


class ViewReply(BaseModel):
    """One request and its reply, as the report reads a trace (other fields are kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    role: str
    question: str = ""
    text: str | None = None
    defects: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()
    follow_up: str | None = None
    pending: bool = False
    """no reply: the request stays pending (#9's Missed replies; False in older traces)"""
    delivered: bool = False
    """arrived after a wait, without a request"""
    answers_round: int | None = None


class ViewRound(BaseModel):
    """One round of a trace, as the report reads it (other fields are kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    round: int
    action: str
    replies: list[ViewReply] = Field(default_factory=list)
    answer: dict[str, Any] | None = None
    error: str | None = None
    intervention: str | None = None


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class RunConfigFields(_Loose):
    """The fields of a run's configuration that the report reads, with their types."""

    benchmark: str = ""
    agents: list[str] = Field(default_factory=list)
    settings: list[str] = Field(default_factory=list)
    seed: int | None = None
    budget: int | None = None


class RunFileFields(_Loose):
    """The fields of ``run.json`` that the report reads: a file that holds them with other
    types (an edited or foreign file) is refused with its JSON path, not a traceback."""

    config: RunConfigFields
    config_hash: str = ""
    unavailable: dict[str, list[str]] = Field(default_factory=dict)
    samples: int | None = None


TraceVisitor = Callable[[SampleRecord, Sequence[ViewRound]], None]
"""Called once per distinct sample with its trace, before the trace is dropped."""


@dataclass
class RunInfo:
    path: Path
    config: dict[str, Any]
    config_hash: str
    unavailable: dict[str, list[str]]
    samples: int
    planned: int

    @property
    def benchmark_hash(self) -> str:
        return str(self.config.get("benchmark_hash", ""))


@dataclass
class BenchmarkGroups:
    """The task groups of the runs' benchmarks by content hash (a sample names its group by
    it), for names, the validity judge and the dataset; ``notes`` say which benchmark could
    not be read."""

    by_hash: dict[str, TaskGroup] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _tasks: dict[str, TypedTask | None] = field(default_factory=dict, repr=False)

    def task(self, group_hash: str) -> TypedTask | None:
        if group_hash not in self._tasks:
            group = self.by_hash.get(group_hash)
            self._tasks[group_hash] = None if group is None else typed_task(group)
        return self._tasks[group_hash]


@dataclass
class ReportData:
    runs: list[RunInfo]
    samples: list[SampleRecord]
    """every distinct sample, without its trace and notes (see the module docstring)"""
    unavailable: dict[str, list[str]] = field(default_factory=dict)
    manifest_stats: dict[str, Any] | None = None
    manifest_path: Path | None = None
    groups: BenchmarkGroups = field(default_factory=BenchmarkGroups)

    def benchmark_hashes(self) -> list[str]:
        """The content hashes of the runs' benchmarks, in run order, each once."""
        return list(dict.fromkeys(run.benchmark_hash for run in self.runs if run.benchmark_hash))


def find_run_dirs(path: Path) -> list[Path]:
    """The run folders at or under ``path``, in order, following symbolic links (a folder of
    links to runs is one way to pick them: ``Path.rglob`` passed over them without a word)
    but entering each real folder once, so a link back up (a loop) or a second link to a
    run adds nothing."""
    if (path / RUN_FILE).exists():
        return [path]
    found: list[Path] = []
    entered: set[Path] = set()
    for root, dirs, files in os.walk(path, followlinks=True):
        real = Path(root).resolve()
        if real in entered:
            dirs.clear()
            continue
        entered.add(real)
        dirs.sort()
        if RUN_FILE in files:
            found.append(Path(root))
    return sorted(found)


def _manifest(benchmark: str, base: Path) -> tuple[dict[str, Any] | None, Path | None]:
    """The benchmark's manifest stats, if the benchmark path still leads to a manifest."""
    for root in (Path(benchmark), base / benchmark):
        candidate = root / MANIFEST_FILE if root.is_dir() else root.parent / MANIFEST_FILE
        if candidate.is_file():
            try:
                data = load_json(candidate)
            except SpecReadError:
                return None, None
            if (candidate.parent / GROUPS_FILE).is_file():  # stats of a changed benchmark lie
                check_benchmark(candidate.parent)
            if isinstance(data, dict) and isinstance(data.get("stats"), dict):
                return data["stats"], candidate
    return None, None


def _run_info(run_dir: Path) -> RunInfo:
    meta = load_json(run_dir / RUN_FILE)
    if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
        raise SpecReadError(str(run_dir / RUN_FILE), "not a run description", json_path="$")
    validate_document(meta, RunFileFields, str(run_dir / RUN_FILE))
    missing = meta.get("unavailable") or {}
    planned = meta.get("samples")
    return RunInfo(
        path=run_dir,
        config=meta["config"],
        config_hash=str(meta.get("config_hash", "")),
        unavailable={str(k): [str(g) for g in v] for k, v in missing.items()},
        samples=0,
        planned=planned if isinstance(planned, int) else 0,
    )


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line, whether it is the last line and lacks its newline)."""
    with path.open("rb") as handle:
        previous: tuple[int, bytes] | None = None
        for number, line in enumerate(handle, start=1):
            if previous is not None:
                yield previous[0], previous[1], False
            previous = (number, line)
        if previous is not None:
            yield previous[0], previous[1], not previous[1].endswith(b"\n")


def read_samples(path: Path) -> Iterator[tuple[SampleRecord, list[ViewRound]]]:
    """The records of a run log without their traces, each with its trace as the report reads
    it. A torn last line (a run cut off while writing) is skipped; any other line that is not
    a sample record is refused with its number."""
    if not path.is_file():
        return
    try:
        yield from _records(path)
    except OSError as exc:
        raise SpecReadError(str(path), f"cannot be read ({exc.strerror or exc})") from None


def _records(path: Path) -> Iterator[tuple[SampleRecord, list[ViewRound]]]:
    for number, line, unterminated in _lines(path):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:  # as read_utf8 says it: file:line and column
            if unterminated and cut_in_a_character(line):
                continue  # torn inside a character of its text
            raise SpecReadError(
                f"{path}:{number}",
                f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})",
            ) from None
        try:
            raw = json.loads(text)
        except ValueError as exc:
            if unterminated and text.lstrip().startswith("{"):
                continue  # torn: a crash cut the last line off inside its record
            raise _bad_line(path, number, str(exc)) from None
        try:
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            trace = raw.pop("trace", [])
            record = SampleRecord.model_validate({**raw, "trace": []})
            rounds = [ViewRound.model_validate(item) for item in trace]
        except (ValueError, ValidationError) as exc:
            raise _bad_line(path, number, first_problem(exc)) from None
        yield record, rounds


def _bad_line(path: Path, number: int, reason: str) -> SpecReadError:
    return SpecReadError(
        str(path),
        f"line {number} is not a sample record ({reason}); fix or delete it, or run "
        "`uncobench eval` again with --force to set it aside",
    )


def _benchmark_groups(runs: Sequence[RunInfo]) -> BenchmarkGroups:
    found = BenchmarkGroups()
    seen: set[Path] = set()
    for run in runs:
        try:
            # (report has no --bench: the path run.json names is read as eval was given it)
            path = run_benchmark_path(
                run.path, "run the report from the folder `uncobench eval` ran in"
            ).resolve()
        except UncobenchError as exc:  # moved or deleted: the report does without it
            found.notes.append(f"{run.path}: {exc}")
            continue
        if path not in seen:  # there but failing its manifest checks: refused, one line
            seen.add(path)
            # the groups live as long as the report is made (see uncobench_z3/_gc.py)
            with long_lived():
                groups, digests = load_benchmark(path)
                for group, digest in zip(groups, digests, strict=True):
                    found.by_hash.setdefault(digest, group)
    return found


def open_report_data(path: str | Path | Sequence[str | Path], groups: bool = True) -> ReportData:
    """The runs under ``path`` (or under each of several paths; a run found twice counts
    once): their descriptions, not yet their samples; with ``groups``, their benchmarks'
    groups too (names, judge, solver notes; a benchmark that cannot be read is noted)."""
    roots = [Path(path)] if isinstance(path, str | Path) else [Path(p) for p in path]
    run_dirs: dict[Path, Path] = {}  # resolved -> as found
    for root in roots:
        if not root.exists():
            raise ConfigError(f"{root} does not exist")
        found = find_run_dirs(root) if root.is_dir() else []
        if not found:
            raise ConfigError(
                f"{root} holds no evaluation run (no {RUN_FILE}); run `uncobench eval`"
            )
        for run_dir in found:
            run_dirs.setdefault(run_dir.resolve(), run_dir)
    runs = [_run_info(run_dir) for run_dir in run_dirs.values()]
    data = ReportData(runs=runs, samples=[])
    data.groups = _benchmark_groups(runs) if groups else BenchmarkGroups()
    for run in runs:
        if data.manifest_stats is None:
            benchmark = str(run.config.get("benchmark", ""))
            data.manifest_stats, data.manifest_path = _manifest(benchmark, run.path)
    return data


def read_runs(data: ReportData, visitors: Sequence[TraceVisitor] = ()) -> ReportData:
    """Read the samples of every run of ``data``; samples of the same key in two runs count
    once; ``visitors`` see each distinct sample's trace."""
    seen: set[str] = set()
    unavailable: dict[str, set[str]] = {}
    for run in data.runs:
        held: set[str] = set()  # a sample whose line a log holds twice is one sample
        for record, trace in read_samples(run.path / SAMPLES_FILE):
            held.add(record.key)
            if record.key in seen:
                continue
            seen.add(record.key)
            record.with_run_settings(
                run.config.get("missed_wait"), run.config.get("followup_reader", "rules")
            )
            data.samples.append(record)
            try:
                for visit in visitors:
                    visit(record, trace)
            except UnreadableStatement as exc:
                exc.sample_key = exc.sample_key or record.key
                raise unreadable_sample_error(run.path / SAMPLES_FILE, exc) from None
            except ValueError as exc:  # a visitor validates more of the trace than the reader
                raise SpecReadError(
                    str(run.path / SAMPLES_FILE),
                    f"sample {record.key} has a trace that is not valid ({first_problem(exc)}); "
                    "fix or delete its line, or run `uncobench eval` again with --force to "
                    "set it aside",
                ) from None
            record.notes = []  # per-round data, like the trace: the visitors' alone
        run.samples = len(held)
        run.planned = run.planned or run.samples
        for setting, missing in run.unavailable.items():
            unavailable.setdefault(setting, set()).update(missing)
    data.unavailable = {k: sorted(v) for k, v in unavailable.items()}
    return data


def load_report_data(path: str | Path, groups: bool = False) -> ReportData:
    """Every run under ``path`` with its samples (no visitors, and by default without
    reading the benchmarks)."""
    return read_runs(open_report_data(path, groups=groups))
