"""A tiny benchmark from the example specs: the demo's fallback and the tests' fixture.

The real builder (:func:`uncobench_z3.construct.build_benchmark`) makes benchmarks from the
scenario library; this perturbs the hand-written ``examples/*.json`` instead and writes the
same folder layout (``groups.jsonl`` + ``manifest.json``), so everything downstream is the same.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .._assets import asset_path
from ..construct import DIGESTS_KEY, GROUPS_FILE, MANIFEST_FILE, digests_entry
from ..errors import ConfigError
from ..settings import DefectBalance, TaskGroup, group_digest, perturb
from ..spec import dump_json, load_spec, write_text_atomic

BENCHMARK_KIND = "uncobench-benchmark"


def example_groups(seed: int = 7, limit: int | None = None) -> list[TaskGroup]:
    """The task groups of the example specs (well-posed ones only), in file-name order."""
    specs = sorted(asset_path("examples").glob("*.json"))[:limit]
    if not specs:
        raise ConfigError("no example specs found (examples/*.json)")
    balance = DefectBalance()
    groups = []
    for path in specs:
        found = perturb(load_spec(path), seed=seed, balance=balance, source=str(path))
        if found.group is not None:
            groups.append(found.group)
    return groups


def write_benchmark(
    out: str | Path, groups: list[TaskGroup], stats: dict[str, Any] | None = None
) -> Path:
    """Write ``groups`` as a benchmark folder with a manifest holding the content hash."""
    target = Path(out)
    text = "".join(g.model_dump_json(exclude_none=True) + "\n" for g in groups)
    target.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target / GROUPS_FILE, text)
    manifest = {
        "kind": BENCHMARK_KIND,
        "schema_version": 1,
        "content_hash": hashlib.sha256(text.encode()).hexdigest(),
        "stats": stats if stats is not None else {"groups": len(groups)},
        DIGESTS_KEY: digests_entry([group_digest(g) for g in groups]),
    }
    write_text_atomic(target / MANIFEST_FILE, dump_json(manifest))
    return target


def example_benchmark(out: str | Path, groups: int | None = None, seed: int = 7) -> Path:
    """A benchmark folder of (at most ``groups``) perturbed example specs."""
    made = example_groups(seed, groups)
    return write_benchmark(out, made, {"groups": len(made), "source": "examples/*.json, perturbed"})
