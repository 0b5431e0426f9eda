"""``uncobench import-inspect``: inspect ``.eval`` logs of the task as the project's runs.

Each log becomes one run directory, ``<out>/<log name>/``, with the ``run.json`` and
``samples.jsonl`` that ``uncobench eval`` writes, so ``report`` and ``compare`` read it like
any run. A sample's record is the one the task's scorer computed (score metadata
``record``) with the trace from the sample's store: nothing is re-scored, so the figures are
the ones inspect showed. Samples inspect could not finish (an error, no score) are not
imported; they are counted and named in ``run.json`` (``source.skipped``).

Every log is read and checked before anything is written; the output folder is locked
(one writer at a time), records are stored as the runner stores them (overlong strings
capped), and each run directory is written to a temporary folder and renamed into place.
Importing the same log again replaces its directory; a directory that holds anything else is
refused. ``--out`` itself must be new, empty or a folder of runs (folders only, such as runs
imported or written by ``eval``): a run folder, a benchmark or someone's papers is refused
before anything is read.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from pydantic import ValidationError

from ... import __version__
from ..._outdir import lock_output
from ...errors import ConfigError, SpecReadError
from ...evaluation import (
    RUN_FILE,
    RUN_KIND,
    SAMPLES_FILE,
    RunConfig,
    SampleRecord,
    cap_record,
)
from ...spec import dump_json, load_json, with_umask, write_text_atomic
from ._episode import INSPECT_PREFIX, STORE_KEY
from ._scorer import RECORD_KEY
from ._task import TASK_METADATA_KEY

SOURCE_KIND = "inspect_ai"


@dataclass
class ImportedLog:
    """One log, read and converted (nothing written yet)."""

    path: Path
    name: str
    """the run directory's name under ``--out``"""
    eval_id: str
    config: RunConfig
    records: list[SampleRecord]
    planned: int
    unavailable: dict[str, list[str]]
    generation: dict[str, dict[str, object]]
    skipped: list[str] = field(default_factory=list)
    """``<sample id>#<epoch>`` of the samples without a score (inspect errors)"""


def _record(sample: EvalSample) -> SampleRecord | None:
    """The sample's record, or None when it was not scored."""
    if sample.error is not None:
        return None
    score = next(
        (s for s in (sample.scores or {}).values() if RECORD_KEY in (s.metadata or {})), None
    )
    stored = (sample.store or {}).get(STORE_KEY)
    if score is None or not isinstance(stored, dict):
        return None
    assert score.metadata is not None
    trace = stored.get("outcome", {}).get("trace", [])
    return SampleRecord.model_validate({**score.metadata[RECORD_KEY], "trace": trace})


def _name(path: Path) -> str:
    """A run directory name from the log's file name (safe on every file system)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", path.stem).strip("._") or "inspect-run"


def _one_line(error: Exception) -> str:
    """An error as one line (a pydantic error's text spans several, with a link)."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "$"
        return f"{error.error_count()} validation error(s), the first at {where}: {first['msg']}"
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def read_inspect_log(path: Path) -> ImportedLog:
    """Read one log of the ``uncobench`` task and convert its samples."""
    try:
        log: EvalLog = read_eval_log(str(path))
    except Exception as error:  # inspect raises many kinds for an unreadable file
        raise SpecReadError(str(path), f"not an inspect_ai log: {_one_line(error)}") from None
    described = (log.eval.metadata or {}).get(TASK_METADATA_KEY)
    if not isinstance(described, dict):
        raise SpecReadError(str(path), f"not a log of the uncobench task ({log.eval.task})")
    records: list[SampleRecord] = []
    skipped: list[str] = []
    for sample in log.samples or []:
        try:
            record = _record(sample)
        except (ValidationError, KeyError, TypeError) as error:
            raise SpecReadError(
                str(path),
                f"sample {sample.id} (epoch {sample.epoch}): no usable record: {_one_line(error)}",
            ) from None
        if record is None:
            skipped.append(f"{sample.id}#{sample.epoch}")
        else:
            records.append(record)
    policy = log.eval.task_args.get("agent")
    agents = sorted({r.agent for r in records}) or [
        str(policy or f"{INSPECT_PREFIX}{log.eval.model}")
    ]
    colleagues = sorted({r.colleague for r in records}) or ["scripted"]
    epochs = log.eval.config.epochs or 1
    config = RunConfig(
        benchmark=str(described["benchmark"]),
        benchmark_hash=str(described["benchmark_hash"]),
        agents=tuple(agents),
        settings=tuple(described["settings"]),
        seed=int(described["seed"]),
        budget=int(described["budget"]),
        limit=described.get("limit"),
        instructions_hash=str(described.get("instructions_hash", "")),
        colleague=colleagues[0],
        interventions=tuple(described["interventions"]),
        epochs=epochs,
        missed_wait=described.get("missed_wait"),
        colleague_mode=described.get("colleague_mode", "phrase"),
    )
    generate_config = log.eval.model_generate_config.model_dump(mode="json", exclude_none=True)
    generation: dict[str, dict[str, object]] = {
        agent: {"kind": SOURCE_KIND, "model": log.eval.model, "config": generate_config}
        for agent in agents
    }
    return ImportedLog(
        path=path,
        name=_name(path),
        eval_id=log.eval.eval_id,
        config=config,
        records=records,
        planned=(log.eval.dataset.samples or len(log.samples or [])) * epochs,
        unavailable={str(k): list(v) for k, v in described.get("unavailable", {}).items()},
        generation=generation,
        skipped=skipped,
    )


def _source_of(folder: Path) -> str | None:
    """The eval id a run directory was imported from (None: not an imported run)."""
    try:
        meta = load_json(folder / RUN_FILE)
    except SpecReadError:
        return None
    source = meta.get("source") if isinstance(meta, dict) else None
    return str(source.get("eval_id")) if isinstance(source, dict) else None


def _check_target(out: Path, imported: ImportedLog) -> None:
    target = out / imported.name
    if target.exists() and (not target.is_dir() or _source_of(target) != imported.eval_id):
        raise ConfigError(
            f"{target} exists and does not hold an import of {imported.path.name}; choose "
            "another --out or remove it"
        )


def write_imported(out: Path, imported: ImportedLog) -> Path:
    """Write one converted log as a run directory (atomically replacing an earlier import)."""
    target = out / imported.name
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{imported.name}.", dir=out))
    scratch.chmod(with_umask(0o777))  # mkdtemp's 0700 would make the run folder private
    try:
        run: dict[str, Any] = {
            "kind": RUN_KIND,
            "version": __version__,
            "config": imported.config.model_dump(mode="json"),
            "config_hash": imported.config.digest(),
            "samples": imported.planned,
            "unavailable": imported.unavailable,
            "generation": imported.generation,
            "source": {
                "kind": SOURCE_KIND,
                "log": str(imported.path),
                "eval_id": imported.eval_id,
                "skipped": imported.skipped,
            },
        }
        # stored as the runner stores records: every string capped in an overlong line
        lines = "".join(cap_record(r)[1] + "\n" for r in imported.records)
        write_text_atomic(scratch / SAMPLES_FILE, lines)
        write_text_atomic(scratch / RUN_FILE, dump_json(run))
        if target.exists():  # an earlier import of the same log (checked before writing)
            old = Path(tempfile.mkdtemp(prefix=f".{imported.name}.old.", dir=out))
            os.rename(target, old / "run")
            shutil.rmtree(old, ignore_errors=True)
        os.rename(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return target


def check_runs_folder(out: Path) -> None:
    """Refuse ``out`` unless it is new, empty or a folder of run directories: a file in it
    (a run's ``run.json``, a benchmark's ``manifest.json``, someone's papers) says it is
    something else. Hidden entries are the project's own (its lock, a scratch folder)."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder")
    if not out.is_dir():
        return
    try:
        entries = list(out.iterdir())
    except OSError as exc:
        raise ConfigError(f"{out}: cannot be read ({exc.strerror})") from None
    # a run directory in the way of an import is refused by name later (_check_target)
    others = sorted(e.name for e in entries if not e.name.startswith(".") and not e.is_dir())
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise ConfigError(
            f"{out} is not a folder of runs and is not empty (it holds {shown}); choose a new "
            "or empty folder for --out"
        )


def import_inspect_logs(logs: list[Path], out: Path) -> list[tuple[ImportedLog, Path]]:
    """Convert ``logs`` into run directories under ``out`` (module docstring)."""
    # before any work: one writer of any kind in ``out``, which must be a folder of runs;
    # every log is read and checked before anything is written
    with lock_output(out, "import-inspect", check=lambda: check_runs_folder(out)):
        imported = [read_inspect_log(path) for path in logs]
        names = [i.name for i in imported]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigError(f"two logs would share the run directory {repeated[0]!r}")
        for item in imported:
            _check_target(out, item)
        return [(item, write_imported(out, item)) for item in imported]
