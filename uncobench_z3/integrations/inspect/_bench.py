"""The benchmark an inspect_ai run uses when it is given none: built once, in a cache folder.

``inspect eval uncobench_z3/uncobench`` without ``-T bench=...`` needs task groups without a
network or an API key, so it builds a small benchmark with the offline pipeline
(:func:`~uncobench_z3.construct.build_benchmark`, deterministic for a given seed, scenario
library and package version) into ``<cache>/benchmarks/<key>``, where ``<cache>`` is
``$UNCOBENCH_CACHE_DIR`` or ``~/.cache/uncobench-z3`` and ``<key>`` the first 16 hex digits of
the build configuration's SHA-256 (:meth:`~uncobench_z3.construct.BuildConfig.digest`: groups,
seed, library content, package version). A finished folder is reused as it is.

The build goes to a private temporary folder beside the final one and is then renamed into
place (one atomic step), so a reader never sees half a benchmark. Two processes that start
at once both build; the first rename wins and the other process discards its own (identical)
copy and reads the winner's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ...construct import (
    GROUPS_FILE,
    MANIFEST_FILE,
    BuildConfig,
    build_benchmark,
    library_digest,
    load_groups,
)
from ...evaluation import settings_stored_proofs
from ...models import CACHE_DIR_ENV
from ...settings import TaskGroup

DEFAULT_GROUPS = 10
"""task groups in the default benchmark (about 48 samples over the five settings)"""
DEFAULT_BUILD_SEED = 7
"""the build seed of the default benchmark (the one ``uncobench demo`` uses)"""
BENCHMARKS_DIR = "benchmarks"


def cache_root() -> Path:
    """``$UNCOBENCH_CACHE_DIR``, else ``~/.cache/uncobench-z3``."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "uncobench-z3"


def default_build_config(
    groups: int = DEFAULT_GROUPS, seed: int = DEFAULT_BUILD_SEED
) -> BuildConfig:
    """The configuration :func:`build_benchmark` uses for an offline build of ``groups``."""
    return BuildConfig(
        groups=groups,
        seed=seed,
        library=library_digest(),
        minimum_rounds=True,
        decision_changes=True,
    )


def default_benchmark_dir(groups: int = DEFAULT_GROUPS, seed: int = DEFAULT_BUILD_SEED) -> Path:
    """Where the default benchmark of ``groups`` groups lives (built or not)."""
    key = default_build_config(groups, seed).digest()[:16]
    return cache_root() / BENCHMARKS_DIR / key


def _finished(folder: Path) -> bool:
    return (folder / MANIFEST_FILE).is_file() and (folder / GROUPS_FILE).is_file()


def default_benchmark(
    groups: int = DEFAULT_GROUPS, seed: int = DEFAULT_BUILD_SEED
) -> tuple[Path, list[TaskGroup]]:
    """The default benchmark's folder and groups, built first if the cache lacks it."""
    target = default_benchmark_dir(groups, seed)
    if not _finished(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            build_benchmark(scratch / "bench", groups=groups, seed=seed, workers=1,
                            minimum_rounds=settings_stored_proofs)  # fmt: skip
            try:
                os.rename(scratch / "bench", target)
            except OSError:
                if not _finished(target):  # not a lost race: a real failure
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target, load_groups(target)
