"""Reading evaluation runs for a report: one run directory, or a folder of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..construct import GROUPS_FILE, MANIFEST_FILE, check_benchmark
from ..errors import ConfigError, SpecReadError
from ..evaluation import RUN_FILE, SAMPLES_FILE, SampleRecord, read_log
from ..spec import load_json, validate_document


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


@dataclass
class RunInfo:
    path: Path
    config: dict[str, Any]
    config_hash: str
    unavailable: dict[str, list[str]]
    samples: int
    planned: int


@dataclass
class ReportData:
    runs: list[RunInfo]
    samples: list[SampleRecord]
    unavailable: dict[str, list[str]] = field(default_factory=dict)
    manifest_stats: dict[str, Any] | None = None
    manifest_path: Path | None = None


def find_run_dirs(path: Path) -> list[Path]:
    if (path / RUN_FILE).exists():
        return [path]
    return sorted(p.parent for p in path.rglob(RUN_FILE))


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


def load_report_data(path: str | Path) -> ReportData:
    """Every run under ``path``; samples of the same key in two runs count once."""
    root = Path(path)
    if not root.exists():
        raise ConfigError(f"{root} does not exist")
    run_dirs = find_run_dirs(root) if root.is_dir() else []
    if not run_dirs:
        raise ConfigError(f"{root} holds no evaluation run (no {RUN_FILE}); run `uncobench eval`")
    runs: list[RunInfo] = []
    samples: dict[str, SampleRecord] = {}
    unavailable: dict[str, set[str]] = {}
    stats: dict[str, Any] | None = None
    manifest_path: Path | None = None
    for run_dir in run_dirs:
        meta = load_json(run_dir / RUN_FILE)
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise SpecReadError(str(run_dir / RUN_FILE), "not a run description", json_path="$")
        validate_document(meta, RunFileFields, str(run_dir / RUN_FILE))
        records, _ = read_log(run_dir / SAMPLES_FILE)
        for record in records:
            samples.setdefault(record.key, record)
        missing = meta.get("unavailable") or {}
        for setting, groups in missing.items():
            unavailable.setdefault(str(setting), set()).update(str(g) for g in groups)
        runs.append(
            RunInfo(
                path=run_dir,
                config=meta["config"],
                config_hash=str(meta.get("config_hash", "")),
                unavailable={str(k): [str(g) for g in v] for k, v in missing.items()},
                samples=len(records),
                planned=meta["samples"] if isinstance(meta.get("samples"), int) else len(records),
            )
        )
        if stats is None:
            stats, manifest_path = _manifest(str(meta["config"].get("benchmark", "")), run_dir)
    return ReportData(
        runs=runs,
        samples=list(samples.values()),
        unavailable={k: sorted(v) for k, v in unavailable.items()},
        manifest_stats=stats,
        manifest_path=manifest_path,
    )
