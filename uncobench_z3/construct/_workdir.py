"""The work folder of a build (``<out>/.work/``), and what a killed build leaves.

The work folder holds the configuration stamp (``config.json``) and the finished chunks. It
comes into being with its stamp (made in a temporary folder, then renamed into place) and
leaves as a whole (renamed aside, then removed), so a kill at any moment leaves either no
work folder, or one whose stamp says which configuration its chunks belong to, plus at most
temporary files and folders that the next build removes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..spec import dump_json, load_json, remove_stale_temps, with_umask, write_text_atomic
from ..spec._io import TEMP_SUFFIX
from ._audit import REJECTED_FILE
from ._benchfile import GROUPS_FILE, MANIFEST_FILE

if TYPE_CHECKING:
    from ._pipeline import BuildConfig

WORK_DIR = ".work"
STAMP_FILE = "config.json"
CHUNK_GLOB = "chunk-*.jsonl"
CHUNK_NAME = re.compile(r"chunk-\d{5,}\.jsonl")
_TEMPORARY_WORK = re.compile(r"\.work\.[a-z0-9_]{8}\.tmp")
"""a work folder being made (``mkdtemp``) or removed (:func:`discard_work`)"""


def stamp_hash(stamp: Path) -> object:
    previous = load_json(stamp)
    return previous.get("config_hash") if isinstance(previous, dict) else None


def groups_problem(out: Path, manifest: dict[str, object]) -> str | None:
    """What is wrong with the groups file of a finished benchmark, if anything: it must be
    the file its manifest describes (an edited, cut or lost file is not "already built")."""
    path = out / GROUPS_FILE
    try:
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except FileNotFoundError:
        return f"is missing, though {MANIFEST_FILE} says the benchmark is built"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if digest != manifest.get("content_hash"):
        return f"does not match {MANIFEST_FILE} (content hash): it was cut short or edited"
    return None


def create_work(work: Path, config: BuildConfig) -> None:
    """The work folder, with its configuration stamp from its first moment: it is written in
    a temporary folder that is then renamed into place, so a work folder without a stamp is
    never one of this build's."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{WORK_DIR}.", suffix=TEMP_SUFFIX, dir=work.parent))
    os.chmod(scratch, with_umask(0o777))  # mkdtemp makes 0700; give the usual permissions
    stamp = {"config_hash": config.digest(), "config": asdict(config)}
    write_text_atomic(scratch / STAMP_FILE, dump_json(stamp))
    os.rename(scratch, work)


def discard_work(work: Path) -> None:
    """Remove a work folder: renamed aside first, so a kill part way leaves no work folder
    with some of its files gone, only a temporary one that the next build removes."""
    aside = work.with_name(f"{WORK_DIR}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    os.rename(work, aside)
    shutil.rmtree(aside, ignore_errors=True)


def remove_leftovers(out: Path) -> None:
    """What builds killed part way left: temporary files of the outputs, and temporary work
    folders (made or set aside by :func:`create_work` and :func:`discard_work`)."""
    remove_stale_temps(out, (GROUPS_FILE, REJECTED_FILE, MANIFEST_FILE))
    remove_stale_temps(out / WORK_DIR, (STAMP_FILE, CHUNK_NAME))
    for entry in out.iterdir():
        if _TEMPORARY_WORK.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def config_differences(stored: object, config: BuildConfig) -> str:
    """What differs between a stored configuration (a manifest or a work stamp) and
    ``config``, said in parentheses; nothing when it cannot tell (another version, say)."""
    if not isinstance(stored, dict) or not isinstance(before := stored.get("config"), dict):
        return ""

    def shown(value: object) -> str:  # a stored number is read back as a Decimal
        return json.dumps(value) if isinstance(value, bool | None | str) else str(value)

    named = []
    defaults = {option.name: option.default for option in fields(config)}
    for key, value in asdict(config).items():
        was = shown(before.get(key, defaults[key]))  # an option an older version lacked
        if was != shown(value):
            named.append(f"{key} {was} -> {shown(value)}")
    version = stored.get("version")
    if isinstance(version, str) and version != __version__:
        named.append(f"version {version} -> {__version__}")
    return f" (changed: {', '.join(named)})" if named else ""
