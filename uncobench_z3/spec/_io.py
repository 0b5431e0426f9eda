"""Reading and writing JSON documents exactly, with errors that name the file and JSON path."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, SpecReadError
from ._model import TaskSpec

ModelT = TypeVar("ModelT", bound=BaseModel)
_UMASK = os.umask(0)
os.umask(_UMASK)


def with_umask(mode: int) -> int:
    """``mode`` as the process's umask leaves it: what a file or folder made the usual way
    gets (``mkstemp`` and ``mkdtemp`` make theirs private instead)."""
    return mode & ~_UMASK


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json_text(text: str, source: str) -> Any:
    """Parse JSON keeping decimals exact (``Decimal``, never ``float``)."""
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SpecReadError(
            source, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except ValueError as exc:
        raise SpecReadError(source, f"not valid JSON: {exc}") from None
    except RecursionError:
        raise SpecReadError(source, "not valid JSON: nested too deeply") from None


def load_json(path: str | Path) -> Any:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecReadError(source, "no such file") from None
    except IsADirectoryError:
        raise SpecReadError(source, "is a directory, not a file") from None
    except UnicodeDecodeError:
        raise SpecReadError(source, "not UTF-8 text") from None
    except OSError as exc:
        raise SpecReadError(source, f"cannot be read ({exc.strerror})") from None
    return parse_json_text(text, source)


def json_path(location: Sequence[int | str]) -> str:
    """``('facts', 2, 'min')`` -> ``$.facts[2].min``."""
    out = "$"
    for part in location:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate_document(data: Any, model: type[ModelT], source: str) -> ModelT:
    """Validate parsed JSON into ``model``; schema violations become one :class:`SpecReadError`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        located = [
            (json_path([p for p in e["loc"] if not _is_union_tag(p)]), _clean_message(e))
            for e in errors
        ]
        first_path, first_message = located[0]
        others = [f"{where}: {message}" for where, message in located[1:6]]
        if len(located) > 6:
            others.append(f"and {len(located) - 6} more")
        detail = first_message + (f" (also: {'; '.join(others)})" if others else "")
        raise SpecReadError(source, detail, json_path=first_path) from None
    except RecursionError:
        raise SpecReadError(source, "document nested too deeply") from None


def _is_union_tag(part: int | str) -> bool:
    # pydantic adds the union member's type name to the location; readers do not need it
    return isinstance(part, str) and "[" in part


def _clean_message(error: Any) -> str:
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "missing":
        return "a required field is missing"
    if error.get("type") == "extra_forbidden":
        return "unknown field (check the spelling; `uncobench schema` lists the fields)"
    return message.removeprefix("Value error, ")


def load_spec(path: str | Path) -> TaskSpec:
    """Read one task spec file. Raises :class:`SpecReadError` with the file and JSON path."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise SpecReadError(str(path), "a spec is a JSON object", json_path="$")
    return validate_document(data, TaskSpec, str(path))


def dump_json(data: Any) -> str:
    """Stable, human-diffable JSON (sorted keys are *not* used: field order is meaningful)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


TEMP_SUFFIX = ".tmp"
_TEMP_RANDOM = re.compile(r"[a-z0-9_]{8}")
"""what :func:`tempfile.mkstemp` puts between a temporary file's prefix and suffix"""


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write a file so that readers see the old or the new content, never a half."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write a file so that readers see the old or the new content, never a half.

    The content goes to ``.<name>.<8 random characters>.tmp`` beside it first, then replaces
    it. A process killed in between leaves that file behind: :func:`remove_stale_temps`
    removes it once the folder's writer holds its lock again."""
    _replace_atomically(Path(path), lambda handle: handle.write(data))


def copy_file_atomic(source: str | Path, path: str | Path) -> None:
    """Copy ``source`` to ``path`` as :func:`write_bytes_atomic` writes (streamed: a run's
    log can be larger than the memory one wants to spend on a copy)."""
    with open(source, "rb") as original:
        _replace_atomically(Path(path), lambda handle: shutil.copyfileobj(original, handle))


def _replace_atomically(target: Path, write: Callable[[BinaryIO], object]) -> None:
    if not target.name or target.is_dir():  # ("" is "."): say so, not the temp file's error
        raise ConfigError(f"{target}: is a folder, not a file; give a file's name")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, with_umask(0o666))  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            # a write's error (a full disk) names no file: the one that could not be written
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        raise


def stale_temp_target(name: str) -> str | None:
    """The file a temporary file of :func:`write_bytes_atomic` was to become, if ``name`` is
    one (``.<target>.<8 random characters>.tmp``); ``None`` otherwise."""
    if not name.startswith(".") or not name.endswith(TEMP_SUFFIX):
        return None
    stem = name[1 : -len(TEMP_SUFFIX)]
    target, dot, random = stem.rpartition(".")
    if not dot or not target or not _TEMP_RANDOM.fullmatch(random):
        return None
    return target


def remove_stale_temps(folder: str | Path, targets: Iterable[str | re.Pattern[str]]) -> list[Path]:
    """Remove the temporary files that killed atomic writes of ``targets`` left in ``folder``.

    A target is a file name, or a pattern its whole name matches. Only regular files named
    the way :func:`write_bytes_atomic` names its temporary files are removed, so files of
    the user's are never touched. Call it only while holding the folder's lock: a write in
    progress owns such a file. Returns what was removed."""
    names = [t for t in targets if isinstance(t, str)]
    patterns = [t for t in targets if not isinstance(t, str)]
    removed = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    for entry in entries:
        target = stale_temp_target(entry.name)
        if target is None or not entry.is_file(follow_symlinks=False):
            continue
        if target in names or any(p.fullmatch(target) for p in patterns):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    return removed


def spec_to_json(spec: TaskSpec) -> str:
    return dump_json(spec.model_dump(mode="json", exclude_none=True))
